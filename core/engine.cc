// The engine object and its life cycle (start, drain, shutdown), settings,
// progress and deferred work, and the communicator registry.
#include "core/engine.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/current_call.h"
#include "core/engine_internal.h"
#include "core/process.h"
#include "core/progress_hooks.h"

namespace sonde::engine {

// Built when the library loads and never destroyed: callbacks may run at exit.
Engine* const g_engine = new Engine();

namespace {

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

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace

// ---------------------------------------------------------------- life cycle

void Engine::load_settings() {
  if (settings_loaded_) return;
  settings_loaded_ = true;
  settings_.eager_limit = env_u64("SONDE_EAGER_LIMIT", settings_.eager_limit, settings_);
  settings_.spin_before_yield = int(env_u64("SONDE_SPIN", uint64_t(settings_.spin_before_yield), settings_));
  if (std::getenv("SONDE_SPIN")) settings_.spin_chosen = true;
  settings_.idle_sleep_after_ms = int(
      std::min<uint64_t>(env_u64("SONDE_IDLE_SLEEP_MS", uint64_t(settings_.idle_sleep_after_ms), settings_), INT_MAX));
  settings_.single_copy = env_u64("SONDE_SHM_SINGLE_COPY", 1, settings_) != 0;
  settings_.coop_threshold = env_u64("SONDE_COOP_THRESHOLD", settings_.coop_threshold, settings_);
  settings_.fast_boxes = env_u64("SONDE_SHM_FAST_BOXES", 1, settings_) != 0;
  settings_.coll_split_min_ranks =
      int(std::clamp<uint64_t>(env_u64("SONDE_COLL_SPLIT_RANKS", uint64_t(settings_.coll_split_min_ranks), settings_),
                               2, INT_MAX));
  settings_.coll_shared = env_u64("SONDE_COLL_SHM", 1, settings_) != 0;
  settings_.coll_shared_bytes =
      std::clamp<uint64_t>(env_u64("SONDE_COLL_SHM_BYTES", settings_.coll_shared_bytes, settings_), 64, 1u << 20);
}

void Engine::add_transport(std::unique_ptr<transport::Transport> t) { router_.transports_.push_back(std::move(t)); }

void Engine::add_route(int id, transport::Transport* t) {
  if (size_t(id) >= router_.route_.size()) {
    router_.route_.resize(size_t(id) + 1, nullptr);
    single_copy_state_.resize(size_t(id) + 1, 0);
  }
  router_.route_[size_t(id)] = t;
}

void Engine::start(int rank, int size, std::vector<std::unique_ptr<transport::Transport>> ts,
                   std::vector<transport::Transport*> routes, const std::vector<uint32_t>& reserved) {
  world_rank_ = rank;
  world_size_ = size;
  if (process_uid_ == 0) process_uid_ = uint64_t(rank);
  router_.transports_ = std::move(ts);
  router_.route_ = std::move(routes);
  single_copy_state_.assign(size_t(world_size_), 0);

  std::vector<Datatype*> dt(SONDE_PREDEFINED_DATATYPES);
  for (int i = 1; i < SONDE_PREDEFINED_DATATYPES; ++i) dt[i] = &tables_.datatypes.predefined(i);
  init_predefined_datatypes(dt);
  for (uint32_t i = 1; i <= 3; ++i) tables_.errhandlers.predefined(i).live = true;

  contexts_.free_.assign(ContextRegistry::kMaxContexts / 64, ~uint64_t(0));
  contexts_.by_context_.assign(64, nullptr);
  contexts_.take(0);  // MPI_COMM_WORLD
  contexts_.take(1);  // MPI_COMM_SELF
  for (uint32_t id : reserved) contexts_.take(id);

  Comm* w = world();
  w->handle = MPI_COMM_WORLD;
  w->context = 0;
  w->rank = world_rank_;
  w->size = world_size_;
  w->world.resize(size_t(world_size_));
  for (int i = 0; i < world_size_; ++i) w->world[size_t(i)] = i;
  w->name = "MPI_COMM_WORLD";
  w->live = true;
  contexts_.set(0, w);

  Comm* s = self();
  s->handle = MPI_COMM_SELF;
  s->context = 1;
  s->rank = 0;
  s->size = 1;
  s->world = {world_rank_};
  s->name = "MPI_COMM_SELF";
  s->live = true;
  contexts_.set(1, s);
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
    for (auto& t : router_.transports_) all = all && (!t->capabilities().needs_draining || t->drained());
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
  for (auto& t : router_.transports_) t->shutdown();
}

// ---------------------------------------------------------------- progress

int Engine::progress() {
  if (in_progress_) return 0;  // a callback waiting inside progress: never re-enter
  in_progress_ = true;
  pass_stamp_ = 0;
  int n = 0;
  for (auto& t : router_.transports_) n += t->progress(*this);
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
  // A snapshot asked for while this rank waits (current_call.h): served
  // on a pass that moved nothing, between two progress passes, never on
  // the message path.
  if (__builtin_expect(g_snapshot_pending != 0, 0)) serve_pending_snapshot();
  if (++idle_passes < settings_.spin_before_yield) return;
  // When this wait began to yield (per thread: each thread has its own
  // wait). The counter stays at spin_before_yield + 1 from then on, so a
  // wait of any length never overflows it.
  thread_local uint64_t yielding_since_ns = 0;
  const uint64_t now = monotonic_ns();
  if (idle_passes == settings_.spin_before_yield) {
    yielding_since_ns = now;
  } else {
    idle_passes = settings_.spin_before_yield + 1;
  }
  const int after_ms = settings_.idle_sleep_after_ms;
  const bool sleep = after_ms > 0 && now - yielding_since_ns >= uint64_t(after_ms) * 1000000u;
  // Oversubscribed ranks must give the CPU to the peer they wait for; a
  // rank that has waited long gives it to everyone.
  const bool unlock = thread_level_ == MPI_THREAD_MULTIPLE;
  if (unlock) EngineLock::unlock();
  if (sleep) {
    // A two-hundredth of the time idle so far, between the bounds (plus
    // the kernel's timer slack): once the wait has lasted a few tenths of
    // a second, what a late message loses stays under about 0.5 % of it.
    const uint64_t idle_us = (now - yielding_since_ns) / 1000u;
    const long us = long(std::clamp<uint64_t>(idle_us / 200u, kIdleSleepMinUs, kIdleSleepMaxUs));
    timespec ts{0, us * 1000};
    nanosleep(&ts, nullptr);
  } else {
    sched_yield();
  }
  if (unlock) EngineLock::lock();
}

void Engine::waiting_on(Request* r) {
  if (r->complete || !r->comm) return;
  if (r->kind == RequestKind::kRecv || r->kind == RequestKind::kSend) watch_peer(r->comm, r->peer);
}

void Engine::watch_peer(Comm* comm, int peer) {
  auto watch = [this](int world) {
    if (world < 0 || world >= world_size_) return;
    transport::Transport* t = router_.to(world);
    if (t && t->capabilities().liveness) t->watch(world);
  };
  if (peer == MPI_ANY_SOURCE) {
    for (int world : comm->world) watch(world);
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
        case Deferred::kPull: pull(d.request, d.peer, d.header); break;
        case Deferred::kControl:
          send_control(d.peer, d.header.type, d.header.send_cookie, d.header.recv_cookie, d.header.total,
                       d.header.flags);
          break;
        case Deferred::kCoopWrite: coop_write(d.request, d.peer, d.header.recv_cookie); break;
        case Deferred::kCancelAgain: send_cancel_request(d.request); break;
        case Deferred::kStreamData: {
          Request* r = d.request;
          r->item.header = d.header;
          r->item.handed = 0;
          router_.to(r->world_peer)->enqueue(r->world_peer, &r->item);
          break;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- communicators

int Engine::create_comm(Comm* parent, std::vector<int> world_ranks, int my_rank, uint32_t context, Comm** out,
                        bool duplicate) {
  Comm* c = nullptr;
  int h = tables_.comms.allocate(&c);
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
  c->coll_shared_decided = false;
  c->coll_shared.reset();
  c->pending_ops = 0;
  // The communicator-layer fields (objects.h): a slot may be reused.
  c->inter = false;
  c->local_world.clear();
  c->local_comm = nullptr;
  c->attrs.clear();
  c->info.clear();
  c->idup_seq = 0;
  // A duplicate keeps its parent's topology (MPI_Comm_dup).
  c->topo = duplicate ? parent->topo : nullptr;
  contexts_.set(context, c);
  // Propagated handles first: the early messages adopted below must already
  // be seen by them (MSG_ARRIVED, MSG_INSERT_IN_UNEX_Q).
  if (duplicate) peruse::comm_duplicated(parent->peruse, c->peruse, c->handle);
  peruse::comm_created(c->peruse, c->handle);  // MPI_T bridge (mpit/), before the adoption below
  // Adopt messages that arrived before we finished creating it, in order.
  for (auto it = early_.begin(); it != early_.end();) {
    auto* m = static_cast<Message*>(&*it);
    if (m->header.context == context) {
      it = early_.erase(it);
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
  while (!collectives_pending) {
    auto* m = static_cast<Message*>(c->queues.pop_unexpected());
    if (!m) break;
    free_message(m);
  }
  c->live = false;  // the user's handle is dead from now on
  c->coll_shared.reset();
  peruse::comm_freed(c->peruse, c->handle);  // its handles answer PERUSE_ERR_MPI_OBJECT
  if (c->queues.posted_size() != 0 || collectives_pending) {
    // Receives still posted complete normally (MPI 6.4.3), and so do
    // nonblocking operations: keep the context matching.
    // The slot and context id are not reused, a deliberate small leak for a
    // rare case.
    return;
  }
  retired_posted_attempts_ += c->queues.posted_match_attempts();
  retired_unexpected_attempts_ += c->queues.unexpected_match_attempts();
  contexts_.set(c->context, nullptr);
  contexts_.give_back(c->context);
  tables_.comms.release(c->handle);
}

}  // namespace sonde::engine
