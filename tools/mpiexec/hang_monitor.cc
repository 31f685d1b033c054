// Snapshots and hang reports in the launcher (hang_monitor.h).
#include "tools/mpiexec/hang_monitor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tools/mpiexec/output.h"

namespace sonde::mpiexec {
namespace {

// What moves when a job makes progress: each rank's arrival counter and
// collective counts, and which ranks are still there.
std::string signature(const std::vector<RankSnapshot>& ranks) {
  std::string s;
  for (const auto& r : ranks) {
    s +=
        std::to_string(r.rank) + ":" + std::to_string(static_cast<int>(r.condition)) + ":" + std::to_string(r.arrivals);
    for (const auto& c : r.comms) s += "," + std::to_string(c.ctx) + "=" + std::to_string(c.coll);
    s += ";";
  }
  return s;
}

// An asker (mpiexec --snapshot) that stops reading loses its report.
constexpr int kReplyStallMs = 5000;

double seconds_between(HangMonitor::Clock::time_point a, HangMonitor::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

HangMonitor::HangMonitor(std::string program_name, double hang_seconds, bool json, Collect collect, SlotNames names)
    : program_name_(std::move(program_name)),
      hang_seconds_(hang_seconds),
      json_(json),
      collect_(std::move(collect)),
      names_(std::move(names)) {
  start_ = last_change_ = Clock::now();
  next_ = start_ + period();
}

HangMonitor::Clock::duration HangMonitor::period() const {
  const double p = std::clamp(hang_seconds_ / 4, 0.1, 2.0);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p));
}

std::optional<HangMonitor::Clock::time_point> HangMonitor::next_tick() const {
  if (hang_seconds_ <= 0) return std::nullopt;
  return next_;
}

std::vector<RankSnapshot> HangMonitor::take() {
  std::vector<SnapshotAnswer> answers = collect_(++seq_);
  std::vector<RankSnapshot> ranks;
  for (const auto& a : answers) {
    RankSnapshot r;
    if (a.host_silent) {
      r.rank = a.rank;
      r.condition = RankCondition::kHostSilent;
    } else if (!a.running || !a.ready) {
      r.rank = a.rank;
      r.condition = a.running ? RankCondition::kNoMpi : RankCondition::kExited;
    } else {
      r = parse_rank_snapshot(a.rank, a.answered ? a.text : "");
    }
    r.host = a.host;
    ranks.push_back(std::move(r));
  }
  std::sort(ranks.begin(), ranks.end(), [](const auto& x, const auto& y) { return x.rank < y.rank; });
  if (names_.proc_of && names_.slot_of) world_to_slots(ranks, names_);
  ages_.stamp(ranks, seconds_between(start_, Clock::now()));
  return ranks;
}

bool HangMonitor::tick(Clock::time_point now) {
  if (hang_seconds_ <= 0 || now < next_) return false;
  std::vector<RankSnapshot> ranks = take();
  const auto after = Clock::now();
  next_ = after + period();
  const std::string sig = signature(ranks);
  // A running rank never seen listening is still starting (MPI_Init can
  // take seconds across hosts): no stall accrues before every rank has
  // answered once.
  bool starting = false;
  for (const auto& r : ranks) {
    if (r.condition == RankCondition::kNoMpi) {
      starting = starting || !listened_.count(r.rank);
    } else if (r.condition != RankCondition::kExited) {
      listened_.insert(r.rank);
    }
  }
  if (!watched_ || sig != last_signature_ || starting) {
    watched_ = true;
    last_signature_ = sig;
    last_change_ = after;
    return false;
  }
  const double stalled = seconds_between(last_change_, after);
  if (stalled < hang_seconds_) return false;
  print(ranks, "hang", stalled);
  return true;
}

void HangMonitor::report(const std::string& what, std::optional<SnapshotReply> reply) {
  std::vector<RankSnapshot> ranks = take();
  print(ranks, what, watched_ ? seconds_between(last_change_, Clock::now()) : 0, reply);
}

void HangMonitor::print(const std::vector<RankSnapshot>& ranks, const std::string& what, double stalled,
                        std::optional<SnapshotReply> reply) {
  HangAnalysis a = analyze_hang(ranks);
  if (what == "snapshot") {
    // A busy job waits in cycles for a moment all the time: only a stall
    // makes one a deadlock.
    for (auto& f : a.findings) {
      if (f.kind != "deadlock") continue;
      f.kind = "cycle";
      f.text = "waiting in a cycle at this moment: " + f.text.substr(f.text.find(": ") + 2);
      f.json = "{\"kind\":\"cycle\"" + f.json.substr(f.json.find(','));
    }
  }
  if (reply) {
    // The asker's copy, unprefixed, in the form it asked for.
    const std::string text = reply->json ? report_json(ranks, a, what, stalled) : report_words(ranks, a, what, stalled);
    write_output(reply->fd, text, kReplyStallMs);
    close(reply->fd);
  }
  std::string text = json_ ? report_json(ranks, a, what, stalled) : report_words(ranks, a, what, stalled);
  if (!json_) {
    // Every line under the launcher's name, as its other messages.
    std::string prefixed;
    size_t i = 0;
    while (i < text.size()) {
      size_t end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      prefixed += program_name_ + ": " + text.substr(i, end - i) + "\n";
      i = end + 1;
    }
    text = prefixed;
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace sonde::mpiexec
