// Datatypes: the typemap of one element as a compact layout tree, and the
// pack/unpack engine that moves data between a user buffer and a contiguous
// byte stream at any offset.
//
// Why offset-addressed: transports stream payloads in pieces (ring space,
// fragments), so the engine asks "bytes [offset, offset+n) of this message"
// and never stages a whole packed copy unless a protocol needs one.
//
// Why a tree: a vector of a million blocks is one Item {count 1e6, stride},
// not a million blocks. Seeking to a packed offset is a binary search per
// tree level (packed offsets of items are prefix sums) plus a division per
// repeated item, so a streamed message costs O(depth * log(items)) per
// piece, never a rescan from the start. docs/datatypes.md has the details.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sonde::engine {

// Basic element types, for reductions, MPI_Get_elements and external32.
// kNone: a derived type mixing several basics (reductions then refuse it).
enum class Basic : uint8_t {
  kNone,
  kChar,
  kSChar,
  kUChar,
  kByte,
  kWChar,
  kShort,
  kUShort,
  kInt,
  kUInt,
  kLong,
  kULong,
  kLongLong,
  kULongLong,
  kFloat,
  kDouble,
  kLongDouble,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
  kFloatComplex,
  kDoubleComplex,
  kLongDoubleComplex,
  kAint,
  kOffset,
  kCount,
  kPacked,
  // pair types for MAXLOC/MINLOC
  kFloatInt,
  kDoubleInt,
  kLongInt,
  k2Int,
  kShortInt,
  kLongDoubleInt,
  kCxxBool,
};

struct Layout;

// `count` copies, `stride` bytes apart, of either a leaf (`size` bytes of
// basic elements of kind `basic`) or a sub-layout (`sub`, `size` packed
// bytes per copy), the first at byte `disp` from the element's origin.
struct Item {
  int64_t disp = 0;
  int64_t count = 0;
  int64_t stride = 0;
  int64_t size = 0;
  const Layout* sub = nullptr;  // null: a leaf
  Basic basic = Basic::kNone;   // leaf: the kind of its basic elements
};

// The data of one element, in typemap (= pack) order. Immutable once built
// and shared between types (dup, resized, parents) by shared_ptr.
struct Layout {
  std::vector<Item> items;
  std::vector<int64_t> start;  // packed offset where items[i] begins
  int64_t size = 0;            // packed bytes
  int64_t elements = 0;        // basic elements (MPI_Get_elements)
  int64_t runs = 0;            // separate leaf runs (adjacent copies not merged): an upper bound
  // Dense: the data is one run of `size` bytes starting at `dense_at`.
  bool dense = true;
  int64_t dense_at = 0;
  std::vector<std::shared_ptr<const Layout>> owned;  // keeps `sub`s alive
};

// MPI_COMBINER_* of mpi.h, the way a type was made (get_envelope/contents).
struct Envelope {
  int combiner = 0;  // MPI_COMBINER_NAMED for predefined types
  std::vector<int> ints;
  std::vector<int64_t> aints;
  std::vector<int> types;       // handles as the user passed them
  std::vector<int64_t> counts;  // large counts: types made by the _c constructors
};

struct Datatype {
  int handle = 0;
  bool predefined = false;
  bool committed = false;
  Basic basic = Basic::kNone;  // basic type every element is made of (kNone: mixed)
  int64_t size = 0;            // data bytes in one element
  int64_t lb = 0, extent = 0;  // MPI lower bound and extent
  int64_t true_lb = 0, true_extent = 0;
  // MPI-1 sticky bounds: lb/ub set by MPI_LB/MPI_UB markers or by
  // MPI_Type_create_resized; they win over data bounds in every parent.
  bool explicit_lb = false, explicit_ub = false;
  int64_t align = 1;  // C alignment of the data (struct padding)
  // Values MPI_Count cannot hold (2^63 bytes and more): the field stored is
  // meaningless, queries answer MPI_UNDEFINED, and the layout is empty. A
  // type with any of them moves no data (datatype_fits); its parents
  // inherit them.
  bool huge_size = false, huge_bounds = false, huge_true_bounds = false;
  std::shared_ptr<const Layout> layout;
  // count elements occupy exactly [buf + true_lb, buf + true_lb + count*size).
  bool contiguous = false;
  std::string name;
  Envelope envelope;

