// The process's MPI state, in one object: where the World model is
// (MPI_Init .. MPI_Finalize), whether the engine runs and for how many
// sessions, the thread that initialized MPI, the time origin of MPI_Wtime,
// the engine lock every entry point takes under MPI_THREAD_MULTIPLE, and
// the work that runs when an entry point returns (CallReturn).
// The runtime (runtime/lifecycle.h) is the only writer; every layer may read.
#pragma once

#include <pthread.h>

#include <atomic>

namespace sonde::engine {

struct ProcessState {
  int world_model = 0;        // 0 before MPI_Init, 1 initialized, 2 after MPI_Finalize
  bool engine_up = false;     // the engine runs (for the World model or a session)
  int sessions = 0;           // MPI sessions open
  bool lock_enabled = false;  // MPI_THREAD_MULTIPLE: EngineLock is taken
  double time_origin = 0;     // MPI_Wtime's zero (CLOCK_MONOTONIC seconds)
  pthread_t main_thread{};    // the thread that started the engine
  // The job's id as POSIX shared-memory names carry it ("/sonde-<id>-..."),
  // which the launcher removes after the job: empty when it has none.
  char shm_job_id[48] = {};
};

// The one process-state object: constant-initialized and trivially
// destructible, so it is valid before any constructor runs and after exit
// handlers, and reading it costs no guard.
extern ProcessState g_process_state;
inline ProcessState& process() { return g_process_state; }

// Where MPI calls stand: 0 before MPI_Init, 1 while MPI may be called (the
// World model is initialized, or a session is open on a running engine), 2
// after MPI_Finalize with no session open.
inline int init_state() {
  const ProcessState& p = process();
  return p.world_model == 1 || (p.engine_up && p.sessions > 0) ? 1 : p.world_model;
}

// The engine lock: a recursive mutex, taken by every entry point when the
// thread level is MPI_THREAD_MULTIPLE; waits release it between progress
// passes so other threads move too.
class EngineLock {
 public:
  static void lock();
  static void unlock();
  static bool enabled() { return process().lock_enabled; }
  // The lock is on and this thread holds it (at any depth).
  static bool held_by_me();
};

// ---- work run when an MPI call returns
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
