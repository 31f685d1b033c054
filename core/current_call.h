// Where the process stands for a snapshot of its state (runtime/snapshot.h):
// the MPI call it is in, the probe it waits in, and a snapshot request
// waiting to be served.
//
// The marker is one pointer store at each entry and exit of an MPI call
// (ApiGuard in binding/c/abi.h), nothing on the message path. It is set in
// every call, nonblocking ones included, because it is also what tells the
// signal handler that the queues may be changing: a request arriving in
// user code is served at once (the queues are quiescent then), one arriving
// inside MPI sets g_snapshot_pending, which a blocking wait tests only on
// passes that moved nothing (Engine::idle), and a Test/Iprobe loop only on
// the rare pass that watches its peers (Engine::fruitless); either serves
// it between two progress passes.
//
// Threads: under MPI_THREAD_SINGLE .. SERIALIZED one thread at a time is in
// MPI and the marker is one per process (g_current_call). Under
// MPI_THREAD_MULTIPLE threads interleave inside MPI (a blocking wait lets
// the engine lock go between passes), so each thread keeps its own
// (t_current_call), and the thread that serves a pending request (the
// lock holder, in its wait) names its own call.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

#define SONDE_SIGNAL_TLS __attribute__((tls_model("initial-exec")))

namespace sonde::engine {

// The name of the MPI call in progress ("MPI_Recv"), or null in user code.
// g_current_call: written by the one thread in MPI (MPI_THREAD_SINGLE ..
// SERIALIZED) and read by the snapshot signal handler; t_current_call: the
// calling thread's, under MPI_THREAD_MULTIPLE (written while it holds the
// engine lock). Initial-exec TLS: one %fs-relative access, safe in a signal
// handler.
extern constinit const char* g_current_call;
extern constinit thread_local const char* t_current_call SONDE_SIGNAL_TLS;

// Marks the calling thread as inside MPI call `name` until the matching
// leave(); nests (a callback that calls MPI restores the outer name). The
// signal fences keep the compiler from moving queue updates across the
// marker; they emit no instruction. `marker`: g_current_call, or
// t_current_call under MPI_THREAD_MULTIPLE.
class CurrentCall {
 public:
  static const char* enter(const char*& marker, const char* name) {
    const char* outer = marker;
    marker = name;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return outer;
  }
  static void leave(const char*& marker, const char* outer) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    marker = outer;
  }
};

// What a probe that has found nothing waits for: a communicator's context
// id, the source (a rank in it, or MPI_ANY_SOURCE) and tag (or
// MPI_ANY_TAG), and the call ("MPI_Probe").
struct ProbeWait {
  uint32_t context = 0;
  int source = 0;
  int tag = 0;
  const char* call = nullptr;  // null: no record
  uint64_t since = 0;          // core/stamp.h: when it began to wait (or was seen polling)
};
// The calling thread's blocking probe (MPI_Probe, MPI_Mprobe) while it
// waits: set on entry to its wait, cleared when it returns.
extern constinit thread_local ProbeWait t_probe_wait SONDE_SIGNAL_TLS;
// The calling thread's Iprobe/Improbe loop: set on the rare pass where
// Engine::fruitless says the loop has found nothing for a long run of
// calls, cleared by the next Iprobe/Improbe (or blocking probe) that finds
// a message. It outlives the call (a loop spends part of its time in user
// code), so a snapshot reports it only while the thread is in user code or
// in MPI_Iprobe/MPI_Improbe.
extern constinit thread_local ProbeWait t_probe_polling SONDE_SIGNAL_TLS;

// A snapshot was asked for while the process was inside MPI.
extern volatile sig_atomic_t g_snapshot_pending;
// What serves it (set by the runtime, runtime/snapshot.h); null: nothing.
extern void (*g_snapshot_serve)();
// Serves a pending request now (the caller is at a point where the engine's
// state is consistent: between progress passes, holding the engine lock
// where one is on).
void serve_pending_snapshot();

}  // namespace sonde::engine
