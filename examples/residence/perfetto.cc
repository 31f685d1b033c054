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
#include <charconv>
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

// Appends JSON pieces to one string without a format string per value (a
// trace holds several records per message; printf per field dominated the
// time MPI_Finalize spent writing it).
class Json {
 public:
  explicit Json(std::string& o) : o_(o) {}
  Json& raw(const char* s) {
    o_ += s;
    return *this;
  }
  Json& raw(const std::string& s) {
    o_ += s;
    return *this;
  }
  Json& num(long long v) {
    char buf[24];
    o_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    return *this;
  }
  Json& unum(unsigned long long v) {
    char buf[24];
    o_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    return *this;
  }
  // ns as µs with three decimals.
  Json& us(int64_t ns) {
    if (ns < 0) o_ += '-';
    unsigned long long a = ns < 0 ? 0ull - static_cast<unsigned long long>(ns) : static_cast<unsigned long long>(ns);
    unum(a / 1000);
    char frac[4] = {'.', char('0' + a % 1000 / 100), char('0' + a % 100 / 10), char('0' + a % 10)};
    o_.append(frac, 4);
    return *this;
  }
  // "0x..." (a quoted hexadecimal PERUSE unique id).
  Json& hex(uint64_t v) {
    char buf[20];
    o_ += "\"0x";
    o_.append(buf, std::to_chars(buf, buf + sizeof buf, v, 16).ptr);
    o_ += '"';
    return *this;
  }

