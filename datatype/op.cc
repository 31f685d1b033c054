// Predefined reduction kernels.
//
// Each kernel is a plain loop over typed pointers, instantiated per C type,
// so the compiler vectorizes it. Signed integers are combined in their
// unsigned counterparts: MPI sums wrap like the hardware does, and C++
// signed overflow would be undefined behaviour (and trip -fsanitize=undefined).
// Pair elements (MAXLOC/MINLOC) are read with memcpy because packed pairs
// are not aligned.

// -O2 (Bazel's opt mode) only vectorizes loops whose trip count is a known
// multiple of the vector width; reductions run on arbitrary counts.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include "datatype/op.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/handles.h"

namespace sonde::engine {
namespace {

// Op indexes of mpi.h.
enum OpIndex : int {
  kMax = 1,
  kMin,
  kSum,
  kProd,
  kLand,
  kBand,
  kLor,
  kBor,
  kLxor,
  kBxor,
  kMaxloc,
  kMinloc,
  kReplace,
  kNoOp,
  kPredefinedOps = kNoOp,
};

// Type classes of MPI 4.1 section 6.9.2; each predefined op accepts a set.
enum Class : unsigned {
  kCInteger = 1u << 0,   // C integers, plus MPI_CHAR (as MPICH also allows)
  kMultiLang = 1u << 1,  // MPI_AINT, MPI_OFFSET, MPI_COUNT
  kFloating = 1u << 2,
  kLogical = 1u << 3,  // MPI_C_BOOL, MPI_CXX_BOOL
  kComplex = 1u << 4,
  kByteClass = 1u << 5,
  kPair = 1u << 6,  // MAXLOC/MINLOC pair types
};

unsigned class_of(Basic b) {
  switch (b) {
    case Basic::kChar:
    case Basic::kSChar:
    case Basic::kUChar:
    case Basic::kShort:
    case Basic::kUShort:
    case Basic::kInt:
    case Basic::kUInt:
    case Basic::kLong:
    case Basic::kULong:
    case Basic::kLongLong:
    case Basic::kULongLong:
    case Basic::kInt8:
    case Basic::kInt16:
    case Basic::kInt32:
    case Basic::kInt64:
    case Basic::kUInt8:
    case Basic::kUInt16:
    case Basic::kUInt32:
    case Basic::kUInt64: return kCInteger;
    case Basic::kAint:
    case Basic::kOffset:
    case Basic::kCount: return kMultiLang;
    case Basic::kFloat:
    case Basic::kDouble:
    case Basic::kLongDouble: return kFloating;
    case Basic::kBool:
    case Basic::kCxxBool: return kLogical;
    case Basic::kFloatComplex:
    case Basic::kDoubleComplex:
    case Basic::kLongDoubleComplex: return kComplex;
    case Basic::kByte: return kByteClass;
    case Basic::kFloatInt:
    case Basic::kDoubleInt:
    case Basic::kLongInt:
    case Basic::k2Int:
    case Basic::kShortInt:
    case Basic::kLongDoubleInt: return kPair;
    case Basic::kNone:
    case Basic::kWChar:
    case Basic::kPacked: return 0;
  }
  return 0;
}

unsigned classes_accepted(int op) {
  switch (op) {
    case kMax:
    case kMin: return kCInteger | kMultiLang | kFloating;
    case kSum:
    case kProd: return kCInteger | kMultiLang | kFloating | kComplex;
    // MPI 4.1 lists C integers and logicals; MPICH also accepts the
    // multi-language integers (MPI_AINT, MPI_OFFSET, MPI_COUNT), and
    // programs written against it (its own test suite) rely on that.
    case kLand:
    case kLor:
    case kLxor: return kCInteger | kMultiLang | kLogical;
    case kBand:
    case kBor:
    case kBxor: return kCInteger | kMultiLang | kByteClass;
    case kMaxloc:
    case kMinloc: return kPair;
    default: return 0;
  }
}

// ---- the op table --------------------------------------------------------

// The predefined ops by index, set when the table is built (null before):
// find_op answers mpi.h's constants from here without a table lookup.
constinit const Op* g_predefined_ops[kPredefinedOps + 1] = {};

// Predefined ops occupy slots 1..14 with generation 0, so their handles are
// exactly mpi.h's constants; MPI_Op_create allocates further slots.
HandleTable<Op, SONDE_KIND_OP>& op_table() {
  static HandleTable<Op, SONDE_KIND_OP>* table = [] {
    auto* t = new HandleTable<Op, SONDE_KIND_OP>(kPredefinedOps);
    for (int i = 1; i <= kPredefinedOps; ++i) {
      Op& op = t->predefined(static_cast<uint32_t>(i));
      op.handle = t->predefined_handle(static_cast<uint32_t>(i));
      op.commutative = true;
      op.predefined = i;
      g_predefined_ops[i] = &op;
    }
    return t;
  }();
  return *table;
}

// ---- kernels ---------------------------------------------------------------

// The type integer arithmetic is done in: unsigned, and at least as wide as
// unsigned int so that narrow operands do not promote to (overflowing) int.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// out[i] = f(in[i], src[i]): in place (src == out) or into a third buffer
// that overlaps neither input. Two loops, so that each vectorizes without
// a run-time overlap check.
template <class T, class F>
inline void each(const void* in, const void* src, void* out, int64_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  if (src == out) {
    T* __restrict b = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
    return;
  }
  const T* __restrict b = static_cast<const T*>(src);
  T* __restrict o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

template <class T>
bool integer_kernel(int op, const void* in, const void* src, void* out, int64_t n) {
  using W = Wide<T>;
  switch (op) {
    case kMax: each<T>(in, src, out, n, [](T a, T b) { return a > b ? a : b; }); return true;
    case kMin: each<T>(in, src, out, n, [](T a, T b) { return a < b ? a : b; }); return true;
    case kSum:
      each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>(static_cast<W>(a) + static_cast<W>(b)); });
      return true;
    case kProd:
      each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>(static_cast<W>(a) * static_cast<W>(b)); });
      return true;
    case kLand: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>((a != 0) & (b != 0)); }); return true;
    case kLor: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>((a != 0) | (b != 0)); }); return true;
    case kLxor: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>((a != 0) ^ (b != 0)); }); return true;
    case kBand: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>(a & b); }); return true;
    case kBor: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>(a | b); }); return true;
    case kBxor: each<T>(in, src, out, n, [](T a, T b) { return static_cast<T>(a ^ b); }); return true;
    default: return false;
  }
}

