// Datatypes: the typemap of one element flattened into byte blocks, and the
// pack/unpack engine that moves data between a user buffer and a contiguous
// byte stream at any offset.
//
// Why offset-addressed: transports stream payloads in pieces (ring space,
// fragments), so the engine asks "bytes [offset, offset+n) of this message"
// and never stages a whole packed copy unless a protocol needs one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sonde::engine {

// Basic element types, for reductions and MPI_Get_elements. kNone: a derived
// type mixing several basics (reductions then refuse it).
enum class Basic : uint8_t {
  kNone, kChar, kSChar, kUChar, kByte, kWChar, kShort, kUShort, kInt, kUInt, kLong, kULong,
  kLongLong, kULongLong, kFloat, kDouble, kLongDouble, kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64, kBool, kFloatComplex, kDoubleComplex,
  kLongDoubleComplex, kAint, kOffset, kCount, kPacked,
  // pair types for MAXLOC/MINLOC
  kFloatInt, kDoubleInt, kLongInt, k2Int, kShortInt, kLongDoubleInt, kCxxBool,
};

struct Block {
  int64_t offset;  // from the start of the element (buffer address)
  int64_t length;  // bytes
};

struct Datatype {
  int handle = 0;
  bool predefined = false;
  bool committed = false;
  Basic basic = Basic::kNone;   // basic type every element is made of
  int64_t basic_count = 0;      // basics per element (size / sizeof(basic))
  int64_t size = 0;             // data bytes in one element
  int64_t lb = 0, extent = 0;   // MPI lower bound and extent
  int64_t true_lb = 0, true_extent = 0;
  // One element's bytes, in typemap order, adjacent blocks merged.
  std::vector<Block> blocks;
  // Packed offset where each block starts (prefix sums of lengths).
  std::vector<int64_t> block_start;
  // count elements occupy exactly [buf + true_lb, buf + true_lb + count*size).
  bool contiguous = false;
  std::string name;

  // Rebuild block_start and contiguous from blocks/size/extent.
  void finish_layout();
};

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

// Constructors: fill `out` (a fresh object) from the old type.
void make_contiguous(Datatype& out, int64_t count, const Datatype& old);
void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old);

// Size in bytes of one basic element (0 for kNone).
size_t basic_size(Basic b);

}  // namespace sonde::engine
