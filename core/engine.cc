// The point-to-point engine: protocols (eager, synchronous eager,
// rendezvous with single-copy pull or streamed fallback), arrival handling,
// matching, completion and progress.
//
// Where PERUSE events will fire is marked "PERUSE:" (table in
// ARCHITECTURE.md). Receive R:
//   REQ_ACTIVATE, SEARCH_UNEX_Q_BEGIN/END, then MSG_REMOVE_FROM_UNEX_Q +
//   REQ_MATCH_UNEX or REQ_INSERT_IN_POSTED_Q; later REQ_REMOVE_FROM_POSTED_Q
//   + MSG_MATCH_POSTED_REQ; REQ_XFER_BEGIN/CONTINUE/END; REQ_COMPLETE;
//   REQ_NOTIFY (in wait/test).
// Arriving message M: MSG_ARRIVED, SEARCH_POSTED_Q_BEGIN/END, then a match or
//   MSG_INSERT_IN_UNEX_Q.
#include "core/engine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/lookup.h"
#include "core/p2p.h"
#include "core/process.h"
#include "core/progress_hooks.h"
#include "peruse/registry.h"

namespace sonde::engine {

using transport::PacketHeader;
using transport::PacketType;

// Built when the library loads and never destroyed: callbacks may run at exit.
Engine* const g_engine = new Engine();

namespace {

constexpr uint32_t kMaxContexts = 4096;

uint64_t env_u64(const char* name, uint64_t fallback, Settings& s) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  unsigned long long x = std::strtoull(v, &end, 0);
  if (*end) {
    std::fprintf(stderr, "sonde: ignoring %s=%s (not a number)\n", name, v);
    return fallback;
  }
  s.set_from_environment.push_back(std::string(name) + "=" + v);
  return x;
}

bool is_message(PacketType t) {
  return t == PacketType::kEager || t == PacketType::kEagerSync || t == PacketType::kRts;
}

// --- datatypes in the rendezvous (docs/datatypes.md) ---
// kRts flag: the sender's data is non-contiguous, so there is no address
// to pull from (recv_cookie is 0).
constexpr uint8_t kRtsScattered = 1;

// Single copy between the packed bytes [0, n) of r's (buf, count, type)
// and the peer's contiguous range at `remote`, through the iovecs of r's
// layout, a window at a time (no staging copy). Layouts of small runs (the
// kernel's per-iovec cost exceeds a memcpy of the run; bench/
// datatype_bandwidth.c) go through a bounded bounce buffer instead: pack or
// unpack a chunk, one remote copy per chunk. False when refused.
bool copy_scattered(transport::Transport& t, int peer, bool read, uint64_t remote, const Request& r, uint64_t n) {
  constexpr int64_t kMinIovRun = 1024;
  if (mean_run(*r.type) < kMinIovRun) {
    constexpr uint64_t kChunk = 256 * 1024;
    static thread_local std::vector<uint8_t> bounce(kChunk);
    for (uint64_t off = 0; off < n; off += kChunk) {
      uint64_t k = std::min(kChunk, n - off);
      if (read) {
        if (!t.read_remote(peer, remote + off, bounce.data(), k)) return false;
        unpack(*r.type, r.buf, r.count, off, bounce.data(), k);
      } else {
        pack(*r.type, r.buf, r.count, off, bounce.data(), k);
        if (!t.write_remote(peer, remote + off, bounce.data(), k)) return false;
      }
    }
    return true;
  }
  constexpr size_t kWindow = 256;
  iovec iov[kWindow];
  for (uint64_t off = 0; off < n;) {
    uint64_t covered = 0;
    size_t k = gather_iov(*r.type, r.buf, r.count, off, n - off, iov, kWindow, &covered);
    if (!(read ? t.read_remote_iov(peer, remote + off, iov, k) : t.write_remote_iov(peer, remote + off, iov, k)))
      return false;
    off += covered;
  }
  return true;
}

}  // namespace

// PERUSE firing helpers: a request's id is its descriptor's address; the spec
// carries the user's own arguments.
inline uint64_t uid(const Request* r) { return reinterpret_cast<uint64_t>(r); }
inline int operation(const Request* r) { return r->kind == RequestKind::kSend ? PERUSE_SEND : PERUSE_RECV; }
// r's spec, built once per request (its arguments are fixed from
// new_request on); every dispatch gets its own copy.
[[gnu::always_inline]] inline const peruse_comm_spec_t& req_spec(Request* r) {
  if (__builtin_expect(!r->peruse_spec_ready, 0)) {
    peruse::set_spec(r->peruse_spec, r->comm->handle, r->buf, static_cast<int>(r->count), r->type->handle, r->peer,
                     r->tag, operation(r));
    r->peruse_spec_ready = true;
  }
  return r->peruse_spec;
}
// The _IF forms take a watched mask the caller loaded once for several events
// and dispatch inline (watched twins); the others load the mask and call.
#define FIRE_REQ_IF(w, event, r) SONDE_FIRE_SPEC_IF((w), (r)->comm->peruse, (event), uid(r), req_spec(r))
#define FIRE_REQ(event, r) SONDE_FIRE_SPEC((r)->comm->peruse, (event), uid(r), req_spec(r))
// Several request events back to back (in firing order), one dispatch.
#define FIRE_REQ_SEQUENCE_IF(w, r, ...) \
  SONDE_FIRE_SPEC_SEQUENCE_IF((w), (r)->comm->peruse, uid(r), req_spec(r), __VA_ARGS__)
// In an open reader section `rd` (peruse::ReaderIf): the events of one
// engine operation share it.
// `c` is r->comm (a register the caller already holds).
#define FIRE_REQ_WITH(rd, c, event, r) SONDE_FIRE_SPEC_WITH(rd, (c)->peruse, (event), uid(r), req_spec(r))
// Message events carry the envelope: sender, tag, size in bytes.
#define FIRE_MSG_WITH(rd, w, event, c, id, h)                                                                    \
  SONDE_FIRE_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total),    \
                  MPI_BYTE, (h).source, (h).tag, PERUSE_RECV)
// _LAST_: the last event of the section (its end ends the upcall).
#define FIRE_REQ_LAST_WITH(rd, c, event, r) \
  SONDE_FIRE_SPEC_LAST_WITH(rd, (c)->peruse, (event), uid(r), req_spec(r))
#define FIRE_MSG_LAST_WITH(rd, w, event, c, id, h)                                                                \
  SONDE_FIRE_LAST_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total), \
                       MPI_BYTE, (h).source, (h).tag, PERUSE_RECV)
// Queue searches (PERUSE_COMM_SEARCH_*): in the watched twins they fire
// around the matcher's call, which is the whole search.
#define FIRE_SEARCH_WITH(rd, w, event, c, id, source, tag)                                                    \
  SONDE_FIRE_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, 0, MPI_DATATYPE_NULL, (source), (tag), \
                  PERUSE_RECV)
inline constexpr uint32_t kSearchPostedBits =
    peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_END);
inline constexpr uint32_t kSearchUnexBits =
    peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_END);
#define FIRE_MSG(event, c, id, h)                                                                               \
  SONDE_FIRE((c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total), MPI_BYTE, (h).source, \
             (h).tag, PERUSE_RECV)

