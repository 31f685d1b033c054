// Dynamic processes through the PMIx client: spawning a job, fences and
// reads across namespaces, and the name service (publish/lookup). Used by
// the runtime for MPI_Comm_spawn, MPI_Comm_accept/connect and friends.
//
// Every call needs the process to be a PMIx client (Wireup::connect found a
// server); otherwise, and when the server refuses or does not support the
// operation, it returns an Error saying why, never waits forever on its own.
// Calls are not synchronized; the engine serializes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmi/proc_list.h"  // Proc, and the text forms of process lists

namespace sonde::dynamic {

enum class Status {
  kOk,
  kNotFound,      // spawn: a program, directory or host that does not exist; lookup: no such name
  kNotSupported,  // no PMIx server, or the server does not offer this
  kDuplicate,     // publish: the name exists already
  kFailed,        // anything else (message in Error::text)
};
struct Error {
  Status status = Status::kOk;
  std::string text;
  explicit operator bool() const { return status != Status::kOk; }
};

struct App {
  std::string command;
  std::vector<std::string> args;  // after the program name
  std::vector<std::string> env;   // NAME=value added to the children's environment
  std::string wdir, path, host;   // empty: the launcher's choice
  std::string hostfile;           // a hostfile's path; empty: none
  int procs = 1;
};
// PMIx_Spawn: starts `apps` as one new job; its namespace in *nspace.
Error spawn(const std::vector<App>& apps, std::string* nspace);

// Publishes `value` under `key` (a PMIx_Put) for the processes of `procs`;
// then fence() over the same list (every member calls both, in the same
// order) makes every member's value readable with get().
Error put(std::string_view key, std::string_view value);
Error fence(const std::vector<Proc>& procs);
// Looks in what the local PMIx server holds first; a value it lacks (some
// servers bring another host's values of another namespace along with no
// fence) is then asked of the server of `proc`'s host, for at most 30 s.
std::optional<std::string> get(const Proc& proc, std::string_view key);

// The name service (PMIx_Publish / PMIx_Lookup / PMIx_Unpublish).
Error publish(const std::string& key, const std::string& value);
// With `wait`, blocks until the name is published (the server decides how
// long a wait may last); otherwise kNotFound at once.
Error lookup(const std::string& key, bool wait, std::string* value);
Error unpublish(const std::string& key);

}  // namespace sonde::dynamic
