// Synchronization of one-sided operations (rma.h): fence, post/start/
// complete/wait/test, locks, flushes. Every wait drives the engine's
// progress, which runs the windows' channels (am.h).
#include <algorithm>
#include <atomic>

#include "coll/coll.h"
#include "comm/group.h"
#include "core/p2p.h"
#include "rma/am.h"
#include "rma/events.h"
#include "rma/net.h"
#include "rma/rma.h"

namespace sonde::engine::rma {

namespace {

int send_control(Window* w, int target, Kind kind, int arg = 0) {
  Header h;
  h.kind = kind;
  h.arg = arg;
  return send_message(w, target, h, {}, nullptr, 0);
}

bool pending_to(const Window* w, int target) {
  for (const auto& [id, p] : w->pending)
    if (p.target == target) return true;
  return false;
}

// Sends `kind` (kFlush or kUnlock) to each target and waits for every
// answer; returns the first error the answers carry. A flush goes only to
// targets that were sent operations since the last one: what went
// directly (direct.h) is complete already, and a memory fence orders it.
int round_trips(Window* w, std::vector<int> targets, Kind kind) {
  for (int t : targets) net_wait(w, t);  // their writes are in the targets' memory
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (kind == Kind::kFlush) std::erase_if(targets, [&](int t) { return !w->dirty[size_t(t)] && !pending_to(w, t); });
  std::vector<int> before(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const int t = targets[i];
    before[i] = w->acks[size_t(t)];
    if (int rc = send_control(w, t, kind)) return rc;
  }
  int rc = MPI_SUCCESS;
  for (size_t i = 0; i < targets.size(); ++i) {
    const size_t t = size_t(targets[i]);
    wait_until([&] { return w->acks[t] > before[i]; });
    if (w->ack_error[t] && !rc) rc = w->ack_error[t];
    w->ack_error[t] = MPI_SUCCESS;
    w->dirty[t] = 0;
  }
  // Answers of gets travel before the acknowledgement, in order.
  wait_until([&] { return std::none_of(targets.begin(), targets.end(), [&](int t) { return pending_to(w, t); }); });
  return rc;
}

std::vector<int> dirty_targets(const Window* w) {
  std::vector<int> out;
  for (size_t i = 0; i < w->dirty.size(); ++i)
    if (w->dirty[i]) out.push_back(int(i));
  return out;
}

// World ranks -> ranks of the window's group; false if one is not in it.
bool to_ranks(const Window* w, const std::vector<int>& world, std::vector<int>& out) {
  out.clear();
  for (int x : world) {
    int r = rank_of(w->comm->world, x);
    if (r == MPI_UNDEFINED) return false;
    out.push_back(r);
  }
  return true;
}

bool passive(const Window* w) {
  return w->lock_all || std::any_of(w->locks.begin(), w->locks.end(), [](int l) { return l != 0; });
}

}  // namespace

int fence(Window* w, int assert_flags) {
  if (w->started || w->exposed || passive(w)) return MPI_ERR_RMA_SYNC;
  net_wait(w, -1);
  int rc = round_trips(w, dirty_targets(w), Kind::kFlush);
  wait_until([&] { return w->pending.empty(); });
  int rc2 = coll::barrier(w->comm);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (w->fence_epoch) count_epoch();
  w->fence_epoch = (assert_flags & MPI_MODE_NOSUCCEED) == 0;
  return rc ? rc : rc2;
}

int post(Window* w, const std::vector<int>& group_world, int assert_flags) {
  if (w->exposed) return MPI_ERR_RMA_SYNC;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::vector<int> ranks;
  if (!to_ranks(w, group_world, ranks)) return MPI_ERR_GROUP;
  w->exposure = ranks;
  w->exposed = true;
  if (!(assert_flags & MPI_MODE_NOCHECK))
    for (int r : ranks)
      if (int rc = send_control(w, r, Kind::kPost)) return rc;
  return MPI_SUCCESS;
}

int start(Window* w, const std::vector<int>& group_world, int assert_flags) {
  if (w->started || w->fence_epoch) {
    if (w->started) return MPI_ERR_RMA_SYNC;
    w->fence_epoch = false;  // a fence without MPI_MODE_NOSUCCEED left it open; start ends it
  }
  std::vector<int> ranks;
  if (!to_ranks(w, group_world, ranks)) return MPI_ERR_GROUP;
  if (!(assert_flags & MPI_MODE_NOCHECK)) {
    for (int r : ranks) {
      wait_until([&] { return w->posts[size_t(r)] > 0; });
      --w->posts[size_t(r)];
    }
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w->access = ranks;
  w->started = true;
  return MPI_SUCCESS;
}

int complete(Window* w) {
  if (!w->started) return MPI_ERR_RMA_SYNC;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // direct accesses before the notices
  wait_until([&] { return std::none_of(w->access.begin(), w->access.end(), [&](int t) { return pending_to(w, t); }); });
  for (int t : w->access) net_wait(w, t);
  int rc = MPI_SUCCESS;
  for (int r : w->access) {
    if (int e = send_control(w, r, Kind::kComplete); e && !rc) rc = e;
    w->dirty[size_t(r)] = 0;
  }
  w->access.clear();
  w->started = false;
  count_epoch();
  return rc;
}

int wait_exposure(Window* w) {
  if (!w->exposed) return MPI_ERR_RMA_SYNC;
  const int n = int(w->exposure.size());
  wait_until([&] { return w->completes >= n; });
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the origins' direct accesses are visible
  w->completes -= n;
  w->exposure.clear();
  w->exposed = false;
  count_epoch();
  return MPI_SUCCESS;
}

int test_exposure(Window* w, bool* done) {
  if (!w->exposed) return MPI_ERR_RMA_SYNC;
  progress();
  *done = w->completes >= int(w->exposure.size());
  if (*done) return wait_exposure(w);
  return MPI_SUCCESS;
}

int lock(Window* w, int type, int rank, int assert_flags) {
  if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE) return MPI_ERR_LOCKTYPE;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm->size) return MPI_ERR_RANK;
  if (w->locks[size_t(rank)] || w->lock_all || w->started) return MPI_ERR_RMA_SYNC;
  const size_t r = size_t(rank);
  if (assert_flags & MPI_MODE_NOCHECK) {
    w->nocheck[r] = 1;
  } else {
    const int before = w->grants[r];
    if (int rc = send_control(w, rank, Kind::kLock, type)) return rc;
    wait_until([&] { return w->grants[r] > before; });
    w->nocheck[r] = 0;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w->locks[r] = type;
  return MPI_SUCCESS;
}

int unlock(Window* w, int rank) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm->size) return MPI_ERR_RANK;
  const size_t r = size_t(rank);
  if (!w->locks[r] || w->lock_all) return MPI_ERR_RMA_SYNC;
  int rc = round_trips(w, {rank}, w->nocheck[r] ? Kind::kFlush : Kind::kUnlock);
  w->locks[r] = 0;
  w->nocheck[r] = 0;
  count_epoch();
  return rc;
}

