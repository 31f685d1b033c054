// The findings of a hang analysis and the report in words and as JSON
// (hang_report.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "tools/mpiexec/hang_report.h"
#include "tools/mpiexec/snapshot.h"

namespace sonde::mpiexec {
namespace {

constexpr int kAnySource = -2, kAnyTag = -1;

const RankSnapshot* find_rank(const std::vector<RankSnapshot>& ranks, int rank) {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// How long mpiexec waits for a rank's, and for a host daemon's, answer.
std::string rank_bound() { return std::to_string(kSnapshotBound.count() / 1000) + " s"; }
std::string host_bound() { return std::to_string((kSnapshotBound + kRelayGrace).count() / 1000) + " s"; }

std::string json_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string ints(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string tag_text(int tag) { return tag == kAnyTag ? "any tag" : "tag " + std::to_string(tag); }

const char* condition_name(RankCondition c) {
  switch (c) {
    case RankCondition::kInCall: return "in-call";
    case RankCondition::kUserCode: return "user-code";
    case RankCondition::kFinalized: return "finalized";
    case RankCondition::kExited: return "exited";
    case RankCondition::kNoMpi: return "no-mpi";
    case RankCondition::kSilent: return "silent";
    case RankCondition::kHostSilent: return "host-silent";
  }
  return "?";
}

std::string where(const RankSnapshot* r) {
  if (!r) return "unknown";
  switch (r->condition) {
    case RankCondition::kInCall: return "in " + r->call;
    case RankCondition::kUserCode: return "in user code";
    case RankCondition::kFinalized: return "finalized";
    case RankCondition::kExited: return "exited";
    case RankCondition::kNoMpi: return "not in MPI (not initialized, or keeps the snapshot signal)";
    case RankCondition::kSilent: return "not answering within " + rank_bound();
    case RankCondition::kHostSilent:
      return "unknown: the daemon on " + r->host + " did not answer within " + host_bound();
  }
  return "?";
}

std::string describe(const std::vector<RankSnapshot>& ranks, const WaitEdge& e) {
  const RankSnapshot* r = find_rank(ranks, e.from);
  const std::string comm = r ? comm_label(*r, e.ctx) : "?";
  std::string s = "rank " + std::to_string(e.from) + " in " + e.call;
  if (e.why == "collective")
    return s + " #" + std::to_string(e.seq) + " on " + comm + ", which rank " + std::to_string(e.to) +
           " has not entered";
  if (e.seq != 0)
    return s + " #" + std::to_string(e.seq) + " on " + comm + " (" +
           (e.why == "recv" ? "receiving from " : "sending to ") + std::to_string(e.to) + ")";
  if (e.why == "recv")
    return s + " from " + (e.peer == kAnySource ? "any source" : std::to_string(e.to)) + " (" + tag_text(e.tag) + ", " +
           comm + ")";
  return s + " to " + std::to_string(e.to) + " (" + tag_text(e.tag) + ", " + comm + ")";
}

void mismatches(const std::vector<RankSnapshot>& ranks, HangAnalysis& a) {
  for (const auto& r : ranks) {
    if (r.condition != RankCondition::kInCall && r.condition != RankCondition::kUserCode) continue;
    for (const auto& want : r.recvs) {
      if (!want.coll_call.empty()) continue;
      // What waits to be matched: a posted receive or a probe (in user
      // code, only an Iprobe/Improbe loop).
      if (r.condition == RankCondition::kInCall ? want.stage == "arriving" : want.stage != "polling") continue;
      for (const auto& got : r.unexpected) {
        if (got.ctx != want.ctx || !got.coll_call.empty()) continue;
        const bool source_ok = want.peer == kAnySource || want.peer == got.peer;
        const bool tag_ok = want.tag == kAnyTag || want.tag == got.tag;
        if (source_ok == tag_ok) continue;  // a match, or unrelated
        const std::string comm = comm_label(r, want.ctx);
        const std::string from = want.peer == kAnySource ? "any source" : std::to_string(want.peer);
        Finding f;
        f.kind = source_ok ? "tag-mismatch" : "source-mismatch";
        f.text = "rank " + std::to_string(r.rank) +
                 (want.probe_call.empty() ? " waits" : " in " + want.probe_call + " probes") + " for a message from " +
                 from + " with " + tag_text(want.tag) + " on " + comm + "; " + std::to_string(got.peer) + " sent tag " +
                 std::to_string(got.tag) + " (unexpected at " + std::to_string(r.rank) + " since " + seconds(got.age) +
                 ")";
        f.json = "{\"kind\":" + json_string(f.kind) + ",\"rank\":" + std::to_string(r.rank) +
                 ",\"source\":" + std::to_string(want.peer) + ",\"tag\":" + std::to_string(want.tag) +
                 ",\"sent_by\":" + std::to_string(got.peer) + ",\"sent_tag\":" + std::to_string(got.tag) +
                 ",\"comm\":" + json_string(comm) + ",\"age\":" + json_number(got.age) +
                 ",\"probe\":" + json_string(want.probe_call) + "}";
        a.findings.push_back(f);
      }
    }
  }
}

}  // namespace

void add_findings(const std::vector<RankSnapshot>& ranks, HangAnalysis& a) {
  for (const auto& cycle : a.cycles) {
    Finding f;
    f.kind = "deadlock";
    f.text = "deadlock: ";
    for (size_t i = 0; i < cycle.size(); ++i) {
      const int from = cycle[i], to = cycle[(i + 1) % cycle.size()];
      for (const auto& e : a.edges) {
        if (e.from == from && e.to == to) {
          f.text += describe(ranks, e) + " waits for ";
          break;
        }
      }
    }
    f.text += "rank " + std::to_string(cycle[0]);
    f.json = "{\"kind\":\"deadlock\",\"ranks\":" + ints(cycle) + "}";
    a.findings.push_back(f);
  }
  // Collectives some members have not entered.
  std::map<std::tuple<uint32_t, uint32_t, std::string>, std::pair<std::set<int>, std::set<int>>> skipped;
  for (const auto& e : a.edges) {
    if (e.why != "collective") continue;
    auto& [waiting, missing] = skipped[{e.ctx, e.seq, e.call}];
    waiting.insert(e.from);
    missing.insert(e.to);
  }
  for (const auto& [key, sets] : skipped) {
    const auto& [ctx, seq, call] = key;
    std::vector<int> waiting(sets.first.begin(), sets.first.end()), missing(sets.second.begin(), sets.second.end());
    const RankSnapshot* w = find_rank(ranks, waiting[0]);
    const std::string comm = w ? comm_label(*w, ctx) : "?";
    Finding f;
    f.kind = "skipped-collective";
    f.text = "rank" + std::string(missing.size() > 1 ? "s " : " ") + rank_list(missing) + " never entered " + call +
             " #" + std::to_string(seq) + " on " + comm;
    if (missing.size() == 1) f.text += " (it is " + where(find_rank(ranks, missing[0])) + ")";
    f.text += "; rank" + std::string(waiting.size() > 1 ? "s " : " ") + rank_list(waiting) +
              (waiting.size() > 1 ? " wait" : " waits") + " in it";
    f.json = "{\"kind\":\"skipped-collective\",\"call\":" + json_string(call) + ",\"seq\":" + std::to_string(seq) +
             ",\"comm\":" + json_string(comm) + ",\"ctx\":" + std::to_string(ctx) + ",\"missing\":" + ints(missing) +
             ",\"waiting\":" + ints(waiting) + "}";
    a.findings.push_back(f);
  }
  mismatches(ranks, a);
  // Hosts whose daemon did not answer: their ranks by host.
  std::map<std::string, std::vector<int>> silent_hosts;
  for (const auto& r : ranks)
    if (r.condition == RankCondition::kHostSilent) silent_hosts[r.host].push_back(r.rank);
  for (const auto& [host, members] : silent_hosts) {
    std::set<int> waiting;
    for (const auto& e : a.edges)
      if (std::find(members.begin(), members.end(), e.to) != members.end()) waiting.insert(e.from);
    Finding f;
    f.kind = "host-silent";
    f.text = "host " + host + " did not answer within " + host_bound() + ": the state of rank" +
             (members.size() > 1 ? "s " : " ") + rank_list(members) + " is unknown";
    if (!waiting.empty())
      f.text += "; rank" + std::string(waiting.size() > 1 ? "s " : " ") + rank_list({waiting.begin(), waiting.end()}) +
                (waiting.size() > 1 ? " wait" : " waits") + " for " + (members.size() > 1 ? "them" : "it");
    f.json = "{\"kind\":\"host-silent\",\"host\":" + json_string(host) + ",\"ranks\":" + ints(members) +
             ",\"waiting\":" + ints({waiting.begin(), waiting.end()}) + "}";
    a.findings.push_back(f);
  }
  for (int t : a.waited_on) {
    std::vector<int> waiting;
    for (const auto& e : a.edges)
      if (e.to == t) waiting.push_back(e.from);
    const RankSnapshot* r = find_rank(ranks, t);
    if (r && r->condition == RankCondition::kHostSilent) continue;  // named with its host above
    Finding f;
    f.kind = r ? condition_name(r->condition) : "silent";
    f.text = "rank " + std::to_string(t) + " is " + where(r) +
             (r && r->condition == RankCondition::kInCall ? " and waits for no rank" : "") + "; rank" +
             (waiting.size() > 1 ? "s " : " ") + rank_list(waiting) + (waiting.size() > 1 ? " wait" : " waits") +
             " for it";
    f.json = "{\"kind\":" + json_string(f.kind) + ",\"rank\":" + std::to_string(t) +
             (r && r->condition == RankCondition::kInCall ? ",\"call\":" + json_string(r->call) : "") +
             ",\"waiting\":" + ints(waiting) + "}";
    a.findings.push_back(f);
  }
}

std::string report_words(const std::vector<RankSnapshot>& ranks, const HangAnalysis& a, const std::string& what,
                         double stalled) {
  std::ostringstream o;
  if (what == "hang") o << "hang report: no rank made progress for " << seconds(stalled) << "\n";
  else if (what == "timeout") o << "the job reached its --timeout; its ranks' state:\n";
  else o << "snapshot of " << ranks.size() << " rank(s)\n";
  // Across hosts each rank's line names its host.
  std::set<std::string> hosts;
  for (const auto& r : ranks)
    if (!r.host.empty()) hosts.insert(r.host);
  const bool multihost = hosts.size() > 1;
  for (const auto& r : ranks) {
    o << "  rank " << r.rank << (multihost ? " (" + r.host + ")" : "") << ": " << where(&r) << "\n";
    double in_for = -1;
    if (const SnapshotEntry* in = current_collective(r, &in_for))
      o << "    in " << in->coll_call << " #" << in->coll_seq << " on " << comm_label(r, in->ctx)
        << (in_for >= 0 ? " for " + seconds(in_for) : "") << "\n";
    for (const auto& e : r.recvs)
      if (!e.probe_call.empty())
        o << "    " << e.probe_call << (e.stage == "polling" ? " loop" : "") << " for a message from "
          << (e.peer == kAnySource ? "any source" : std::to_string(e.peer)) << ", " << tag_text(e.tag) << ", "
          << comm_label(r, e.ctx) << ", " << seconds(e.age) << "\n";
      else
        o << "    receive from " << (e.peer == kAnySource ? "any source" : std::to_string(e.peer)) << ", "
          << (e.coll_call.empty() ? tag_text(e.tag) : "internal tag") << ", " << comm_label(r, e.ctx) << ", " << e.count
          << " x " << e.type << ", " << e.stage
          << (e.coll_call.empty() ? "" : ", in " + e.coll_call + " #" + std::to_string(e.coll_seq)) << ", "
          << seconds(e.age) << "\n";
    for (const auto& e : r.sends)
      o << "    send to " << e.peer << ", " << (e.coll_call.empty() ? tag_text(e.tag) : "internal tag") << ", "
        << comm_label(r, e.ctx) << ", " << e.bytes << " bytes, " << e.stage << (e.sync ? " (synchronous)" : "")
        << (e.coll_call.empty() ? "" : ", in " + e.coll_call + " #" + std::to_string(e.coll_seq)) << ", "
        << seconds(e.age) << "\n";
    for (const auto& e : r.unexpected)
      o << "    unexpected from " << e.peer << ", " << (e.coll_call.empty() ? tag_text(e.tag) : "internal tag")
        << (e.coll_call.empty() ? "" : " of " + e.coll_call + " #" + std::to_string(e.coll_seq)) << ", "
        << comm_label(r, e.ctx) << ", " << e.bytes << " bytes, " << seconds(e.age) << "\n";
    if (r.omitted) o << "    (" << r.omitted << " more entries left out)\n";
  }
  for (const auto& f : a.findings) o << f.text << "\n";
  return o.str();
}

std::string report_json(const std::vector<RankSnapshot>& ranks, const HangAnalysis& a, const std::string& what,
                        double stalled) {
  std::ostringstream o;
  o << "{\"sonde\":" << json_string(what) << ",\"stalled_seconds\":" << json_number(stalled) << ",\"ranks\":[";
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankSnapshot& r = ranks[i];
    o << (i ? "," : "") << "{\"rank\":" << r.rank << ",\"state\":" << json_string(condition_name(r.condition))
      << ",\"call\":" << json_string(r.call) << ",\"pid\":" << r.pid << ",\"host\":" << json_string(r.host)
      << ",\"arrivals\":" << r.arrivals;
    auto entries = [&](const char* key, const std::vector<SnapshotEntry>& list, const char* peer) {
      o << ",\"" << key << "\":[";
      for (size_t k = 0; k < list.size(); ++k) {
        const SnapshotEntry& e = list[k];
        o << (k ? "," : "") << "{\"comm\":" << json_string(comm_label(r, e.ctx)) << ",\"ctx\":" << e.ctx << ",\""
          << peer << "\":" << e.peer << ",\"tag\":" << e.tag << ",\"count\":" << e.count << ",\"bytes\":" << e.bytes
          << ",\"type\":" << json_string(e.type) << ",\"stage\":" << json_string(e.stage)
          << ",\"sync\":" << (e.sync ? "true" : "false") << ",\"collective\":" << json_string(e.coll_call)
          << ",\"collective_seq\":" << e.coll_seq << ",\"age\":" << json_number(e.age)
          << ",\"probe\":" << json_string(e.probe_call) << "}";
      }
      o << "]";
    };
    entries("recvs", r.recvs, "source");
    entries("sends", r.sends, "dest");
    entries("unexpected", r.unexpected, "source");
    // The collective it is in: the first collective traffic pending.
    double in_for = -1;
    const SnapshotEntry* in = current_collective(r, &in_for);
    if (in)
      o << ",\"collective\":{\"comm\":" << json_string(comm_label(r, in->ctx)) << ",\"ctx\":" << in->ctx
        << ",\"call\":" << json_string(in->coll_call) << ",\"seq\":" << in->coll_seq
        << ",\"completed\":" << (in->coll_seq > 0 ? in->coll_seq - 1 : 0)
        << ",\"age\":" << (in_for >= 0 ? json_number(in_for) : "null") << "}";
    else o << ",\"collective\":null";
    o << ",\"comms\":[";
    for (size_t k = 0; k < r.comms.size(); ++k) {
      const SnapshotComm& c = r.comms[k];
      o << (k ? "," : "") << "{\"ctx\":" << c.ctx << ",\"name\":" << json_string(c.name) << ",\"rank\":" << c.rank
        << ",\"size\":" << c.size << ",\"collectives\":" << c.coll << "}";
    }
    o << "]}";
  }
  o << "],\"edges\":[";
  for (size_t i = 0; i < a.edges.size(); ++i) {
    const WaitEdge& e = a.edges[i];
    const RankSnapshot* r = find_rank(ranks, e.from);
    o << (i ? "," : "") << "{\"from\":" << e.from << ",\"to\":" << e.to << ",\"why\":" << json_string(e.why)
      << ",\"call\":" << json_string(e.call) << ",\"comm\":" << json_string(r ? comm_label(*r, e.ctx) : "")
      << ",\"tag\":" << e.tag << ",\"seq\":" << e.seq << "}";
  }
  o << "],\"cycles\":[";
  for (size_t i = 0; i < a.cycles.size(); ++i) o << (i ? "," : "") << ints(a.cycles[i]);
  o << "],\"waited_on\":" << ints(a.waited_on) << ",\"findings\":[";
  for (size_t i = 0; i < a.findings.size(); ++i) o << (i ? "," : "") << a.findings[i].json;
  o << "]}\n";
  return o.str();
}

}  // namespace sonde::mpiexec