  // Life cycle (core/lookup.h): one reference for the user's
  // handle, one per parent type whose envelope names it, one per request
  // using it. The slot is reused only when the last one is gone.
  int refs = 0;
  bool user_freed = false;
  std::vector<Datatype*> children;  // referenced types (envelope.types)
  void* attributes = nullptr;       // comm/attributes.h, if any
};

// Whether `count` elements of t can move: t's size and bounds fit in
// MPI_Count and so do count * size and count * extent (the bytes moved and
// the span of user memory). count <= 0 always fits. Data movement with a
// count that does not is MPI_ERR_COUNT.
bool datatype_fits(const Datatype& t, int64_t count);

// Predefined datatype table (index 1..SONDE_PREDEFINED_DATATYPES-1 of mpi.h).
void init_predefined_datatypes(std::vector<Datatype*>& slots_by_index);

// Copy packed bytes [offset, offset+n) of (buf, count, type) into out.
void pack(const Datatype& type, const void* buf, int64_t count, uint64_t offset, uint8_t* out, uint64_t n);
// Store packed bytes [offset, offset+n) from in into (buf, count, type).
void unpack(const Datatype& type, void* buf, int64_t count, uint64_t offset, const uint8_t* in, uint64_t n);
// Address of the first data byte when `contiguous`.
inline const uint8_t* contiguous_start(const Datatype& t, const void* buf) {
  return static_cast<const uint8_t*>(buf) + t.true_lb;
}
inline uint8_t* contiguous_start(const Datatype& t, void* buf) { return static_cast<uint8_t*>(buf) + t.true_lb; }

// The user memory holding packed bytes [offset, offset+n) of (buf, count,
// type), as at most `max` iovecs (adjacent runs merged) for
// process_vm_readv/writev. Returns how many iovecs were filled; *covered is
// how many of the n bytes they hold (less than n when `max` ran out).
size_t gather_iov(const Datatype& type, const void* buf, int64_t count, uint64_t offset, uint64_t n, iovec* out,
                  size_t max, uint64_t* covered);

// Mean bytes per contiguous run of t's data (its size for contiguous types):
// below a few hundred bytes an iovec per run costs more than a copy.
inline int64_t mean_run(const Datatype& t) {
  return t.contiguous || !t.layout || t.layout->runs == 0 ? t.size : t.size / t.layout->runs;
}

// Constructors: fill `out` (a fresh object) from the old type(s). They set
// the layout, size, bounds, basic, alignment and contiguity, not the
// envelope or references (the C ABI does those).
void make_contiguous(Datatype& out, int64_t count, const Datatype& old);
void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old);
// Blocks of blocklengths[i] olds at byte displacements disps[i].
void make_hindexed(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                   const Datatype& old);
// Blocks of blocklengths[i] types[i] at disps[i]; `is_struct` applies the
// alignment padding of MPI_Type_create_struct to the extent.
void make_struct(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                 const Datatype* const* types, bool is_struct = true);
void make_resized(Datatype& out, const Datatype& old, int64_t lb, int64_t extent);
// MPI_Type_create_subarray; order: 0 C, 1 Fortran. Arguments checked by the caller.
void make_subarray(Datatype& out, int ndims, const int* sizes, const int* subsizes, const int* starts, bool fortran,
                   const Datatype& old);
// MPI_Type_create_darray; distribs: 0 none, 1 block, 2 cyclic; darg < 0 is
// MPI_DISTRIBUTE_DFLT_DARG. Returns false for arguments MPI rejects.
bool make_darray(Datatype& out, int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs,
                 const int* psizes, bool fortran, const Datatype& old);

// Size in bytes of one basic element as stored in memory (0 for kNone).
size_t basic_size(Basic b);

// Basic elements in the first `bytes` packed bytes of count elements of t;
// -1 when `bytes` ends inside a basic element (MPI_UNDEFINED).
int64_t count_elements(const Datatype& t, uint64_t bytes);

// external32 (MPI 4.1 section 14.5.2): big-endian, fixed sizes.
// Bytes of one element of t in external32.
int64_t external32_size(const Datatype& t);
// Convert count elements of (buf, type) to external32 at out (whole elements).
void pack_external32(const Datatype& t, const void* buf, int64_t count, uint8_t* out);
void unpack_external32(const Datatype& t, const uint8_t* in, void* buf, int64_t count);

}  // namespace sonde::engine
