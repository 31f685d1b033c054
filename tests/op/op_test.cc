#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "datatype/op.h"

using namespace sonde::engine;

namespace {

// The real predefined datatype table, indexed as in mpi.h.
struct Types {
  std::vector<Datatype> objects = std::vector<Datatype>(SONDE_PREDEFINED_DATATYPES);
  Types() {
    std::vector<Datatype*> slots;
    for (Datatype& d : objects) slots.push_back(&d);
    init_predefined_datatypes(slots);
  }
  const Datatype& operator[](MPI_Datatype h) const { return objects[h & 0xFFFFF]; }
};
const Types& types() {
  static Types t;
  return t;
}

const MPI_Op kAllOps[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                          MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};

// What each op does to one (in, inout) pair, computed the obvious way.
template <class T>
T reference(MPI_Op op, T a, T b) {
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_SUM) return T(a + b);
  if (op == MPI_PROD) return T(a * b);
  if (op == MPI_REPLACE) return a;
  if (op == MPI_NO_OP) return b;
  if constexpr (std::is_integral_v<T>) {
    if (op == MPI_LAND) return T(a && b);
    if (op == MPI_LOR) return T(a || b);
    if (op == MPI_LXOR) return T(!a != !b);
    if (op == MPI_BAND) return T(a & b);
    if (op == MPI_BOR) return T(a | b);
    if (op == MPI_BXOR) return T(a ^ b);
  }
  return b;
}

// Runs `op` over n elements of predefined type `dt` (C type T) and compares
// with the reference; odd n so vector loops have a remainder.
template <class T>
void check_op(MPI_Datatype dt, MPI_Op op, int n = 1001) {
  std::vector<T> in(n), inout(n), want(n);
  for (int i = 0; i < n; ++i) {
    in[i] = T((i * 7 + 3) % 11);
    inout[i] = T((i * 5 + 1) % 13);
    if constexpr (std::is_floating_point_v<T>) in[i] /= T(4);
    want[i] = reference(op, in[i], inout[i]);
  }
  // Into a third buffer: the same values, both inputs untouched.
  const std::vector<T> src = inout, in_before = in;
  std::vector<T> out(n, T(99));
  REQUIRE(reduce_local_into(in.data(), src.data(), out.data(), n, types()[dt], op) == MPI_SUCCESS);
  for (int i = 0; i < n; ++i) REQUIRE(out[i] == want[i]);
  REQUIRE(src == inout);
  REQUIRE(in == in_before);
  REQUIRE(reduce_local(in.data(), inout.data(), n, types()[dt], op) == MPI_SUCCESS);
  for (int i = 0; i < n; ++i) REQUIRE(inout[i] == want[i]);
}

template <class T>
void check_ops(MPI_Datatype dt, std::initializer_list<MPI_Op> ops) {
  for (MPI_Op op : ops) {
    CAPTURE(op);
    check_op<T>(dt, op);
  }
}

constexpr auto kIntegerOps = {MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,    MPI_LOR,
                              MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
constexpr auto kFloatOps = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_REPLACE, MPI_NO_OP};

template <class V>
struct Pair {
  V v;
  int i;
};

}  // namespace

TEST_CASE("predefined op handles are valid and commutative; others are not") {
  for (MPI_Op op : kAllOps) {
    CHECK(op_valid(op));
    CHECK(op_is_commutative(op));
    REQUIRE(find_op(op) != nullptr);
    CHECK(find_op(op)->handle == op);
  }
  for (MPI_Op bad : {MPI_OP_NULL, int(SONDE_HANDLE(SONDE_KIND_OP, 15)), int(SONDE_HANDLE(SONDE_KIND_OP, 1)) | (3 << 20),
                     int(MPI_INT), -1, 0, 12345}) {
    CAPTURE(bad);
    CHECK_FALSE(op_valid(bad));
    CHECK_FALSE(op_is_commutative(bad));
    int x = 1, y = 2;
    CHECK(reduce_local(&x, &y, 1, types()[MPI_INT], bad) == MPI_ERR_OP);
    CHECK(op_check(bad, types()[MPI_INT]) == MPI_ERR_OP);
  }
}

