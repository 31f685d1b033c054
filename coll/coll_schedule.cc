// Running a collective (coll_schedule.h, coll_internal.h): the Schedule's
// transfers and rounds, the blocking driver, and the nonblocking collectives
// in flight with the progress hook that advances them.
#include "coll/coll_schedule.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "coll/coll_internal.h"
#include "coll/shared.h"
#include "core/engine.h"
#include "core/p2p.h"
#include "core/progress_hooks.h"
#include "core/stamp.h"

namespace sonde::engine::coll {
using namespace detail;

namespace {

// Tags: -16 - kind - 64 * (sequence mod 2^24). Every value stays above
// INT_MIN and below the engine's own kinds' range only at sequence 0, which
// collectives never use before wrapping (the first call takes sequence 1).
constexpr int kKindSpan = 64;
constexpr uint64_t kSeqWindow = 1u << 24;

int progress_schedules();  // the progress hook's work (end of this file)

// Free coroutine frames, by size class: class i holds frames of up to
// (i + 1) * kFrameStep bytes, at most kFramesKept of them; larger frames and
// those beyond the cap go back to the heap.
constexpr std::size_t kFrameStep = 64;
constexpr std::size_t kFrameClasses = 32;
constexpr int kFramesKept = 16;
struct FreeFrame {
  FreeFrame* next;
};
struct FramePool {
  FreeFrame* head[kFrameClasses];
  int kept[kFrameClasses];
};
constinit FramePool g_frames{};  // never emptied: frames kept at exit stay reachable

}  // namespace

void* frame_allocate(std::size_t bytes) {
  const std::size_t c = (bytes + kFrameStep - 1) / kFrameStep - 1;
  if (c >= kFrameClasses) return ::operator new(bytes);
  if (FreeFrame* f = g_frames.head[c]) {
    g_frames.head[c] = f->next;
    --g_frames.kept[c];
    return f;
  }
  return ::operator new((c + 1) * kFrameStep);
}

void frame_release(void* frame, std::size_t bytes) noexcept {
  const std::size_t c = (bytes + kFrameStep - 1) / kFrameStep - 1;
  if (c >= kFrameClasses || g_frames.kept[c] >= kFramesKept) {
    ::operator delete(frame);
    return;
  }
  auto* f = static_cast<FreeFrame*>(frame);
  f->next = g_frames.head[c];
  g_frames.head[c] = f;
  ++g_frames.kept[c];
}

namespace detail {
int tag_of(int kind, uint64_t seq) {
  return kCollectiveTagBase - kind - kKindSpan * static_cast<int>(seq % kSeqWindow);
}
}  // namespace detail

bool decode_tag(int tag, int* kind, uint32_t* seq) {
  if (tag > kCollectiveTagBase) return false;
  const int64_t v = int64_t(kCollectiveTagBase) - tag;
  *kind = static_cast<int>(v % kKindSpan);
  *seq = static_cast<uint32_t>(v / kKindSpan);
  return true;
}

const char* kind_name(int kind) {
  static constexpr const char* kNames[] = {"MPI_Barrier",
                                           "MPI_Bcast",
                                           "MPI_Reduce",
                                           "MPI_Allreduce",
                                           "MPI_Gather",
                                           "MPI_Allgather",
                                           "MPI_Gatherv",
                                           "MPI_Scatter",
                                           "MPI_Scatterv",
                                           "MPI_Allgatherv",
                                           "MPI_Alltoall",
                                           "MPI_Alltoallv",
                                           "MPI_Alltoallw",
                                           "MPI_Reduce_scatter",
                                           "MPI_Reduce_scatter_block",
                                           "MPI_Scan",
                                           "MPI_Exscan",
                                           "MPI_Neighbor_allgather",
                                           "MPI_Neighbor_allgatherv",
                                           "MPI_Neighbor_alltoall",
                                           "MPI_Neighbor_alltoallv",
                                           "MPI_Neighbor_alltoallw"};
  return kind >= 0 && kind < int(sizeof kNames / sizeof kNames[0]) ? kNames[kind] : "collective";
}

// ---- nonblocking collectives: the schedules progress() advances ---------------

namespace detail {

ProgressHook g_schedule_hook{progress_schedules, 0};

namespace {
struct RegisterSchedules {
  RegisterSchedules() { register_progress_hook(&g_schedule_hook); }
} g_register_schedules;
}  // namespace

std::vector<Flight*>& flights() {
  static auto* v = new std::vector<Flight*>;  // never destroyed: progress may run at exit
  return *v;
}

// Resumes f's coroutine for as long as its rounds complete at once. True
// when the collective is finished.
bool advance(Flight& f) {
  Schedule& s = f.schedule;
  while (!f.task.done()) {
    if (!s.ready()) return false;
    std::exchange(s.waiting, {}).resume();
  }
  return true;
}

void finish_flight(Flight* f) {
  Request* q = f->request;
  q->error = f->task.result();
  delete f;
  engine().complete(q);
}

// Progresses the engine until s's round has completed.
static void progress_until_ready(Schedule& s) {
  int idle = 0;
  while (!s.ready()) {
    if (progress() == 0) engine().idle(idle);
    else idle = 0;
  }
}

Task finished(int rc) { co_return rc; }

int run_blocking(Schedule& s, Task t) {
  s.waiting = t.handle();
  for (;;) {
    std::exchange(s.waiting, {}).resume();
    if (t.done()) return t.result();
    progress_until_ready(s);
  }
}

}  // namespace detail

// ---- Schedule ------------------------------------------------------------------

Schedule::Schedule(Comm* c, int kind)
    : user(c),
      local(c->inter ? c->local_comm : c),
      comm(c),
      user_tag_(tag_of(kind, ++c->coll_seq)),
      local_tag_(c->inter ? tag_of(kind, ++c->local_comm->coll_seq) : user_tag_),
      tag(user_tag_),
      p(c->peers()),
      r(c->rank) {
  // Stamped when the collective first waits (note_waiting).
  c->coll_since = 0;
  if (c->inter) c->local_comm->coll_since = 0;
}

Schedule::Schedule(Comm* c, int kind, uint64_t seq)
    : user(c),
      local(c),
      comm(c),
      user_tag_(tag_of(kind, seq)),
      local_tag_(user_tag_),
      tag(user_tag_),
      p(c->size),
      r(c->rank) {}

void skip_sequence(Comm* c, const char* call) {
  // The calls that may go through a shared segment decide on it first,
  // as they do when they run (shared.h).
  static constexpr const char* kShared[] = {"MPI_Barrier",
                                            "MPI_Bcast",
                                            "MPI_Bcast_c",
                                            "MPI_Reduce",
                                            "MPI_Reduce_c",
                                            "MPI_Allreduce",
                                            "MPI_Allreduce_c",
                                            "MPI_Gather",
                                            "MPI_Gather_c",
                                            "MPI_Gatherv",
                                            "MPI_Gatherv_c",
                                            "MPI_Scatter",
                                            "MPI_Scatter_c",
                                            "MPI_Scatterv",
                                            "MPI_Scatterv_c",
                                            "MPI_Allgather",
                                            "MPI_Allgather_c",
                                            "MPI_Allgatherv",
                                            "MPI_Allgatherv_c",
                                            "MPI_Alltoall",
                                            "MPI_Alltoall_c",
                                            "MPI_Alltoallv",
                                            "MPI_Alltoallv_c",
                                            "MPI_Scan",
                                            "MPI_Scan_c",
                                            "MPI_Exscan",
                                            "MPI_Exscan_c",
                                            "MPI_Reduce_scatter",
                                            "MPI_Reduce_scatter_c",
                                            "MPI_Reduce_scatter_block",
                                            "MPI_Reduce_scatter_block_c"};
  for (const char* name : kShared)
    if (call && std::strcmp(call, name) == 0) shared::decide(c);
  ++c->coll_seq;
  if (c->inter) ++c->local_comm->coll_seq;  // as a Schedule takes both
  shared::skipped(c);
}

void Schedule::wait_left_behind() { wait_all(static_cast<int>(pending_.size()), pending_.data()); }

void Schedule::send(const void* buf, int64_t count, Datatype* type, int dest) {
  if (engine().send_now(buf, count, type, dest, tag, comm)) return;
  Request* q = nullptr;
  const int rc = start_send(buf, count, type, dest, tag, comm, SendMode::kStandard, &q);
  note(rc, q);
}

void Schedule::recv(void* buf, int64_t count, Datatype* type, int source) {
  int now = MPI_SUCCESS;
  if (engine().recv_now(buf, count, type, source, tag, comm, &now)) {
    note(now, nullptr);
    return;
  }
  Request* q = nullptr;
  const int rc = start_recv(buf, count, type, source, tag, comm, &q);
  note(rc, q);
}

bool Schedule::ready() const {
  for (const Request* q : pending_)
    if (!q->complete) return false;
  return true;
}

int Schedule::wait_requests() {
  if (!ready()) {
    note_waiting();
    progress_until_ready(*this);
  }
  return retire();
}

int Schedule::retire() {
  if (pending_.empty()) return take_error();
  // All complete: wait_all only collects errors and releases them.
  int rc = wait_all(static_cast<int>(pending_.size()), pending_.data());
  pending_.clear();
  if (error_ != MPI_SUCCESS) rc = error_;
  error_ = MPI_SUCCESS;
  return rc;
}

// ---- the progress hook ---------------------------------------------------------

namespace {
// Advances every schedule whose current round has completed; completes the
// user requests of those that finish. Returns the number that moved.
int progress_schedules() {
  static bool running = false;  // a user op calling MPI inside a round: no recursion
  if (running) return 0;
  running = true;
  int moved = 0;
  std::vector<Flight*>& v = flights();
  for (size_t i = 0; i < v.size();) {
    Flight* f = v[i];
    if (!f->schedule.ready()) {
      ++i;
      continue;
    }
    ++moved;
    if (!advance(*f)) {
      ++i;
      continue;
    }
    v[i] = v.back();
    v.pop_back();
    finish_flight(f);
  }
  set_in_flight(&g_schedule_hook, static_cast<int>(v.size()));
  running = false;
  return moved;
}
}  // namespace

}  // namespace sonde::engine::coll
