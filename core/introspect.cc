// The engine as tools read it (introspect.h).
#include "core/introspect.h"

#include <algorithm>

#include "core/lookup.h"

namespace sonde::engine::introspect {

Settings& settings() { return engine().settings(); }
void load_settings() { engine().load_settings(); }
int thread_level() { return engine().thread_level(); }

std::string transports_in_use() {
  std::string s;
  for (auto& t : engine().router().transports()) {
    if (!s.empty()) s += ",";
    s += t->name();
  }
  return s;
}

bool transport_of(MPI_Comm comm, int peer, transport::TransportKind* kind) {
  Comm* c = engine().tables().comms.lookup(comm);
  if (!c || peer < 0 || peer >= c->size) return false;
  int world = c->world[size_t(peer)];
  if (world < 0 || world >= engine().world_size()) return false;
  *kind = engine().router().to(world)->capabilities().kind;
  return true;
}

int comm_size(MPI_Comm comm) {
  Comm* c = find_comm(comm);
  return c ? c->size : -1;
}

peruse::CommEvents* comm_events(MPI_Comm comm) {
  Comm* c = find_comm(comm);
  return c ? &c->peruse : nullptr;
}

namespace {
// Runs `read` on the communicator behind `comm`; false if there is none.
template <class F>
bool read_comm(MPI_Comm comm, F&& read) {
  Comm* c = find_comm(comm);
  if (c) read(*c);
  return c != nullptr;
}
}  // namespace

bool posted_length(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { *out = c.queues.posted_size(); });
}

bool unexpected_length(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { *out = c.queues.unexpected_size(); });
}

bool unexpected_bytes(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { *out = c.queues.unexpected_bytes(); });
}

bool unexpected_buffer_bytes(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) {
    *out = 0;
    c.queues.visit_unexpected(
        [out](const matching::UnexpectedEntry& e) { *out += static_cast<const Message&>(e).capacity; });
  });
}

bool posted_per_peer(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { c.queues.posted_per_source(out, size_t(c.size)); });
}

bool unexpected_per_peer(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { c.queues.unexpected_per_source(out, size_t(c.size)); });
}

bool posted_match_attempts(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { *out = c.queues.posted_match_attempts(); });
}

bool unexpected_match_attempts(MPI_Comm comm, uint64_t* out) {
  return read_comm(comm, [out](Comm& c) { *out = c.queues.unexpected_match_attempts(); });
}

void total_match_attempts(uint64_t* posted, uint64_t* unexpected) {
  const Engine& e = engine();
  *posted = e.retired_posted_match_attempts();
  *unexpected = e.retired_unexpected_match_attempts();
  const ContextRegistry& contexts = engine().contexts();
  for (uint32_t ctx = 0; ctx < ContextRegistry::kMaxContexts; ++ctx) {
    if (const Comm* c = contexts.find(ctx)) {
      *posted += c->queues.posted_match_attempts();
      *unexpected += c->queues.unexpected_match_attempts();
    }
  }
}

int64_t datatype_size(MPI_Datatype type) {
  Datatype* t = find_datatype(type);
  return t ? int64_t(t->size) : -1;
}

namespace {
// Every live communicator, by context id.
template <class F>
void for_each_live_comm(F&& f) {
  const ContextRegistry& contexts = engine().contexts();
  for (uint32_t ctx = 0; ctx < ContextRegistry::kMaxContexts; ++ctx)
    if (Comm* c = contexts.find(ctx); c && c->live) f(c);
}
}  // namespace

void for_each_comm(void (*f)(const CommView&, void*), void* arg) {
  for_each_live_comm([&](Comm* c) {
    CommView v;
    v.context = c->context;
    v.handle = c->handle;
    v.name = c->name.c_str();
    v.rank = c->rank;
    v.size = c->size;
    v.inter = c->inter;
    v.world = c->world.data();
    v.world_count = static_cast<int>(c->world.size());
    v.coll_seq = static_cast<uint32_t>(c->coll_seq);  // the hang report reads it modulo 2^24
    v.coll_since = c->coll_since;
    f(v, arg);
  });
}

namespace {
RequestlessWaits g_requestless_waits = nullptr;

Stage send_stage(const Request& r) {
  switch (r.item.header.type) {
    case transport::PacketType::kEagerSync: return r.handed ? Stage::kSyncAck : Stage::kEagerQueued;
    case transport::PacketType::kRts: return r.matched ? Stage::kTransfer : Stage::kRendezvousWait;
    case transport::PacketType::kEager: return Stage::kEagerQueued;
    default: return Stage::kTransfer;
  }
}
}  // namespace

void for_each_pending(void (*f)(const RequestView&, void*), void* arg) {
  engine().tables().requests.for_each_live([&](Request& r, int) {
    if (!r.active || r.complete || !r.comm) return;
    if (r.kind != RequestKind::kSend && r.kind != RequestKind::kRecv) return;
    RequestView v;
    v.id = &r;
    v.send = r.kind == RequestKind::kSend;
    v.context = r.comm->context;
    v.peer = r.peer;
    v.tag = r.tag;
    v.count = r.count;
    v.bytes = r.bytes;
    v.type = r.type ? r.type->name.c_str() : "";
    v.synchronous = r.mode == SendMode::kSync;
    v.stage = v.send ? send_stage(r) : (r.is_linked() ? Stage::kPosted : Stage::kArriving);
    v.since = r.since;
    f(v, arg);
  });
  if (g_requestless_waits) g_requestless_waits(f, arg);
}

void set_requestless_waits(RequestlessWaits visit) { g_requestless_waits = visit; }

void for_each_unexpected(void (*f)(const MessageView&, void*), void* arg) {
  for_each_live_comm([&](Comm* c) {
    c->queues.visit_unexpected([&](const matching::UnexpectedEntry& e) {
      const Message& m = static_cast<const Message&>(e);
      if (m.claimed) return;
      MessageView v;
      v.id = &m;
      v.context = c->context;
      v.source = m.source;
      v.tag = m.tag;
      v.bytes = m.header.total;
      v.since = m.since;
      f(v, arg);
    });
  });
}

uint64_t arrivals() { return engine().ids_issued(); }

RmaCounters& rma_counters() {
  static RmaCounters c;
  return c;
}

}  // namespace sonde::engine::introspect