TEST_CASE("every integer op on every C integer type") {
  check_ops<char>(MPI_CHAR, kIntegerOps);
  check_ops<signed char>(MPI_SIGNED_CHAR, kIntegerOps);
  check_ops<unsigned char>(MPI_UNSIGNED_CHAR, kIntegerOps);
  check_ops<short>(MPI_SHORT, kIntegerOps);
  check_ops<unsigned short>(MPI_UNSIGNED_SHORT, kIntegerOps);
  check_ops<int>(MPI_INT, kIntegerOps);
  check_ops<unsigned>(MPI_UNSIGNED, kIntegerOps);
  check_ops<long>(MPI_LONG, kIntegerOps);
  check_ops<unsigned long>(MPI_UNSIGNED_LONG, kIntegerOps);
  check_ops<long long>(MPI_LONG_LONG, kIntegerOps);
  check_ops<unsigned long long>(MPI_UNSIGNED_LONG_LONG, kIntegerOps);
  check_ops<int8_t>(MPI_INT8_T, kIntegerOps);
  check_ops<int16_t>(MPI_INT16_T, kIntegerOps);
  check_ops<int32_t>(MPI_INT32_T, kIntegerOps);
  check_ops<int64_t>(MPI_INT64_T, kIntegerOps);
  check_ops<uint8_t>(MPI_UINT8_T, kIntegerOps);
  check_ops<uint16_t>(MPI_UINT16_T, kIntegerOps);
  check_ops<uint32_t>(MPI_UINT32_T, kIntegerOps);
  check_ops<uint64_t>(MPI_UINT64_T, kIntegerOps);
}

// MPI 4.1 leaves the logical ops out for these types; MPICH accepts them
// and its test suite (coll/allred) uses them, so Sonde does too.
TEST_CASE("multi-language types take arithmetic, bitwise and (as in MPICH) logical ops, not MAXLOC/MINLOC") {
  static constexpr auto ops = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD, MPI_BAND,
                               MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR,  MPI_LXOR};
  check_ops<MPI_Aint>(MPI_AINT, ops);
  check_ops<MPI_Offset>(MPI_OFFSET, ops);
  check_ops<MPI_Count>(MPI_COUNT, ops);
  for (MPI_Op op : {MPI_MAXLOC, MPI_MINLOC}) {
    MPI_Aint a = 1, b = 1;
    CHECK(reduce_local(&a, &b, 1, types()[MPI_AINT], op) == MPI_ERR_TYPE);
  }
}

TEST_CASE("floating types take MAX, MIN, SUM, PROD") {
  check_ops<float>(MPI_FLOAT, kFloatOps);
  check_ops<double>(MPI_DOUBLE, kFloatOps);
  check_ops<long double>(MPI_LONG_DOUBLE, kFloatOps);
  for (MPI_Op op : {MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC}) {
    CAPTURE(op);
    double a = 1, b = 2;
    CHECK(reduce_local(&a, &b, 1, types()[MPI_DOUBLE], op) == MPI_ERR_TYPE);
    CHECK(b == 2);
  }
}

TEST_CASE("signed integer sums and products wrap instead of trapping") {
  int a[3] = {std::numeric_limits<int>::max(), std::numeric_limits<int>::min(), 65536};
  int b[3] = {1, -1, 65536};
  REQUIRE(reduce_local(a, b, 3, types()[MPI_INT], MPI_SUM) == MPI_SUCCESS);
  CHECK(b[0] == std::numeric_limits<int>::min());
  CHECK(b[1] == std::numeric_limits<int>::max());
  CHECK(b[2] == 131072);
  unsigned short c = 65535, d = 65535;
  REQUIRE(reduce_local(&c, &d, 1, types()[MPI_UNSIGNED_SHORT], MPI_PROD) == MPI_SUCCESS);
  CHECK(d == 1);
  int e = 65536, f = 65536;
  REQUIRE(reduce_local(&e, &f, 1, types()[MPI_INT], MPI_PROD) == MPI_SUCCESS);
  CHECK(f == 0);
}

