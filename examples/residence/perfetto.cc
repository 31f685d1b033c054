// trace.json: the timeline as Chrome trace-event JSON, which Perfetto's UI
// (ui.perfetto.dev, "Open trace file") and chrome://tracing read.
//
//   process per rank ("rank R (pid P)"), sorted by rank
//   counters "queues <comm>": args posted and unexpected, the exact depths
//   async b/e slices, one per receive in the posted queue (cat posted_q) and
//     per message in the unexpected queue (cat unexpected_q); args comm,
//     peer, peer_world, tag, bytes, uid (the PERUSE unique id)
//   thread 1 "MPI calls": the blocking calls as X slices, with the late
//     sender / late receiver time each lost
//   thread 2 "sends", thread 3 "matches": a short X slice per send and per
//     match, joined by a flow (s/f, id = flow number, args the two uids)
//   "metadata": {"sonde": ...} the clock corrections and their error, the
//     buffer overflow, arrows that run backwards, joins that failed
// Times are µs with three decimals (ns), on rank 0's clock from its MPI_Init.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += ch;
    } else if (c < 0x20) {
      o += format("\\u%04x", c);
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

namespace {

std::string us(int64_t ns) {
  return format("%s%lld.%03lld", ns < 0 ? "-" : "", static_cast<long long>((ns < 0 ? -ns : ns) / 1000),
                static_cast<long long>((ns < 0 ? -ns : ns) % 1000));
}
std::string hex(uint64_t v) { return format("\"0x%llx\"", static_cast<unsigned long long>(v)); }

// Durations for the markers of sends (or matches) of one rank: 1 µs, or up
// to the next marker so they never overlap on their thread.
std::vector<int64_t> marker_durations(const std::vector<std::pair<int64_t, int>>& at, size_t n) {
  std::vector<int64_t> dur(n, 1000);
  for (size_t i = 0; i + 1 < at.size(); ++i) {
    int64_t gap = at[i + 1].first - at[i].first;
    int64_t& d = dur[static_cast<size_t>(at[i].second)];
    d = std::max<int64_t>(1, std::min<int64_t>(d, gap));
    if (gap <= 0) d = 0;  // same instant: zero-length
  }
  return dur;
}

template <typename Rec>
std::vector<int64_t> durations(const std::vector<Rec>& recs) {
  std::vector<std::vector<std::pair<int64_t, int>>> per_rank;
  for (size_t i = 0; i < recs.size(); ++i) {
    size_t r = static_cast<size_t>(recs[i].rank);
    if (per_rank.size() <= r) per_rank.resize(r + 1);
    per_rank[r].push_back({recs[i].t, static_cast<int>(i)});
  }
  std::vector<int64_t> all(recs.size(), 1000);
  for (auto& v : per_rank) {
    std::sort(v.begin(), v.end());
    std::vector<int64_t> d = marker_durations(v, recs.size());
    for (auto& [t, i] : v) all[static_cast<size_t>(i)] = d[static_cast<size_t>(i)];
  }
  return all;
}

}  // namespace

std::string write_perfetto(const Timeline& tl, const std::string& path) {
  std::string o = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto ev = [&](const std::string& body) {
    if (!first) o += ",\n";
    first = false;
    o += "{" + body + "}";
  };
  for (const RankInfo& r : tl.ranks) {
    ev(format("\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank %d (pid %d)\"}",
              r.rank, r.rank, r.pid));
    ev(format("\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}", r.rank,
              r.rank));
    const char* threads[] = {"MPI calls", "sends", "matches"};
    for (int t = 0; t < 3; ++t)
      ev(format("\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}", r.rank, t + 1,
                threads[t]));
  }
  for (const TimelineComm& c : tl.comms)
    for (auto& [rank, points] : c.depth)
      for (const DepthPoint& p : points)
        ev(format("\"ph\":\"C\",\"pid\":%d,\"name\":%s,\"ts\":%s,\"args\":{\"posted\":%d,\"unexpected\":%d}", rank,
                  json_string("queues " + c.label).c_str(), us(p.t).c_str(), p.posted, p.unexpected));
  for (size_t i = 0; i < tl.slices.size(); ++i) {
    const Slice& s = tl.slices[i];
    const TimelineComm& c = tl.comms[static_cast<size_t>(s.comm)];
    std::string name = json_string((s.queue ? "unexpected " : "posted ") + c.label);
    std::string common = format("\"cat\":\"%s\",\"name\":%s,\"id\":\"q%zu\",\"pid\":%d,\"tid\":0",
                                s.queue ? "unexpected_q" : "posted_q", name.c_str(), i, s.rank);
    ev("\"ph\":\"b\"," + common + ",\"ts\":" + us(s.begin) +
       format(",\"args\":{\"comm\":%s,\"peer\":%d,\"peer_world\":%d,\"tag\":%d,\"bytes\":%lld,\"uid\":%s,\"open\":%s}",
              json_string(c.label).c_str(), s.peer, tl.world_of(s.comm, s.peer), s.tag, static_cast<long long>(s.bytes),
              hex(s.uid).c_str(), s.open ? "true" : "false"));
    ev("\"ph\":\"e\"," + common + ",\"ts\":" + us(s.end));
  }
  for (const Call& c : tl.calls)
    ev(format(
        "\"ph\":\"X\",\"pid\":%d,\"tid\":1,\"name\":\"%s\",\"ts\":%s,\"dur\":%s,\"args\":{\"late_sender_ns\":%lld,"
        "\"late_receiver_ns\":%lld,\"waited_for\":%d}",
        c.rank, kCallName[c.kind], us(c.begin).c_str(), us(c.end - c.begin).c_str(),
        static_cast<long long>(c.late_sender), static_cast<long long>(c.late_receiver), c.peer_world));
  std::vector<int64_t> send_dur = durations(tl.sends), match_dur = durations(tl.matches);
  for (size_t i = 0; i < tl.sends.size(); ++i) {
    const SendRec& s = tl.sends[i];
    ev(format(
        "\"ph\":\"X\",\"pid\":%d,\"tid\":2,\"name\":\"send\",\"ts\":%s,\"dur\":%s,\"args\":{\"comm\":%s,\"dest\":%d,"
        "\"tag\":%d,\"bytes\":%lld,\"uid\":%s}",
        s.rank, us(s.t).c_str(), us(send_dur[i]).c_str(),
        json_string(tl.comms[static_cast<size_t>(s.comm)].label).c_str(), s.dest, s.tag,
        static_cast<long long>(s.bytes), hex(s.uid).c_str()));
  }
  for (size_t i = 0; i < tl.matches.size(); ++i) {
    const MatchRec& m = tl.matches[i];
    const Slice& s = tl.slices[static_cast<size_t>(m.slice)];
    ev(format(
        "\"ph\":\"X\",\"pid\":%d,\"tid\":3,\"name\":\"match\",\"ts\":%s,\"dur\":%s,\"args\":{\"comm\":%s,\"src\":%d,"
        "\"tag\":%d,\"queue\":\"%s\",\"uid\":%s}",
        m.rank, us(m.t).c_str(), us(match_dur[i]).c_str(),
        json_string(tl.comms[static_cast<size_t>(m.comm)].label).c_str(), m.src, m.tag,
        s.queue ? "unexpected" : "posted", hex(m.uid).c_str()));
  }
  for (size_t k = 0; k < tl.flows.size(); ++k) {
    const SendRec& s = tl.sends[static_cast<size_t>(tl.flows[k].send)];
    const MatchRec& m = tl.matches[static_cast<size_t>(tl.flows[k].match)];
    std::string args = format("\"args\":{\"send_uid\":%s,\"match_uid\":%s}", hex(s.uid).c_str(), hex(m.uid).c_str());
    ev(format("\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":%zu,\"pid\":%d,\"tid\":2,\"ts\":%s,", k,
              s.rank, us(s.t).c_str()) +
       args);
    ev(format("\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":%zu,\"pid\":%d,\"tid\":3,"
              "\"ts\":%s,",
              k, m.rank, us(m.t).c_str()) +
       args);
  }
  o += "\n],\n\"metadata\":{\"sonde\":{";
  o += format("\"ranks\":%zu,\"clock_error_ns\":%llu,\"backward_flows\":%llu,\"overflow_events\":%llu,"
              "\"unjoined_sends\":%llu,\"unjoined_matches\":%llu,\"origin_ns\":%lld,\"per_rank\":[",
              tl.ranks.size(), static_cast<unsigned long long>(tl.clock_error),
              static_cast<unsigned long long>(tl.backward_flows), static_cast<unsigned long long>(tl.overflow),
              static_cast<unsigned long long>(tl.unjoined_sends), static_cast<unsigned long long>(tl.unjoined_matches),
              static_cast<long long>(tl.origin));
  for (size_t i = 0; i < tl.ranks.size(); ++i) {
    const RankInfo& r = tl.ranks[i];
    ClockFit f = i < tl.clocks.size() ? tl.clocks[i] : ClockFit{};
    o += format("%s{\"rank\":%d,\"pid\":%d,\"buffered_events\":%llu,\"overflow_events\":%llu,\"clock_error_ns\":%llu,"
                "\"t_init_ns\":%llu,\"t_final_ns\":%llu,\"offset_init_ns\":%lld,\"offset_final_ns\":%lld,"
                "\"late_sender_ns\":%llu,\"late_receiver_ns\":%llu}",
                i ? "," : "", r.rank, r.pid, static_cast<unsigned long long>(r.buffered),
                static_cast<unsigned long long>(r.overflow), static_cast<unsigned long long>(r.clock_error),
                static_cast<unsigned long long>(f.t_init), static_cast<unsigned long long>(f.t_final),
                static_cast<long long>(f.off_init), static_cast<long long>(f.off_final),
                static_cast<unsigned long long>(r.late_sender), static_cast<unsigned long long>(r.late_receiver));
  }
  o += "]}}}\n";
  return write_file(path, o) ? std::string() : "cannot write " + path;
}

}  // namespace sonde::residence
