#include "datatype/datatype.h"

#include <algorithm>
#include <cfloat>
#include <complex>
#include <cstring>
#include <type_traits>
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

// ---------------------------------------------------------------- layouts

// Builds one Layout, keeping it compact: single-item sub-layouts are folded
// into their parent, dense repetitions of a leaf become one leaf, and
// adjacent leaves of one kind merge.
class LayoutBuilder {
 public:
  LayoutBuilder() : l_(std::make_shared<Layout>()) {}

  // `count` copies of `sub`, `stride` bytes apart, the first at `disp`.
  void add(int64_t disp, int64_t count, int64_t stride, const std::shared_ptr<const Layout>& sub) {
    if (count <= 0 || !sub || sub->size == 0) return;
    if (std::find(l_->owned.begin(), l_->owned.end(), sub) == l_->owned.end()) l_->owned.push_back(sub);
    Item x{disp, count, stride, sub->size, sub.get(), Basic::kNone};
    push(x);
  }
  void add_leaf(int64_t disp, int64_t bytes, Basic basic) {
    if (bytes > 0) push(Item{disp, 1, 0, bytes, nullptr, basic});
  }

  std::shared_ptr<const Layout> finish() {
    Layout& l = *l_;
    l.start.resize(l.items.size());
    int64_t pos = 0, elements = 0, runs = 0;
    bool dense = true;
    int64_t at = 0, next = 0;
    for (size_t i = 0; i < l.items.size(); ++i) {
      const Item& it = l.items[i];
      l.start[i] = pos;
      pos += it.count * it.size;
      elements += it.count * (it.sub ? it.sub->elements : it.size / int64_t(basic_size(it.basic)));
      runs += it.count * (it.sub ? it.sub->runs : 1);
      bool item_dense = (it.count == 1 || it.stride == it.size) && (!it.sub || it.sub->dense);
      int64_t first = it.disp + (it.sub ? it.sub->dense_at : 0);
      if (i == 0) at = first;
      if (!item_dense || (i > 0 && first != next)) dense = false;
      next = first + it.count * it.size;
    }
    l.size = pos;
    l.elements = elements;
    l.runs = runs;
    l.dense = dense;
    l.dense_at = l.items.empty() ? 0 : at;
    return std::move(l_);
  }

 private:
  void push(Item x) {
    // Fold single-item sub-layouts into this item while the result is
    // still one item.
    while (x.sub && x.sub->items.size() == 1) {
      const Item& in = x.sub->items[0];
      if (in.count == 1) {
        x = Item{x.disp + in.disp, x.count, x.stride, in.size, in.sub, in.basic};
      } else if (x.count == 1) {
        x = Item{x.disp + in.disp, in.count, in.stride, in.size, in.sub, in.basic};
      } else if (in.count * in.stride == x.stride) {
        x = Item{x.disp + in.disp, x.count * in.count, in.stride, in.size, in.sub, in.basic};
      } else {
        break;
      }
    }
    if (!x.sub && x.count > 1 && x.stride == x.size) {
      x.size *= x.count;
      x.count = 1;
    }
    if (x.count == 1) x.stride = 0;
    if (!l_->items.empty()) {
      Item& prev = l_->items.back();
      if (!prev.sub && !x.sub && prev.basic == x.basic && prev.count == 1 && x.count == 1 &&
          prev.disp + prev.size == x.disp) {
        prev.size += x.size;
        return;
      }
    }
    l_->items.push_back(x);
  }

  std::shared_ptr<Layout> l_;
};

// MPI bounds of a typemap under construction, with MPI-1's sticky
// MPI_LB/MPI_UB rule: explicit bounds, where present, win over data bounds.
struct Bounds {
  bool any_lb = false, any_ub = false, elb = false, eub = false, tany = false;
  int64_t lb = 0, ub = 0, xlb = 0, xub = 0, tlb = 0, tub = 0;
  int64_t align = 1;
  Basic basic = Basic::kNone;
  bool basic_set = false, mixed = false;

