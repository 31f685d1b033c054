// Asking the ranks of this host for their state: the launcher's half of the
// snapshot protocol whose rank half is runtime/snapshot.h (the text format
// is documented there and in docs/launch.md, "When a job hangs").
//
// The launcher gives every rank SONDE_SNAPSHOT_DIR (snapshot_dir below).
// A request: write the next number N to DIR/request (through a rename),
// send the snapshot signal to every running rank that has created
// DIR/ready-R (its handler is in place: a rank still starting, or one whose
// program keeps the signal for itself, is never signalled), then read DIR/rank-R
// until each one's "seq" line says N. A rank that has not answered after
// `bound` is reported as silent; silent ranks get the signal again every
// kResignal, since a rank inside MPI but not waiting answers only at its
// next wait or when the signal lands in its own code.
//
// Across hosts each sonde-hostd does this for its own ranks when mpiexec
// asks (control.h: kSnapshotRequest) and sends the answers back; mpiexec
// waits kSnapshotBound + kRelayGrace for every daemon and reports the
// ranks of a host whose daemon has not answered by then as such.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sonde::mpiexec {

inline constexpr auto kSnapshotBound = std::chrono::milliseconds(2000);
inline constexpr auto kResignal = std::chrono::milliseconds(100);
inline constexpr auto kRelayGrace = std::chrono::milliseconds(2000);

struct SnapshotTarget {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;  // false: exited (not asked)
  // A spawned job's ranks answer in a directory of their own, under their
  // rank in that job: `dir` (empty: collect_snapshot's) and `file_rank`
  // (-1: `rank`).
  std::string dir;
  int file_rank = -1;
};

struct SnapshotAnswer {
  int rank = 0;
  bool running = false;
  bool ready = false;  // DIR/ready-R exists: the rank listens for the signal
  bool answered = false;
  std::string text;  // the rank's snapshot text when answered
  std::string host;  // the host the rank runs on ("" if unknown)
  // Across hosts: the rank's daemon did not answer within the bound (its
  // ranks' state is unknown).
  bool host_silent = false;
};

// DIR under the job's private temporary directory (created, mode 0700).
std::string snapshot_dir(const std::string& tmpdir);

// The snapshot signal the ranks listen for.
int snapshot_signal();

// Takes request `seq` (greater than any before) of the ranks in `targets`,
// signalling them with `sig`. Returns within `bound` (plus one poll).
std::vector<SnapshotAnswer> collect_snapshot(const std::string& dir, uint64_t seq,
                                             const std::vector<SnapshotTarget>& targets,
                                             std::chrono::milliseconds bound = kSnapshotBound,
                                             int sig = snapshot_signal());

}  // namespace sonde::mpiexec
