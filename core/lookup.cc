// Handle lookup and datatype references (lookup.h).
#include "core/lookup.h"

#include <utility>
#include <vector>

#include "core/engine.h"

namespace sonde::engine {

Comm* find_comm(MPI_Comm h) {
  Comm* c = engine().tables().comms.lookup(h);
  return c && c->live ? c : nullptr;
}

Datatype* find_datatype(MPI_Datatype h) {
  Datatype* t = engine().tables().datatypes.lookup(h);
  return t && !t->user_freed ? t : nullptr;
}

Datatype* find_comm_datatype(MPI_Datatype h) {
  Datatype* t = find_datatype(h);
  if (!t || !t->committed) return nullptr;
  if (h == MPI_LB || h == MPI_UB) return nullptr;
  return t;
}

void retain_datatype(Datatype* t) {
  if (!t->predefined) ++t->refs;
}

void release_datatype(Datatype* t) {
  if (t->predefined || --t->refs > 0) return;
  std::vector<Datatype*> children = std::move(t->children);
  int h = t->handle;
  *t = Datatype{};  // drops the layout and envelope now
  engine().tables().datatypes.release(h);
  for (Datatype* c : children) release_datatype(c);
}

Datatype* byte_type() { return &engine().tables().datatypes.predefined(4); }

}  // namespace sonde::engine