  // Copies of t whose displacements range over [lo, hi].
  void add(int64_t lo, int64_t hi, const Datatype& t) {
    const bool lb_marker = t.predefined && t.explicit_lb;  // MPI_LB bounds nothing from above
    const bool ub_marker = t.predefined && t.explicit_ub;  // MPI_UB nothing from below
    if (!ub_marker) {
      int64_t c = lo + t.lb;
      if (t.explicit_lb) {
        xlb = elb ? std::min(xlb, c) : c;
        elb = true;
      } else {
        lb = any_lb ? std::min(lb, c) : c;
        any_lb = true;
      }
    }
    if (!lb_marker) {
      int64_t c = hi + t.lb + t.extent;
      if (t.explicit_ub) {
        xub = eub ? std::max(xub, c) : c;
        eub = true;
      } else {
        ub = any_ub ? std::max(ub, c) : c;
        any_ub = true;
      }
    }
    if (t.size > 0) {
      int64_t a = lo + t.true_lb, b = hi + t.true_lb + t.true_extent;
      tlb = tany ? std::min(tlb, a) : a;
      tub = tany ? std::max(tub, b) : b;
      tany = true;
    }
    if (!lb_marker && !ub_marker) {
      align = std::max(align, t.align);
      if (!basic_set) {
        basic = t.basic;
        basic_set = true;
      } else if (basic != t.basic) {
        mixed = true;
      }
    }
  }

  void store(Datatype& out, bool pad) const {
    int64_t l = elb ? xlb : (any_lb ? lb : 0);
    int64_t u = eub ? xub : (any_ub ? ub : 0);  // {(LB,10)} alone: ub 0, extent -10 (as MPICH)
    if (pad && !eub && !elb && align > 1) {
      int64_t e = u - l;
      int64_t r = ((e % align) + align) % align;
      if (r) u += align - r;
    }
    out.lb = l;
    out.extent = u - l;
    out.explicit_lb = elb;
    out.explicit_ub = eub;
    out.true_lb = tany ? tlb : 0;
    out.true_extent = tany ? tub - tlb : 0;
    out.align = align;
    out.basic = mixed ? Basic::kNone : basic;
  }
};

void finish_type(Datatype& out, std::shared_ptr<const Layout> layout) {
  out.layout = std::move(layout);
  out.size = out.layout->size;
  const Layout& l = *out.layout;
  out.contiguous = out.size == 0 || (l.dense && l.dense_at == out.true_lb && out.extent == out.size);
}

// Positions i*s for i in [0, n): the smallest and the largest.
inline int64_t lo_of(int64_t n, int64_t s) { return std::min<int64_t>(0, (n - 1) * s); }
inline int64_t hi_of(int64_t n, int64_t s) { return std::max<int64_t>(0, (n - 1) * s); }

// ---------------------------------------------------------------- predefined

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
    {26, Basic::kFloatComplex, "MPI_C_COMPLEX"},  // = MPI_C_FLOAT_COMPLEX; MPICH names it so
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
    // C++ and Fortran names of the same representations (C programs and
    // test suites use them; Fortran bindings are not provided).
    {42, Basic::kFloatComplex, "MPI_CXX_FLOAT_COMPLEX"},
    {43, Basic::kDoubleComplex, "MPI_CXX_DOUBLE_COMPLEX"},
    {44, Basic::kLongDoubleComplex, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
    {45, Basic::kChar, "MPI_CHARACTER"},
    {46, Basic::kInt, "MPI_INTEGER"},
    {47, Basic::kFloat, "MPI_REAL"},
    {48, Basic::kDouble, "MPI_DOUBLE_PRECISION"},
    {49, Basic::kInt, "MPI_LOGICAL"},
    {50, Basic::kFloatComplex, "MPI_COMPLEX"},
    {51, Basic::kDoubleComplex, "MPI_DOUBLE_COMPLEX"},
    {52, Basic::kInt8, "MPI_INTEGER1"},
    {53, Basic::kInt16, "MPI_INTEGER2"},
    {54, Basic::kInt32, "MPI_INTEGER4"},
    {55, Basic::kInt64, "MPI_INTEGER8"},
    {56, Basic::kFloat, "MPI_REAL4"},
    {57, Basic::kDouble, "MPI_REAL8"},
    {58, Basic::k2Int, "MPI_2INTEGER"},
    {59, Basic::kFloatComplex, "MPI_COMPLEX8"},
    {60, Basic::kDoubleComplex, "MPI_COMPLEX16"},
    {61, Basic::kFloat, "MPI_2REAL"},                // two REALs: data 8 bytes
    {62, Basic::kDouble, "MPI_2DOUBLE_PRECISION"},   // two DOUBLE PRECISIONs
};
static_assert(sizeof(kPredefined) / sizeof(kPredefined[0]) == SONDE_PREDEFINED_DATATYPES - 1,
              "every predefined datatype index of mpi.h has an entry");

