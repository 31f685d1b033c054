// The timeline's figures in the text and CSV summaries: wait states per rank
// and per (communicator, rank, peer), what the event buffer could not hold,
// how well the clocks agree, and flows that could not be joined.
#include <algorithm>
#include <string>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

namespace {

// A peer's rank in the communicator, from its world rank ("*" if unknown).
std::string comm_peer(const TimelineComm& c, int world) {
  auto it = std::find(c.world.begin(), c.world.end(), world);
  return it == c.world.end() ? std::string("?") : std::to_string(it - c.world.begin());
}

std::string wait_row(const std::string& rank, const TimelineComm& c, const std::string& peer, const char* metric,
                     const Histogram& h) {
  CommReport r;
  r.label = c.label;
  r.name = c.name;
  r.size = c.size;
  return csv_time_row(rank, r, peer, 0, metric, h);
}

double share(uint64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

}  // namespace

std::string timeline_csv(const Timeline& tl) {
  std::string out;
  for (const TimelineComm& c : tl.comms) {
    Histogram ls, lr;
    for (auto& [pair, w] : c.waits) {
      std::string rank = std::to_string(pair.first), peer = comm_peer(c, pair.second);
      if (w.ls.count) out += wait_row(rank, c, peer, "late_sender", w.ls);
      if (w.lr.count) out += wait_row(rank, c, peer, "late_receiver", w.lr);
      ls.merge(w.ls);
      lr.merge(w.lr);
    }
    if (ls.count) out += wait_row("all", c, "*", "late_sender", ls);
    if (lr.count) out += wait_row("all", c, "*", "late_receiver", lr);
  }
  for (const RankInfo& r : tl.ranks) {
    std::string rank = std::to_string(r.rank);
    out += csv_value_row(rank, nullptr, "user", "late_sender_ns", r.late_sender);
    out += csv_value_row(rank, nullptr, "user", "late_receiver_ns", r.late_receiver);
    out += csv_value_row(rank, nullptr, "*", "run_ns",
                         static_cast<unsigned long long>(std::max<int64_t>(0, r.end - r.begin)));
    out += csv_value_row(rank, nullptr, "*", "buffered_events", r.buffered);
    out += csv_value_row(rank, nullptr, "*", "buffer_overflow_events", r.overflow);
  }
  out += csv_value_row("all", nullptr, "*", "buffer_overflow_events", tl.overflow);
  out += csv_value_row("all", nullptr, "*", "clock_error_ns", tl.clock_error);
  out += csv_value_row("all", nullptr, "*", "backward_flows", tl.backward_flows);
  out += csv_value_row("all", nullptr, "*", "unjoined_sends", tl.unjoined_sends);
  out += csv_value_row("all", nullptr, "*", "unjoined_matches", tl.unjoined_matches);
  return out;
}

std::string timeline_text(const Timeline& tl) {
  std::string out = "\n  timeline: ";
  if (!tl.enabled) return out + "off (SONDE_RESIDENCE_EVENTS=0): no wait states, no traces\n";
  uint64_t buffered = 0;
  for (const RankInfo& r : tl.ranks) buffered += r.buffered;
  out += format("%llu events buffered, %llu did not fit (buffer overflow)%s\n",
                static_cast<unsigned long long>(buffered), static_cast<unsigned long long>(tl.overflow),
                tl.overflow ? ": the timeline covers the start of the run only" : "");
  out += format("  clocks on rank 0's (offsets at MPI_Init and MPI_Finalize): error within %s; %llu of %zu arrows "
                "run backwards; %llu sends and %llu receives not joined\n",
                human(static_cast<double>(tl.clock_error)).c_str(), static_cast<unsigned long long>(tl.backward_flows),
                tl.flows.size(), static_cast<unsigned long long>(tl.unjoined_sends),
                static_cast<unsigned long long>(tl.unjoined_matches));
  out += "  wait states (late sender: blocked in a receive while it sat in the posted queue; late receiver:\n"
         "  blocked in a blocking send from its start until the receiver posted the matching receive)\n";
  out += format("    %-6s %12s %8s %12s %8s\n", "rank", "late sender", "share", "late recv", "share");
  for (const RankInfo& r : tl.ranks)
    out += format("    %-6d %12s %7.2f%% %12s %7.2f%%\n", r.rank, human(static_cast<double>(r.late_sender)).c_str(),
                  share(r.late_sender, r.end - r.begin), human(static_cast<double>(r.late_receiver)).c_str(),
                  share(r.late_receiver, r.end - r.begin));
  return out;
}

}  // namespace sonde::residence
