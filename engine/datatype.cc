#include "engine/datatype.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <utility>

#include "include/mpi.h"

namespace sonde::engine {

namespace {
template <class V>
struct ValueInt {
  V v;
  int i;
};
}  // namespace

size_t basic_size(Basic b) {
  switch (b) {
    case Basic::kNone: return 0;
    case Basic::kChar: case Basic::kSChar: case Basic::kUChar: case Basic::kByte:
    case Basic::kInt8: case Basic::kUInt8: case Basic::kPacked: return 1;
    case Basic::kWChar: return sizeof(wchar_t);
    case Basic::kShort: case Basic::kUShort: case Basic::kInt16: case Basic::kUInt16: return 2;
    case Basic::kInt: case Basic::kUInt: case Basic::kInt32: case Basic::kUInt32: return 4;
    case Basic::kLong: case Basic::kULong: return sizeof(long);
    case Basic::kLongLong: case Basic::kULongLong: case Basic::kInt64: case Basic::kUInt64: return 8;
    case Basic::kFloat: return sizeof(float);
    case Basic::kDouble: return sizeof(double);
    case Basic::kLongDouble: return sizeof(long double);
    case Basic::kBool: return sizeof(bool);
    case Basic::kCxxBool: return sizeof(bool);
    case Basic::kFloatComplex: return sizeof(std::complex<float>);
    case Basic::kDoubleComplex: return sizeof(std::complex<double>);
    case Basic::kLongDoubleComplex: return sizeof(std::complex<long double>);
    case Basic::kAint: return sizeof(MPI_Aint);
    case Basic::kOffset: return sizeof(MPI_Offset);
    case Basic::kCount: return sizeof(MPI_Count);
    case Basic::kFloatInt: return sizeof(ValueInt<float>);
    case Basic::kDoubleInt: return sizeof(ValueInt<double>);
    case Basic::kLongInt: return sizeof(ValueInt<long>);
    case Basic::k2Int: return 2 * sizeof(int);
    case Basic::kShortInt: return sizeof(ValueInt<short>);
    case Basic::kLongDoubleInt: return sizeof(ValueInt<long double>);
  }
  return 0;
}

namespace {

// Data bytes of the pair types (the padding between value and index is not data).
template <class V>
std::vector<Block> pair_blocks() {
  std::vector<Block> b{{0, int64_t(sizeof(V))}, {int64_t(offsetof(ValueInt<V>, i)), int64_t(sizeof(int))}};
  if (b[0].length == b[1].offset) return {{0, int64_t(sizeof(V) + sizeof(int))}};
  return b;
}

struct PredefinedInfo {
  int index;
  Basic basic;
  const char* name;
};

const PredefinedInfo kPredefined[] = {
    {1, Basic::kChar, "MPI_CHAR"},
    {2, Basic::kSChar, "MPI_SIGNED_CHAR"},
    {3, Basic::kUChar, "MPI_UNSIGNED_CHAR"},
    {4, Basic::kByte, "MPI_BYTE"},
    {5, Basic::kWChar, "MPI_WCHAR"},
    {6, Basic::kShort, "MPI_SHORT"},
    {7, Basic::kUShort, "MPI_UNSIGNED_SHORT"},
    {8, Basic::kInt, "MPI_INT"},
    {9, Basic::kUInt, "MPI_UNSIGNED"},
    {10, Basic::kLong, "MPI_LONG"},
    {11, Basic::kULong, "MPI_UNSIGNED_LONG"},
    {12, Basic::kLongLong, "MPI_LONG_LONG_INT"},
    {13, Basic::kULongLong, "MPI_UNSIGNED_LONG_LONG"},
    {14, Basic::kFloat, "MPI_FLOAT"},
    {15, Basic::kDouble, "MPI_DOUBLE"},
    {16, Basic::kLongDouble, "MPI_LONG_DOUBLE"},
    {17, Basic::kInt8, "MPI_INT8_T"},
    {18, Basic::kInt16, "MPI_INT16_T"},
    {19, Basic::kInt32, "MPI_INT32_T"},
    {20, Basic::kInt64, "MPI_INT64_T"},
    {21, Basic::kUInt8, "MPI_UINT8_T"},
    {22, Basic::kUInt16, "MPI_UINT16_T"},
    {23, Basic::kUInt32, "MPI_UINT32_T"},
    {24, Basic::kUInt64, "MPI_UINT64_T"},
    {25, Basic::kBool, "MPI_C_BOOL"},
    {26, Basic::kFloatComplex, "MPI_C_FLOAT_COMPLEX"},
    {27, Basic::kDoubleComplex, "MPI_C_DOUBLE_COMPLEX"},
    {28, Basic::kLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX"},
    {29, Basic::kAint, "MPI_AINT"},
    {30, Basic::kOffset, "MPI_OFFSET"},
    {31, Basic::kCount, "MPI_COUNT"},
    {32, Basic::kPacked, "MPI_PACKED"},
    {33, Basic::kFloatInt, "MPI_FLOAT_INT"},
    {34, Basic::kDoubleInt, "MPI_DOUBLE_INT"},
    {35, Basic::kLongInt, "MPI_LONG_INT"},
    {36, Basic::k2Int, "MPI_2INT"},
    {37, Basic::kShortInt, "MPI_SHORT_INT"},
    {38, Basic::kLongDoubleInt, "MPI_LONG_DOUBLE_INT"},
    {39, Basic::kNone, "MPI_LB"},
    {40, Basic::kNone, "MPI_UB"},
    {41, Basic::kCxxBool, "MPI_CXX_BOOL"},
};

std::vector<Block> predefined_blocks(Basic b) {
  switch (b) {
    case Basic::kFloatInt: return pair_blocks<float>();
    case Basic::kDoubleInt: return pair_blocks<double>();
    case Basic::kLongInt: return pair_blocks<long>();
    case Basic::kShortInt: return pair_blocks<short>();
    case Basic::kLongDoubleInt: {
      // long double carries 10 data bytes in 16 on x86-64; MPI moves the
      // whole value slot (as MPICH and Open MPI do).
      return pair_blocks<long double>();
    }
    default: break;
  }
  int64_t n = int64_t(basic_size(b));
  if (n == 0) return {};
  return {{0, n}};
}

void merge_adjacent(std::vector<Block>& blocks) {
  std::vector<Block> out;
  out.reserve(blocks.size());
  for (const Block& b : blocks) {
    if (b.length == 0) continue;
    if (!out.empty() && out.back().offset + out.back().length == b.offset)
      out.back().length += b.length;
    else
      out.push_back(b);
  }
  blocks = std::move(out);
}

// Locate packed byte `pos` of one element: the block holding it.
size_t find_block(const Datatype& t, int64_t pos) {
  auto it = std::upper_bound(t.block_start.begin(), t.block_start.end(), pos);
  return size_t(it - t.block_start.begin()) - 1;
}

// Walk packed bytes [offset, offset+n) of (buf, count, type), calling
// f(user_address, packed_position_in_stream, length) for each contiguous run.
template <class F>
void walk(const Datatype& t, uint8_t* base, int64_t count, uint64_t offset, uint64_t n, F&& f) {
  if (n == 0 || t.size == 0) return;
  int64_t elem = int64_t(offset / uint64_t(t.size));
  int64_t within = int64_t(offset % uint64_t(t.size));
  size_t bi = find_block(t, within);
  uint64_t done = 0;
  while (done < n && elem < count) {
    const Block& b = t.blocks[bi];
    int64_t into = within - t.block_start[bi];
    uint64_t run = std::min<uint64_t>(uint64_t(b.length - into), n - done);
    f(base + elem * t.extent + b.offset + into, done, run);
    done += run;
    within += int64_t(run);
    if (within == t.block_start[bi] + b.length) {
      if (++bi == t.blocks.size()) {
        bi = 0;
        within = 0;
        ++elem;
      }
    }
  }
}

}  // namespace

void Datatype::finish_layout() {
  merge_adjacent(blocks);
  block_start.resize(blocks.size());
  int64_t pos = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    block_start[i] = pos;
    pos += blocks[i].length;
  }
  size = pos;
  if (blocks.empty()) {
    true_lb = 0;
    true_extent = 0;
  } else {
    int64_t lo = blocks[0].offset, hi = blocks[0].offset + blocks[0].length;
    for (const Block& b : blocks) {
      lo = std::min(lo, b.offset);
      hi = std::max(hi, b.offset + b.length);
    }
    true_lb = lo;
    true_extent = hi - lo;
  }
  // Contiguous: a single block, and consecutive elements abut.
  contiguous = blocks.size() <= 1 && (blocks.empty() || extent == size);
  if (size == 0) contiguous = true;
  size_t bs = basic_size(basic);
  basic_count = bs ? size / int64_t(bs) : 0;
}

void init_predefined_datatypes(std::vector<Datatype*>& slots) {
  for (const PredefinedInfo& p : kPredefined) {
    Datatype& t = *slots[p.index];
    t = Datatype{};
    t.handle = SONDE_HANDLE(SONDE_KIND_DATATYPE, p.index);
    t.predefined = true;
    t.committed = true;
    t.basic = p.basic;
    t.name = p.name;
    t.blocks = predefined_blocks(p.basic);
    t.lb = 0;
    t.extent = int64_t(basic_size(p.basic));
    t.finish_layout();
  }
}

void pack(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint8_t* out, uint64_t n) {
  if (n == 0) return;  // buffers may be null then
  if (t.contiguous) {
    std::memcpy(out, contiguous_start(t, buf) + offset, n);
    return;
  }
  walk(t, static_cast<uint8_t*>(const_cast<void*>(buf)), count, offset, n,
       [out](uint8_t* user, uint64_t pos, uint64_t len) { std::memcpy(out + pos, user, len); });
}

void unpack(const Datatype& t, void* buf, int64_t count, uint64_t offset, const uint8_t* in, uint64_t n) {
  if (n == 0) return;
  if (t.contiguous) {
    std::memcpy(contiguous_start(t, buf) + offset, in, n);
    return;
  }
  walk(t, static_cast<uint8_t*>(buf), count, offset, n,
       [in](uint8_t* user, uint64_t pos, uint64_t len) { std::memcpy(user, in + pos, len); });
}

void make_contiguous(Datatype& out, int64_t count, const Datatype& old) {
  make_vector(out, count, 1, old.extent, old);
}

void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old) {
  out.blocks.clear();
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < blocklength; ++j)
      for (const Block& b : old.blocks)
        out.blocks.push_back({i * stride_bytes + j * old.extent + b.offset, b.length});
  out.basic = old.basic;
  if (count == 0 || blocklength == 0) {
    out.lb = 0;
    out.extent = 0;
  } else {
    // MPI: bounds of the typemap using old's lb/ub markers.
    int64_t first = 0, last = (count - 1) * stride_bytes;
    int64_t lo = std::min(first, last) + old.lb;
    int64_t hi = std::max(first, last) + (blocklength - 1) * old.extent + old.lb + old.extent;
    out.lb = lo;
    out.extent = hi - lo;
  }
  out.finish_layout();
}

}  // namespace sonde::engine