int64_t basic_align(Basic b) {
  switch (b) {
    case Basic::kFloatInt: return alignof(ValueInt<float>);
    case Basic::kDoubleInt: return alignof(ValueInt<double>);
    case Basic::kLongInt: return alignof(ValueInt<long>);
    case Basic::kShortInt: return alignof(ValueInt<short>);
    case Basic::kLongDoubleInt: return alignof(ValueInt<long double>);
    case Basic::k2Int: return alignof(int);
    case Basic::kFloatComplex: return alignof(float);
    case Basic::kDoubleComplex: return alignof(double);
    case Basic::kLongDoubleComplex: return alignof(long double);
    case Basic::kNone: return 1;
    default: return int64_t(basic_size(b));
  }
}

// Pair types: value, then int, each its own basic element; the padding
// between and after them is not data.
template <class V>
void pair_leaves(LayoutBuilder& b, Basic value) {
  b.add_leaf(0, sizeof(V), value);
  b.add_leaf(int64_t(offsetof(ValueInt<V>, i)), sizeof(int), Basic::kInt);
}

std::shared_ptr<const Layout> predefined_layout(Basic b, int copies) {
  LayoutBuilder l;
  switch (b) {
    case Basic::kFloatInt: pair_leaves<float>(l, Basic::kFloat); break;
    case Basic::kDoubleInt: pair_leaves<double>(l, Basic::kDouble); break;
    case Basic::kLongInt: pair_leaves<long>(l, Basic::kLong); break;
    case Basic::kShortInt: pair_leaves<short>(l, Basic::kShort); break;
    // long double carries 10 data bytes in 16 on x86-64; MPI moves the
    // whole value slot (as MPICH and Open MPI do).
    case Basic::kLongDoubleInt: pair_leaves<long double>(l, Basic::kLongDouble); break;
    case Basic::k2Int: l.add_leaf(0, 2 * sizeof(int), Basic::kInt); break;
    default: l.add_leaf(0, int64_t(basic_size(b)) * copies, b); break;
  }
  return l.finish();
}

// ---------------------------------------------------------------- walking

// Sinks receive the user memory of consecutive packed bytes as runs
// (address, length); returning false stops the walk.
// Copies `k` leaves of `size` bytes, `stride` apart, between user memory
// at p and the packed stream at s: the inner loop of strided types (a
// vector of doubles), with the common sizes unrolled to fixed-size moves.
template <bool kPack>
inline void strided(uint8_t* p, int64_t stride, uint64_t size, int64_t k, uint8_t*& s) {
  auto loop = [&](auto width) {
    for (int64_t i = 0; i < k; ++i, p += stride, s += width) {
      if constexpr (kPack) std::memcpy(s, p, width);
      else std::memcpy(p, s, width);
    }
  };
  switch (size) {
    case 4: loop(std::integral_constant<size_t, 4>{}); break;
    case 8: loop(std::integral_constant<size_t, 8>{}); break;
    case 16: loop(std::integral_constant<size_t, 16>{}); break;
    default:
      for (int64_t i = 0; i < k; ++i, p += stride, s += size) {
        if constexpr (kPack) std::memcpy(s, p, size);
        else std::memcpy(p, s, size);
      }
  }
}