template <class T>
bool floating_kernel(int op, const void* in, const void* src, void* out, int64_t n) {
  switch (op) {
    case kMax: each<T>(in, src, out, n, [](T a, T b) { return a > b ? a : b; }); return true;
    case kMin: each<T>(in, src, out, n, [](T a, T b) { return a < b ? a : b; }); return true;
    case kSum: each<T>(in, src, out, n, [](T a, T b) { return a + b; }); return true;
    case kProd: each<T>(in, src, out, n, [](T a, T b) { return a * b; }); return true;
    default: return false;
  }
}

// C's _Complex layout: real part, then imaginary part. The textbook product
// (as MPICH and Open MPI compute it), not C's Annex G with its inf/NaN
// recovery, which would cost a library call per element.
template <class T>
struct Cplx {
  T re, im;
};

template <class T>
bool complex_kernel(int op, const void* in, const void* src, void* out, int64_t n) {
  using C = Cplx<T>;
  switch (op) {
    case kSum: each<C>(in, src, out, n, [](C a, C b) { return C{a.re + b.re, a.im + b.im}; }); return true;
    case kProd:
      each<C>(in, src, out, n, [](C a, C b) { return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; });
      return true;
    default: return false;
  }
}

// C_BOOL / CXX_BOOL: one byte each; any non-zero byte counts as true.
bool logical_kernel(int op, const void* in, const void* src, void* out, int64_t n) {
  switch (op) {
    case kLand:
      each<uint8_t>(in, src, out, n, [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) & (b != 0); });
      return true;
    case kLor:
      each<uint8_t>(in, src, out, n, [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) | (b != 0); });
      return true;
    case kLxor:
      each<uint8_t>(in, src, out, n, [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) ^ (b != 0); });
      return true;
    default: return false;
  }
}

