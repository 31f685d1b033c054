// C ABI: datatype queries: size, extent and true extent (with their _x and
// _c forms), names, envelope and contents, MPI_Type_match_size, addresses
// and address arithmetic, MPI_Get_elements, and the MPI-1 queries MPI-3.0
// removed (MPI_Address, MPI_Type_extent, _lb, _ub). Constructors:
// abi_datatype_build.cc; pack/unpack: abi_pack.cc.
#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/datatype_args.h"
#include "binding/c/object_name.h"
#include "core/engine.h"

using namespace sonde::engine;
using namespace sonde::engine::datatype_args;
using namespace sonde::engine::object_name;

namespace {

int address(const char* fn, const void* location, MPI_Aint* out) {
  if (!out) return raise(nullptr, MPI_ERR_ARG, fn);
  *out = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

int size_query(const char* fn, MPI_Datatype datatype, MPI_Count* size) {
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->huge_size ? MPI_UNDEFINED : t->size;
  return MPI_SUCCESS;
}

// (lb, extent) or, with `true_bounds`, (true_lb, true_extent); both
// MPI_UNDEFINED when they do not fit in MPI_Count (MPI_Aint alike).
template <class T>
int bounds_query(const char* fn, MPI_Datatype datatype, T* lb, T* extent, bool true_bounds) {
  if (!lb || !extent) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (true_bounds ? t->huge_true_bounds : t->huge_bounds) {
    *lb = *extent = T(MPI_UNDEFINED);
    return MPI_SUCCESS;
  }
  *lb = T(true_bounds ? t->true_lb : t->lb);
  *extent = T(true_bounds ? t->true_extent : t->extent);
  return MPI_SUCCESS;
}

int envelope(const char* fn, MPI_Datatype datatype, MPI_Count* ni, MPI_Count* na, MPI_Count* nc, MPI_Count* nd,
             int* combiner) {
  if (!combiner) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  const Envelope& e = t->envelope;
  *ni = MPI_Count(e.ints.size());
  *na = MPI_Count(e.aints.size());
  *nc = MPI_Count(e.counts.size());
  *nd = MPI_Count(e.types.size());
  *combiner = e.combiner;
  return MPI_SUCCESS;
}

// MPI_Type_get_contents(_c): `counts` null for the classic call.
int contents(const char* fn, MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
             MPI_Count max_counts, MPI_Count max_datatypes, int ints[], MPI_Aint aints[], MPI_Count counts[],
             MPI_Datatype types[]) {
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  const Envelope& e = t->envelope;
  // MPI_COMBINER_NAMED has no contents; the predefined F90 types have theirs.
  if (e.combiner == MPI_COMBINER_NAMED) return raise(nullptr, MPI_ERR_ARG, fn);
  if (!counts && !e.counts.empty()) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (max_integers < MPI_Count(e.ints.size()) || max_addresses < MPI_Count(e.aints.size()) ||
      max_counts < MPI_Count(e.counts.size()) || max_datatypes < MPI_Count(e.types.size()))
    return raise(nullptr, MPI_ERR_ARG, fn);
  if ((!e.ints.empty() && !ints) || (!e.aints.empty() && !aints) || (!e.counts.empty() && !counts) ||
      (!e.types.empty() && !types))
    return raise(nullptr, MPI_ERR_ARG, fn);
  std::copy(e.ints.begin(), e.ints.end(), ints);
  for (size_t i = 0; i < e.aints.size(); ++i) aints[i] = MPI_Aint(e.aints[i]);
  for (size_t i = 0; i < e.counts.size(); ++i) counts[i] = MPI_Count(e.counts[i]);
  // Predefined types come back as themselves; derived ones as new handles
  // to equivalent types, which the caller frees (MPI 4.1 5.1.13). The
  // originals may be freed already: the envelope kept them alive.
  std::vector<MPI_Datatype> out(e.types.size());
  size_t k = 0;
  for (size_t i = 0; i < e.types.size(); ++i) {
    Datatype* c = engine().tables().datatypes.lookup(e.types[i]);
    if (c && c->predefined) {
      out[i] = e.types[i];
      continue;
    }
    Datatype* orig = t->children[k++];
    MPI_Datatype h;
    Datatype* copy = new_type(&h);
    if (!copy) {
      for (size_t j = 0; j < i; ++j)
        if (Datatype* made = find_datatype(out[j]); made && !made->predefined) release_datatype(made);
      return raise(nullptr, MPI_ERR_INTERN, fn);
    }
    *copy = *orig;
    copy->handle = h;
    copy->refs = 1;
    copy->user_freed = false;
    for (Datatype* g : copy->children) retain_datatype(g);
    out[i] = h;
  }
  std::copy(out.begin(), out.end(), types);
  return MPI_SUCCESS;
}

// MPI_Get_elements(_x): basic elements received, MPI_UNDEFINED when the
// message ends inside one.
int elements(const char* fn, const MPI_Status* status, MPI_Datatype datatype, MPI_Count* out) {
  if (!status || status == MPI_STATUS_IGNORE || !out) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  int64_t n = count_elements(*t, uint64_t(status->sonde_count));
  *out = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------- queries

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  SONDE_ENTER("MPI_Type_size");
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->huge_size || t->size > std::numeric_limits<int>::max() ? MPI_UNDEFINED : int(t->size);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_size)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  SONDE_ENTER("MPI_Type_size_x");
  return size_query(fn, datatype, size);
}
SONDE_WEAK_ALIAS(Type_size_x)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  SONDE_ENTER("MPI_Type_size_c");
  return size_query(fn, datatype, size);
}
SONDE_WEAK_ALIAS(Type_size_c)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  SONDE_ENTER("MPI_Type_get_extent");
  return bounds_query(fn, datatype, lb, extent, false);
}
SONDE_WEAK_ALIAS(Type_get_extent)

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  SONDE_ENTER("MPI_Type_get_extent_x");
  return bounds_query(fn, datatype, lb, extent, false);
}
SONDE_WEAK_ALIAS(Type_get_extent_x)

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  SONDE_ENTER("MPI_Type_get_extent_c");
  return bounds_query(fn, datatype, lb, extent, false);
}
SONDE_WEAK_ALIAS(Type_get_extent_c)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  SONDE_ENTER("MPI_Type_get_true_extent");
  return bounds_query(fn, datatype, true_lb, true_extent, true);
}
SONDE_WEAK_ALIAS(Type_get_true_extent)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  SONDE_ENTER("MPI_Type_get_true_extent_x");
  return bounds_query(fn, datatype, true_lb, true_extent, true);
}
SONDE_WEAK_ALIAS(Type_get_true_extent_x)

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  SONDE_ENTER("MPI_Type_get_true_extent_c");
  return bounds_query(fn, datatype, true_lb, true_extent, true);
}
SONDE_WEAK_ALIAS(Type_get_true_extent_c)

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  SONDE_ENTER("MPI_Type_extent");
  if (!extent) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *extent = t->huge_bounds ? MPI_UNDEFINED : t->extent;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  SONDE_ENTER("MPI_Type_lb");
  if (!displacement) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *displacement = t->huge_bounds ? MPI_UNDEFINED : t->lb;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  SONDE_ENTER("MPI_Type_ub");
  if (!displacement) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *displacement = t->huge_bounds ? MPI_UNDEFINED : t->lb + t->extent;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_ub)

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  SONDE_ENTER("MPI_Type_get_name");
  if (!type_name || !resultlen) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  return copy_name(t->name, type_name, resultlen);
}
SONDE_WEAK_ALIAS(Type_get_name)

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  SONDE_ENTER("MPI_Type_set_name");
  if (!type_name) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  t->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_set_name)

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
  SONDE_ENTER("MPI_Type_get_envelope");
  MPI_Count ni, na, nc, nd;
  int rc = envelope(fn, datatype, &ni, &na, &nc, &nd, combiner);
  if (rc) return rc;
  if (!num_integers || !num_addresses || !num_datatypes) return raise(nullptr, MPI_ERR_ARG, fn);
  *num_integers = int(ni);
  *num_addresses = int(na);
  *num_datatypes = int(nd);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses,
                             MPI_Count* num_large_counts, MPI_Count* num_datatypes, int* combiner) {
  SONDE_ENTER("MPI_Type_get_envelope_c");
  if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes) return raise(nullptr, MPI_ERR_ARG, fn);
  return envelope(fn, datatype, num_integers, num_addresses, num_large_counts, num_datatypes, combiner);
}
SONDE_WEAK_ALIAS(Type_get_envelope_c)

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int ints[],
                           MPI_Aint aints[], MPI_Datatype types[]) {
  SONDE_ENTER("MPI_Type_get_contents");
  // A type made by a _c constructor has large counts this call cannot return.
  return contents(fn, datatype, max_integers, max_addresses, 0, max_datatypes, ints, aints, nullptr, types);
}
SONDE_WEAK_ALIAS(Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int ints[], MPI_Aint aints[],
                             MPI_Count counts[], MPI_Datatype types[]) {
  SONDE_ENTER("MPI_Type_get_contents_c");
  return contents(fn, datatype, max_integers, max_addresses, max_large_counts, max_datatypes, ints, aints, counts,
                  types);
}
SONDE_WEAK_ALIAS(Type_get_contents_c)

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  SONDE_ENTER("MPI_Type_match_size");
  if (!datatype) return raise(nullptr, MPI_ERR_ARG, fn);
  static const MPI_Datatype kReal[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  static const MPI_Datatype kInteger[] = {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG};
  static const MPI_Datatype kComplex[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX};
  const MPI_Datatype* list;
  size_t n;
  switch (typeclass) {
    case MPI_TYPECLASS_REAL:
      list = kReal;
      n = 3;
      break;
    case MPI_TYPECLASS_INTEGER:
      list = kInteger;
      n = 5;
      break;
    case MPI_TYPECLASS_COMPLEX:
      list = kComplex;
      n = 3;
      break;
    default: return raise(nullptr, MPI_ERR_ARG, fn);
  }
  for (size_t i = 0; i < n; ++i)
    if (find_datatype(list[i])->size == size) {
      *datatype = list[i];
      return MPI_SUCCESS;
    }
  return raise(nullptr, MPI_ERR_ARG, fn);
}
SONDE_WEAK_ALIAS(Type_match_size)

