// The launcher's use of snapshots: one on SIGUSR1, one when --timeout ends
// the job, and with --hang-report S a light watch that takes a snapshot
// every S/4 (at least 0.1 s, at most 2 s apart) and, when no rank's
// arrival counter or collective count has moved for S seconds, prints the
// hang report and asks the job to end as --timeout would (docs/launch.md).
// The S seconds count only once every running rank has answered a
// snapshot at least once: a rank still starting (or one whose program
// keeps the snapshot signal) holds the watch off, and --timeout alone
// applies.
// The ranks are asked only while one of these is on: a job run without
// them is never signalled.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tools/mpiexec/hang_report.h"
#include "tools/mpiexec/snapshot.h"
#include "tools/mpiexec/snapshot_request.h"

namespace sonde::mpiexec {

class HangMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  // Takes request `seq` of every rank of the job (this host's, or every
  // host's through their daemons) and returns one answer per rank.
  using Collect = std::function<std::vector<SnapshotAnswer>(uint64_t seq)>;

  // `names`: the launcher's slots and their PMIx names, so that members
  // of spawned and connected jobs count as the slots they are
  // (world_to_slots); without it, every member is read as a slot.
  HangMonitor(std::string program_name, double hang_seconds, bool json, Collect collect, SlotNames names = {});

  // When tick() next wants to run; none without --hang-report.
  std::optional<Clock::time_point> next_tick() const;
  // Takes the watch's snapshot when due; true when the job has made no
  // progress for hang_seconds (the report is printed).
  bool tick(Clock::time_point now);
  // Takes a snapshot now and prints it: `what` is "snapshot" or "timeout".
  // With `reply`, the report also goes there (in the form it asks for),
  // and the descriptor is closed.
  void report(const std::string& what, std::optional<SnapshotReply> reply = std::nullopt);

 private:
  Clock::duration period() const;
  std::vector<RankSnapshot> take();
  void print(const std::vector<RankSnapshot>& ranks, const std::string& what, double stalled,
             std::optional<SnapshotReply> reply = std::nullopt);

  std::string program_name_;
  double hang_seconds_;
  bool json_;
  Collect collect_;
  SlotNames names_;
  uint64_t seq_ = 0;
  EntryAges ages_;
  Clock::time_point start_, next_, last_change_;
  std::string last_signature_;
  bool watched_ = false;
  std::set<int> listened_;  // ranks that have answered (or been reported silent) once
};

}  // namespace sonde::mpiexec