// REQ_XFER_BEGIN once per activation, even when a first attempt (single
// copy refused) hands over to another protocol.
[[gnu::always_inline]] inline void xfer_begin_if(uint32_t w, Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ_IF(w, PERUSE_COMM_REQ_XFER_BEGIN, r);
}
// The last event of an arrival's section; r is the matched receive.
template <class ReaderT>
inline void xfer_begin_last_with(ReaderT& rd, Comm* c, Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_XFER_BEGIN, r);
}
inline void xfer_begin(Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ(PERUSE_COMM_REQ_XFER_BEGIN, r);
}

// Reports queue searches as PERUSE_COMM_SEARCH_* from inside the matcher (a
// probe's search); only handed to it when one of those events is watched on
// the communicator. The watched twins of receives and arrivals fire the
// search events themselves, around the matcher's call (FIRE_SEARCH_WITH).
class SearchEvents final : public matching::SearchObserver {
 public:
  // `w`: the communicator's watched mask, already loaded by the caller.
  SearchEvents(Comm* c, uint32_t w, int source, int tag) : c_(c), w_(w), source_(source), tag_(tag) {}
  // The observer to give the matcher for a posted-queue / unexpected-queue search.
  matching::SearchObserver* posted() {
    return w_ & (peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_END))
               ? this
               : nullptr;
  }
  matching::SearchObserver* unexpected() {
    return w_ & (peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_END))
               ? this
               : nullptr;
  }
  void search_posted_begin() override { begin(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN); }
  void search_posted_end() override { fire(PERUSE_COMM_SEARCH_POSTED_Q_END); }
  void search_unexpected_begin() override { begin(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN); }
  void search_unexpected_end() override { fire(PERUSE_COMM_SEARCH_UNEX_Q_END); }

 private:
  void begin(int event) {
    id_ = engine().new_id(Engine::kIdSearch);
    fire(event);
  }
  void fire(int event) {
    // Only reached while watched (posted(), unexpected()): dispatch inline.
    SONDE_FIRE_IF(SONDE_WATCHED_MASK(c_->peruse), c_->peruse, event, id_, c_->handle, nullptr, 0, MPI_DATATYPE_NULL,
                  source_, tag_, PERUSE_RECV);
  }
  Comm* c_;
  uint32_t w_;
  int source_, tag_;
  uint64_t id_ = 0;
};

// ---------------------------------------------------------------- life cycle

void Engine::load_settings() {
  if (settings_loaded) return;
  settings_loaded = true;
  settings.eager_limit = env_u64("SONDE_EAGER_LIMIT", settings.eager_limit, settings);
  settings.spin_before_yield = int(env_u64("SONDE_SPIN", uint64_t(settings.spin_before_yield), settings));
  settings.single_copy = env_u64("SONDE_SHM_SINGLE_COPY", 1, settings) != 0;
  settings.coop_threshold = env_u64("SONDE_COOP_THRESHOLD", settings.coop_threshold, settings);
  settings.fast_boxes = env_u64("SONDE_SHM_FAST_BOXES", 1, settings) != 0;
}

void Engine::start(int rank, int size, std::vector<std::unique_ptr<transport::Transport>> ts,
                   std::vector<transport::Transport*> routes, const std::vector<uint32_t>& reserved) {
  world_rank = rank;
  world_size = size;
  transports = std::move(ts);
  route = std::move(routes);
  single_copy_state_.assign(size_t(world_size), 0);

  std::vector<Datatype*> dt(SONDE_PREDEFINED_DATATYPES);
  for (int i = 1; i < SONDE_PREDEFINED_DATATYPES; ++i) dt[i] = &datatypes.predefined(i);
  init_predefined_datatypes(dt);
  for (uint32_t i = 1; i <= 3; ++i) errhandlers.predefined(i).live = true;

  free_contexts.assign(kMaxContexts / 64, ~uint64_t(0));
  by_context.assign(kMaxContexts, nullptr);
  free_contexts[0] &= ~uint64_t(3);  // 0: WORLD, 1: SELF
  for (uint32_t id : reserved) free_contexts[id / 64] &= ~(uint64_t(1) << (id % 64));

  Comm* w = world();
  w->handle = MPI_COMM_WORLD;
  w->context = 0;
  w->rank = world_rank;
  w->size = world_size;
  w->world.resize(size_t(world_size));
  for (int i = 0; i < world_size; ++i) w->world[size_t(i)] = i;
  w->name = "MPI_COMM_WORLD";
  w->live = true;
  by_context[0] = w;

  Comm* s = self();
  s->handle = MPI_COMM_SELF;
  s->context = 1;
  s->rank = 0;
  s->size = 1;
  s->world = {world_rank};
  s->name = "MPI_COMM_SELF";
  s->live = true;
  by_context[1] = s;
  // The MPI_T bridge (mpit/) follows every communicator's life.
  peruse::comm_created(w->peruse, w->handle);
  peruse::comm_created(s->peruse, s->handle);
}

void Engine::drain() {
  // A peer that still needs our data is progressing too, so completions
  // keep coming; once nothing has moved for a while the peers have what
  // they need (a reliable-datagram provider may wait forever for the
  // acknowledgement of a peer that has stopped progressing).
  for (auto quiet_since = std::chrono::steady_clock::now();;) {
    bool all = true;
    for (auto& t : transports) all = all && t->drained();
    if (all) break;
    auto now = std::chrono::steady_clock::now();
    if (progress() > 0) {
      quiet_since = now;
    } else if (now - quiet_since > std::chrono::seconds(2)) {
      break;
    }
  }
}

void Engine::shutdown_transports() {
  for (auto& t : transports) t->shutdown();
}

// ---------------------------------------------------------------- progress

int Engine::progress() {
  if (in_progress_) return 0;  // a callback waiting inside progress: never re-enter
  in_progress_ = true;
  int n = 0;
  for (auto& t : transports) n += t->progress(*this);
  in_progress_ = false;
  if (!deferred_.empty()) {
    run_deferred();
    ++n;
  }
  // Operations of the layers above (progress_hooks.h): nothing but this
  // test while none is in flight.
  if (__builtin_expect(g_hooked_in_flight != 0, 0)) n += run_progress_hooks();
  return n;
}

void Engine::idle(int& idle_passes) {
  if (++idle_passes < settings.spin_before_yield) return;
  // Oversubscribed ranks must give the CPU to the peer they wait for.
  if (thread_level == MPI_THREAD_MULTIPLE) {
    EngineLock::unlock();
    sched_yield();
    EngineLock::lock();
  } else {
    sched_yield();
  }
}

void Engine::waiting_on(Request* r) {
  if (r->complete || !r->comm) return;
  if (r->kind == RequestKind::kRecv || r->kind == RequestKind::kSend) watch_peer(r->comm, r->peer);
}

void Engine::watch_peer(Comm* comm, int peer) {
  auto watch = [this](int world) {
    if (world >= 0 && size_t(world) < route.size() && route[size_t(world)]) route[size_t(world)]->watch(world);
  };
  if (peer == MPI_ANY_SOURCE) {
    for (int world : comm->world) watch(world);  // only transports with a liveness check act (ofi)
  } else if (peer >= 0 && size_t(peer) < comm->world.size()) {
    watch(comm->world[size_t(peer)]);
  }
}