int lock_all(Window* w, int assert_flags) {
  if (passive(w) || w->started) return MPI_ERR_RMA_SYNC;
  const int n = w->comm->size;
  const bool nocheck = (assert_flags & MPI_MODE_NOCHECK) != 0;
  std::vector<int> before(static_cast<size_t>(n), 0);
  for (int r = 0; r < n; ++r) {
    before[size_t(r)] = w->grants[size_t(r)];
    if (!nocheck)
      if (int rc = send_control(w, r, Kind::kLock, MPI_LOCK_SHARED)) return rc;
  }
  for (int r = 0; r < n; ++r) {
    if (!nocheck) wait_until([&] { return w->grants[size_t(r)] > before[size_t(r)]; });
    w->locks[size_t(r)] = MPI_LOCK_SHARED;
    w->nocheck[size_t(r)] = nocheck;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w->lock_all = true;
  return MPI_SUCCESS;
}

int unlock_all(Window* w) {
  if (!w->lock_all) return MPI_ERR_RMA_SYNC;
  std::vector<int> all(size_t(w->comm->size));
  for (int r = 0; r < w->comm->size; ++r) all[size_t(r)] = r;
  const bool nocheck = !w->nocheck.empty() && w->nocheck[0];
  int rc = round_trips(w, all, nocheck ? Kind::kFlush : Kind::kUnlock);
  std::fill(w->locks.begin(), w->locks.end(), 0);
  std::fill(w->nocheck.begin(), w->nocheck.end(), 0);
  w->lock_all = false;
  count_epoch();
  return rc;
}

int flush(Window* w, int rank) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm->size) return MPI_ERR_RANK;
  if (!w->locks[size_t(rank)]) return MPI_ERR_RMA_SYNC;
  return round_trips(w, {rank}, Kind::kFlush);
}

int flush_all(Window* w) {
  if (!passive(w)) return MPI_ERR_RMA_SYNC;
  std::vector<int> locked;
  for (size_t i = 0; i < w->locks.size(); ++i)
    if (w->locks[i]) locked.push_back(int(i));
  return round_trips(w, locked, Kind::kFlush);
}

int flush_local(Window* w, int rank) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm->size) return MPI_ERR_RANK;
  if (!w->locks[size_t(rank)]) return MPI_ERR_RMA_SYNC;
  net_wait(w, rank);
  wait_until([&] { return !pending_to(w, rank); });
  return MPI_SUCCESS;
}

int flush_local_all(Window* w) {
  if (!passive(w)) return MPI_ERR_RMA_SYNC;
  net_wait(w, -1);
  wait_until([&] { return w->pending.empty(); });
  return MPI_SUCCESS;
}

int sync(Window* w) {
  (void)w;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  progress();
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::rma
