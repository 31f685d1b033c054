// C ABI: Fortran 90's parameterized types, MPI_Type_create_f90_integer,
// _real and _complex (MPI 4.1 section 19.1.9). Sonde has no Fortran
// binding; these calls answer with the Fortran kinds that have the sizes of
// the C types a program here can exchange:
//   integer, decimal range r:        r <= 2 INTEGER1, 4 INTEGER2, 9 INTEGER4, 18 INTEGER8
//   real, precision p and range r:   p <= 6 and r <= 37 REAL4, p <= 15 and r <= 307 REAL8
//   complex, the same bounds:        COMPLEX8, COMPLEX16
// (MPI_UNDEFINED for p or r leaves it free, not both). Anything larger, and
// negative values, are MPI_ERR_ARG: quad precision and 16-byte integers are
// not available (include/mpi.h's optional types are MPI_DATATYPE_NULL).
//
// The type returned is predefined, as the standard asks: it cannot be freed
// (MPI_Type_free answers MPI_ERR_TYPE), its envelope has combiner
// MPI_COMBINER_F90_* and its contents are the (p, r) or (r) asked for, and
// the same arguments give the same handle again. Its data, size, bounds and
// reductions are those of the sized Fortran type it stands for.
#include <iterator>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/datatype_args.h"
#include "core/engine.h"

using namespace sonde::engine;
using namespace sonde::engine::datatype_args;

namespace {

struct Kind {
  int precision, range;  // largest p and r the type holds
  MPI_Datatype type;
};

const Kind kIntegers[] = {{0, 2, MPI_INTEGER1}, {0, 4, MPI_INTEGER2}, {0, 9, MPI_INTEGER4}, {0, 18, MPI_INTEGER8}};
const Kind kReals[] = {{6, 37, MPI_REAL4}, {15, 307, MPI_REAL8}};
const Kind kComplexes[] = {{6, 37, MPI_COMPLEX8}, {15, 307, MPI_COMPLEX16}};

// The handles made so far, so that the same arguments give the same handle.
// Each is checked against the handle table before it is handed out again
// (a type made before the engine last stopped is gone), so this list holds
// nothing the engine could invalidate.
struct Made {
  std::vector<int> ints;
  int combiner;
  MPI_Datatype handle;
};
std::vector<Made>& made_types() {
  static std::vector<Made> made;
  return made;
}

int f90_type(const char* fn, int combiner, int p, int r, MPI_Datatype* newtype) {
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  const bool integer = combiner == MPI_COMBINER_F90_INTEGER;
  const bool p_free = integer || p == MPI_UNDEFINED, r_free = !integer && r == MPI_UNDEFINED;
  if ((p_free && r_free) || (!p_free && p < 0) || (!r_free && r < 0)) return raise(nullptr, MPI_ERR_ARG, fn);
  std::vector<int> ints = integer ? std::vector<int>{r} : std::vector<int>{p, r};

  for (Made& m : made_types()) {
    if (m.combiner != combiner || m.ints != ints) continue;
    Datatype* t = find_datatype(m.handle);
    if (t && t->predefined && t->envelope.combiner == combiner && t->envelope.ints == ints) {
      *newtype = m.handle;
      return MPI_SUCCESS;
    }
    m = made_types().back();  // stale: forget it
    made_types().pop_back();
    break;
  }

  const Kind* kinds = integer ? kIntegers : combiner == MPI_COMBINER_F90_REAL ? kReals : kComplexes;
  const size_t n = integer ? std::size(kIntegers) : std::size(kReals);
  const Kind* kind = nullptr;
  for (size_t i = 0; i < n && !kind; ++i)
    if ((p_free || p <= kinds[i].precision) && (r_free || r <= kinds[i].range)) kind = &kinds[i];
  if (!kind) return raise(nullptr, MPI_ERR_ARG, fn);

  const Datatype* base = find_datatype(kind->type);
  MPI_Datatype h;
  Datatype* t = new_type(&h);
  if (!base || !t) return raise(nullptr, MPI_ERR_INTERN, fn);
  *t = *base;
  t->handle = h;
  t->predefined = true;
  t->committed = true;
  t->refs = 1;
  t->user_freed = false;
  t->name.clear();
  t->attributes = nullptr;
  t->children.clear();
  t->envelope = Envelope{};
  t->envelope.combiner = combiner;
  t->envelope.ints = ints;
  made_types().push_back({std::move(ints), combiner, h});
  *newtype = h;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_f90_integer");
  return f90_type(fn, MPI_COMBINER_F90_INTEGER, 0, r, newtype);
}
SONDE_WEAK_ALIAS(Type_create_f90_integer)

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_f90_real");
  return f90_type(fn, MPI_COMBINER_F90_REAL, p, r, newtype);
}
SONDE_WEAK_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_f90_complex");
  return f90_type(fn, MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}
SONDE_WEAK_ALIAS(Type_create_f90_complex)

}  // extern "C"
