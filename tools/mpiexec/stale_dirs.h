// Private directories of launchers that died without cleaning up.
//
// mpiexec and sonde-hostd each keep the PMIx server's files in a directory
// of their own, $TMPDIR/sonde-mpiexec-XXXXXX (cleanup.h), and remove it when
// they end. Killed with SIGKILL they cannot; so each one writes an owner
// record into its directory, and the next one to make a directory under the
// same $TMPDIR removes the directories whose owner is certainly gone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sonde::mpiexec {

// Who made a private directory. `start` is the owner's start time in clock
// ticks since boot (/proc/PID/stat field 22), so a reused pid is not
// mistaken for the owner.
struct DirOwner {
  std::string host;     // gethostname()
  std::string boot_id;  // /proc/sys/kernel/random/boot_id
  std::string pid_ns;   // readlink /proc/self/ns/pid, e.g. "pid:[4026531836]"
  long pid = 0;
  unsigned long long start = 0;
  std::string job_id;  // its job's shared-memory objects, /dev/shm/sonde-<job_id>-*; may be empty
};

// The owner file's name inside a private directory.
constexpr const char* kOwnerFile = ".sonde-owner";

// The record for this process.
DirOwner current_owner(const std::string& job_id);

// The file's text, and back: parse_owner rejects anything that is not
// exactly what format_owner writes (nullopt), so a damaged or foreign file
// never makes a directory look abandoned.
std::string format_owner(const DirOwner& o);
std::optional<DirOwner> parse_owner(std::string_view text);

// Whether `o` is certainly dead as seen by `self`: same host and pid
// namespace, and either another boot or no process `o.pid` with start time
// `o.start`. Anything else (another host sharing the directory, another pid
// namespace) is presumed alive.
bool owner_is_dead(const DirOwner& o, const DirOwner& self);

// Writes `o` into `dir` atomically (a temporary file, then rename).
// Returns false if it could not.
bool write_owner(const std::string& dir, const DirOwner& o);

// Removes every directory `base`/sonde-mpiexec-* that is ours (our uid, a
// real directory, mode 0700) and holds an owner record of a dead owner, with
// that job's shared-memory objects under `shm_dir`. Directories without a
// valid record (being made right now, or not Sonde's) are left alone.
// Returns how many directories it removed.
int sweep_stale_dirs(const std::string& base, const std::string& shm_dir = "/dev/shm");

}  // namespace sonde::mpiexec