struct PackSink {
  uint8_t* out;
  bool run(uint8_t* p, uint64_t n) {
    std::memcpy(out, p, n);
    out += n;
    return true;
  }
  void copies(uint8_t* p, int64_t stride, uint64_t size, int64_t k) { strided<true>(p, stride, size, k, out); }
};
struct UnpackSink {
  const uint8_t* in;
  bool run(uint8_t* p, uint64_t n) {
    std::memcpy(p, in, n);
    in += n;
    return true;
  }
  void copies(uint8_t* p, int64_t stride, uint64_t size, int64_t k) {
    uint8_t* s = const_cast<uint8_t*>(in);
    strided<false>(p, stride, size, k, s);
    in = s;
  }
};
struct IovSink {
  iovec* out;
  size_t max, used = 0;
  uint64_t covered = 0;
  bool run(uint8_t* p, uint64_t n) {
    if (used && static_cast<uint8_t*>(out[used - 1].iov_base) + out[used - 1].iov_len == p) {
      out[used - 1].iov_len += n;
    } else {
      if (used == max) return false;
      out[used++] = iovec{p, size_t(n)};
    }
    covered += n;
    return true;
  }
};

template <class S>
bool walk_layout(const Layout& l, uint8_t* base, uint64_t off, uint64_t n, S& s);

// Packed bytes [off, off+n) of the copies of `it` placed at base.
template <class S>
bool walk_item(const Item& it, uint8_t* base, uint64_t off, uint64_t n, S& s) {
  const uint64_t size = uint64_t(it.size);
  int64_t i = int64_t(off / size);
  uint64_t within = off % size;
  uint8_t* p = base + it.disp + i * it.stride;
  if constexpr (requires { s.copies(p, it.stride, size, i); }) {
    if (!it.sub && within == 0 && n >= size) {
      // Whole leaves in a row: no per-leaf bookkeeping.
      int64_t k = std::min<int64_t>(it.count - i, int64_t(n / size));
      s.copies(p, it.stride, size, k);
      i += k;
      p += k * it.stride;
      n -= uint64_t(k) * size;
    }
  }
  while (n > 0 && i < it.count) {
    uint64_t take = std::min<uint64_t>(size - within, n);
    if (!it.sub) {
      if (!s.run(p + within, take)) return false;
    } else if (!walk_layout(*it.sub, p, within, take, s)) {
      return false;
    }
    n -= take;
    within = 0;
    ++i;
    p += it.stride;
  }
  return true;
}

template <class S>
bool walk_layout(const Layout& l, uint8_t* base, uint64_t off, uint64_t n, S& s) {
  size_t k = size_t(std::upper_bound(l.start.begin(), l.start.end(), int64_t(off)) - l.start.begin()) - 1;
  while (n > 0 && k < l.items.size()) {
    const Item& it = l.items[k];
    uint64_t in = off - uint64_t(l.start[k]);
    uint64_t total = uint64_t(it.count * it.size);
    uint64_t take = std::min<uint64_t>(total - in, n);
    if (!walk_item(it, base, in, take, s)) return false;
    n -= take;
    off += take;
    ++k;
  }
  return true;
}

// count elements of t at buf, as one item.
template <class S>
bool walk(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint64_t n, S& s) {
  if (n == 0 || t.size == 0) return true;
  Item top{0, count, t.extent, t.size, t.layout.get(), Basic::kNone};
  return walk_item(top, static_cast<uint8_t*>(const_cast<void*>(buf)), offset, n, s);
}

}  // namespace