 private:
  std::string& o_;
};

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
  Json j(o);
  bool first = true;
  // Starts the next event: the separator and its opening brace.
  auto ev = [&]() -> Json& {
    if (!first) o += ",\n";
    first = false;
    return j.raw("{");
  };
  // The communicators' labels, quoted once.
  std::vector<std::string> label, posted_name, unexpected_name, queues_name;
  for (const TimelineComm& c : tl.comms) {
    label.push_back(json_string(c.label));
    posted_name.push_back(json_string("posted " + c.label));
    unexpected_name.push_back(json_string("unexpected " + c.label));
    queues_name.push_back(json_string("queues " + c.label));
  }
  for (const RankInfo& r : tl.ranks) {
    ev().raw("\"ph\":\"M\",\"pid\":")
        .num(r.rank)
        .raw(",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank ");
    j.num(r.rank).raw(" (pid ").num(r.pid).raw(")\"}}");
    ev().raw("\"ph\":\"M\",\"pid\":").num(r.rank).raw(",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{");
    j.raw("\"sort_index\":").num(r.rank).raw("}}");
    const char* threads[] = {"MPI calls", "sends", "matches"};
    for (int t = 0; t < 3; ++t) {
      ev().raw("\"ph\":\"M\",\"pid\":").num(r.rank).raw(",\"tid\":").num(t + 1);
      j.raw(",\"name\":\"thread_name\",\"args\":{\"name\":\"").raw(threads[t]).raw("\"}}");
    }
  }
  for (size_t ci = 0; ci < tl.comms.size(); ++ci)
    for (auto& [rank, points] : tl.comms[ci].depth)
      for (const DepthPoint& p : points) {
        ev().raw("\"ph\":\"C\",\"pid\":").num(rank).raw(",\"name\":").raw(queues_name[ci]).raw(",\"ts\":").us(p.t);
        j.raw(",\"args\":{\"posted\":").num(p.posted).raw(",\"unexpected\":").num(p.unexpected).raw("}}");
      }
  for (size_t i = 0; i < tl.slices.size(); ++i) {
    const Slice& s = tl.slices[i];
    const size_t ci = static_cast<size_t>(s.comm);
    auto common = [&] {
      j.raw(",\"cat\":\"").raw(s.queue ? "unexpected_q" : "posted_q").raw("\",\"name\":");
      j.raw(s.queue ? unexpected_name[ci] : posted_name[ci]).raw(",\"id\":\"q").unum(i).raw("\",\"pid\":").num(s.rank);
      j.raw(",\"tid\":0");
    };
    ev().raw("\"ph\":\"b\"");
    common();
    j.raw(",\"ts\":").us(s.begin).raw(",\"args\":{\"comm\":").raw(label[ci]).raw(",\"peer\":").num(s.peer);
    j.raw(",\"peer_world\":").num(tl.world_of(s.comm, s.peer)).raw(",\"tag\":").num(s.tag);
    j.raw(",\"bytes\":").num(static_cast<long long>(s.bytes)).raw(",\"uid\":").hex(s.uid);
    j.raw(",\"open\":").raw(s.open ? "true" : "false").raw("}}");
    ev().raw("\"ph\":\"e\"");
    common();
    j.raw(",\"ts\":").us(s.end).raw("}");
  }
  for (const Call& c : tl.calls) {
    ev().raw("\"ph\":\"X\",\"pid\":").num(c.rank).raw(",\"tid\":1,\"name\":\"").raw(kCallName[c.kind]);
    j.raw("\",\"ts\":").us(c.begin).raw(",\"dur\":").us(c.end - c.begin);
    j.raw(",\"args\":{\"late_sender_ns\":").num(static_cast<long long>(c.late_sender));
    j.raw(",\"late_receiver_ns\":").num(static_cast<long long>(c.late_receiver));
    j.raw(",\"waited_for\":").num(c.peer_world).raw("}}");
  }
  std::vector<int64_t> send_dur = durations(tl.sends), match_dur = durations(tl.matches);
  for (size_t i = 0; i < tl.sends.size(); ++i) {
    const SendRec& s = tl.sends[i];
    ev().raw("\"ph\":\"X\",\"pid\":").num(s.rank).raw(",\"tid\":2,\"name\":\"send\",\"ts\":").us(s.t);
    j.raw(",\"dur\":").us(send_dur[i]).raw(",\"args\":{\"comm\":").raw(label[static_cast<size_t>(s.comm)]);
    j.raw(",\"dest\":").num(s.dest).raw(",\"tag\":").num(s.tag).raw(",\"bytes\":").num(static_cast<long long>(s.bytes));
    j.raw(",\"uid\":").hex(s.uid).raw("}}");
  }
  for (size_t i = 0; i < tl.matches.size(); ++i) {
    const MatchRec& m = tl.matches[i];
    const Slice& s = tl.slices[static_cast<size_t>(m.slice)];
    ev().raw("\"ph\":\"X\",\"pid\":").num(m.rank).raw(",\"tid\":3,\"name\":\"match\",\"ts\":").us(m.t);
    j.raw(",\"dur\":").us(match_dur[i]).raw(",\"args\":{\"comm\":").raw(label[static_cast<size_t>(m.comm)]);
    j.raw(",\"src\":").num(m.src).raw(",\"tag\":").num(m.tag).raw(",\"queue\":\"");
    j.raw(s.queue ? "unexpected" : "posted").raw("\",\"uid\":").hex(m.uid).raw("}}");
  }
  for (size_t k = 0; k < tl.flows.size(); ++k) {
    const SendRec& s = tl.sends[static_cast<size_t>(tl.flows[k].send)];
    const MatchRec& m = tl.matches[static_cast<size_t>(tl.flows[k].match)];
    auto args = [&] { j.raw("\"args\":{\"send_uid\":").hex(s.uid).raw(",\"match_uid\":").hex(m.uid).raw("}}"); };
    ev().raw("\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":").unum(k).raw(",\"pid\":").num(s.rank);
    j.raw(",\"tid\":2,\"ts\":").us(s.t).raw(",");
    args();
    ev().raw("\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":").unum(k);
    j.raw(",\"pid\":").num(m.rank).raw(",\"tid\":3,\"ts\":").us(m.t).raw(",");
    args();
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
