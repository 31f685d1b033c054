// Operations that progress() advances on behalf of the layers above the
// core: nonblocking collectives (coll/), nonblocking communicator
// duplication (comm/), MPI_Isendrecv (core/sendrecv.h). The core names none
// of them: each registers one hook when the library loads and reports how
// many of its operations are in flight. While none is, progress() pays one
// load and a predictable branch for all of them together.
#pragma once

namespace sonde::engine {

struct ProgressHook {
  // Advances this module's operations; returns how many moved.
  int (*run)();
  // Operations in flight; written only through set_in_flight().
  int in_flight = 0;
};

// Registers `hook` (static storage, registered once, at library load;
// at most kMaxProgressHooks of them).
inline constexpr int kMaxProgressHooks = 8;
void register_progress_hook(ProgressHook* hook);

// `hook` now has `n` operations in flight.
void set_in_flight(ProgressHook* hook, int n);

// Operations in flight over every hook (progress() tests it).
extern int g_hooked_in_flight;

// Runs every hook with operations in flight; returns how many moved.
int run_progress_hooks();

}  // namespace sonde::engine