void Engine::run_deferred() {
  // Deferred work may itself defer more (e.g. a pull that falls back to CTS).
  while (!deferred_.empty()) {
    std::vector<Deferred> work;
    work.swap(deferred_);
    for (Deferred& d : work) {
      switch (d.kind) {
        case Deferred::kPull:
          pull(d.request, d.peer, d.header);
          break;
        case Deferred::kControl:
          send_control(d.peer, d.header.type, d.header.send_cookie, d.header.recv_cookie, d.header.total,
                       d.header.flags);
          break;
        case Deferred::kCoopWrite:
          coop_write(d.request, d.peer, d.header.recv_cookie);
          break;
        case Deferred::kCancelAgain:
          send_cancel_request(d.request);
          break;
        case Deferred::kStreamData: {
          Request* r = d.request;
          r->item.header = d.header;
          r->item.handed = 0;
          route[r->world_peer]->enqueue(r->world_peer, &r->item);
          break;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- requests

// Field by field rather than `*this = Request()`: a request slot is reset on
// every receive and every queued send, and building and copying the whole
// object (hooks, sinks, a 48-byte header) showed up in the receive path.
// Every field of Request is listed here; the size check makes adding a
// field without resetting it here a compile error (x86-64 layout).
// (peruse_spec is not reset: peruse_spec_ready says whether it is built.)
static_assert(sizeof(Request) == 320, "Request changed: reset the new field in Request::reset()");
void Request::reset() {
  handle = MPI_REQUEST_NULL;
  kind = RequestKind::kSend;
  mode = SendMode::kStandard;
  persistent = active = complete = user_freed = cancelled = handed = matched = xfer_started = false;
  cancel_state = 0;
  peruse_spec_ready = false;
  error = MPI_SUCCESS;
  buf = nullptr;
  count = 0;
  type = nullptr;
  peer = 0;
  tag = 0;
  comm = nullptr;
  bytes = 0;
  status_source = MPI_ANY_SOURCE;
  status_tag = MPI_ANY_TAG;
  status_bytes = 0;
  world_peer = -1;
  staged = nullptr;
  coop_addr = coop_split = 0;
  coop_waiting = 0;
  sink.request = this;
  sink.message = nullptr;
  sink.contiguous = nullptr;
  item.request = this;
  item.header = transport::PacketHeader{};
  item.payload = nullptr;
  item.handed = 0;
}

Request* Engine::new_request(RequestKind kind) {
  Request* r = nullptr;
  int h = requests.allocate(&r);
  if (!h) return nullptr;
  r->reset();
  r->handle = h;
  r->kind = kind;
  return r;
}

Request* Engine::new_request(RequestKind kind, const void* buf, int64_t count, Datatype* type, int peer, int tag,
                             Comm* comm, SendMode mode) {
  Request* r = new_request(kind);
  if (!r) return nullptr;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  r->mode = mode;
  // A derived type outlives MPI_Type_free while a request uses it.
  if (!type->predefined) retain_datatype(type);
  return r;
}

void Engine::release(Request* r) {
  if (r->staged) {
    std::free(r->staged);
    r->staged = nullptr;
  }
  if (r->type && !r->type->predefined) release_datatype(r->type);
  requests.release(r->handle);
}

// The hot operations come in two compiled forms: <false> carries no PERUSE
// code at all, <true> fires events. The dispatch is one load of the
// communicator's watched mask and one predictable branch per operation.
// `events`: the events the watched twin can fire. An operation takes its
// watched twin only when one of them is active, so an active event an
// operation never fires costs it nothing (same test as `mask != 0`).
#define SONDE_DISPATCH(mask, events, call_watched, call_plain) \
  (__builtin_expect(((mask) & (events)) != 0, 0) ? (call_watched) : (call_plain))
inline constexpr uint32_t kCompleteEvents = peruse::bits_of({PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kPayloadDoneEvents =
    peruse::bits_of({PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kSendNowEvents =
    peruse::bits_of({PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END,
                     PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kIssueRecvEvents = peruse::bits_of(
    {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, PERUSE_COMM_SEARCH_UNEX_Q_END,
     PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, PERUSE_COMM_REQ_MATCH_UNEX});
inline constexpr uint32_t kArrivalEvents = peruse::bits_of(
    {PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, PERUSE_COMM_SEARCH_POSTED_Q_END,
     PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, PERUSE_COMM_MSG_MATCH_POSTED_REQ,
     PERUSE_COMM_REQ_XFER_BEGIN});

void Engine::complete(Request* r) {
  uint32_t w = r->comm ? SONDE_WATCHED_MASK(r->comm->peruse) : 0;
  SONDE_DISPATCH(w, kCompleteEvents, complete_watched(r, w), complete_as<false>(r, 0));
}

void Engine::complete_watched(Request* r, uint32_t w) { complete_as<true>(r, w); }

// notify() saw REQ_NOTIFY's bit; the slot says whether it is still active.
void Engine::notify_watched(Request* r) { FIRE_REQ_IF(peruse::bit(PERUSE_COMM_REQ_NOTIFY), PERUSE_COMM_REQ_NOTIFY, r); }

template <bool kWatched, bool kFireComplete>
void Engine::complete_as(Request* r, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  // `active` stays set until the user's wait/test retires the request: a
  // persistent request that completed early still owes its status.
  r->complete = true;
  if constexpr (kFireComplete) FIRE_REQ_IF(w, PERUSE_COMM_REQ_COMPLETE, r);
  if (r->mode == SendMode::kBuffered && r->kind == RequestKind::kSend && r->staged) {
    bsend_used -= int64_t(r->bytes) + MPI_BSEND_OVERHEAD;
  }
  if (r->user_freed) {
    // Nobody will wait for it (MPI_Request_free, or a detached Bsend): its
    // life as a request ends here.
    FIRE_REQ_IF(w, PERUSE_COMM_REQ_NOTIFY, r);
    release(r);
  }
}

void Engine::fill_status(const Request* r, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || status == nullptr) return;
  if (r->kind == RequestKind::kRecv || r->kind == RequestKind::kSendrecv) {
    status->MPI_SOURCE = r->status_source;
    status->MPI_TAG = r->status_tag;
  } else {
    // A send's status carries nothing but the error and cancel flag (MPI 3.7.3).
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
  }
  // MPI_ERROR is left alone: single-completion calls return the error
  // themselves, and the multiple-completion calls set it (abi_p2p.cc).
  status->sonde_cancelled = r->cancelled;
  status->sonde_count = static_cast<long long>(r->status_bytes);
}

bool Engine::send_now(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  uint32_t w = SONDE_WATCHED_MASK(comm->peruse);
  return SONDE_DISPATCH(w, kSendNowEvents, send_now_watched(buf, count, type, dest, tag, comm),
                        send_now_as<false>(buf, count, type, dest, tag, comm));
}

bool Engine::send_now_watched(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  return send_now_as<true>(buf, count, type, dest, tag, comm);
}

template <bool kWatched>
bool Engine::send_now_as(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  uint64_t bytes = uint64_t(count) * uint64_t(type->size);
  if (!type->contiguous || dest == MPI_PROC_NULL) return false;
  int peer = comm->world[size_t(dest)];
  if (bytes > eager_limit_of(route[size_t(peer)])) return false;
  PacketHeader h{};
  h.type = PacketType::kEager;
  h.context = comm->context;
  h.source = comm->rank;
  h.tag = tag;
  h.payload = bytes;
  h.total = bytes;
  if (!route[size_t(peer)]->try_send_now(peer, h, contiguous_start(*type, buf))) return false;
  // The whole life of this request fits in this call, so its events fire
  // together once the data is handed over (a transient id: no descriptor).
  if constexpr (kWatched) {
    SONDE_FIRE_SEQUENCE_IF(SONDE_WATCHED_MASK(comm->peruse), comm->peruse, new_id(kIdTransientRequest), comm->handle,
                           buf, count, type->handle, dest, tag, PERUSE_SEND, PERUSE_COMM_REQ_ACTIVATE,
                           PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE,
                           PERUSE_COMM_REQ_NOTIFY);
  }
  return true;
}

int Engine::issue_send(Request* r) {
  const uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);  // one load for this operation's events
  FIRE_REQ_IF(w, PERUSE_COMM_REQ_ACTIVATE, r);
  r->active = true;
  r->xfer_started = false;
  r->complete = false;
  r->handed = false;
  r->matched = false;
  r->cancelled = false;  // a persistent request cancelled last time
  r->cancel_state = 0;
  r->error = MPI_SUCCESS;
  r->status_bytes = 0;
  if (r->peer == MPI_PROC_NULL) {
    complete(r);
    return MPI_SUCCESS;
  }
  Comm* c = r->comm;
  r->world_peer = c->world[r->peer];
  transport::Transport* t = route[r->world_peer];
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);

  const void* src = r->buf;
  bool contiguous = r->type->contiguous;
  if (r->mode == SendMode::kBuffered) {
    // Copy out now so the user's buffer is free at once (MPI_Bsend).
    int64_t need = int64_t(r->bytes) + MPI_BSEND_OVERHEAD;
    if (!bsend_buffer || bsend_used + need > bsend_size) {
      r->error = MPI_ERR_BUFFER;
      complete(r);
      return MPI_ERR_BUFFER;
    }
    r->staged = static_cast<uint8_t*>(std::malloc(r->bytes ? r->bytes : 1));
    pack(*r->type, r->buf, r->count, 0, r->staged, r->bytes);
    bsend_used += need;
    src = r->staged;
    contiguous = true;
  }

  PacketHeader h{};
  h.context = c->context;
  h.source = c->rank;
  h.tag = r->tag;
  h.total = r->bytes;
  h.send_cookie = reinterpret_cast<uint64_t>(r);
  const uint8_t* data = contiguous ? (src == r->staged ? r->staged : contiguous_start(*r->type, src)) : nullptr;

  if (r->bytes <= eager_limit_of(t)) {
    bool sync = r->mode == SendMode::kSync;
    h.type = sync ? PacketType::kEagerSync : PacketType::kEager;
    h.payload = r->bytes;
    if ((data || r->bytes == 0) && !sync && r->mode != SendMode::kBuffered && t->try_send_now(r->world_peer, h, data)) {
      xfer_begin_if(w, r);  // handed over in one piece
      FIRE_REQ_IF(w, PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      complete(r);
      return MPI_SUCCESS;
    }
    r->item.header = h;
    r->item.payload = data;
    r->item.handed = 0;
    t->enqueue(r->world_peer, &r->item);
    return MPI_SUCCESS;
  }

  // Rendezvous: announce; the receiver pulls (single copy) or asks us to
  // stream. Non-contiguous data is not staged: the receiver has us write
  // it straight from our layout into its buffer, or asks for a stream we
  // pack into the transport (docs/datatypes.md).
  h.type = PacketType::kRts;
  h.payload = 0;
  h.recv_cookie = reinterpret_cast<uint64_t>(data);
  if (!data) h.flags = kRtsScattered;
  r->item.payload = data;
  r->item.header = h;
  r->item.handed = 0;
  if (!t->try_send_now(r->world_peer, h, nullptr)) t->enqueue(r->world_peer, &r->item);
  return MPI_SUCCESS;
}

void SendPart::pack(uint8_t* out, size_t offset, size_t n) {
  engine::pack(*request->type, request->buf, request->count, offset, out, n);
}

void SendPart::on_first_byte() {
  // Control packets carry no user data and never count as a transfer.
  if (header.type == PacketType::kEager || header.type == PacketType::kEagerSync || header.type == PacketType::kData)
    xfer_begin(request);
}

void SendPart::on_progress() {
  if (header.type == PacketType::kEager || header.type == PacketType::kEagerSync || header.type == PacketType::kData)
    FIRE_REQ(PERUSE_COMM_REQ_XFER_CONTINUE, request);
}

void Engine::complete_at_once(Request* r) {
  FIRE_REQ(PERUSE_COMM_REQ_ACTIVATE, r);
  r->active = true;
  complete(r);
}

void SendPart::on_handed() {
  Request* r = request;
  switch (header.type) {
    case PacketType::kEager:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      engine().complete(r);
      break;
    case PacketType::kEagerSync:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      if (r->matched) engine().complete(r);
      break;
    case PacketType::kData:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      engine().complete(r);
      break;
    case PacketType::kRts:
      break;  // wait for kFin or kCts
    default:
      // A queued control packet (see send_control): its request is internal.
      engine().release(r);
      break;
  }
}

void Engine::send_control(int peer, PacketType type, uint64_t send_cookie, uint64_t recv_cookie, uint64_t total,
                          uint8_t flags, const uint64_t* word) {
  PacketHeader h{};
  h.type = type;
  h.flags = flags;
  h.total = total;
  h.send_cookie = send_cookie;
  h.recv_cookie = recv_cookie;
  h.payload = word ? sizeof(uint64_t) : 0;
  transport::Transport* t = route[peer];
  if (t->try_send_now(peer, h, word)) return;
  // No room now: queue it on an internal request that owns a copy of the word.
  Request* r = new_request(RequestKind::kSend);
  r->item.header = h;
  if (word) r->coop_addr = *word;
  r->item.payload = word ? reinterpret_cast<const uint8_t*>(&r->coop_addr) : nullptr;
  r->world_peer = peer;
  t->enqueue(peer, &r->item);
}

// Sender, cooperative rendezvous: write our part straight into the
// receiver's buffer while it reads the rest.
void Engine::coop_write(Request* r, int peer, uint64_t recv_cookie) {
  xfer_begin(r);  // the sender's share of a cooperative copy
  bool ok = r->item.payload ? route[peer]->write_remote(peer, r->coop_addr, r->item.payload, r->coop_split)
                            : copy_scattered(*route[peer], peer, /*read=*/false, r->coop_addr, *r, r->coop_split);
  send_control(peer, PacketType::kWriteDone, reinterpret_cast<uint64_t>(r), recv_cookie, r->coop_split, ok ? 0 : 1);
  // Refused: the receiver reads our head itself and says so with a second
  // kFin; until then our buffer must stay untouched, so we are not done.
  if (ok) coop_part_done(r);
}

// One of the two halves of a cooperative copy is done on this side.
void Engine::coop_part_done(Request* r) {
  if (r->coop_waiting > 0 && --r->coop_waiting == 0) {
    if (r->kind == RequestKind::kSend) {
      r->handed = true;
      r->matched = true;
    }
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    complete(r);
  }
}

int Engine::issue_recv(Request* r) {
  uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);
  return SONDE_DISPATCH(w, kIssueRecvEvents, issue_recv_watched(r, w), issue_recv_as<false>(r, 0));
}

int Engine::issue_recv_watched(Request* r, uint32_t w) { return issue_recv_as<true>(r, w); }

template <bool kWatched>
int Engine::issue_recv_as(Request* r, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  Message* found;
  {
  // One reader section for the events up to the match; the copy (or pull)
  // of a matched message runs outside it.
  peruse::ReaderIf<kWatched> rd;
  FIRE_REQ_WITH(rd, r->comm, PERUSE_COMM_REQ_ACTIVATE, r);
  r->active = true;
  r->xfer_started = false;
  r->complete = false;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  r->status_bytes = 0;
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);
  if (r->peer == MPI_PROC_NULL) {
    r->status_source = MPI_PROC_NULL;
    r->status_tag = MPI_ANY_TAG;
    complete(r);
    return MPI_SUCCESS;
  }
  matching::PostedEntry& entry = *r;
  entry.source = r->peer;
  entry.tag = r->tag;
  Comm* c = r->comm;
  const uint64_t sid = (w & kSearchUnexBits) ? new_id(kIdSearch) : 0;
  if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, c, sid, r->peer, r->tag);
  found = static_cast<Message*>(c->queues.match_receive(r->peer, r->tag, nullptr));
  if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_UNEX_Q_END, c, sid, r->peer, r->tag);
  if (!found) {
    FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, r);
    c->queues.post(r);
    return MPI_SUCCESS;
  }
  FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, c, found->uid, found->header);
  FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_MATCH_UNEX, r);
  }
  match_message(r, found);
  return MPI_SUCCESS;
}

// r matched message m that was waiting in the unexpected queue (or probed).
void Engine::match_message(Request* r, Message* m) {
  const PacketHeader& h = m->header;
  r->status_source = h.source;
  r->status_tag = h.tag;
  r->world_peer = m->world_peer;
  if (h.type == PacketType::kRts) {
    PacketHeader copy = h;
    int peer = m->world_peer;
    free_message(m);
    pull(r, peer, copy);
    return;
  }
  if (h.type == PacketType::kEagerSync) send_control(m->world_peer, PacketType::kSyncAck, h.send_cookie, 0);
  if (!m->all_arrived) {
    // Payload still streaming into the message buffer: finish on arrival.
    m->receiver = r;
    return;
  }
  xfer_begin(r);  // copy out of the unexpected buffer
  uint64_t n = std::min<uint64_t>(h.payload, r->bytes);
  if (n) unpack(*r->type, r->buf, r->count, 0, m->data, n);
  r->status_bytes = n;
  if (h.payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
  FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
  free_message(m);
  complete(r);
}

bool Engine::cancel_recv(Request* r) {
  if (!r->active || r->kind != RequestKind::kRecv) return false;
  if (!r->comm->queues.cancel(r)) return false;
  FIRE_REQ(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, r);
  r->cancelled = true;
  r->status_source = MPI_ANY_SOURCE;
  r->status_tag = MPI_ANY_TAG;
  complete(r);
  return true;
}

void Engine::setup_sink(Request* r, uint64_t payload) {
  r->status_bytes = std::min<uint64_t>(payload, r->bytes);
  if (payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
  r->sink.request = r;
  r->sink.message = nullptr;
  r->sink.contiguous = nullptr;
  if (payload <= r->bytes && r->type->contiguous && payload > 0)
    r->sink.contiguous = contiguous_start(*r->type, r->buf);
}

void RecvSink::on_chunk(size_t received) {
  if (request) FIRE_REQ(PERUSE_COMM_REQ_XFER_CONTINUE, request);
}

void RecvSink::unpack(const uint8_t* bytes, size_t offset, size_t n) {
  Request* r = request;
  if (offset >= r->bytes) return;  // beyond the receive buffer: truncated
  uint64_t keep = std::min<uint64_t>(n, r->bytes - offset);
  engine::unpack(*r->type, r->buf, r->count, offset, bytes, keep);
}

// Rendezvous at the receiver once r matched an RTS: pull the data ourselves
// when the transport can (one copy), or ask the sender to stream it.
void Engine::pull(Request* r, int peer, const PacketHeader& h) {
  if (in_progress_) {
    deferred_.push_back({Deferred::kPull, peer, r, h});
    return;
  }
  r->world_peer = peer;
  uint64_t n = std::min<uint64_t>(h.total, r->bytes);
  setup_sink(r, h.total);
  if (!settings.single_copy) {
    // Single copy turned off at run time (MPI_T cvar sonde_shm_single_copy): stream.
    send_control(peer, PacketType::kCts, h.send_cookie, reinterpret_cast<uint64_t>(r));
    return;
  }
  // ofi: the transport reads with RMA and reports fragments and the end
  // itself (transport.h start_read); everything below is synchronous.
  if (n > 0 && !(h.flags & kRtsScattered) &&
      route[peer]->start_read(peer, h, r->type->contiguous ? contiguous_start(*r->type, r->buf) : nullptr, n,
                              &r->sink)) {
    xfer_begin(r);
    return;
  }
  bool pulled = false;
  const bool scattered = h.flags & kRtsScattered;  // the sender's data has no single address
  bool coop = !scattered && settings.coop_threshold && n >= settings.coop_threshold && r->type->contiguous &&
              peer != world_rank && single_copy_state_[size_t(peer)] > 0;
  if (coop) {
    // Both cores copy: the sender writes [0, split) into our buffer while we
    // read [split, n). Done when our read and its kWriteDone are both in.
    uint64_t split = (n / 2) & ~uint64_t(4095);
    uint8_t* dst = contiguous_start(*r->type, r->buf);
    uint64_t dst_addr = reinterpret_cast<uint64_t>(dst);
    r->coop_addr = h.recv_cookie;
    r->coop_split = split;
    r->coop_waiting = 2;
    send_control(peer, PacketType::kCtsWrite, h.send_cookie, reinterpret_cast<uint64_t>(r), split, 0, &dst_addr);
    xfer_begin(r);
    if (route[peer]->read_remote(peer, h.recv_cookie + split, dst + split, n - split)) {
      send_control(peer, PacketType::kFin, h.send_cookie, 0);
      coop_part_done(r);
      return;
    }
    // Refused after all: stream everything (the sender's write, if it
    // happens, puts the same bytes in the same place).
    single_copy_state_[size_t(peer)] = -1;
    r->coop_waiting = 0;
    send_control(peer, PacketType::kCts, h.send_cookie, reinterpret_cast<uint64_t>(r));
    return;
  }
  if (scattered && n > 0) {
    if (r->type->contiguous && peer != world_rank && single_copy_state_[size_t(peer)] >= 0) {
      // Only the sender knows its layout: it writes all n bytes straight
      // into our buffer (the cooperative exchange with an empty share for
      // us). coop_addr 0 says a refused write falls back to streaming.
      uint64_t dst_addr = reinterpret_cast<uint64_t>(contiguous_start(*r->type, r->buf));
      r->coop_addr = 0;
      r->coop_split = n;
      r->coop_waiting = 1;  // its kWriteDone
      send_control(peer, PacketType::kCtsWrite, h.send_cookie, reinterpret_cast<uint64_t>(r), n, 0, &dst_addr);
      xfer_begin(r);
      send_control(peer, PacketType::kFin, h.send_cookie, 0);  // our (empty) share is done
      return;
    }
    // Scattered on both sides: the sender packs into the transport and we
    // unpack from it, two copies and no staging buffer.
    send_control(peer, PacketType::kCts, h.send_cookie, reinterpret_cast<uint64_t>(r));
    return;
  }
  if (n == 0) {
    xfer_begin(r);  // nothing to move (truncated to 0 bytes), but the transfer still happens
    pulled = true;
  } else if (r->type->contiguous) {
    xfer_begin(r);
    pulled = route[peer]->read_remote(peer, h.recv_cookie, contiguous_start(*r->type, r->buf), n);
  } else {
    // Straight into our scattered buffer: the iovecs of our layout.
    xfer_begin(r);
    pulled = copy_scattered(*route[peer], peer, /*read=*/true, h.recv_cookie, *r, n);
  }
  if (n) single_copy_state_[size_t(peer)] = pulled ? 1 : -1;
  if (pulled) {
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    send_control(peer, PacketType::kFin, h.send_cookie, 0);
    complete(r);
    return;
  }
  send_control(peer, PacketType::kCts, h.send_cookie, reinterpret_cast<uint64_t>(r));
}

// ---------------------------------------------------------------- arrivals

Message* Engine::new_message(int peer, const PacketHeader& h, Comm* comm) {
  Message* m = nullptr;
  int handle = messages.allocate(&m);
  if (!handle) {
    std::fprintf(stderr, "sonde: out of message descriptors\n");
    std::abort();
  }
  m->handle = 0;
  m->header = h;
  m->world_peer = peer;
  m->comm = comm;
  m->receiver = nullptr;
  m->all_arrived = h.payload == 0;
  m->source = h.source;
  m->tag = h.tag;
  m->sink.message = m;
  m->sink.request = nullptr;
  if (h.payload > m->capacity) {
    std::free(m->data);
    m->data = static_cast<uint8_t*>(std::malloc(h.payload));
    m->capacity = h.payload;
  }
  m->sink.contiguous = m->data;
  // The slot's handle is kept privately so free_message can release it.
  m->handle = handle;
  return m;
}

void Engine::free_message(Message* m) {
  int h = m->handle;
  // Large buffers go back to the system; small ones stay with the slot.
  if (m->capacity > 64 * 1024) {
    std::free(m->data);
    m->data = nullptr;
    m->capacity = 0;
  }
  messages.release(h);
}

transport::PayloadSink* Engine::on_header(int peer, const PacketHeader& h) {
  if (!is_message(h.type)) {
    deliver_control(peer, h);
    if (h.type == PacketType::kData) {
      Request* r = reinterpret_cast<Request*>(h.recv_cookie);
      xfer_begin(r);
      return &r->sink;
    }
    if (h.type == PacketType::kCtsWrite) {
      // The 8-byte payload is the receiver's buffer address.
      Request* r = reinterpret_cast<Request*>(h.send_cookie);
      r->sink.request = nullptr;
      r->sink.message = nullptr;
      r->sink.contiguous = reinterpret_cast<uint8_t*>(&r->coop_addr);
      return &r->sink;
    }
    return nullptr;
  }
  Comm* comm = h.context < by_context.size() ? by_context[h.context] : nullptr;
  return on_message(peer, h, comm);
}

transport::PayloadSink* Engine::on_message(int peer, const PacketHeader& h, Comm* comm) {
  uint64_t id = new_id(kIdTransientMessage);  // the message's id until it is matched or removed
  if (!comm) {
    // A communicator we have not finished creating: hold the message; its
    // MSG_ARRIVED fires when the communicator exists (create_comm).
    Message* m = new_message(peer, h, nullptr);
    m->uid = id;
    early.push_back(*m);
    return &m->sink;
  }
  uint32_t w = SONDE_WATCHED_MASK(comm->peruse);
  return SONDE_DISPATCH(w, kArrivalEvents, on_message_watched(peer, h, comm, id, w), on_message_as<false>(peer, h, comm, id, 0));
}

transport::PayloadSink* Engine::on_message_watched(int peer, const PacketHeader& h, Comm* comm, uint64_t id,
                                                   uint32_t w) {
  return on_message_as<true>(peer, h, comm, id, w);
}

template <bool kWatched>
transport::PayloadSink* Engine::on_message_as(int peer, const PacketHeader& h, Comm* comm, uint64_t id, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  Request* r;
  {
  // One reader section for the events of an arrival; a rendezvous pull runs
  // outside it.
  peruse::ReaderIf<kWatched> rd;
  FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_ARRIVED, comm, id, h);
  const uint64_t sid = (w & kSearchPostedBits) ? new_id(kIdSearch) : 0;
  if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, comm, sid, h.source, h.tag);
  r = static_cast<Request*>(comm->queues.match_arrival(h.source, h.tag, nullptr));
  if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_POSTED_Q_END, comm, sid, h.source, h.tag);
  if (!r) {
    Message* m = new_message(peer, h, comm);
    m->uid = id;
    FIRE_MSG_LAST_WITH(rd, w, PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, comm, id, h);
    comm->queues.push_unexpected(m);
    return &m->sink;
  }
  FIRE_REQ_WITH(rd, comm, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, r);
  FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_MATCH_POSTED_REQ, comm, id, h);
  r->status_source = h.source;
  r->status_tag = h.tag;
  r->world_peer = peer;
  if (h.type != PacketType::kRts) {
    if (h.type == PacketType::kEagerSync) deferred_.push_back({Deferred::kControl, peer, r, [&] {
      PacketHeader ack{};
      ack.type = PacketType::kSyncAck;
      ack.send_cookie = h.send_cookie;
      return ack;
    }()});
    setup_sink(r, h.payload);
    xfer_begin_last_with(rd, comm, r);
    return &r->sink;
  }
  }
  pull(r, peer, h);
  return nullptr;
}

