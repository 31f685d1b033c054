// external32 unpack (datatype/datatype.h, MPI_Unpack_external): the bytes
// come from another process or a file. Input: a type choice, then the
// external32 stream; a predefined type or a vector/struct of it, unpacked
// for as many whole elements as the stream holds.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "datatype/datatype.h"
#include "include/mpi.h"

using namespace sonde::engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Built once and kept for the process's life (reachable, not leaked).
  static const std::vector<Datatype*>& predefined = *[] {
    // The caller provides a slot for every predefined index (unused ones
    // stay empty, size 0).
    auto* v = new std::vector<Datatype*>(SONDE_PREDEFINED_DATATYPES);
    for (auto& slot : *v) slot = new Datatype;
    init_predefined_datatypes(*v);
    return v;
  }();
  if (size < 3) return 0;
  std::vector<Datatype*> usable;
  for (Datatype* t : predefined) {
    if (t != nullptr && t->size > 0 && external32_size(*t) > 0) usable.push_back(t);
  }
  if (usable.empty()) return 0;
  const Datatype& base = *usable[data[0] % usable.size()];
  const int shape = data[1] % 3, n = 1 + data[2] % 4;
  data += 3;
  size -= 3;
  Datatype derived;
  const Datatype* t = &base;
  if (shape == 1) {
    make_vector(derived, n, 2, 3 * base.extent, base);
    t = &derived;
  } else if (shape == 2) {
    const int64_t lens[2] = {1, n};
    const int64_t disps[2] = {0, 2 * base.extent};
    const Datatype* types[2] = {&base, &base};
    make_struct(derived, 2, lens, disps, types);
    t = &derived;
  }
  const int64_t unit = external32_size(*t);
  if (unit <= 0) return 0;
  const int64_t count = static_cast<int64_t>(size) / unit;
  if (count == 0 || count > 4096) return 0;
  // Element e's data lies in [e * extent + true_lb, e * extent + true_lb + true_extent).
  const int64_t below = std::max<int64_t>(0, -t->true_lb);
  std::vector<uint8_t> out(static_cast<size_t>(below + t->extent * count + t->true_lb + t->true_extent), 0);
  unpack_external32(*t, data, out.data() + below, count);
  return 0;
}
