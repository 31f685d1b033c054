// Work that must run when an MPI call returns to the user, after the engine
// lock is released: today the MPI_T event callbacks registered at
// MPI_T_CB_REQUIRE_NONE (mpit/events.cc), which may call MPI and so cannot
// run inside the engine where their events are raised.
//
// Cost when nothing waits: every ABI function holds one CallReturn (declared
// by SONDE_ENTER before the engine guard, so it is destroyed after the lock
// is released); its destructor is one relaxed load and a branch.
//
// Contract: whoever queues work calls request_call_return() after queueing;
// the hook (installed once, by mpit at library load) decides what of the
// queued work belongs to the returning call and clears the flag itself
// (clear_call_return()) when nothing is left. The hook runs on the thread of
// the returning call, holding no Sonde lock.
#pragma once

#include <atomic>

namespace sonde::engine {

using CallReturnHook = void (*)();

extern std::atomic<bool> g_call_return_pending;

void set_call_return_hook(CallReturnHook hook);
inline void request_call_return() { g_call_return_pending.store(true, std::memory_order_release); }
inline void clear_call_return() { g_call_return_pending.store(false, std::memory_order_relaxed); }

// Out of line: runs the hook (the slow path of ~CallReturn).
void run_call_return();

class CallReturn {
 public:
  CallReturn() = default;
  ~CallReturn() {
    if (g_call_return_pending.load(std::memory_order_relaxed)) [[unlikely]]
      run_call_return();
  }
  CallReturn(const CallReturn&) = delete;
  CallReturn& operator=(const CallReturn&) = delete;
};

}  // namespace sonde::engine
