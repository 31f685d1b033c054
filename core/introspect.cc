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

bool posted_length(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (c) *out = c->queues.posted_size();
  return c != nullptr;
}

bool unexpected_length(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (c) *out = c->queues.unexpected_size();
  return c != nullptr;
}

bool unexpected_bytes(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (!c) return false;
  *out = c->queues.unexpected_bytes();
  return true;
}

bool unexpected_buffer_bytes(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (!c) return false;
  *out = 0;
  for (auto& e : c->queues.unexpected()) *out += static_cast<const Message&>(e).capacity;
  return true;
}

bool posted_per_peer(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (!c) return false;
  c->queues.posted_per_source(out, size_t(c->size));
  return true;
}

bool unexpected_per_peer(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (!c) return false;
  c->queues.unexpected_per_source(out, size_t(c->size));
  return true;
}

bool posted_match_attempts(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (c) *out = c->queues.posted_match_attempts();
  return c != nullptr;
}

bool unexpected_match_attempts(MPI_Comm comm, uint64_t* out) {
  Comm* c = find_comm(comm);
  if (c) *out = c->queues.unexpected_match_attempts();
  return c != nullptr;
}

int64_t datatype_size(MPI_Datatype type) {
  Datatype* t = find_datatype(type);
  return t ? int64_t(t->size) : -1;
}

}  // namespace sonde::engine::introspect
