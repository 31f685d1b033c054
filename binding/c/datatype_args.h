// What the datatype files of the C binding (abi_datatype_build.cc,
// abi_datatype_query.cc) share: making the handle of a new derived type.
#pragma once

#include "binding/c/abi.h"
#include "core/engine.h"

namespace sonde::engine::datatype_args {

// A fresh derived type holding the user's reference; *handle set on success.
// Null when the datatype table is full (*handle untouched). The caller fills
// in the type.
inline Datatype* new_type(MPI_Datatype* handle) {
  Datatype* t = nullptr;
  int h = engine().tables().datatypes.allocate(&t);
  if (!h) return nullptr;
  *t = Datatype{};
  t->handle = h;
  t->refs = 1;
  *handle = h;
  return t;
}

}  // namespace sonde::engine::datatype_args
