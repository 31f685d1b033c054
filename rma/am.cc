// Active messages of one-sided operations (am.h): the header and payload
// channels, the target's application of operations in arrival order, lock
// grants, and the progress hook that runs them.
#include "rma/am.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/engine.h"
#include "core/grequest.h"
#include "core/introspect.h"
#include "core/p2p.h"
#include "core/progress_hooks.h"
#include "datatype/op.h"
#include "rma/direct.h"
#include "rma/events.h"

namespace sonde::engine::rma {

namespace {

int run_all();
ProgressHook g_hook{run_all, 0};
bool g_running = false;

// The windows with work, an intrusive list through Window::work_prev /
// work_next; the progress hook visits only these.
Window* g_work = nullptr;
int g_work_count = 0;

void queue_work(Window* w) {
  if (w->queued) return;
  w->queued = true;
  w->work_prev = nullptr;
  w->work_next = g_work;
  if (g_work) g_work->work_prev = w;
  g_work = w;
  set_in_flight(&g_hook, ++g_work_count);
}

void unqueue_work(Window* w) {
  if (!w->queued) return;
  w->queued = false;
  if (w->work_prev) w->work_prev->work_next = w->work_next;
  else g_work = w->work_next;
  if (w->work_next) w->work_next->work_prev = w->work_prev;
  w->work_prev = w->work_next = nullptr;
  set_in_flight(&g_hook, --g_work_count);
}

// Request::on_complete of the window's channel receives: it has work.
void wake(void* owner) { queue_work(static_cast<Window*>(owner)); }

// Something of the window waits for run_window now: a received header,
// an arrival ready to apply, a completed send to retire. (What is still
// in flight wakes the window as it completes.)
bool has_work(const Window* w) {
  if (w->header_recv && w->header_recv->complete) return true;
  if (!w->incoming.empty() && (!w->incoming.front().payload || w->incoming.front().payload->complete)) return true;
  for (const auto& [r, buf] : w->sends)
    if (r->complete) return true;
  return false;
}

// A channel receive just started: completions wake the window.
void watch(Window* w, Request* r) {
  if (!r) return;
  r->on_complete = wake;
  r->owner = w;
  if (r->complete) queue_work(w);
}

[[gnu::constructor]] void register_hook() { register_progress_hook(&g_hook); }

// Retires the internal sends that have completed (their buffers go too).
int reap_sends(Window* w) {
  int moved = 0;
  auto& s = w->sends;
  for (size_t i = 0; i < s.size();) {
    if (s[i].first->complete) {
      wait(s[i].first, MPI_STATUS_IGNORE);
      delete s[i].second;
      s[i] = s.back();
      s.pop_back();
      ++moved;
    } else {
      ++i;
    }
  }
  return moved;
}

// Does [offset, offset + length) lie in memory this window exposes here?
bool in_window(const Window* w, uint64_t offset, uint64_t length) {
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return offset <= uint64_t(w->size) && length <= uint64_t(w->size) - offset;
  return in_regions(w->regions.data(), w->regions.size(), offset, length);
}

// Where segment offsets start: the window's base, address 0 for a
// dynamic window (its offsets are addresses).
uintptr_t memory_of(const Window* w) {
  return w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : reinterpret_cast<uintptr_t>(w->base);
}

void note_error(Window* w, int origin, int code) {
  auto it = w->origin_error.find(origin);
  if (it == w->origin_error.end() || it->second == MPI_SUCCESS) w->origin_error[origin] = code;
}

void answer(Window* w, int origin, Kind kind, uint64_t id, Bytes* data = nullptr, int arg = 0) {
  Header h;
  h.kind = kind;
  h.id = id;
  h.arg = arg;
  if (data) send_message(w, origin, h, {}, data->data(), data->size(), data);
  else send_message(w, origin, h, {}, nullptr, 0);
}

void grant_waiters(Window* w) {
  while (!w->lock_waiters.empty()) {
    auto [origin, type] = w->lock_waiters.front();
    if (w->exclusive_holder >= 0) return;
    if (type == MPI_LOCK_EXCLUSIVE) {
      if (w->shared_holders > 0) return;
      w->exclusive_holder = origin;
    } else {
      ++w->shared_holders;
    }
    w->lock_waiters.pop_front();
    answer(w, origin, Kind::kGrant, 0);
  }
}

// The data operation of an access message at the target.
void apply_access(Window* w, int origin, const Header& h, const Segment* segs, const uint8_t* data, bool landed) {
  uint64_t total = 0;
  bool ok = true;
  for (uint64_t i = 0; i < h.segments; ++i) {
    total += segs[i].length;
    ok = ok && in_window(w, segs[i].offset, segs[i].length);
  }
  if (!ok) {
    note_error(w, origin, MPI_ERR_RMA_RANGE);
    // The origin still waits for an answer: it gets zeros and the error.
    if (h.kind == Kind::kGet || h.kind == Kind::kGetAcc || h.kind == Kind::kCas) {
      Bytes zeros(total, 0);
      answer(w, origin, Kind::kReply, h.id, &zeros, MPI_ERR_RMA_RANGE);
    }
    return;
  }
  switch (h.kind) {
    case Kind::kPut:
      if (!landed) scatter_to(memory_of(w), segs, h.segments, data);
      break;
    case Kind::kGet: {
      Bytes old(total);
      gather_from(memory_of(w), segs, h.segments, old.data());
      answer(w, origin, Kind::kReply, h.id, &old);
      break;
    }
    case Kind::kCas:
    case Kind::kAcc:
    case Kind::kGetAcc: {
      // Under this rank's accumulate lock when node-local origins may
      // apply accumulates to its memory directly (direct.h).
      AccLock* lock = w->acc_lock.empty() ? nullptr : w->acc_lock[size_t(w->comm->rank)];
      Bytes old;
      int rc = apply_accumulate(memory_of(w), segs, h.segments, h.kind, h.op, h.basic, data, old, lock);
      if (h.kind != Kind::kAcc) answer(w, origin, Kind::kReply, h.id, &old);
      if (rc) note_error(w, origin, rc);
      break;
    }
    default: break;
  }
}

void apply_reply(Window* w, int target, const Header& h, const uint8_t* data, bool landed) {
  auto it = w->pending.find(h.id);
  if (it == w->pending.end()) return;
  Pending p = it->second;
  w->pending.erase(it);
  if (!landed && p.result && p.type && h.data_bytes) unpack(*p.type, p.result, p.count, 0, data, h.data_bytes);
  if (p.type) release_datatype(p.type);
  if (h.arg && w->ack_error[size_t(target)] == MPI_SUCCESS) w->ack_error[size_t(target)] = h.arg;
  if (p.request) {
    if (h.arg) p.request->error = h.arg;
    complete_generalized(p.request);
  }
  fire_remote_done(w, h.id);
}

// Applies one message from `source`.
void apply(Window* w, int source, const uint8_t* msg, const uint8_t* body, bool landed) {
  Header h;
  std::memcpy(&h, msg, sizeof h);
  const auto* segs = reinterpret_cast<const Segment*>(body);
  const uint8_t* data = body + h.segments * sizeof(Segment);
  const size_t s = size_t(source);
  switch (h.kind) {
    case Kind::kPut:
    case Kind::kAcc:
    case Kind::kGet:
    case Kind::kGetAcc:
    case Kind::kCas: apply_access(w, source, h, segs, data, landed); break;
    case Kind::kReply: apply_reply(w, source, h, data, landed); break;
    case Kind::kFlush: {
      int err = w->origin_error[source];
      w->origin_error[source] = MPI_SUCCESS;
      answer(w, source, Kind::kAck, 0, nullptr, err);
      break;
    }
    case Kind::kAck:
      ++w->acks[s];
      if (h.arg && w->ack_error[s] == MPI_SUCCESS) w->ack_error[s] = h.arg;
      break;
    case Kind::kLock:
      w->lock_waiters.emplace_back(source, h.arg);
      grant_waiters(w);
      break;
    case Kind::kGrant: ++w->grants[s]; break;
    case Kind::kUnlock: {
      if (w->exclusive_holder == source) w->exclusive_holder = -1;
      else if (w->shared_holders > 0) --w->shared_holders;
      int err = w->origin_error[source];
      w->origin_error[source] = MPI_SUCCESS;
      answer(w, source, Kind::kAck, 0, nullptr, err);
      grant_waiters(w);
      break;
    }
    case Kind::kPost: ++w->posts[s]; break;
    case Kind::kComplete: ++w->completes; break;
  }
}

// Where a payload carrying only data can land directly: a put's single
// range inside the window, an answer's result buffer. Starts the receive
// there; false when it cannot.
bool land_payload(Window* w, int source, const Header& h, const Segment* segs, Request** out) {
  if (h.kind == Kind::kPut && h.segments == 1 && segs[0].length == h.data_bytes &&
      in_window(w, segs[0].offset, segs[0].length)) {
    void* dst = reinterpret_cast<void*>(memory_of(w) + segs[0].offset);
    return start_recv(dst, int64_t(h.data_bytes), byte_type(), source, kTagPayload, w->comm, out) == MPI_SUCCESS;
  }
  if (h.kind == Kind::kReply) {
    auto it = w->pending.find(h.id);
    if (it == w->pending.end() || !it->second.type || !it->second.result ||
        uint64_t(it->second.count) * uint64_t(it->second.type->size) != h.data_bytes)
      return false;
    const Pending& p = it->second;
    return start_recv(p.result, p.count, p.type, source, kTagPayload, w->comm, out) == MPI_SUCCESS;
  }
  return false;
}

// Takes what the header receive holds: into the arrival queue, with a
// payload receive when the body follows separately. Then posts it again.
int take_header(Window* w) {
  Request* r = w->header_recv;
  int source = r->status_source;
  uint64_t bytes = r->status_bytes;
  w->header_recv = nullptr;
  wait(r, MPI_STATUS_IGNORE);
  Incoming in;
  in.source = source;
  in.message.assign(w->header_buf.begin(), w->header_buf.begin() + std::min<uint64_t>(bytes, kInlineLimit));
  Header h;
  std::memcpy(&h, in.message.data(), sizeof h);
  if (h.body != kBodyInline) {
    const uint64_t seg_bytes = h.segments * sizeof(Segment);
    const uint64_t here = h.body == kDataFollows ? sizeof h + seg_bytes : sizeof h;
    const auto* segs = reinterpret_cast<const Segment*>(in.message.data() + sizeof h);
    if (h.body == kDataFollows && land_payload(w, source, h, segs, &in.payload)) {
      in.landed = true;
    } else {
      in.message.resize(sizeof h + seg_bytes + h.data_bytes);
      if (start_recv(in.message.data() + here, int64_t(in.message.size() - here), byte_type(), source, kTagPayload,
                     w->comm, &in.payload))
        in.payload = nullptr;
    }
    watch(w, in.payload);
  }
  w->incoming.push_back(std::move(in));
  return open_channel(w);
}

}  // namespace

void target_segments(const Datatype& type, int64_t count, int64_t disp, std::vector<Segment>& out) {
  // Addresses are computed from a biased base so negative lower bounds
  // stay representable; offsets come back relative to `disp`.
  constexpr uint64_t kBias = uint64_t(1) << 62;
  const uint64_t total = uint64_t(count) * uint64_t(type.size);
  const void* base = reinterpret_cast<const void*>(uintptr_t(kBias + uint64_t(disp)));
  uint64_t done = 0;
  iovec iov[64];
  while (done < total) {
    uint64_t covered = 0;
    size_t n = gather_iov(type, base, count, done, total - done, iov, 64, &covered);
    if (n == 0 || covered == 0) break;
    for (size_t i = 0; i < n; ++i) {
      uint64_t off = uint64_t(reinterpret_cast<uintptr_t>(iov[i].iov_base)) - kBias;
      if (!out.empty() && out.back().offset + out.back().length == off) out.back().length += iov[i].iov_len;
      else out.push_back(Segment{off, iov[i].iov_len});
    }
    done += covered;
  }
}

int send_message(Window* w, int target, Header h, const std::vector<Segment>& segs, const uint8_t* data, uint64_t bytes,
                 Bytes* owned) {
  h.segments = segs.size();
  h.data_bytes = bytes;
  const uint64_t seg_bytes = segs.size() * sizeof(Segment);
  if (sizeof h + seg_bytes + bytes <= kInlineLimit) h.body = kBodyInline;
  else if (sizeof h + seg_bytes <= kInlineLimit && bytes) h.body = kDataFollows;
  else h.body = kBodyFollows;
  auto* first = new Bytes(sizeof h + (h.body == kBodyFollows ? 0 : seg_bytes) + (h.body == kBodyInline ? bytes : 0));
  std::memcpy(first->data(), &h, sizeof h);
  Bytes* second = nullptr;
  if (h.body != kBodyFollows && seg_bytes) std::memcpy(first->data() + sizeof h, segs.data(), seg_bytes);
  if (h.body == kBodyInline) {
    if (bytes) std::memcpy(first->data() + sizeof h + seg_bytes, data, bytes);
  } else if (h.body == kDataFollows) {
    second = owned && owned->data() == data && owned->size() == bytes ? new Bytes(std::move(*owned))
                                                                      : new Bytes(data, data + bytes);
  } else {
    second = new Bytes(seg_bytes + bytes);
    if (seg_bytes) std::memcpy(second->data(), segs.data(), seg_bytes);
    if (bytes) std::memcpy(second->data() + seg_bytes, data, bytes);
  }
  Request* r = nullptr;
  int rc = start_send(first->data(), int64_t(first->size()), byte_type(), target, kTagHeader, w->comm,
                      SendMode::kStandard, &r);
  if (rc) {
    delete first;
    delete second;
    return rc;
  }
  w->sends.emplace_back(r, first);
  watch(w, r);
  if (second) {
    rc = start_send(second->data(), int64_t(second->size()), byte_type(), target, kTagPayload, w->comm,
                    SendMode::kStandard, &r);
    if (rc) {
      delete second;
      return rc;
    }
    w->sends.emplace_back(r, second);
    watch(w, r);
  }
  return MPI_SUCCESS;
}

int open_channel(Window* w) {
  if (w->header_buf.size() != kInlineLimit) w->header_buf.resize(kInlineLimit);
  int rc = start_recv(w->header_buf.data(), int64_t(kInlineLimit), byte_type(), MPI_ANY_SOURCE, kTagHeader, w->comm,
                      &w->header_recv);
  if (!rc) watch(w, w->header_recv);
  return rc;
}

void close_channel(Window* w) {
  if (Request* r = w->header_recv) {
    r->on_complete = nullptr;
    if (!r->complete) engine().cancel_recv(r);
    wait(r, MPI_STATUS_IGNORE);
    w->header_recv = nullptr;
  }
}

int run_window(Window* w) {
  int moved = reap_sends(w);
  while (w->header_recv && w->header_recv->complete) {
    take_header(w);
    ++moved;
  }
  while (!w->incoming.empty()) {
    Incoming& in = w->incoming.front();
    if (in.payload) {
      if (!in.payload->complete) break;
      wait(in.payload, MPI_STATUS_IGNORE);
      in.payload = nullptr;
    }
    Incoming taken = std::move(in);
    w->incoming.pop_front();
    apply(w, taken.source, taken.message.data(), taken.message.data() + sizeof(Header), taken.landed);
    ++moved;
  }
  return moved;
}

void forget_work(Window* w) { unqueue_work(w); }

void wait_pass(int& idle) { engine().wait_pass(idle); }

namespace {
int run_all() {
  if (g_running) return 0;
  g_running = true;
  int moved = 0;
  // The list as it is now is taken whole; a window that gets work while
  // it runs (a completion inside run_window) or still has some goes back.
  // A window freed by a callback cannot happen here: nothing in run_window
  // calls the user.
  static auto* taken = new std::vector<Window*>;
  taken->clear();
  for (Window* w = g_work; w; w = w->work_next) taken->push_back(w);
  auto& visits = introspect::rma_counters().window_visits;
  for (Window* x : *taken) {
    unqueue_work(x);
    moved += run_window(x);
    ++visits;
    if (has_work(x)) queue_work(x);
  }
  g_running = false;
  return moved;
}
}  // namespace

}  // namespace sonde::engine::rma