void Engine::on_payload_done(int peer, const PacketHeader& h, transport::PayloadSink* s) {
  if (h.type == PacketType::kCtsWrite) {
    Request* r = reinterpret_cast<Request*>(h.send_cookie);
    r->coop_split = h.total;
    r->coop_waiting = 2;  // our write, and the receiver's kFin
    deferred_.push_back({Deferred::kCoopWrite, peer, r, h});
    return;
  }
  if (!s) return;
  auto* sink = static_cast<EngineSink*>(s);
  if (sink->request) {
    if (h.type == PacketType::kEager || h.type == PacketType::kEagerSync || h.type == PacketType::kData) {
      Request* r = sink->request;
      const uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);
      if (__builtin_expect((w & kPayloadDoneEvents) != 0, 0)) {
        payload_done_watched(r, w);
      } else {
        complete_as<false>(r, 0);
      }
    }
    return;
  }
  Message* m = sink->message;
  m->all_arrived = true;
  if (Request* r = m->receiver) {
    xfer_begin(r);  // copy out of the message buffer
    uint64_t n = std::min<uint64_t>(m->header.payload, r->bytes);
    if (n) unpack(*r->type, r->buf, r->count, 0, m->data, n);
    r->status_bytes = n;
    if (m->header.payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    free_message(m);
    complete(r);
  }
}

