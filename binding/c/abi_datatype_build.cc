// C ABI: datatype constructors (with their large-count _c forms),
// MPI_Type_dup, commit and free, and the MPI-1 constructors MPI-3.0 removed
// (MPI_Type_hvector, _hindexed, _struct). The type engine itself is
// datatype/datatype.h; the life cycle of a derived type (references from
// handles, parents and requests) is core/lookup.h's. Every constructor
// records how the type was made (its envelope and contents), which
// abi_datatype_query.cc hands back.
#include <algorithm>
#include <utility>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/datatype_args.h"
#include "comm/attributes.h"
#include "core/engine.h"

using namespace sonde::engine;
using namespace sonde::engine::datatype_args;

namespace {

// Record how t was made; derived types it names stay alive with it.
void set_envelope(Datatype* t, int combiner, std::vector<int> ints, std::vector<int64_t> aints, std::vector<int> types,
                  std::vector<int64_t> counts) {
  t->envelope.combiner = combiner;
  t->envelope.ints = std::move(ints);
  t->envelope.aints = std::move(aints);
  t->envelope.counts = std::move(counts);
  for (int h : types) {
    Datatype* c = engine().tables().datatypes.lookup(h);
    if (c && !c->predefined) {
      retain_datatype(c);
      t->children.push_back(c);
    }
  }
  t->envelope.types = std::move(types);
}

// The common shape of every constructor: validate, build into a temporary
// (the handle table may grow and move nothing, but a failed build must not
// leave a half-made handle), then publish.
template <class Build>
int construct(const char* fn, MPI_Datatype* newtype, Build&& build, int combiner, std::vector<int> ints,
              std::vector<int64_t> aints, std::vector<int> types, std::vector<int64_t> counts = {}) {
  Datatype made;
  build(made);
  MPI_Datatype h;
  Datatype* t = new_type(&h);
  if (!t) return raise(nullptr, MPI_ERR_INTERN, fn);
  made.handle = h;
  made.refs = 1;
  *t = std::move(made);
  set_envelope(t, combiner, std::move(ints), std::move(aints), std::move(types), std::move(counts));
  *newtype = h;
  return MPI_SUCCESS;
}

// Validates `count` (old)types: each a live handle, else MPI_ERR_TYPE.
int check_types(int64_t count, const MPI_Datatype* handles, std::vector<const Datatype*>& out) {
  out.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    out[size_t(i)] = find_datatype(handles[i]);
    if (!out[size_t(i)]) return MPI_ERR_TYPE;
  }
  return MPI_SUCCESS;
}

bool negative(int64_t count, const MPI_Count* v) {
  return std::any_of(v, v + count, [](int64_t x) { return x < 0; });
}

// The int (and MPI_Aint) arguments of the classic calls widened to the
// MPI_Count of the _c calls, so both share one implementation below. A
// null array stays null (the implementation reports it).
struct Wide {
  std::vector<MPI_Count> v;
  const MPI_Count* p = nullptr;
  template <class T>
  Wide(const T* a, int64_t n) {
    static const MPI_Count kEmpty = 0;  // a non-null array of no entries: never read
    if (a && n > 0) {
      v.assign(a, a + n);
      p = v.data();
    } else if (a) {
      p = &kEmpty;
    }
  }
};

// Contents of a type made by a classic call (ints, addresses) or by a _c
// call (everything in the large counts), in the order MPI 4.1 table 5.1 gives.
struct Contents {
  std::vector<int> ints;
  std::vector<int64_t> aints, counts;
  bool large;
  explicit Contents(bool l) : large(l) {}
  void integer(int64_t v) { large ? counts.push_back(v) : ints.push_back(int(v)); }
  void integers(const MPI_Count* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) integer(v[i]);
  }
  void address(int64_t v) { large ? counts.push_back(v) : aints.push_back(v); }
  void addresses(const MPI_Count* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) address(v[i]);
  }
};

template <class Build>
int publish(const char* fn, MPI_Datatype* newtype, Build&& build, int combiner, Contents c, std::vector<int> types) {
  return construct(fn, newtype, std::forward<Build>(build), combiner, std::move(c.ints), std::move(c.aints),
                   std::move(types), std::move(c.counts));
}

