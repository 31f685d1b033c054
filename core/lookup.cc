// Handle lookup and datatype references (lookup.h).
#include "core/lookup.h"

#include <utility>
#include <vector>

#include "core/engine.h"

namespace sonde::engine {

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
