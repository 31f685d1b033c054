// Where the process stands for a snapshot of its state (runtime/snapshot.h):
// the MPI call it is in, and a snapshot request waiting to be served.
//
// The marker is one pointer store at each entry and exit of an MPI call
// (ApiGuard in binding/c/abi.h), nothing on the message path. A snapshot
// request arrives as a signal: its handler serves it at once when the
// process is in user code (the queues are quiescent then), else sets
// g_snapshot_pending, which a blocking wait tests only on passes that
// moved nothing (Engine::idle), and a Test/Iprobe loop only on the rare
// pass that watches its peers (Engine::fruitless); either serves it between
// two progress passes.
#pragma once

#include <signal.h>

#include <atomic>

namespace sonde::engine {

// The name of the MPI call in progress ("MPI_Recv"), or null in user code.
// Written only by the thread that holds the engine (the only one under
// MPI_THREAD_SINGLE .. SERIALIZED; the lock holder under MULTIPLE); read
// by the snapshot signal handler on the same thread.
extern const char* g_current_call;

// Marks the calling thread as inside MPI call `name` until the matching
// leave(); nests (a callback that calls MPI restores the outer name). The
// signal fences keep the compiler from moving queue updates across the
// marker; they emit no instruction.
class CurrentCall {
 public:
  static const char* enter(const char* name) {
    const char* outer = g_current_call;
    g_current_call = name;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return outer;
  }
  static void leave(const char* outer) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_current_call = outer;
  }
};

// A snapshot was asked for while the process was inside MPI.
extern volatile sig_atomic_t g_snapshot_pending;
// What serves it (set by the runtime, runtime/snapshot.h); null: nothing.
extern void (*g_snapshot_serve)();
// Serves a pending request now (the caller is at a point where the engine's
// state is consistent: between progress passes, holding the engine lock
// where one is on).
void serve_pending_snapshot();

}  // namespace sonde::engine