int contiguous(const char* fn, int64_t count, MPI_Datatype oldtype, MPI_Datatype* newtype, bool large) {
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Contents c(large);
  c.integer(count);
  return publish(fn, newtype, [&](Datatype& t) { make_contiguous(t, count, *old); }, MPI_COMBINER_CONTIGUOUS,
                 std::move(c), {oldtype});
}

// MPI_Type_vector (stride in elements) and MPI_Type_create_hvector (bytes).
int vector(const char* fn, int64_t count, int64_t blocklength, int64_t stride, MPI_Datatype oldtype,
           MPI_Datatype* newtype, bool bytes, bool large) {
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (blocklength < 0 || !newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Contents c(large);
  c.integer(count);
  c.integer(blocklength);
  bytes ? c.address(stride) : c.integer(stride);
  int64_t step = bytes ? stride : stride * old->extent;
  return publish(fn, newtype, [&](Datatype& t) { make_vector(t, count, blocklength, step, *old); },
                 bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, std::move(c), {oldtype});
}

// MPI_Type_indexed, _create_hindexed, _create_indexed_block,
// _create_hindexed_block: `bl` has count entries, or one (`block`).
int indexed(const char* fn, int64_t count, const MPI_Count* bl, bool block, const MPI_Count* disp, MPI_Datatype oldtype,
            MPI_Datatype* newtype, bool bytes, bool large) {
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  int64_t nbl = block ? 1 : count;
  if (!newtype || (count > 0 && (!bl || !disp)) || (nbl > 0 && bl && negative(nbl, bl)))
    return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  std::vector<int64_t> b(static_cast<size_t>(count)), d(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    b[size_t(i)] = bl[block ? 0 : i];
    d[size_t(i)] = bytes ? disp[i] : disp[i] * old->extent;
  }
  Contents c(large);
  c.integer(count);
  if (block) c.integer(bl ? bl[0] : 0);
  else c.integers(bl, count);
  bytes ? c.addresses(disp, count) : c.integers(disp, count);
  int combiner = block ? (bytes ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK)
                       : (bytes ? MPI_COMBINER_HINDEXED : MPI_COMBINER_INDEXED);
  return publish(fn, newtype, [&](Datatype& t) { make_hindexed(t, count, b.data(), d.data(), *old); }, combiner,
                 std::move(c), {oldtype});
}

int create_struct(const char* fn, int64_t count, const MPI_Count* bl, const MPI_Count* disp, const MPI_Datatype* types,
                  MPI_Datatype* newtype, bool large) {
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!newtype || (count > 0 && (!bl || !disp || !types)) || (count > 0 && negative(count, bl)))
    return raise(nullptr, MPI_ERR_ARG, fn);
  std::vector<const Datatype*> olds;
  if (int rc = check_types(count, types, olds)) return raise(nullptr, rc, fn);
  Contents c(large);
  c.integer(count);
  c.integers(bl, count);
  c.addresses(disp, count);
  std::vector<int64_t> b(bl, bl + count), d(disp, disp + count);
  return publish(
      fn, newtype, [&](Datatype& t) { make_struct(t, count, b.data(), d.data(), olds.data()); }, MPI_COMBINER_STRUCT,
      std::move(c), std::vector<int>(types, types + count));
}

int resized(const char* fn, MPI_Datatype oldtype, int64_t lb, int64_t extent, MPI_Datatype* newtype, bool large) {
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Contents c(large);
  c.address(lb);
  c.address(extent);
  return publish(fn, newtype, [&](Datatype& t) { make_resized(t, *old, lb, extent); }, MPI_COMBINER_RESIZED,
                 std::move(c), {oldtype});
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------- constructors

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_contiguous");
  return contiguous(fn, count, oldtype, newtype, false);
}
SONDE_WEAK_ALIAS(Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_contiguous_c");
  return contiguous(fn, count, oldtype, newtype, true);
}
SONDE_WEAK_ALIAS(Type_contiguous_c)

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_vector");
  return vector(fn, count, blocklength, stride, oldtype, newtype, false, false);
}
SONDE_WEAK_ALIAS(Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_vector_c");
  return vector(fn, count, blocklength, stride, oldtype, newtype, false, true);
}
SONDE_WEAK_ALIAS(Type_vector_c)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hvector");
  return vector(fn, count, blocklength, stride, oldtype, newtype, true, false);
}
SONDE_WEAK_ALIAS(Type_create_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hvector_c");
  return vector(fn, count, blocklength, stride, oldtype, newtype, true, true);
}
SONDE_WEAK_ALIAS(Type_create_hvector_c)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_hvector");
  return vector(fn, count, blocklength, stride, oldtype, newtype, true, false);
}
SONDE_WEAK_ALIAS(Type_hvector)

