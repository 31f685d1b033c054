// C ABI: packing and unpacking (MPI 4.1 sections 5.2-5.3): MPI_Pack,
// MPI_Unpack and MPI_Pack_size in the native representation, their
// external32 forms MPI_Pack_external, MPI_Unpack_external and
// MPI_Pack_external_size, each with its large-count _c form.
#include <cstdint>
#include <cstring>
#include <limits>

#include "binding/c/abi.h"
#include "core/engine.h"

using namespace sonde::engine;

namespace {

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
  if (!datatype_fits(*t, incount)) return raise(c, MPI_ERR_COUNT, fn);
  int64_t n = incount * t->size;
  if (int64_t(*position) > outsize || n > outsize - int64_t(*position)) return raise(c, MPI_ERR_TRUNCATE, fn);
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
  if (!datatype_fits(*t, outcount)) return raise(c, MPI_ERR_COUNT, fn);
  int64_t n = outcount * t->size;
  if (int64_t(*position) > insize || n > insize - int64_t(*position)) return raise(c, MPI_ERR_TRUNCATE, fn);
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
  if (!datatype_fits(*t, incount)) return raise(c, MPI_ERR_COUNT, fn);
  int64_t n = incount * t->size;
  *size = n > std::numeric_limits<S>::max() ? S(MPI_UNDEFINED) : S(n);
  return MPI_SUCCESS;
}

// MPI_Pack_external(_c) (`to_external`) and MPI_Unpack_external(_c):
// `native` is the user's typed buffer, `ext` the external32 bytes.
template <class P>
int external(const char* fn, const char* datarep, const void* native, int64_t count, MPI_Datatype datatype, void* ext,
             int64_t extsize, P* position, bool to_external) {
  if (!is_external32(datarep)) return raise(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, fn);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  Datatype* t = find_comm_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (!position || extsize < 0 || *position < 0 || (!ext && extsize > 0)) return raise(nullptr, MPI_ERR_ARG, fn);
  int64_t n;
  if (!datatype_fits(*t, count) || __builtin_mul_overflow(count, external32_size(*t), &n))
    return raise(nullptr, MPI_ERR_COUNT, fn);
  if (int64_t(*position) > extsize || n > extsize - int64_t(*position)) return raise(nullptr, MPI_ERR_TRUNCATE, fn);
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
  int64_t n;
  if (!datatype_fits(*t, incount) || __builtin_mul_overflow(incount, external32_size(*t), &n))
    return raise(nullptr, MPI_ERR_COUNT, fn);
  *size = n > std::numeric_limits<S>::max() ? S(MPI_UNDEFINED) : S(n);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

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

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  SONDE_ENTER("MPI_Unpack_external");
  return external(fn, datarep, outbuf, outcount, datatype, const_cast<void*>(inbuf), insize, position, false);
}
SONDE_WEAK_ALIAS(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                           MPI_Count outcount, MPI_Datatype datatype) {
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

}  // extern "C"