TEST_CASE("complex types take SUM and PROD only") {
  std::vector<std::complex<double>> in, inout, want;
  for (int i = 0; i < 37; ++i) {
    in.emplace_back(i * 0.5, 1 - i);
    inout.emplace_back(2 - i * 0.25, i);
  }
  want = inout;
  for (size_t i = 0; i < in.size(); ++i) want[i] = in[i] * inout[i];
  REQUIRE(reduce_local(in.data(), inout.data(), 37, types()[MPI_C_DOUBLE_COMPLEX], MPI_PROD) == MPI_SUCCESS);
  for (size_t i = 0; i < in.size(); ++i) CHECK(inout[i] == want[i]);

  std::complex<float> fa(1, 2), fb(3, 4);
  REQUIRE(reduce_local(&fa, &fb, 1, types()[MPI_C_FLOAT_COMPLEX], MPI_SUM) == MPI_SUCCESS);
  CHECK(fb == std::complex<float>(4, 6));
  std::complex<long double> la(1, 2), lb(3, 4);
  REQUIRE(reduce_local(&la, &lb, 1, types()[MPI_C_LONG_DOUBLE_COMPLEX], MPI_PROD) == MPI_SUCCESS);
  CHECK(lb == std::complex<long double>(-5, 10));

  for (MPI_Op op : {MPI_MAX, MPI_MIN, MPI_LAND, MPI_BAND, MPI_MAXLOC}) {
    CAPTURE(op);
    CHECK(reduce_local(&fa, &fb, 1, types()[MPI_C_FLOAT_COMPLEX], op) == MPI_ERR_TYPE);
  }
}

TEST_CASE("C_BOOL and CXX_BOOL take the logical ops, treating any non-zero byte as true") {
  for (MPI_Datatype dt : {MPI_C_BOOL, MPI_CXX_BOOL}) {
    uint8_t a[4] = {0, 0, 7, 1}, b[4] = {0, 1, 0, 9};
    uint8_t x[4], y[4];
    std::memcpy(x, a, 4), std::memcpy(y, b, 4);
    REQUIRE(reduce_local(x, y, 4, types()[dt], MPI_LAND) == MPI_SUCCESS);
    CHECK((y[0] == 0 && y[1] == 0 && y[2] == 0 && y[3] == 1));
    std::memcpy(y, b, 4);
    REQUIRE(reduce_local(x, y, 4, types()[dt], MPI_LOR) == MPI_SUCCESS);
    CHECK((y[0] == 0 && y[1] == 1 && y[2] == 1 && y[3] == 1));
    std::memcpy(y, b, 4);
    REQUIRE(reduce_local(x, y, 4, types()[dt], MPI_LXOR) == MPI_SUCCESS);
    CHECK((y[0] == 0 && y[1] == 1 && y[2] == 1 && y[3] == 0));
    for (MPI_Op op : {MPI_MAX, MPI_SUM, MPI_BAND, MPI_BXOR, MPI_MINLOC})
      CHECK(reduce_local(x, y, 4, types()[dt], op) == MPI_ERR_TYPE);
  }
}

TEST_CASE("MPI_BYTE takes the bitwise ops only") {
  check_ops<uint8_t>(MPI_BYTE, {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP});
  uint8_t a = 1, b = 2;
  for (MPI_Op op : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MAXLOC})
    CHECK(reduce_local(&a, &b, 1, types()[MPI_BYTE], op) == MPI_ERR_TYPE);
}

TEST_CASE("types no op is defined on: WCHAR, PACKED (beyond REPLACE and NO_OP)") {
  wchar_t a = 1, b = 2;
  CHECK(reduce_local(&a, &b, 1, types()[MPI_WCHAR], MPI_SUM) == MPI_ERR_TYPE);
  CHECK(reduce_local(&a, &b, 1, types()[MPI_PACKED], MPI_BOR) == MPI_ERR_TYPE);
  CHECK(reduce_local(&a, &b, 1, types()[MPI_WCHAR], MPI_REPLACE) == MPI_SUCCESS);
  CHECK(b == 1);
}

template <class V>
void check_loc(MPI_Datatype dt) {
  CAPTURE(dt);
  const Datatype& t = types()[dt];
  // User layout: C structs, padding included.
  std::vector<Pair<V>> in = {{V(3), 5}, {V(1), 2}, {V(4), 7}, {V(4), 1}, {V(2), 9}, {V(-1), 0}};
  std::vector<Pair<V>> inout = {{V(1), 0}, {V(3), 8}, {V(4), 3}, {V(4), 6}, {V(5), 4}, {V(-1), 2}};
  auto mx = inout, mn = inout;
  REQUIRE(reduce_local(in.data(), mx.data(), int64_t(in.size()), t, MPI_MAXLOC) == MPI_SUCCESS);
  REQUIRE(reduce_local(in.data(), mn.data(), int64_t(in.size()), t, MPI_MINLOC) == MPI_SUCCESS);
  const int max_index[] = {5, 8, 3, 1, 4, 0};
  const V max_value[] = {3, 3, 4, 4, 5, -1};
  const int min_index[] = {0, 2, 3, 1, 9, 0};
  const V min_value[] = {1, 1, 4, 4, 2, -1};
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    CHECK(mx[i].v == max_value[i]);
    CHECK(mx[i].i == max_index[i]);
    CHECK(mn[i].v == min_value[i]);
    CHECK(mn[i].i == min_index[i]);
  }
  for (MPI_Op op : {MPI_MAX, MPI_SUM, MPI_BAND, MPI_LAND})
    CHECK(reduce_local(in.data(), mx.data(), 1, t, op) == MPI_ERR_TYPE);
}