int PMPI_Type_indexed(int count, const int bl[], const int disp[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_indexed");
  Wide b(bl, count), d(disp, count);
  return indexed(fn, count, b.p, false, d.p, oldtype, newtype, false, false);
}
SONDE_WEAK_ALIAS(Type_indexed)

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[], MPI_Datatype oldtype,
                        MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_indexed_c");
  return indexed(fn, count, bl, false, disp, oldtype, newtype, false, true);
}
SONDE_WEAK_ALIAS(Type_indexed_c)

int PMPI_Type_create_hindexed(int count, const int bl[], const MPI_Aint disp[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hindexed");
  Wide b(bl, count), d(disp, count);
  return indexed(fn, count, b.p, false, d.p, oldtype, newtype, true, false);
}
SONDE_WEAK_ALIAS(Type_create_hindexed)

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[], MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hindexed_c");
  return indexed(fn, count, bl, false, disp, oldtype, newtype, true, true);
}
SONDE_WEAK_ALIAS(Type_create_hindexed_c)

int PMPI_Type_hindexed(int count, int bl[], MPI_Aint disp[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_hindexed");
  Wide b(bl, count), d(disp, count);
  return indexed(fn, count, b.p, false, d.p, oldtype, newtype, true, false);
}
SONDE_WEAK_ALIAS(Type_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int disp[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_indexed_block");
  MPI_Count b = blocklength;
  Wide d(disp, count);
  return indexed(fn, count, &b, true, d.p, oldtype, newtype, false, false);
}
SONDE_WEAK_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disp[],
                                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_indexed_block_c");
  MPI_Count b = blocklength;
  return indexed(fn, count, &b, true, disp, oldtype, newtype, false, true);
}
SONDE_WEAK_ALIAS(Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint disp[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hindexed_block");
  MPI_Count b = blocklength;
  Wide d(disp, count);
  return indexed(fn, count, &b, true, d.p, oldtype, newtype, true, false);
}
SONDE_WEAK_ALIAS(Type_create_hindexed_block)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disp[],
                                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_hindexed_block_c");
  MPI_Count b = blocklength;
  return indexed(fn, count, &b, true, disp, oldtype, newtype, true, true);
}
SONDE_WEAK_ALIAS(Type_create_hindexed_block_c)

int PMPI_Type_create_struct(int count, const int bl[], const MPI_Aint disp[], const MPI_Datatype types[],
                            MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_struct");
  Wide b(bl, count), d(disp, count);
  return create_struct(fn, count, b.p, d.p, types, newtype, false);
}
SONDE_WEAK_ALIAS(Type_create_struct)

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[], const MPI_Datatype types[],
                              MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_struct_c");
  return create_struct(fn, count, bl, disp, types, newtype, true);
}
SONDE_WEAK_ALIAS(Type_create_struct_c)

