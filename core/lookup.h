// Handle lookup for the layers above the core, and the reference counts
// that keep a derived datatype alive while something uses it.
//
// Life cycle of a derived datatype: its slot holds references from the
// user's handle, from every parent type whose envelope names it, and from
// every request or nonblocking collective using it. MPI_Type_free drops the
// handle's reference and makes the handle invalid at once; the object goes
// when the last reference does.
#pragma once

#include "core/engine.h"
#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine {

// Inline: every MPI call resolves its handles here first, so these sit on
// the message path of the smallest sends and receives.
// A live communicator, or null.
inline Comm* find_comm(MPI_Comm h) {
  Comm* c = engine().tables().comms.lookup(h);
  return c && c->live ? c : nullptr;
}
// A live, not user-freed datatype, or null.
inline Datatype* find_datatype(MPI_Datatype h) {
  Datatype* t = engine().tables().datatypes.lookup(h);
  return t && !t->user_freed ? t : nullptr;
}
// A committed datatype usable for communication (not the MPI_LB / MPI_UB
// markers), or null.
inline Datatype* find_comm_datatype(MPI_Datatype h) {
  Datatype* t = find_datatype(h);
  return t && t->committed && h != MPI_LB && h != MPI_UB ? t : nullptr;
}
// A request slot, or null (no liveness check: callers look at its state).
inline Request* find_request(MPI_Request h) { return engine().tables().requests.lookup(h); }
// References on derived types; no-ops on predefined types.
void retain_datatype(Datatype* t);
void release_datatype(Datatype* t);
// MPI_BYTE.
Datatype* byte_type();

}  // namespace sonde::engine