// A receive's payload is in: REQ_XFER_END and REQ_COMPLETE back to back with
// one spec, one reader section. Out of line, so the plain path keeps its
// registers.
void Engine::payload_done_watched(Request* r, uint32_t w) {
  FIRE_REQ_SEQUENCE_IF(w, r, PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE);
  complete_as<true, false>(r, w);
}

void Engine::deliver_control(int peer, const PacketHeader& h) {
  switch (h.type) {
    case PacketType::kCts: {
      auto* r = reinterpret_cast<Request*>(h.send_cookie);
      r->coop_waiting = 0;  // streaming replaces any single-copy exchange
      PacketHeader d{};
      d.type = PacketType::kData;
      d.payload = r->bytes;
      d.total = r->bytes;
      d.recv_cookie = h.recv_cookie;
      d.send_cookie = h.send_cookie;
      deferred_.push_back({Deferred::kStreamData, peer, r, d});
      break;
    }
    case PacketType::kFin: {
      auto* r = reinterpret_cast<Request*>(h.send_cookie);
      if (r->coop_waiting) {  // cooperative: our own write may still be pending
        coop_part_done(r);
        break;
      }
      r->handed = true;
      r->matched = true;
      // The receiver pulled the data in one copy; the sender learns of it
      // only now, so its XFER_BEGIN/END are reported here (docs/peruse.md).
      xfer_begin(r);
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      complete(r);
      break;
    }
    case PacketType::kSyncAck: {
      auto* r = reinterpret_cast<Request*>(h.send_cookie);
      r->matched = true;
      if (r->handed) complete(r);
      break;
    }
    case PacketType::kData:
      break;  // the sink is the receive's (set up by pull)
    case PacketType::kCancelSend:
      drop_cancelled_message(peer, h);
      break;
    case PacketType::kCancelAck:
      on_cancel_answer(h);
      break;
    case PacketType::kWriteDone: {
      auto* r = reinterpret_cast<Request*>(h.recv_cookie);
      if (!r->coop_waiting) break;  // we fell back to streaming meanwhile
      if ((h.flags & 1) && r->coop_addr == 0) {
        // A scattered sender could not write, and there is no address to
        // read from: have it stream instead.
        single_copy_state_[size_t(peer)] = -1;
        r->coop_waiting = 0;
        deferred_.push_back({Deferred::kControl, peer, r, [&] {
          PacketHeader cts{};
          cts.type = PacketType::kCts;
          cts.send_cookie = h.send_cookie;
          cts.recv_cookie = reinterpret_cast<uint64_t>(r);
          return cts;
        }()});
        break;
      }
      if (h.flags & 1) {
        // The sender could not write its part: read it ourselves, then let
        // it go (it waits for this second kFin before reusing its buffer).
        uint8_t* dst = contiguous_start(*r->type, r->buf);
        if (!route[peer]->read_remote(peer, r->coop_addr, dst, r->coop_split)) r->error = MPI_ERR_OTHER;
        deferred_.push_back({Deferred::kControl, peer, r, [&] {
          PacketHeader fin{};
          fin.type = PacketType::kFin;
          fin.send_cookie = h.send_cookie;
          return fin;
        }()});
      }
      coop_part_done(r);
      break;
    }
    default:
      break;
  }
}