TEST_CASE("MAXLOC and MINLOC on every pair type, ties keeping the lowest index") {
  check_loc<float>(MPI_FLOAT_INT);
  check_loc<double>(MPI_DOUBLE_INT);
  check_loc<long>(MPI_LONG_INT);
  check_loc<int>(MPI_2INT);
  check_loc<short>(MPI_SHORT_INT);
  check_loc<long double>(MPI_LONG_DOUBLE_INT);
  int a = 1, b = 2;
  CHECK(reduce_local(&a, &b, 1, types()[MPI_INT], MPI_MAXLOC) == MPI_ERR_TYPE);
  CHECK(reduce_local(&a, &b, 1, types()[MPI_INT], MPI_MINLOC) == MPI_ERR_TYPE);
}

TEST_CASE("packed pairs carry no padding") {
  // DOUBLE_INT packed: 8-byte value then 4-byte index, 12 bytes a pair.
  uint8_t in[24], inout[24];
  auto put = [](uint8_t* p, double v, int i) { std::memcpy(p, &v, 8), std::memcpy(p + 8, &i, 4); };
  put(in, 2.0, 1), put(in + 12, 1.0, 1);
  put(inout, 2.0, 0), put(inout + 12, 3.0, 5);
  REQUIRE(reduce_packed(in, inout, 2, Basic::kDoubleInt, MPI_MINLOC) == MPI_SUCCESS);
  double v;
  int i;
  std::memcpy(&v, inout, 8), std::memcpy(&i, inout + 8, 4);
  CHECK((v == 2.0 && i == 0));
  std::memcpy(&v, inout + 12, 8), std::memcpy(&i, inout + 20, 4);
  CHECK((v == 1.0 && i == 1));
  CHECK(packed_basic_size(Basic::kShortInt) == 6);
  CHECK(reduce_packed(in, inout, 2, Basic::kInt, MPI_MINLOC) == MPI_ERR_TYPE);
}

TEST_CASE("derived types reduce element-wise over their basics and leave the gaps alone") {
  const Datatype& dbl = types()[MPI_DOUBLE];
  Datatype vec;  // 3 blocks of 2 doubles, stride 3 doubles: one double of gap after each block
  make_vector(vec, 3, 2, 3 * sizeof(double), dbl);
  vec.committed = true;
  REQUIRE_FALSE(vec.contiguous);
  const int count = 4000;                                    // several scratch pieces
  const int64_t per = vec.extent / int64_t(sizeof(double));  // 8 doubles, gaps at 2 and 5
  std::vector<double> in(count * per + 1), inout(count * per + 1);
  for (size_t i = 0; i < in.size(); ++i) in[i] = double(i), inout[i] = -1.0;
  auto want = inout;
  for (int e = 0; e < count; ++e)
    for (int b = 0; b < 3; ++b)
      for (int j = 0; j < 2; ++j) {
        size_t k = size_t(e * per + b * 3 + j);
        want[k] = in[k] + inout[k];
      }
  REQUIRE(reduce_local(in.data(), inout.data(), count, vec, MPI_SUM) == MPI_SUCCESS);
  CHECK(inout == want);

  // MAXLOC through a non-contiguous pair layout (padding inside each element).
  Datatype pairs;
  make_contiguous(pairs, 3, types()[MPI_SHORT_INT]);
  pairs.committed = true;
  std::vector<Pair<short>> a = {{1, 1}, {5, 5}, {2, 2}, {7, 7}, {0, 3}, {0, 9}};
  std::vector<Pair<short>> b = {{2, 0}, {5, 4}, {1, 8}, {6, 6}, {0, 4}, {0, 2}};
  REQUIRE(reduce_local(a.data(), b.data(), 2, pairs, MPI_MAXLOC) == MPI_SUCCESS);
  const short wv[] = {2, 5, 2, 7, 0, 0};
  const int wi[] = {0, 4, 2, 7, 3, 2};
  for (int i = 0; i < 6; ++i) CHECK((b[i].v == wv[i] && b[i].i == wi[i]));

  // REPLACE through gaps.
  std::vector<double> r(in.size(), -2.0);
  REQUIRE(reduce_local(in.data(), r.data(), count, vec, MPI_REPLACE) == MPI_SUCCESS);
  for (int e = 0; e < count; ++e) {
    CHECK(r[size_t(e * per + 2)] == -2.0);
    CHECK(r[size_t(e * per + 3)] == in[size_t(e * per + 3)]);
  }
}