// MAXLOC / MINLOC over packed (value, int) pairs. Ties keep the lower
// index, as MPI 4.1 section 6.9.4 defines, which makes both commutative.
template <class V>
bool pair_kernel(int op, const void* in, const void* src, void* out, int64_t n) {
  if (op != kMaxloc && op != kMinloc) return false;
  constexpr size_t kStride = sizeof(V) + sizeof(int);
  if (src != out) std::memcpy(out, src, size_t(n) * kStride);
  const uint8_t* a = static_cast<const uint8_t*>(in);
  uint8_t* b = static_cast<uint8_t*>(out);
  const bool max = op == kMaxloc;
  for (int64_t i = 0; i < n; ++i, a += kStride, b += kStride) {
    V av, bv;
    int ai, bi;
    std::memcpy(&av, a, sizeof(V));
    std::memcpy(&ai, a + sizeof(V), sizeof(int));
    std::memcpy(&bv, b, sizeof(V));
    std::memcpy(&bi, b + sizeof(V), sizeof(int));
    if (av == bv) {
      if (ai < bi) std::memcpy(b + sizeof(V), &ai, sizeof(int));
    } else if (max ? av > bv : av < bv) {
      std::memcpy(b, &av, sizeof(V));
      std::memcpy(b + sizeof(V), &ai, sizeof(int));
    }
  }
  return true;
}

// Applies predefined op `op` (OpIndex) to n packed basics, out = in op src
// (src == out: in place); false if the op has no kernel for that basic.
bool apply_kernel(int op, Basic basic, const void* in, const void* src, void* out, int64_t n) {
  switch (basic) {
    case Basic::kChar: return integer_kernel<char>(op, in, src, out, n);
    case Basic::kSChar: return integer_kernel<signed char>(op, in, src, out, n);
    case Basic::kUChar: return integer_kernel<unsigned char>(op, in, src, out, n);
    case Basic::kShort: return integer_kernel<short>(op, in, src, out, n);
    case Basic::kUShort: return integer_kernel<unsigned short>(op, in, src, out, n);
    case Basic::kInt: return integer_kernel<int>(op, in, src, out, n);
    case Basic::kUInt: return integer_kernel<unsigned>(op, in, src, out, n);
    case Basic::kLong: return integer_kernel<long>(op, in, src, out, n);
    case Basic::kULong: return integer_kernel<unsigned long>(op, in, src, out, n);
    case Basic::kLongLong: return integer_kernel<long long>(op, in, src, out, n);
    case Basic::kULongLong: return integer_kernel<unsigned long long>(op, in, src, out, n);
    case Basic::kInt8: return integer_kernel<int8_t>(op, in, src, out, n);
    case Basic::kInt16: return integer_kernel<int16_t>(op, in, src, out, n);
    case Basic::kInt32: return integer_kernel<int32_t>(op, in, src, out, n);
    case Basic::kInt64: return integer_kernel<int64_t>(op, in, src, out, n);
    case Basic::kUInt8: return integer_kernel<uint8_t>(op, in, src, out, n);
    case Basic::kUInt16: return integer_kernel<uint16_t>(op, in, src, out, n);
    case Basic::kUInt32: return integer_kernel<uint32_t>(op, in, src, out, n);
    case Basic::kUInt64: return integer_kernel<uint64_t>(op, in, src, out, n);
    case Basic::kAint: return integer_kernel<MPI_Aint>(op, in, src, out, n);
    case Basic::kOffset: return integer_kernel<MPI_Offset>(op, in, src, out, n);
    case Basic::kCount: return integer_kernel<MPI_Count>(op, in, src, out, n);
    case Basic::kByte: return integer_kernel<uint8_t>(op, in, src, out, n);
    case Basic::kFloat: return floating_kernel<float>(op, in, src, out, n);
    case Basic::kDouble: return floating_kernel<double>(op, in, src, out, n);
    case Basic::kLongDouble: return floating_kernel<long double>(op, in, src, out, n);
    case Basic::kFloatComplex: return complex_kernel<float>(op, in, src, out, n);
    case Basic::kDoubleComplex: return complex_kernel<double>(op, in, src, out, n);
    case Basic::kLongDoubleComplex: return complex_kernel<long double>(op, in, src, out, n);
    case Basic::kBool:
    case Basic::kCxxBool: return logical_kernel(op, in, src, out, n);
    case Basic::kFloatInt: return pair_kernel<float>(op, in, src, out, n);
    case Basic::kDoubleInt: return pair_kernel<double>(op, in, src, out, n);
    case Basic::kLongInt: return pair_kernel<long>(op, in, src, out, n);
    case Basic::k2Int: return pair_kernel<int>(op, in, src, out, n);
    case Basic::kShortInt: return pair_kernel<short>(op, in, src, out, n);
    case Basic::kLongDoubleInt: return pair_kernel<long double>(op, in, src, out, n);
    case Basic::kNone:
    case Basic::kWChar:
    case Basic::kPacked: return false;
  }
  return false;
}