int PMPI_Type_struct(int count, int bl[], MPI_Aint disp[], MPI_Datatype types[], MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_struct");
  Wide b(bl, count), d(disp, count);
  return create_struct(fn, count, b.p, d.p, types, newtype, false);
}
SONDE_WEAK_ALIAS(Type_struct)

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_subarray");
  if (ndims < 1 || !sizes || !subsizes || !starts || !newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) return raise(nullptr, MPI_ERR_ARG, fn);
  for (int i = 0; i < ndims; ++i)
    if (sizes[i] < 1 || subsizes[i] < 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
        starts[i] > sizes[i] - subsizes[i])
      return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  std::vector<int> ints{ndims};
  ints.insert(ints.end(), sizes, sizes + ndims);
  ints.insert(ints.end(), subsizes, subsizes + ndims);
  ints.insert(ints.end(), starts, starts + ndims);
  ints.push_back(order);
  return construct(fn, newtype,
                   [&](Datatype& t) {
                     make_subarray(t, ndims, sizes, subsizes, starts, order == MPI_ORDER_FORTRAN, *old);
                   },
                   MPI_COMBINER_SUBARRAY, std::move(ints), {}, {oldtype});
}
SONDE_WEAK_ALIAS(Type_create_subarray)

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                            const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_darray");
  if (size < 1 || rank < 0 || rank >= size || ndims < 1 || !gsizes || !distribs || !dargs || !psizes || !newtype)
    return raise(nullptr, MPI_ERR_ARG, fn);
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) return raise(nullptr, MPI_ERR_ARG, fn);
  std::vector<int> dist(static_cast<size_t>(ndims)), darg(static_cast<size_t>(ndims));
  for (int i = 0; i < ndims; ++i) {
    if (gsizes[i] < 1 || psizes[i] < 1) return raise(nullptr, MPI_ERR_ARG, fn);
    switch (distribs[i]) {
      case MPI_DISTRIBUTE_NONE: dist[size_t(i)] = 0; break;
      case MPI_DISTRIBUTE_BLOCK: dist[size_t(i)] = 1; break;
      case MPI_DISTRIBUTE_CYCLIC: dist[size_t(i)] = 2; break;
      default: return raise(nullptr, MPI_ERR_ARG, fn);
    }
    if (dargs[i] == MPI_DISTRIBUTE_DFLT_DARG) darg[size_t(i)] = -1;
    else if (dargs[i] > 0) darg[size_t(i)] = dargs[i];
    else return raise(nullptr, MPI_ERR_ARG, fn);
  }
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Datatype probe;
  if (!make_darray(probe, size, rank, ndims, gsizes, dist.data(), darg.data(), psizes, order == MPI_ORDER_FORTRAN,
                   *old))
    return raise(nullptr, MPI_ERR_ARG, fn);
  std::vector<int> ints{size, rank, ndims};
  for (const int* a : {gsizes, distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
  ints.push_back(order);
  return construct(fn, newtype, [&](Datatype& t) { t = std::move(probe); }, MPI_COMBINER_DARRAY, std::move(ints), {},
                   {oldtype});
}
SONDE_WEAK_ALIAS(Type_create_darray)

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_resized");
  return resized(fn, oldtype, lb, extent, newtype, false);
}
SONDE_WEAK_ALIAS(Type_create_resized)

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_create_resized_c");
  return resized(fn, oldtype, lb, extent, newtype, true);
}
SONDE_WEAK_ALIAS(Type_create_resized_c)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_dup");
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  const Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  // Same typemap, and committed if the old type was (MPI 4.1 5.1.10).
  int rc = construct(fn, newtype,
                     [&](Datatype& t) {
                       make_resized(t, *old, old->lb, old->extent);
                       t.explicit_lb = old->explicit_lb;
                       t.explicit_ub = old->explicit_ub;
                       t.contiguous = old->contiguous;
                       t.committed = old->committed;
                     },
                     MPI_COMBINER_DUP, {}, {}, {oldtype});
  if (rc) return rc;
  // Attributes follow the copy callbacks; a failing one undoes the dup.
  if ((rc = attr::on_type_dup(oldtype, *newtype))) {
    release_datatype(find_datatype(*newtype));
    *newtype = MPI_DATATYPE_NULL;
    return raise(nullptr, rc, fn);
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_dup)

// ---------------------------------------------------------------- life cycle

int PMPI_Type_commit(MPI_Datatype* datatype) {
  SONDE_ENTER("MPI_Type_commit");
  if (!datatype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(*datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  t->committed = true;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype* datatype) {
  SONDE_ENTER("MPI_Type_free");
  if (!datatype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(*datatype);
  if (!t || t->predefined) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (int rc = attr::on_type_free(*datatype)) return raise(nullptr, rc, fn);  // delete callbacks; type kept on error
  t->user_freed = true;
  release_datatype(t);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_free)

}  // extern "C"
