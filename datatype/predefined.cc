// The predefined datatypes of mpi.h: their table, basic element sizes and
// alignments, and their layouts.
#include "datatype/datatype.h"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "datatype/layout_builder.h"
#include "include/mpi.h"

namespace sonde::engine {

using detail::LayoutBuilder;

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
    case Basic::kChar:
    case Basic::kSChar:
    case Basic::kUChar:
    case Basic::kByte:
    case Basic::kInt8:
    case Basic::kUInt8:
    case Basic::kPacked: return 1;
    case Basic::kWChar: return sizeof(wchar_t);
    case Basic::kShort:
    case Basic::kUShort:
    case Basic::kInt16:
    case Basic::kUInt16: return 2;
    case Basic::kInt:
    case Basic::kUInt:
    case Basic::kInt32:
    case Basic::kUInt32: return 4;
    case Basic::kLong:
    case Basic::kULong: return sizeof(long);
    case Basic::kLongLong:
    case Basic::kULongLong:
    case Basic::kInt64:
    case Basic::kUInt64: return 8;
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
    {61, Basic::kFloat, "MPI_2REAL"},               // two REALs: data 8 bytes
    {62, Basic::kDouble, "MPI_2DOUBLE_PRECISION"},  // two DOUBLE PRECISIONs
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

}  // namespace sonde::engine