// Whether predefined op index `op` is defined on `basic`.
bool defined_on(int op, Basic basic) {
  if (op == kReplace || op == kNoOp) return true;
  return (classes_accepted(op) & class_of(basic)) != 0;
}

// Scratch for reducing non-contiguous data piecewise: two buffers of this
// many bytes at most, whatever the message size.
constexpr int64_t kPieceBytes = 64 * 1024;

}  // namespace

size_t packed_basic_size(Basic b) {
  switch (b) {
    case Basic::kFloatInt: return sizeof(float) + sizeof(int);
    case Basic::kDoubleInt: return sizeof(double) + sizeof(int);
    case Basic::kLongInt: return sizeof(long) + sizeof(int);
    case Basic::k2Int: return 2 * sizeof(int);
    case Basic::kShortInt: return sizeof(short) + sizeof(int);
    case Basic::kLongDoubleInt: return sizeof(long double) + sizeof(int);
    case Basic::kPacked: return 0;
    default: return basic_size(b);
  }
}

int op_create(MPI_User_function* fn, bool commutative, MPI_Op* out) {
  Op* op = nullptr;
  const int h = op_table().allocate(&op);
  if (!h) return MPI_ERR_INTERN;
  *op = Op{};
  op->handle = h;
  op->commutative = commutative;
  op->user = fn;
  *out = h;
  return MPI_SUCCESS;
}

int op_free(MPI_Op* h) {
  Op* op = op_table().lookup(*h);
  if (!op || op->predefined != 0 || op->freed) return MPI_ERR_OP;
  if (op->holds > 0) op->freed = true;
  else op_table().release(*h);
  *h = MPI_OP_NULL;
  return MPI_SUCCESS;
}

void op_hold(MPI_Op h) {
  Op* op = op_table().lookup(h);
  if (op && op->predefined == 0) ++op->holds;
}

void op_release(MPI_Op h) {
  Op* op = op_table().lookup(h);
  if (!op || op->predefined != 0) return;
  if (--op->holds == 0 && op->freed) op_table().release(h);
}

const Op* find_op(MPI_Op h) {
  // A predefined op's handle is its index with kind OP and generation 0.
  const uint32_t i = handle_index(h);
  if (i <= uint32_t(kPredefinedOps) && h == make_handle(SONDE_KIND_OP, 0, i) && g_predefined_ops[i])
    return g_predefined_ops[i];
  return op_table().lookup(h);
}

bool op_valid(MPI_Op h) { return find_op(h) != nullptr; }

bool op_is_commutative(MPI_Op h) {
  const Op* op = find_op(h);
  return op != nullptr && op->commutative;
}

namespace {
int check_found(const Op* op, const Datatype& type) {
  if (!op) return MPI_ERR_OP;
  if (op->predefined == 0) return MPI_SUCCESS;
  if (!defined_on(op->predefined, type.basic)) return MPI_ERR_TYPE;
  // A layout whose data is not a whole number of packed basics (possible
  // only for a malformed type) cannot be reduced element-wise.
  if (op->predefined != kReplace && op->predefined != kNoOp) {
    const uint64_t unit = packed_basic_size(type.basic), size = static_cast<uint64_t>(type.size);
    // Units are powers of two but for a few: a mask then, not a division
    // (this check runs on every reduction call).
    const uint64_t rest = (unit & (unit - 1)) == 0 ? size & (unit - 1) : size % unit;
    if (unit == 0 || type.size < 0 || rest != 0) return MPI_ERR_TYPE;
  }
  return MPI_SUCCESS;
}
}  // namespace

int op_check(MPI_Op h, const Datatype& type) { return check_found(find_op(h), type); }

