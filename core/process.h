// The process's MPI state, in one object: where the World model is
// (MPI_Init .. MPI_Finalize), whether the engine runs and for how many
// sessions, the thread that initialized MPI, the time origin of MPI_Wtime,
// and the engine lock every entry point takes under MPI_THREAD_MULTIPLE.
// The runtime (runtime/lifecycle.h) is the only writer; every layer may read.
#pragma once

#include <pthread.h>

namespace sonde::engine {

struct ProcessState {
  int world_model = 0;        // 0 before MPI_Init, 1 initialized, 2 after MPI_Finalize
  bool engine_up = false;     // the engine runs (for the World model or a session)
  int sessions = 0;           // MPI sessions open
  bool lock_enabled = false;  // MPI_THREAD_MULTIPLE: EngineLock is taken
  double time_origin = 0;     // MPI_Wtime's zero (CLOCK_MONOTONIC seconds)
  pthread_t main_thread{};    // the thread that started the engine
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

}  // namespace sonde::engine