void init_predefined_datatypes(std::vector<Datatype*>& slots) {
  for (const PredefinedInfo& p : kPredefined) {
    Datatype& t = *slots[p.index];
    t = Datatype{};
    t.handle = SONDE_HANDLE(SONDE_KIND_DATATYPE, p.index);
    t.predefined = true;
    t.committed = true;
    t.basic = p.basic;
    t.name = p.name;
    t.envelope.combiner = MPI_COMBINER_NAMED;
    t.lb = 0;
    t.extent = int64_t(basic_size(p.basic));
    if (p.index == 61 || p.index == 62) t.extent *= 2;  // MPI_2REAL, MPI_2DOUBLE_PRECISION
    t.true_lb = 0;
    t.true_extent = t.extent;
    t.align = basic_align(p.basic);
    if (p.index == 39) t.explicit_lb = true;  // MPI_LB
    if (p.index == 40) t.explicit_ub = true;  // MPI_UB
    t.layout = predefined_layout(p.basic, int(t.extent / std::max<int64_t>(1, int64_t(basic_size(p.basic)))));
    t.size = t.layout->size;
    // True extent: the data, not the padding after it (pair types).
    const Layout& l = *t.layout;
    t.true_extent = l.items.empty() ? 0 : l.items.back().disp + l.items.back().size;
    t.contiguous = t.size == 0 || (l.dense && t.extent == t.size);
  }
}

void pack(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint8_t* out, uint64_t n) {
  if (n == 0) return;  // buffers may be null then
  if (t.contiguous) {
    std::memcpy(out, contiguous_start(t, buf) + offset, n);
    return;
  }
  PackSink s{out};
  walk(t, buf, count, offset, n, s);
}

void unpack(const Datatype& t, void* buf, int64_t count, uint64_t offset, const uint8_t* in, uint64_t n) {
  if (n == 0) return;
  if (t.contiguous) {
    std::memcpy(contiguous_start(t, buf) + offset, in, n);
    return;
  }
  UnpackSink s{in};
  walk(t, buf, count, offset, n, s);
}

size_t gather_iov(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint64_t n, iovec* out,
                  size_t max, uint64_t* covered) {
  IovSink s{out, max};
  if (t.contiguous) {
    if (n && max) {
      out[0] = iovec{const_cast<uint8_t*>(contiguous_start(t, buf)) + offset, size_t(n)};
      s.used = 1;
      s.covered = n;
    }
  } else {
    walk(t, buf, count, offset, n, s);
  }
  *covered = s.covered;
  return s.used;
}

// ---------------------------------------------------------------- constructors

void make_contiguous(Datatype& out, int64_t count, const Datatype& old) {
  make_vector(out, count, 1, old.extent, old);
}

void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old) {
  Bounds b;
  LayoutBuilder l;
  if (count > 0 && blocklength > 0) {
    b.add(lo_of(count, stride_bytes) + lo_of(blocklength, old.extent),
          hi_of(count, stride_bytes) + hi_of(blocklength, old.extent), old);
    if (blocklength == 1) {
      l.add(0, count, stride_bytes, old.layout);
    } else {
      LayoutBuilder block;
      block.add(0, blocklength, old.extent, old.layout);
      l.add(0, count, stride_bytes, block.finish());
    }
  } else {
    b.basic = old.basic;
    b.basic_set = true;
  }
  b.store(out, false);
  finish_type(out, l.finish());
}

void make_hindexed(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                   const Datatype& old) {
  std::vector<const Datatype*> types(size_t(count), &old);
  make_struct(out, count, blocklengths, disps, types.data(), false);
  if (out.size == 0) out.basic = old.basic;
}

void make_struct(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                 const Datatype* const* types, bool is_struct) {
  Bounds b;
  LayoutBuilder l;
  for (int64_t i = 0; i < count; ++i) {
    const Datatype& t = *types[i];
    int64_t n = blocklengths[i];
    if (n <= 0) continue;
    b.add(disps[i] + lo_of(n, t.extent), disps[i] + hi_of(n, t.extent), t);
    l.add(disps[i], n, t.extent, t.layout);
  }
  b.store(out, is_struct);
  finish_type(out, l.finish());
}

