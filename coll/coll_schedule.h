// How a collective algorithm runs: a C++20 coroutine (Task) that starts the
// sends and receives of one round on its Schedule and then co_awaits the
// round. Whoever drives it resumes it once every request of the round has
// completed: the blocking collective's own loop (run_blocking), or, for a
// nonblocking collective, the engine's progress() through
// the collectives' progress hook. The algorithm is thus written once, as plain
// loops, for both forms.
//
//   Task bcast_linear(Schedule& s, void* buf, ...) {
//     if (s.r == root) for (...) s.send(buf, count, type, i);
//     else s.recv(buf, count, type, root);
//     SONDE_CO_TRY(co_await s.round());
//     co_return MPI_SUCCESS;
//   }
//
// Rules for Task functions: parameters by value (a nonblocking collective's
// frame outlives its caller's), scratch in frame-local objects, no blocking
// call inside. A Task may co_await another Task on the same Schedule: one
// Schedule is one collective, so sub-algorithms share its tag.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <utility>

#include "coll/inline_vector.h"
#include "core/objects.h"
#include "core/stamp.h"
#include "include/mpi.h"

namespace sonde::engine::coll {

#define SONDE_CO_TRY(expr)                             \
  do {                                                 \
    int sonde_rc_ = (expr);                            \
    if (sonde_rc_ != MPI_SUCCESS) co_return sonde_rc_; \
  } while (0)

// Coroutine frames: a collective call starts one to three Tasks, so their
// frames come from free lists kept per size class (coll_schedule.cc) and a
// repeated collective allocates none. Callers hold the engine lock, as every
// collective runs under it. frame_allocate throws std::bad_alloc like new.
void* frame_allocate(std::size_t bytes);
void frame_release(void* frame, std::size_t bytes) noexcept;

// A coroutine returning an MPI error class; started lazily (by its driver or
// by the Task that co_awaits it), resumes its awaiter when it finishes.
class [[nodiscard]] Task {
 public:
  struct promise_type {
    int result = MPI_SUCCESS;
    std::coroutine_handle<> continuation;

    static void* operator new(std::size_t bytes) { return frame_allocate(bytes); }
    static void operator delete(void* frame, std::size_t bytes) noexcept { frame_release(frame, bytes); }

    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Final {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        auto next = h.promise().continuation;
        return next ? next : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    Final final_suspend() noexcept { return {}; }
    void return_value(int rc) { result = rc; }
    void unhandled_exception() {
      try {
        throw;
      } catch (const std::bad_alloc&) {
        result = MPI_ERR_NO_MEM;
      } catch (...) {
        result = MPI_ERR_INTERN;
      }
    }
  };

  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  Task() = default;
  ~Task() {
    if (h_) h_.destroy();
  }

  bool done() const { return h_.done(); }
  int result() const { return h_.promise().result; }
  std::coroutine_handle<> handle() const { return h_; }

  // co_await on a sub-Task: runs it to its end, then yields its result.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  int await_resume() const noexcept { return h_.promise().result; }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

// The requests of one round: the first 8 in place (a small collective's
// round allocates nothing), more on the heap.
using PendingRequests = InlineVector<Request*, 8>;

// One collective call on one communicator: its tag, and the requests of the
// round in progress.
class Schedule {
 public:
  Schedule(Comm* c, int kind);
  // On an intracommunicator, for a call that already took its sequence
  // number `seq` (a shared-segment call with some blocks point-to-point).
  Schedule(Comm* c, int kind, uint64_t seq);
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;
  ~Schedule() {  // waits for requests an early error return left behind
    if (!pending_.empty()) wait_left_behind();
  }

  // Start a transfer of the current round. Small contiguous sends leave at
  // once (Engine::send_now) and need no request, nor does a receive whose
  // message already waits first in line (Engine::recv_now).
  void send(const void* buf, int64_t count, Datatype* type, int dest);
  void recv(void* buf, int64_t count, Datatype* type, int source);

  struct Round {
    Schedule* s;
    bool await_ready() const { return s->ready(); }
    void await_suspend(std::coroutine_handle<> h) {
      s->waiting = h;
      s->note_waiting();
    }
    int await_resume() { return s->retire(); }
  };
  // co_await: suspends until every transfer started since the last round
  // has completed; yields the first error class among them.
  Round round() { return Round{this}; }

  bool ready() const;
  // The blocking form of `co_await round()`, for algorithms written as
  // plain code: progresses the engine until every transfer started since
  // the last round has completed; returns the first error class among them.
  // Inline when every transfer of the round finished at once (a send the
  // transport took, a receive whose message was waiting): no request to
  // wait for.
  int wait_round() {
    if (pending_.empty()) return take_error();
    return wait_requests();
  }
  // wait_round() after a local step of the round (an own block's copy)
  // that gave rc: rc if that failed, else the round's result.
  int wait_round(int rc) {
    const int round = wait_round();
    return rc != MPI_SUCCESS ? rc : round;
  }

  // Intercommunicators: the group the following transfers address (and p,
  // its size). Local transfers travel on the hidden intracommunicator over
  // the local group (Comm::local_comm, one per intercommunicator), with a
  // tag from that communicator's own sequence (which every member of the
  // group advances in the same order), so intracommunicator algorithms run
  // unchanged on the local group after to_local(). An intracommunicator's
  // two are the same.
  void to_local() {
    comm = local;
    p = local->size;
    tag = local_tag_;
  }
  void to_remote() {
    comm = user;
    p = user->peers();
    tag = user_tag_;
  }

  Comm* const user;   // the communicator the collective was called on
  Comm* const local;  // its local group: user itself, or an intercommunicator's hidden intracommunicator
  Comm* comm;         // where send() and recv() go now
 private:
  const int user_tag_, local_tag_;
 public:
  int tag;      // of the transfers on `comm`
  int p;        // size of the group addressed now
  const int r;  // this rank (in the local group)
  // Where the driver resumes: the innermost coroutine waiting on a round.
  std::coroutine_handle<> waiting;

 private:
  int retire();
  int wait_requests();
  // The collective waits for the first time: its communicator's coll_since
  // is stamped now (the start of a collective that never waits is not worth
  // reading the clock for; hang reports only age collectives that wait).
  void note_waiting() {
    if (user->coll_since != 0) return;
    user->coll_since = stamp_now();
    if (user->inter) user->local_comm->coll_since = user->coll_since;
  }
  void wait_left_behind();
  // The round's error so far, which the next round starts without.
  int take_error() { return std::exchange(error_, MPI_SUCCESS); }
  // A transfer started: its request (null: it finished at once) and error.
  void note(int rc, Request* q) {
    if (q) pending_.push_back(q);
    if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  }
  PendingRequests pending_;
  int error_ = MPI_SUCCESS;
};

}  // namespace sonde::engine::coll