// ---------------------------------------------------------------- probe

Message* Engine::probe(Comm* comm, int source, int tag) {
  // A probe searches (and fires the search events) but activates nothing.
  SearchEvents search(comm, SONDE_WATCHED_MASK(comm->peruse), source, tag);
  return static_cast<Message*>(comm->queues.find_unexpected(source, tag, search.unexpected()));
}

void Engine::take_message(Comm* comm, Message* m) {
  FIRE_MSG(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, comm, m->uid, m->header);  // matched probe
  comm->queues.remove_unexpected(m);
}

int Engine::receive_message(Request* r, Message* m) {
  // MPI_Mrecv / MPI_Imrecv: the message left the queue at MPI_Mprobe; the
  // request activates and matches it now.
  FIRE_REQ(PERUSE_COMM_REQ_ACTIVATE, r);
  FIRE_REQ(PERUSE_COMM_REQ_MATCH_UNEX, r);
  r->xfer_started = false;
  r->active = true;
  r->complete = false;
  r->error = MPI_SUCCESS;
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);
  match_message(r, m);
  return MPI_SUCCESS;
}

// ---------------------------------------------------------------- communicators

int Engine::create_comm(Comm* parent, std::vector<int> world_ranks, int my_rank, uint32_t context, Comm** out,
                        bool duplicate) {
  Comm* c = nullptr;
  int h = comms.allocate(&c);
  if (!h) return MPI_ERR_INTERN;
  c->handle = h;
  c->context = context;
  c->rank = my_rank;
  c->size = int(world_ranks.size());
  c->world = std::move(world_ranks);
  c->name.clear();
  c->errhandler = parent ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
  c->live = true;
  c->coll_seq = 0;
  c->pending_ops = 0;
  // Helper `comm`'s fields (objects.h): a slot may be reused.
  c->inter = false;
  c->local_world.clear();
  c->local_comm = nullptr;
  c->attrs.clear();
  c->info.clear();
  c->idup_seq = 0;
  // Helper `conform`: a duplicate keeps its parent's topology (MPI_Comm_dup).
  c->topo = duplicate ? parent->topo : nullptr;
  by_context[context] = c;
  // Propagated handles first: the early messages adopted below must already
  // be seen by them (MSG_ARRIVED, MSG_INSERT_IN_UNEX_Q).
  if (duplicate) peruse::comm_duplicated(parent->peruse, c->peruse, c->handle);
  peruse::comm_created(c->peruse, c->handle);  // MPI_T bridge (mpit/), before the adoption below
  // Adopt messages that arrived before we finished creating it, in order.
  for (auto it = early.begin(); it != early.end();) {
    auto* m = static_cast<Message*>(&*it);
    if (m->header.context == context) {
      it = early.erase(it);
      m->comm = c;
      // No receive can be posted on a communicator not yet returned, so
      // these go straight to the unexpected queue.
      FIRE_MSG(PERUSE_COMM_MSG_ARRIVED, c, m->uid, m->header);
      FIRE_MSG(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, c, m->uid, m->header);
      c->queues.push_unexpected(m);
    } else {
      ++it;
    }
  }
  *out = c;
  return MPI_SUCCESS;
}