void make_resized(Datatype& out, const Datatype& old, int64_t lb, int64_t extent) {
  out.basic = old.basic;
  out.lb = lb;
  out.extent = extent;
  out.explicit_lb = out.explicit_ub = true;
  out.true_lb = old.true_lb;
  out.true_extent = old.true_extent;
  out.align = old.align;
  finish_type(out, old.layout);
}

void make_subarray(Datatype& out, int ndims, const int* sizes, const int* subsizes, const int* starts, bool fortran,
                   const Datatype& old) {
  // Fastest-varying dimension first: the last in C order, the first in Fortran's.
  auto dim = [&](int k) { return fortran ? k : ndims - 1 - k; };
  Datatype t;
  make_contiguous(t, subsizes[dim(0)], old);
  int64_t step = int64_t(sizes[dim(0)]) * old.extent;  // bytes per index of the next dimension
  int64_t disp = int64_t(starts[dim(0)]) * old.extent;
  for (int k = 1; k < ndims; ++k) {
    Datatype next;
    make_vector(next, subsizes[dim(k)], 1, step, t);
    t = std::move(next);
    disp += int64_t(starts[dim(k)]) * step;
    step *= sizes[dim(k)];
  }
  Datatype placed;
  int64_t one = 1;
  make_hindexed(placed, 1, &one, &disp, t);
  make_resized(out, placed, 0, step);
  out.basic = old.basic;
}

bool make_darray(Datatype& out, int size, int rank, int ndims, const int* gsizes, const int* distribs,
                 const int* dargs, const int* psizes, bool fortran, const Datatype& old) {
  // The process grid is row-major whatever the array order (MPI 4.1 5.1.4).
  std::vector<int> coord(static_cast<size_t>(ndims));
  int64_t procs = 1;
  for (int i = 0; i < ndims; ++i) procs *= psizes[i];
  if (procs != size) return false;
  for (int i = ndims - 1, r = rank; i >= 0; --i) {
    coord[size_t(i)] = r % psizes[i];
    r /= psizes[i];
  }
  auto dim = [&](int k) { return fortran ? k : ndims - 1 - k; };
  Datatype t = old;
  int64_t step = old.extent;  // bytes per index of the current dimension
  for (int k = 0; k < ndims; ++k) {
    int d = dim(k);
    int64_t g = gsizes[d], p = psizes[d], c = coord[size_t(d)];
    std::vector<int64_t> lens, disps;
    if (distribs[d] == 0) {  // MPI_DISTRIBUTE_NONE
      if (p != 1) return false;
      lens.push_back(g);
      disps.push_back(0);
    } else if (distribs[d] == 1) {  // MPI_DISTRIBUTE_BLOCK
      int64_t blk = dargs[d] < 0 ? (g + p - 1) / p : dargs[d];
      if (blk * p < g) return false;
      int64_t first = c * blk, n = std::max<int64_t>(0, std::min(blk, g - first));
      lens.push_back(n);
      disps.push_back(first * step);
    } else {  // MPI_DISTRIBUTE_CYCLIC
      int64_t blk = dargs[d] < 0 ? 1 : dargs[d];
      if (blk <= 0) return false;
      for (int64_t first = c * blk; first < g; first += p * blk) {
        lens.push_back(std::min(blk, g - first));
        disps.push_back(first * step);
      }
    }
    Datatype unit;
    make_resized(unit, t, 0, step);
    Datatype next;
    make_hindexed(next, int64_t(lens.size()), lens.data(), disps.data(), unit);
    t = std::move(next);
    step *= g;
  }
  make_resized(out, t, 0, step);
  out.basic = old.basic;
  return true;
}

// ---------------------------------------------------------------- elements

