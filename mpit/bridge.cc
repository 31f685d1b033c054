#include "mpit/bridge.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/weak_alias.h"
#include "core/introspect.h"
#include "core/process.h"
#include "mpit/state.h"
#include "peruse/registry.h"

namespace sonde::mpit::bridge {

namespace {

struct CommState {
  MPI_Comm handle = MPI_COMM_NULL;
  peruse::CommEvents* events = nullptr;
  Stats stats;
  std::vector<peruse_event_h> subscriptions;
  // Since when each queued entry (by its PERUSE unique_id) has waited.
  std::unordered_map<uint64_t, int64_t> posted_since, unexpected_since;
  int64_t posted_search_begin = 0, unexpected_search_begin = 0;
  // The last posted-queue search, until the arrival's outcome (an insertion
  // in the unexpected queue makes it a failed one).
  uint64_t last_posted_search_ns = 0;
};

struct Bridge {
  std::map<MPI_Comm, std::unique_ptr<CommState>> comms;  // live communicators
  int users = 0;                                         // running handles that need statistics
  Stats total;
  TransportStats transports[kNumTransports];
  std::vector<Watermark*> watermarks;
};

Bridge& bridge() {
  static auto* b = new Bridge();  // never destroyed: events may fire at exit
  return *b;
}

bool live_comm(MPI_Comm h) { return mpi_state() == 1 && engine::introspect::comm_size(h) >= 0; }

// Transport index (kTransportNames) that reaches rank `peer` of `comm`, or -1.
int transport_of(MPI_Comm comm, int peer) {
  transport::TransportKind kind;
  if (!engine::introspect::transport_of(comm, peer, &kind)) return -1;
  switch (kind) {
    case transport::TransportKind::kSelf: return 0;  // kTransportNames[0]
    case transport::TransportKind::kShm: return 1;
    default: return -1;  // ofi has its own counters (docs/ofi.md)
  }
}

void raise_watermarks(MPI_Comm comm, bool posted, uint64_t comm_level, uint64_t total_level) {
  for (Watermark* w : bridge().watermarks) {
    if (w->posted != posted) continue;
    if (w->comm == comm) w->value = std::max(w->value, comm_level);
    else if (w->comm == MPI_COMM_NULL) w->value = std::max(w->value, total_level);
  }
}

// One callback per event (the PERUSE callback is not told which event).
template <int E>
int on_event(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param) {
  std::lock_guard<std::recursive_mutex> g(mutex());
  auto* cs = static_cast<CommState*>(param);
  Stats& s = cs->stats;
  Stats& t = bridge().total;
  const uint64_t id = uint64_t(unique_id);
  const int64_t now = now_ns();
  auto leave = [&](std::unordered_map<uint64_t, int64_t>& since, uint64_t Stats::*residence) {
    auto it = since.find(id);
    if (it == since.end()) return;  // queued before collection started: not timed
    uint64_t d = uint64_t(now - it->second);
    s.*residence += d;
    t.*residence += d;
    since.erase(it);
  };
  switch (E) {
    case PERUSE_COMM_REQ_INSERT_IN_POSTED_Q:
      ++s.posted_level;
      ++t.posted_level;
      cs->posted_since[id] = now;
      raise_watermarks(cs->handle, true, s.posted_level, t.posted_level);
      break;
    case PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q:
      cs->last_posted_search_ns = 0;
      if (s.posted_level) --s.posted_level, --t.posted_level;
      leave(cs->posted_since, &Stats::posted_residence_ns);
      break;
    case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q:
      ++s.unexpected_level;
      ++t.unexpected_level;
      cs->unexpected_since[id] = now;
      s.posted_failed_search_ns += cs->last_posted_search_ns;
      t.posted_failed_search_ns += cs->last_posted_search_ns;
      cs->last_posted_search_ns = 0;
      raise_watermarks(cs->handle, false, s.unexpected_level, t.unexpected_level);
      break;
    case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q:
      if (s.unexpected_level) --s.unexpected_level, --t.unexpected_level;
      leave(cs->unexpected_since, &Stats::unexpected_residence_ns);
      break;
    case PERUSE_COMM_MSG_MATCH_POSTED_REQ:
      ++s.posted_matches;
      ++t.posted_matches;
      break;
    case PERUSE_COMM_REQ_MATCH_UNEX:
      ++s.unexpected_matches;
      ++t.unexpected_matches;
      break;
    case PERUSE_COMM_SEARCH_POSTED_Q_BEGIN: cs->posted_search_begin = now; break;
    case PERUSE_COMM_SEARCH_POSTED_Q_END: {
      uint64_t d = uint64_t(now - cs->posted_search_begin);
      s.posted_search_ns += d;
      t.posted_search_ns += d;
      cs->last_posted_search_ns = d;
      break;
    }
    case PERUSE_COMM_SEARCH_UNEX_Q_BEGIN: cs->unexpected_search_begin = now; break;
    case PERUSE_COMM_SEARCH_UNEX_Q_END: {
      uint64_t d = uint64_t(now - cs->unexpected_search_begin);
      s.unexpected_search_ns += d;
      t.unexpected_search_ns += d;
      break;
    }
    case PERUSE_COMM_MSG_ARRIVED: {
      int tr = transport_of(cs->handle, spec->peer);
      if (tr >= 0) {
        ++bridge().transports[tr].messages_received;
        bridge().transports[tr].bytes_received += uint64_t(std::max(0, spec->count));
      }
      break;
    }
    case PERUSE_COMM_REQ_XFER_END: {
      if (spec->operation != PERUSE_SEND) break;
      int tr = transport_of(cs->handle, spec->peer);
      const int64_t type_size = engine::introspect::datatype_size(spec->datatype);
      if (tr >= 0) {
        ++bridge().transports[tr].messages_sent;
        if (type_size >= 0)
          bridge().transports[tr].bytes_sent += uint64_t(std::max(0, spec->count)) * uint64_t(type_size);
      }
      break;
    }
    default: break;
  }
  return MPI_SUCCESS;
}

struct Subscription {
  int event;
  peruse_comm_callback_f* callback;
};
const Subscription kSubscriptions[] = {
    {PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, on_event<PERUSE_COMM_REQ_INSERT_IN_POSTED_Q>},
    {PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, on_event<PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q>},
    {PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, on_event<PERUSE_COMM_MSG_INSERT_IN_UNEX_Q>},
    {PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, on_event<PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q>},
    {PERUSE_COMM_MSG_MATCH_POSTED_REQ, on_event<PERUSE_COMM_MSG_MATCH_POSTED_REQ>},
    {PERUSE_COMM_REQ_MATCH_UNEX, on_event<PERUSE_COMM_REQ_MATCH_UNEX>},
    {PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, on_event<PERUSE_COMM_SEARCH_POSTED_Q_BEGIN>},
    {PERUSE_COMM_SEARCH_POSTED_Q_END, on_event<PERUSE_COMM_SEARCH_POSTED_Q_END>},
    {PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, on_event<PERUSE_COMM_SEARCH_UNEX_Q_BEGIN>},
    {PERUSE_COMM_SEARCH_UNEX_Q_END, on_event<PERUSE_COMM_SEARCH_UNEX_Q_END>},
    {PERUSE_COMM_MSG_ARRIVED, on_event<PERUSE_COMM_MSG_ARRIVED>},
    {PERUSE_COMM_REQ_XFER_END, on_event<PERUSE_COMM_REQ_XFER_END>},
};

// Start following one communicator: mirrors from its real queues, then the
// subscriptions (the engine lock is held, so nothing moves in between).
void subscribe(CommState& cs) {
  uint64_t posted = 0, unexpected = 0;
  engine::introspect::posted_length(cs.handle, &posted);
  engine::introspect::unexpected_length(cs.handle, &unexpected);
  cs.stats.posted_level = posted;
  cs.stats.unexpected_level = unexpected;
  bridge().total.posted_level += cs.stats.posted_level;
  bridge().total.unexpected_level += cs.stats.unexpected_level;
  for (const Subscription& s : kSubscriptions)
    cs.subscriptions.push_back(peruse::subscribe(*cs.events, cs.handle, s.event, s.callback, &cs));
}

void unsubscribe(CommState& cs) {
  for (peruse_event_h h : cs.subscriptions) peruse::unsubscribe(h);
  cs.subscriptions.clear();
  bridge().total.posted_level -= std::min(bridge().total.posted_level, cs.stats.posted_level);
  bridge().total.unexpected_level -= std::min(bridge().total.unexpected_level, cs.stats.unexpected_level);
  cs.stats.posted_level = cs.stats.unexpected_level = 0;
  cs.posted_since.clear();
  cs.unexpected_since.clear();
}

void comm_created(peruse::CommEvents& events, MPI_Comm handle) {
  std::lock_guard<std::recursive_mutex> g(mutex());
  auto cs = std::make_unique<CommState>();
  cs->handle = handle;
  cs->events = &events;
  if (bridge().users > 0) subscribe(*cs);
  bridge().comms[handle] = std::move(cs);
}

void comm_freed(peruse::CommEvents&, MPI_Comm handle) {
  std::lock_guard<std::recursive_mutex> g(mutex());
  auto it = bridge().comms.find(handle);
  if (it == bridge().comms.end()) return;
  unsubscribe(*it->second);
  bridge().comms.erase(it);
}

// `read` of `comm`, or its sum over every followed communicator for
// MPI_COMM_NULL. False for a communicator that is not live.
bool sum_over(MPI_Comm comm, bool (*read)(MPI_Comm, uint64_t*), uint64_t* out) {
  *out = 0;
  if (mpi_state() != 1) return comm == MPI_COMM_NULL;  // no communicator exists: zero
  if (comm != MPI_COMM_NULL) return read(comm, out);
  for (auto& [h, cs] : bridge().comms) {
    uint64_t v = 0;
    if (read(h, &v)) *out += v;
  }
  return true;
}

}  // namespace

void install() {
  peruse::CommObserver o;
  o.created = comm_created;
  o.freed = comm_freed;
  peruse::set_comm_observer(o);
}

void acquire() {
  Bridge& b = bridge();
  if (b.users++ == 0)
    for (auto& [h, cs] : b.comms) subscribe(*cs);
}

void release() {
  Bridge& b = bridge();
  if (b.users > 0 && --b.users == 0)
    for (auto& [h, cs] : b.comms) unsubscribe(*cs);
}

bool collecting() { return bridge().users > 0; }

Stats* comm_stats(MPI_Comm comm) {
  if (!live_comm(comm)) return nullptr;
  auto it = bridge().comms.find(comm);
  return it == bridge().comms.end() ? nullptr : &it->second->stats;
}

Stats& total() { return bridge().total; }
TransportStats& transport(int index) { return bridge().transports[index]; }

void add_watermark(Watermark* w) { bridge().watermarks.push_back(w); }
void remove_watermark(Watermark* w) {
  auto& v = bridge().watermarks;
  v.erase(std::remove(v.begin(), v.end(), w), v.end());
}

bool posted_length(MPI_Comm comm, uint64_t* out) { return sum_over(comm, engine::introspect::posted_length, out); }

bool unexpected_length(MPI_Comm comm, uint64_t* out) {
  return sum_over(comm, engine::introspect::unexpected_length, out);
}

bool unexpected_bytes(MPI_Comm comm, uint64_t* out) {
  return sum_over(comm, engine::introspect::unexpected_bytes, out);
}

bool unexpected_buffer_bytes(MPI_Comm comm, uint64_t* out) {
  return sum_over(comm, engine::introspect::unexpected_buffer_bytes, out);
}

int comm_size(MPI_Comm comm) { return mpi_state() == 1 ? engine::introspect::comm_size(comm) : -1; }

bool posted_per_peer(MPI_Comm comm, uint64_t* out) {
  return mpi_state() == 1 && engine::introspect::posted_per_peer(comm, out);
}

bool unexpected_per_peer(MPI_Comm comm, uint64_t* out) {
  return mpi_state() == 1 && engine::introspect::unexpected_per_peer(comm, out);
}

bool posted_match_attempts(MPI_Comm comm, uint64_t* out) {
  return mpi_state() == 1 && engine::introspect::posted_match_attempts(comm, out);
}

bool unexpected_match_attempts(MPI_Comm comm, uint64_t* out) {
  return mpi_state() == 1 && engine::introspect::unexpected_match_attempts(comm, out);
}

bool total_match_attempts(bool posted, uint64_t* out) {
  // Before MPI_Init nothing has been matched; after MPI_Finalize the engine
  // is gone and the totals stay at their last reading (callers hold the
  // MPI_T mutex).
  static uint64_t last[2] = {0, 0};
  if (mpi_state() == 1) engine::introspect::total_match_attempts(&last[0], &last[1]);
  *out = posted ? last[0] : last[1];
  return true;
}

}  // namespace sonde::mpit::bridge