void Engine::free_comm(Comm* c) {
  // A nonblocking operation still running on c (a collective, say)
  // receives on it until it completes; MPI lets the user free the handle
  // meanwhile.
  const bool collectives_pending = c->pending_ops != 0;
  // Messages nobody can receive any more (no new receive can be posted).
  while (!collectives_pending && !c->queues.unexpected().empty()) {
    auto* m = static_cast<Message*>(&c->queues.unexpected().front());
    c->queues.unexpected().pop_front();
    free_message(m);
  }
  c->live = false;  // the user's handle is dead from now on
  peruse::comm_freed(c->peruse, c->handle);  // its handles answer PERUSE_ERR_MPI_OBJECT
  if (!c->queues.posted().empty() || collectives_pending) {
    // Receives still posted complete normally (MPI 6.4.3), and so do
    // nonblocking operations: keep the context matching.
    // The slot and context id are not reused, a deliberate small leak for a
    // rare case.
    return;
  }
  by_context[c->context] = nullptr;
  free_contexts[c->context / 64] |= uint64_t(1) << (c->context % 64);
  comms.release(c->handle);
}

// ---------------------------------------------------------------- cancelling sends
// (helper `conform`) MPI_Cancel of a send whose message has left: the
// receiver drops it if it still waits unmatched in its unexpected queue and
// says so (kCancelSend / kCancelAck). Until the answer the send does not
// complete, so MPI_Wait returns once either the cancel or the transfer has
// happened, never neither (MPI 4.1 3.8.4).