namespace {

// Basic elements in the first `bytes` packed bytes of one copy of l; -1 if
// that ends inside a basic element.
int64_t partial_elements(const Layout& l, uint64_t bytes) {
  int64_t n = 0;
  for (const Item& it : l.items) {
    if (bytes == 0) break;
    uint64_t total = uint64_t(it.count * it.size);
    int64_t per = it.sub ? it.sub->elements : it.size / int64_t(basic_size(it.basic));
    if (bytes >= total) {
      n += it.count * per;
      bytes -= total;
      continue;
    }
    uint64_t whole = bytes / uint64_t(it.size), rest = bytes % uint64_t(it.size);
    n += int64_t(whole) * per;
    if (rest) {
      if (it.sub) {
        int64_t p = partial_elements(*it.sub, rest);
        if (p < 0) return -1;
        n += p;
      } else {
        uint64_t bs = basic_size(it.basic);
        if (rest % bs) return -1;
        n += int64_t(rest / bs);
      }
    }
    bytes = 0;
  }
  return n;
}

}  // namespace

int64_t count_elements(const Datatype& t, uint64_t bytes) {
  if (t.size == 0) return 0;
  uint64_t whole = bytes / uint64_t(t.size), rest = bytes % uint64_t(t.size);
  int64_t part = rest ? partial_elements(*t.layout, rest) : 0;
  if (part < 0) return -1;
  return int64_t(whole) * t.layout->elements + part;
}

// ---------------------------------------------------------------- external32

namespace {

static_assert(LDBL_MANT_DIG == 64, "external32 long double conversion assumes the x87 80-bit format");

// Bytes of one basic element in external32 (MPI 4.1 table 14.8: long is 4
// bytes there, wchar 2; wider values are truncated as the table allows).
// Complex numbers are two components, each swapped on its own.
int64_t ext_size(Basic b) {
  switch (b) {
    case Basic::kWChar: return 2;
    case Basic::kLong: case Basic::kULong: return 4;
    case Basic::kAint: case Basic::kOffset: case Basic::kCount: return 8;
    case Basic::kLongDouble: return 16;
    case Basic::kLongDoubleComplex: return 32;
    default: return int64_t(basic_size(b));
  }
}
bool is_complex(Basic b) {
  return b == Basic::kFloatComplex || b == Basic::kDoubleComplex || b == Basic::kLongDoubleComplex;
}
bool is_signed_integer(Basic b) {
  switch (b) {
    case Basic::kChar: case Basic::kSChar: case Basic::kShort: case Basic::kInt: case Basic::kLong:
    case Basic::kLongLong: case Basic::kInt8: case Basic::kInt16: case Basic::kInt32: case Basic::kInt64:
    case Basic::kAint: case Basic::kOffset: case Basic::kCount: case Basic::kWChar:
      return true;
    default:
      return false;
  }
}
bool is_long_double(Basic b) { return b == Basic::kLongDouble || b == Basic::kLongDoubleComplex; }

void store_be(uint8_t* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = uint8_t(v);
    v >>= 8;
  }
}
uint64_t load_be(const uint8_t* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | in[i];
  return v;
}

// x87 80-bit extended (in a 16-byte slot) <-> IEEE binary128, big-endian.
// Same sign and biased exponent; the 63 fraction bits (the explicit integer
// bit dropped) become the top of binary128's 112.
void ld_to_quad(const uint8_t* in, uint8_t* out) {
  uint64_t mant;
  uint16_t se;
  std::memcpy(&mant, in, 8);
  std::memcpy(&se, in + 8, 2);
  uint64_t frac = mant & 0x7fffffffffffffffull;
  uint64_t hi = (uint64_t(se) << 48) | (frac >> 15);
  uint64_t lo = (frac & 0x7fff) << 49;
  store_be(out, hi, 8);
  store_be(out + 8, lo, 8);
}
void quad_to_ld(const uint8_t* in, uint8_t* out) {
  uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
  uint16_t se = uint16_t(hi >> 48);
  uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
  uint64_t mant = frac | ((se & 0x7fff) != 0 ? 0x8000000000000000ull : 0);
  std::memset(out, 0, 16);
  std::memcpy(out, &mant, 8);
  std::memcpy(out + 8, &se, 2);
}