TEST_CASE("a datatype mixing basics takes only REPLACE and NO_OP") {
  Datatype mixed;  // {int at 0, double at 8}, extent 16
  const int64_t lengths[] = {1, 1}, disps[] = {0, 8};
  const Datatype* fields[] = {&types()[MPI_INT], &types()[MPI_DOUBLE]};
  make_struct(mixed, 2, lengths, disps, fields);
  REQUIRE(mixed.basic == Basic::kNone);
  mixed.committed = true;
  uint8_t a[16] = {1}, b[16] = {2};
  CHECK(reduce_local(a, b, 1, mixed, MPI_SUM) == MPI_ERR_TYPE);
  CHECK(reduce_local(a, b, 1, mixed, MPI_BAND) == MPI_ERR_TYPE);
  CHECK(reduce_local(a, b, 1, mixed, MPI_NO_OP) == MPI_SUCCESS);
  CHECK(b[0] == 2);
  CHECK(reduce_local(a, b, 1, mixed, MPI_REPLACE) == MPI_SUCCESS);
  CHECK(b[0] == 1);
}

TEST_CASE("zero counts touch nothing") {
  int a = 1, b = 2;
  CHECK(reduce_local(&a, &b, 0, types()[MPI_INT], MPI_SUM) == MPI_SUCCESS);
  CHECK(b == 2);
  CHECK(reduce_local(&a, &b, 0, types()[MPI_INT], MPI_MAXLOC) == MPI_ERR_TYPE);
}

TEST_CASE("floating MAX/MIN/SUM agree with the reference on special values") {
  const double inf = std::numeric_limits<double>::infinity();
  double a[3] = {-inf, 0.0, 1e308}, b[3] = {-1.0, -0.0, 1e308};
  REQUIRE(reduce_local(a, b, 3, types()[MPI_DOUBLE], MPI_SUM) == MPI_SUCCESS);
  CHECK(b[0] == -inf);
  CHECK(b[1] == 0.0);
  CHECK(std::isinf(b[2]));
}

namespace {
// A user function that records what it was given: inout = in - inout, an
// order-revealing, non-commutative combination.
int g_user_calls = 0;
MPI_Datatype g_user_type = MPI_DATATYPE_NULL;
void subtract(void* in, void* inout, int* len, MPI_Datatype* type) {
  ++g_user_calls;
  g_user_type = *type;
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] - b[i];
}
}  // namespace

TEST_CASE("user ops: created with their commutativity, applied as in op inout, refused once freed") {
  MPI_Op op = MPI_OP_NULL;
  REQUIRE(op_create(subtract, false, &op) == MPI_SUCCESS);
  CHECK(op_valid(op));
  CHECK_FALSE(op_is_commutative(op));
  // Any datatype: user functions decide what they accept.
  CHECK(op_check(op, types()[MPI_INT]) == MPI_SUCCESS);
  CHECK(op_check(op, types()[MPI_PACKED]) == MPI_SUCCESS);
  int in[3] = {10, 20, 30}, inout[3] = {1, 2, 3};
  g_user_calls = 0;
  REQUIRE(reduce_local(in, inout, 3, types()[MPI_INT], op) == MPI_SUCCESS);
  CHECK(g_user_calls == 1);
  CHECK(g_user_type == MPI_INT);
  CHECK(inout[0] == 9);
  CHECK(inout[2] == 27);

  MPI_Op commutative = MPI_OP_NULL;
  REQUIRE(op_create(subtract, true, &commutative) == MPI_SUCCESS);
  CHECK(commutative != op);
  CHECK(op_is_commutative(commutative));

  const MPI_Op stale = op;
  REQUIRE(op_free(&op) == MPI_SUCCESS);
  CHECK(op == MPI_OP_NULL);
  CHECK_FALSE(op_valid(stale));
  CHECK(reduce_local(in, inout, 3, types()[MPI_INT], stale) == MPI_ERR_OP);
  MPI_Op again = stale;
  CHECK(op_free(&again) == MPI_ERR_OP);
  // The freed slot is reused under a new generation: the stale handle stays dead.
  MPI_Op reused = MPI_OP_NULL;
  REQUIRE(op_create(subtract, false, &reused) == MPI_SUCCESS);
  CHECK(reused != stale);
  CHECK_FALSE(op_valid(stale));
  CHECK(op_free(&reused) == MPI_SUCCESS);
  CHECK(op_free(&commutative) == MPI_SUCCESS);
}

