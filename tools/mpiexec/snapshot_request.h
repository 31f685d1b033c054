// `mpiexec --snapshot PID [--json]`: a snapshot of a running job asked for
// from another shell and printed there (stdout), as well as on the job's
// own stderr as SIGUSR1 does.
//
// The asking process makes a FIFO in a private directory, opens it for
// reading and sends the job's mpiexec (PID) SIGUSR1 with sigqueue, the
// value saying which of its descriptors is the FIFO and whether it wants
// JSON. The job's mpiexec, reading the signal's sender from its signalfd,
// takes the snapshot and writes the report into /proc/SENDER/fd/N, then
// closes it: the asker prints what it read until the end of the stream.
// Only a sender of the same user (or root) is answered that way; a plain
// SIGUSR1 (kill) prints on the job's stderr only. A process that neither
// blocks nor catches SIGUSR1 is refused before anything is sent (the
// signal would kill it).
#pragma once

#include <sys/signalfd.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace sonde::mpiexec {

// The asking side: returns the exit status (0 with the report printed; 1
// when PID is not a running Sonde mpiexec or did not answer in time).
int request_snapshot(const std::string& program_name, pid_t pid, bool json);

// Where the job's mpiexec writes the report for the process that sent this
// SIGUSR1, if it asked through request_snapshot (the descriptor is open for
// writing, close-on-exec).
struct SnapshotReply {
  int fd = -1;
  bool json = false;
};
std::optional<SnapshotReply> open_snapshot_reply(const signalfd_siginfo& si);

}  // namespace sonde::mpiexec