bool Engine::ask_cancel_send(Request* r) {
  if (r->kind != RequestKind::kSend || r->mode == SendMode::kBuffered || r->peer == MPI_PROC_NULL ||
      r->cancel_state || r->cancelled || r->world_peer < 0)
    return false;
  if (r->complete) {
    // Only an eager standard/ready send completes before it is matched (a
    // synchronous one completes on the match, a rendezvous one on the data).
    if (r->mode == SendMode::kSync || r->bytes > eager_limit_of(route[r->world_peer])) return false;
    r->cancel_state = kCancelAfterComplete;
    r->complete = false;
  } else if ((r->item.header.type == PacketType::kRts || r->item.header.type == PacketType::kEagerSync) &&
             !r->matched) {
    // An RTS, or synchronous eager data, the receiver has not matched: the
    // send would wait for that match forever.
    r->cancel_state = kCancelInFlight;
  } else {
    return false;  // standard eager data still going out, or a rendezvous under way
  }
  send_cancel_request(r);
  return true;
}

void Engine::send_cancel_request(Request* r) {
  PacketHeader h{};
  h.type = PacketType::kCancelSend;
  h.context = r->comm->context;
  h.source = r->comm->rank;
  h.tag = r->tag;
  h.send_cookie = reinterpret_cast<uint64_t>(r);
  h.recv_cookie = uint64_t(uint32_t(r->handle));
  transport::Transport* t = route[r->world_peer];
  if (!t->try_send_now(r->world_peer, h, nullptr)) {
    Request* q = new_request(RequestKind::kSend);  // released by SendPart::on_handed
    q->item.header = h;
    q->world_peer = r->world_peer;
    t->enqueue(r->world_peer, &q->item);
  }
}

void Engine::drop_cancelled_message(int peer, const PacketHeader& h) {
  uint8_t dropped = 0;
  Comm* c = h.context < by_context.size() ? by_context[h.context] : nullptr;
  if (c) {
    // Newest first: an older message from the same request slot (same
    // cookie) may still wait, but never a newer one with the same envelope.
    auto& q = c->queues.unexpected();
    for (auto it = q.rbegin(); it != q.rend(); ++it) {
      auto* m = static_cast<Message*>(&*it);
      if (m->world_peer != peer || m->header.send_cookie != h.send_cookie || m->header.source != h.source ||
          m->header.tag != h.tag)
        continue;
      if (!m->all_arrived) {
        dropped = 2;  // its payload is still coming in: ask again
      } else if (!m->claimed && !m->receiver) {
        FIRE_MSG(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, c, m->uid, m->header);
        c->queues.remove_unexpected(m);
        free_message(m);
        dropped = 1;
      }
      break;
    }
  }
  PacketHeader ack{};
  ack.type = PacketType::kCancelAck;
  ack.flags = dropped;
  ack.send_cookie = h.send_cookie;  // a transport may key per-send state on it (ofi's lent registrations)
  ack.recv_cookie = h.recv_cookie;
  deferred_.push_back({Deferred::kControl, peer, nullptr, ack});
}

void Engine::on_cancel_answer(const PacketHeader& h) {
  Request* r = requests.lookup(int(uint32_t(h.recv_cookie)));
  // Null or not waiting: the send finished (matched) and was released meanwhile.
  if (!r || r->kind != RequestKind::kSend || !r->cancel_state) return;
  if (h.flags & 2) {
    // The receiver had the message half arrived: ask again once progress()
    // is out of the transport (never from inside its callback).
    deferred_.push_back({Deferred::kCancelAgain, r->world_peer, r, PacketHeader{}});
    return;
  }
  uint8_t state = r->cancel_state;
  r->cancel_state = 0;
  if (h.flags & 1) r->cancelled = true;
  if (state == kCancelAfterComplete) {
    r->complete = true;  // its completion events fired the first time
    if (r->user_freed) release(r);  // MPI_Request_free while the answer was awaited
  } else if (r->cancelled) {
    complete(r);  // no data will move: the receiver forgot the RTS
  }
}

// ---------------------------------------------------------------- p2p.h


int start_send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm, SendMode mode,
               Request** out) {
  Request* r = engine().new_request(RequestKind::kSend, buf, count, type, dest, tag, comm, mode);
  *out = r;
  return r ? engine().issue_send(r) : MPI_ERR_INTERN;
}

int start_recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, Request** out) {
  Request* r = engine().new_request(RequestKind::kRecv, buf, count, type, source, tag, comm);
  *out = r;
  return r ? engine().issue_recv(r) : MPI_ERR_INTERN;
}

int wait(Request* r, MPI_Status* status) {
  Engine& e = engine();
  int idle = 0;
  while (!r->complete) {
    if (e.wait_pass(idle)) e.waiting_on(r);  // (ofi) liveness
  }
  Engine::notify(r);
  Engine::fill_status(r, status);
  int rc = r->error;
  if (!r->persistent) e.release(r);
  return rc;
}

int wait_all(int n, Request** rs) {
  int rc = MPI_SUCCESS;
  for (int i = 0; i < n; ++i) {
    if (!rs[i]) continue;
    int one = wait(rs[i], MPI_STATUS_IGNORE);
    if (one && !rc) rc = one;
    rs[i] = nullptr;
  }
  return rc;
}

// A started request (possibly failed) -> its final error class.
static int wait_started(int rc, Request* r, MPI_Status* status) {
  if (!r) return rc;
  int w = wait(r, status);
  return rc ? rc : w;
}

int send(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  Request* r = nullptr;
  int rc = start_send(buf, count, type, dest, tag, comm, SendMode::kStandard, &r);
  return wait_started(rc, r, MPI_STATUS_IGNORE);
}

int recv(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, MPI_Status* status) {
  Request* r = nullptr;
  int rc = start_recv(buf, count, type, source, tag, comm, &r);
  return wait_started(rc, r, status);
}

int sendrecv(const void* sbuf, int64_t scount, Datatype* stype, int dest, int stag, void* rbuf, int64_t rcount,
             Datatype* rtype, int source, int rtag, Comm* comm, MPI_Status* status) {
  Request *rr = nullptr, *sr = nullptr;
  int rc1 = start_recv(rbuf, rcount, rtype, source, rtag, comm, &rr);
  int rc2 = start_send(sbuf, scount, stype, dest, stag, comm, SendMode::kStandard, &sr);
  int w2 = wait_started(rc2, sr, MPI_STATUS_IGNORE);
  int w1 = wait_started(rc1, rr, status);
  return w1 ? w1 : w2;
}

int progress() { return engine().progress(); }

}  // namespace sonde::engine