TEST_CASE("predefined ops cannot be freed") {
  for (MPI_Op op : kAllOps) {
    MPI_Op h = op;
    CHECK(op_free(&h) == MPI_ERR_OP);
    CHECK(h == op);
    CHECK(op_valid(op));
  }
  MPI_Op null = MPI_OP_NULL;
  CHECK(op_free(&null) == MPI_ERR_OP);
}

TEST_CASE("reduce_local_into: out = in op src for pairs, complex and user ops; in place when src is out") {
  // MAXLOC into a third buffer keeps the tie rule (MPI_2INT: a contiguous
  // pair type).
  const Pair<int> in[3] = {{1, 4}, {5, 2}, {3, 0}}, src[3] = {{1, 3}, {2, 9}, {7, 1}};
  Pair<int> out[3] = {};
  REQUIRE(types()[MPI_2INT].contiguous);
  REQUIRE(reduce_local_into(in, src, out, 3, types()[MPI_2INT], MPI_MAXLOC) == MPI_SUCCESS);
  CHECK((out[0].v == 1 && out[0].i == 3));
  CHECK((out[1].v == 5 && out[1].i == 2));
  CHECK((out[2].v == 7 && out[2].i == 1));
  CHECK(src[0].i == 3);

  const std::complex<double> ca[2] = {{1, 2}, {0, 1}}, cb[2] = {{3, -1}, {0, 1}};
  std::complex<double> cout[2];
  REQUIRE(reduce_local_into(ca, cb, cout, 2, types()[MPI_C_DOUBLE_COMPLEX], MPI_PROD) == MPI_SUCCESS);
  CHECK(cout[0] == ca[0] * cb[0]);
  CHECK(cout[1] == std::complex<double>(-1, 0));

  // A non-commutative user op: out = in - src, in the MPI argument order.
  MPI_Op op = MPI_OP_NULL;
  REQUIRE(op_create(subtract, false, &op) == MPI_SUCCESS);
  const int a[3] = {10, 20, 30}, b[3] = {1, 2, 3};
  int o[3] = {0, 0, 0};
  REQUIRE(reduce_local_into(a, b, o, 3, types()[MPI_INT], op) == MPI_SUCCESS);
  CHECK((o[0] == 9 && o[1] == 18 && o[2] == 27));
  CHECK(b[0] == 1);
  CHECK(op_free(&op) == MPI_SUCCESS);

  // src == out: the in-place reduction.
  int x[2] = {4, 9}, y[2] = {6, 1};
  REQUIRE(reduce_local_into(x, y, y, 2, types()[MPI_INT], MPI_MAX) == MPI_SUCCESS);
  CHECK((y[0] == 6 && y[1] == 9));

  // REPLACE and NO_OP keep their meaning: out = in, out = src.
  int r[2] = {0, 0};
  REQUIRE(reduce_local_into(x, y, r, 2, types()[MPI_INT], MPI_REPLACE) == MPI_SUCCESS);
  CHECK((r[0] == 4 && r[1] == 9));
  REQUIRE(reduce_local_into(x, y, r, 2, types()[MPI_INT], MPI_NO_OP) == MPI_SUCCESS);
  CHECK((r[0] == 6 && r[1] == 9));

  // Errors: a non-contiguous type, an op not defined on the type.
  Datatype vec;
  make_vector(vec, 2, 1, 2 * sizeof(int), types()[MPI_INT]);
  vec.committed = true;
  int big[4] = {}, big2[4] = {}, big3[4] = {};
  CHECK(reduce_local_into(big, big2, big3, 1, vec, MPI_SUM) == MPI_ERR_TYPE);
  REQUIRE_FALSE(types()[MPI_DOUBLE_INT].contiguous);  // padded
  Pair<double> p1[1] = {}, p2[1] = {}, p3[1] = {};
  CHECK(reduce_local_into(p1, p2, p3, 1, types()[MPI_DOUBLE_INT], MPI_MAXLOC) == MPI_ERR_TYPE);
  CHECK(reduce_local_into(x, y, r, 2, types()[MPI_INT], MPI_MAXLOC) == MPI_ERR_TYPE);
}