// n basic elements of kind b between native memory and external32.
void to_ext(Basic b, const uint8_t* in, uint8_t* out, int64_t n) {
  int64_t ns = int64_t(basic_size(b)), es = ext_size(b);
  int parts = is_complex(b) ? 2 : 1;
  int64_t nc = ns / parts, ec = es / parts;
  for (int64_t i = 0; i < n * parts; ++i) {
    const uint8_t* src = in + i * nc;
    uint8_t* dst = out + i * ec;
    if (is_long_double(b)) {
      ld_to_quad(src, dst);
    } else if (nc == ec) {
      for (int64_t k = 0; k < ec; ++k) dst[k] = src[ec - 1 - k];
    } else {  // a different width: keep the low bytes (sign-extended when widening)
      uint64_t v = 0;
      std::memcpy(&v, src, size_t(nc));
      if (is_signed_integer(b) && nc < 8 && (v >> (8 * nc - 1)) & 1) v |= ~uint64_t(0) << (8 * nc);
      store_be(dst, v, int(ec));
    }
  }
}
void from_ext(Basic b, const uint8_t* in, uint8_t* out, int64_t n) {
  int64_t ns = int64_t(basic_size(b)), es = ext_size(b);
  int parts = is_complex(b) ? 2 : 1;
  int64_t nc = ns / parts, ec = es / parts;
  for (int64_t i = 0; i < n * parts; ++i) {
    const uint8_t* src = in + i * ec;
    uint8_t* dst = out + i * nc;
    if (is_long_double(b)) {
      quad_to_ld(src, dst);
    } else if (nc == ec) {
      for (int64_t k = 0; k < ec; ++k) dst[k] = src[ec - 1 - k];
    } else {
      uint64_t v = load_be(src, int(ec));
      if (is_signed_integer(b) && ec < 8 && (v >> (8 * ec - 1)) & 1) v |= ~uint64_t(0) << (8 * ec);
      std::memcpy(dst, &v, size_t(nc));
    }
  }
}

int64_t layout_ext_size(const Layout& l) {
  int64_t n = 0;
  for (const Item& it : l.items) {
    int64_t per = it.sub ? layout_ext_size(*it.sub)
                         : it.size / int64_t(basic_size(it.basic)) * ext_size(it.basic);
    n += it.count * per;
  }
  return n;
}

// Every leaf of one copy of l at base, in typemap order: f(address, basic, elements).
template <class F>
void each_leaf(const Layout& l, uint8_t* base, F& f) {
  for (const Item& it : l.items) {
    uint8_t* p = base + it.disp;
    for (int64_t i = 0; i < it.count; ++i, p += it.stride) {
      if (it.sub) each_leaf(*it.sub, p, f);
      else f(p, it.basic, it.size / int64_t(basic_size(it.basic)));
    }
  }
}

}  // namespace

int64_t external32_size(const Datatype& t) { return t.size == 0 ? 0 : layout_ext_size(*t.layout); }

void pack_external32(const Datatype& t, const void* buf, int64_t count, uint8_t* out) {
  if (t.size == 0) return;
  auto f = [&out](uint8_t* p, Basic b, int64_t n) {
    to_ext(b, p, out, n);
    out += n * ext_size(b);
  };
  uint8_t* base = static_cast<uint8_t*>(const_cast<void*>(buf));
  for (int64_t e = 0; e < count; ++e) each_leaf(*t.layout, base + e * t.extent, f);
}

void unpack_external32(const Datatype& t, const uint8_t* in, void* buf, int64_t count) {
  if (t.size == 0) return;
  auto f = [&in](uint8_t* p, Basic b, int64_t n) {
    from_ext(b, in, p, n);
    in += n * ext_size(b);
  };
  uint8_t* base = static_cast<uint8_t*>(buf);
  for (int64_t e = 0; e < count; ++e) each_leaf(*t.layout, base + e * t.extent, f);
}

}  // namespace sonde::engine
