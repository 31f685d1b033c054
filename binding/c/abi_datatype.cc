// C ABI: datatypes. Constructors, queries, envelope/contents, pack/unpack
// (native and external32), addresses, MPI_Get_elements, and the MPI-1 names
// MPI-3.0 removed (MPI_Type_hvector, _hindexed, _struct, MPI_Address,
// MPI_Type_extent, _lb, _ub). The type engine itself is datatype/datatype.h.
// The life cycle of a derived type (references from handles, parents and
// requests) is core/lookup.h's.
#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <vector>

#include "binding/c/abi.h"
#include "comm/attributes.h"
#include "core/engine.h"

using namespace sonde::engine;

namespace {

// A fresh derived type holding the user's reference; *handle set on success.
Datatype* new_type(MPI_Datatype* handle) {
  Datatype* t = nullptr;
  int h = engine().datatypes.allocate(&t);
  if (!h) return nullptr;
  *t = Datatype{};
  t->handle = h;
  t->refs = 1;
  *handle = h;
  return t;
}

// Record how t was made; derived types it names stay alive with it.
void set_envelope(Datatype* t, int combiner, std::vector<int> ints, std::vector<int64_t> aints,
                  std::vector<int> types, std::vector<int64_t> counts) {
  t->envelope.combiner = combiner;
  t->envelope.ints = std::move(ints);
  t->envelope.aints = std::move(aints);
  t->envelope.counts = std::move(counts);
  for (int h : types) {
    Datatype* c = engine().datatypes.lookup(h);
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

int copy_name(const std::string& name, char* out, int* resultlen) {
  int n = int(std::min<size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1));
  std::memcpy(out, name.data(), size_t(n));
  out[n] = '\0';
  *resultlen = n;
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
  void integers(const MPI_Count* v, int64_t n) { for (int64_t i = 0; i < n; ++i) integer(v[i]); }
  void address(int64_t v) { large ? counts.push_back(v) : aints.push_back(v); }
  void addresses(const MPI_Count* v, int64_t n) { for (int64_t i = 0; i < n; ++i) address(v[i]); }
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
  return publish(
      fn, newtype, [&](Datatype& t) { make_contiguous(t, count, *old); }, MPI_COMBINER_CONTIGUOUS, std::move(c),
      {oldtype});
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
  return publish(
      fn, newtype, [&](Datatype& t) { make_vector(t, count, blocklength, step, *old); },
      bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, std::move(c), {oldtype});
}

// MPI_Type_indexed, _create_hindexed, _create_indexed_block,
// _create_hindexed_block: `bl` has count entries, or one (`block`).
int indexed(const char* fn, int64_t count, const MPI_Count* bl, bool block, const MPI_Count* disp,
            MPI_Datatype oldtype, MPI_Datatype* newtype, bool bytes, bool large) {
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
  return publish(
      fn, newtype, [&](Datatype& t) { make_hindexed(t, count, b.data(), d.data(), *old); }, combiner, std::move(c),
      {oldtype});
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
  return publish(
      fn, newtype, [&](Datatype& t) { make_resized(t, *old, lb, extent); }, MPI_COMBINER_RESIZED, std::move(c),
      {oldtype});
}

int address(const char* fn, const void* location, MPI_Aint* out) {
  if (!out) return raise(nullptr, MPI_ERR_ARG, fn);
  *out = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

int size_query(const char* fn, MPI_Datatype datatype, MPI_Count* size) {
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->size;
  return MPI_SUCCESS;
}

// (lb, extent) or, with `true_bounds`, (true_lb, true_extent).
template <class T>
int bounds_query(const char* fn, MPI_Datatype datatype, T* lb, T* extent, bool true_bounds) {
  if (!lb || !extent) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
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
  if (t->predefined) return raise(nullptr, MPI_ERR_ARG, fn);  // MPI_COMBINER_NAMED has no contents
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
    Datatype* c = engine().datatypes.lookup(e.types[i]);
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

bool is_external32(const char* datarep) { return datarep && std::strcmp(datarep, "external32") == 0; }

// MPI_Pack(_c) and MPI_Unpack(_c): P is int or MPI_Count.
template <class P>
int pack_native(const char* fn, const void* inbuf, int64_t incount, MPI_Datatype datatype, void* outbuf,
                int64_t outsize, P* position, MPI_Comm comm) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (incount < 0) return raise(c, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(c, MPI_ERR_TYPE, fn);
  if (!position || outsize < 0 || *position < 0 || (!outbuf && outsize > 0)) return raise(c, MPI_ERR_ARG, fn);
  int64_t n = incount * t->size;
  if (int64_t(*position) + n > outsize) return raise(c, MPI_ERR_TRUNCATE, fn);
  pack(*t, inbuf, incount, 0, static_cast<uint8_t*>(outbuf) + *position, uint64_t(n));
  *position += P(n);
  return MPI_SUCCESS;
}

template <class P>
int unpack_native(const char* fn, const void* inbuf, int64_t insize, P* position, void* outbuf, int64_t outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (outcount < 0) return raise(c, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(c, MPI_ERR_TYPE, fn);
  if (!position || insize < 0 || *position < 0 || (!inbuf && insize > 0)) return raise(c, MPI_ERR_ARG, fn);
  int64_t n = outcount * t->size;
  if (int64_t(*position) + n > insize) return raise(c, MPI_ERR_TRUNCATE, fn);
  unpack(*t, outbuf, outcount, 0, static_cast<const uint8_t*>(inbuf) + *position, uint64_t(n));
  *position += P(n);
  return MPI_SUCCESS;
}

template <class S>
int pack_size(const char* fn, int64_t incount, MPI_Datatype datatype, MPI_Comm comm, S* size) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (incount < 0) return raise(c, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(c, MPI_ERR_TYPE, fn);
  if (!size) return raise(c, MPI_ERR_ARG, fn);
  int64_t n = incount * t->size;
  *size = n > std::numeric_limits<S>::max() ? S(MPI_UNDEFINED) : S(n);
  return MPI_SUCCESS;
}

// MPI_Pack_external(_c) (`to_external`) and MPI_Unpack_external(_c):
// `native` is the user's typed buffer, `ext` the external32 bytes.
template <class P>
int external(const char* fn, const char* datarep, const void* native, int64_t count, MPI_Datatype datatype,
             void* ext, int64_t extsize, P* position, bool to_external) {
  if (!is_external32(datarep)) return raise(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, fn);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (!position || extsize < 0 || *position < 0 || (!ext && extsize > 0)) return raise(nullptr, MPI_ERR_ARG, fn);
  int64_t n = count * external32_size(*t);
  if (int64_t(*position) + n > extsize) return raise(nullptr, MPI_ERR_TRUNCATE, fn);
  uint8_t* at = static_cast<uint8_t*>(ext) + *position;
  if (to_external) pack_external32(*t, native, count, at);
  else unpack_external32(*t, at, const_cast<void*>(native), count);
  *position += P(n);
  return MPI_SUCCESS;
}

template <class S>
int external_size(const char* fn, const char* datarep, int64_t incount, MPI_Datatype datatype, S* size) {
  if (!is_external32(datarep)) return raise(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, fn);
  if (incount < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  *size = S(incount * external32_size(*t));
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

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
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

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[],
                                MPI_Datatype oldtype, MPI_Datatype* newtype) {
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

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[],
                              const MPI_Datatype types[], MPI_Datatype* newtype) {
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
  return construct(
      fn, newtype,
      [&](Datatype& t) { make_subarray(t, ndims, sizes, subsizes, starts, order == MPI_ORDER_FORTRAN, *old); },
      MPI_COMBINER_SUBARRAY, std::move(ints), {}, {oldtype});
}
SONDE_WEAK_ALIAS(Type_create_subarray)

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
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
  return construct(
      fn, newtype, [&](Datatype& t) { t = std::move(probe); }, MPI_COMBINER_DARRAY, std::move(ints), {},
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
  int rc = construct(
      fn, newtype,
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

// ---------------------------------------------------------------- queries

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  SONDE_ENTER("MPI_Type_size");
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->size > std::numeric_limits<int>::max() ? MPI_UNDEFINED : int(t->size);
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
  *extent = t->extent;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  SONDE_ENTER("MPI_Type_lb");
  if (!displacement) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *displacement = t->lb;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  SONDE_ENTER("MPI_Type_ub");
  if (!displacement) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *displacement = t->lb + t->extent;
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

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int ints[], MPI_Aint aints[], MPI_Datatype types[]) {
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
    case MPI_TYPECLASS_REAL: list = kReal; n = 3; break;
    case MPI_TYPECLASS_INTEGER: list = kInteger; n = 5; break;
    case MPI_TYPECLASS_COMPLEX: list = kComplex; n = 3; break;
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
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return MPI_Aint(uintptr_t(base) + uintptr_t(disp));
}
SONDE_WEAK_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return MPI_Aint(uintptr_t(addr1) - uintptr_t(addr2));
}
SONDE_WEAK_ALIAS(Aint_diff)

// ---------------------------------------------------------------- pack / unpack

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
  SONDE_ENTER("MPI_Pack");
  return pack_native(fn, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
SONDE_WEAK_ALIAS(Pack)

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                MPI_Count* position, MPI_Comm comm) {
  SONDE_ENTER("MPI_Pack_c");
  return pack_native(fn, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
SONDE_WEAK_ALIAS(Pack_c)

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm) {
  SONDE_ENTER("MPI_Unpack");
  return unpack_native(fn, inbuf, insize, position, outbuf, outcount, datatype, comm);
}
SONDE_WEAK_ALIAS(Unpack)

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Unpack_c");
  return unpack_native(fn, inbuf, insize, position, outbuf, outcount, datatype, comm);
}
SONDE_WEAK_ALIAS(Unpack_c)

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  SONDE_ENTER("MPI_Pack_size");
  return pack_size(fn, incount, datatype, comm, size);
}
SONDE_WEAK_ALIAS(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  SONDE_ENTER("MPI_Pack_size_c");
  return pack_size(fn, incount, datatype, comm, size);
}
SONDE_WEAK_ALIAS(Pack_size_c)

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
  SONDE_ENTER("MPI_Pack_external");
  return external(fn, datarep, inbuf, incount, datatype, outbuf, outsize, position, true);
}
SONDE_WEAK_ALIAS(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void* outbuf, MPI_Count outsize, MPI_Count* position) {
  SONDE_ENTER("MPI_Pack_external_c");
  return external(fn, datarep, inbuf, incount, datatype, outbuf, outsize, position, true);
}
SONDE_WEAK_ALIAS(Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position,
                         void* outbuf, int outcount, MPI_Datatype datatype) {
  SONDE_ENTER("MPI_Unpack_external");
  return external(fn, datarep, outbuf, outcount, datatype, const_cast<void*>(inbuf), insize, position, false);
}
SONDE_WEAK_ALIAS(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position,
                           void* outbuf, MPI_Count outcount, MPI_Datatype datatype) {
  SONDE_ENTER("MPI_Unpack_external_c");
  return external(fn, datarep, outbuf, outcount, datatype, const_cast<void*>(inbuf), insize, position, false);
}
SONDE_WEAK_ALIAS(Unpack_external_c)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  SONDE_ENTER("MPI_Pack_external_size");
  return external_size(fn, datarep, incount, datatype, size);
}
SONDE_WEAK_ALIAS(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count* size) {
  SONDE_ENTER("MPI_Pack_external_size_c");
  return external_size(fn, datarep, incount, datatype, size);
}
SONDE_WEAK_ALIAS(Pack_external_size_c)

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