// ---------------------------------------------------------------- addresses

int PMPI_Get_address(const void* location, MPI_Aint* out) {
  SONDE_ENTER("MPI_Get_address");
  return address(fn, location, out);
}
SONDE_WEAK_ALIAS(Get_address)

int PMPI_Address(void* location, MPI_Aint* out) {
  SONDE_ENTER("MPI_Address");
  return address(fn, location, out);
}
SONDE_WEAK_ALIAS(Address)

// Pure arithmetic, legal at any time (no SONDE_ENTER).
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return MPI_Aint(uintptr_t(base) + uintptr_t(disp)); }
SONDE_WEAK_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return MPI_Aint(uintptr_t(addr1) - uintptr_t(addr2)); }
SONDE_WEAK_ALIAS(Aint_diff)

// ---------------------------------------------------------------- status

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  SONDE_ENTER("MPI_Get_elements");
  if (!count) return raise(nullptr, MPI_ERR_ARG, fn);
  MPI_Count n;
  int rc = elements(fn, status, datatype, &n);
  if (rc) return rc;
  *count = n > INT_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_elements)

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SONDE_ENTER("MPI_Get_elements_x");
  return elements(fn, status, datatype, count);
}
SONDE_WEAK_ALIAS(Get_elements_x)

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SONDE_ENTER("MPI_Get_elements_c");
  return elements(fn, status, datatype, count);
}
SONDE_WEAK_ALIAS(Get_elements_c)

}  // extern "C"