int reduce_packed(const void* in, void* inout, int64_t n, Basic basic, MPI_Op h) {
  const Op* op = find_op(h);
  if (!op || op->predefined == 0) return MPI_ERR_OP;
  if (!defined_on(op->predefined, basic)) return MPI_ERR_TYPE;
  if (n <= 0 || op->predefined == kNoOp) return MPI_SUCCESS;
  if (op->predefined == kReplace) {
    std::memmove(inout, in, static_cast<size_t>(n) * packed_basic_size(basic));
    return MPI_SUCCESS;
  }
  return apply_kernel(op->predefined, basic, in, inout, inout, n) ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int reduce_local(const void* in, void* inout, int64_t count, const Datatype& type, MPI_Op h) {
  const Op* found = find_op(h);
  int rc = check_found(found, type);
  if (rc != MPI_SUCCESS) return rc;
  if (count <= 0 || type.size == 0) return MPI_SUCCESS;
  const Op& op = *found;

  if (op.predefined == 0) {
    // MPI_User_function takes an int count: feed it in pieces.
    const int64_t step = INT_MAX;
    MPI_Datatype dt = type.handle;
    for (int64_t done = 0; done < count; done += step) {
      int len = static_cast<int>(std::min(step, count - done));
      op.user(const_cast<uint8_t*>(static_cast<const uint8_t*>(in) + done * type.extent),
              static_cast<uint8_t*>(inout) + done * type.extent, &len, &dt);
    }
    return MPI_SUCCESS;
  }
  if (op.predefined == kNoOp) return MPI_SUCCESS;

  const int64_t total = count * type.size;
  if (type.contiguous) {
    const uint8_t* a = contiguous_start(type, in);
    uint8_t* b = contiguous_start(type, inout);
    if (op.predefined == kReplace) {
      std::memmove(b, a, static_cast<size_t>(total));
      return MPI_SUCCESS;
    }
    const int64_t unit = static_cast<int64_t>(packed_basic_size(type.basic));
    return apply_kernel(op.predefined, type.basic, a, b, b, total / unit) ? MPI_SUCCESS : MPI_ERR_TYPE;
  }

  // Gaps: reduce piecewise in packed form. Pieces hold whole basics, and the
  // scratch is 16-byte aligned (operator new), so typed access stays aligned.
  const int64_t unit = op.predefined == kReplace ? 1 : static_cast<int64_t>(packed_basic_size(type.basic));
  const int64_t piece = std::max<int64_t>(unit, kPieceBytes / unit * unit);
  std::vector<uint8_t> a(static_cast<size_t>(std::min(piece, total)));
  std::vector<uint8_t> b(op.predefined == kReplace ? 0 : a.size());
  for (int64_t off = 0; off < total; off += piece) {
    const int64_t n = std::min(piece, total - off);
    pack(type, in, count, static_cast<uint64_t>(off), a.data(), static_cast<uint64_t>(n));
    if (op.predefined == kReplace) {
      unpack(type, inout, count, static_cast<uint64_t>(off), a.data(), static_cast<uint64_t>(n));
      continue;
    }
    pack(type, inout, count, static_cast<uint64_t>(off), b.data(), static_cast<uint64_t>(n));
    if (!apply_kernel(op.predefined, type.basic, a.data(), b.data(), b.data(), n / unit)) return MPI_ERR_TYPE;
    unpack(type, inout, count, static_cast<uint64_t>(off), b.data(), static_cast<uint64_t>(n));
  }
  return MPI_SUCCESS;
}

int reduce_local_into(const void* in, const void* src, void* out, int64_t count, const Datatype& type, MPI_Op h) {
  const Op* found = find_op(h);
  if (const int rc = check_found(found, type); rc != MPI_SUCCESS) return rc;
  if (!type.contiguous) return MPI_ERR_TYPE;
  if (count <= 0 || type.size == 0) return MPI_SUCCESS;
  const int64_t total = count * type.size;
  const int op = found->predefined;
  if (op != 0 && op != kNoOp && op != kReplace) {
    const int64_t unit = static_cast<int64_t>(packed_basic_size(type.basic));
    return apply_kernel(op, type.basic, contiguous_start(type, in), contiguous_start(type, src),
                        contiguous_start(type, out), total / unit)
               ? MPI_SUCCESS
               : MPI_ERR_TYPE;
  }
  std::memcpy(contiguous_start(type, out), contiguous_start(type, src), static_cast<size_t>(total));
  return reduce_local(in, out, count, type, h);
}

}  // namespace sonde::engine
