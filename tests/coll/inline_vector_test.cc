// coll/inline_vector.h: inline up to N elements, on the heap beyond, with
// vector-like contents through resizes, appends, copies and moves.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>

#include "coll/inline_vector.h"

using sonde::engine::coll::InlineVector;
using V = InlineVector<int64_t, 4>;

namespace {
V iota(size_t n) {
  V v;
  v.resize(n);
  for (size_t i = 0; i < n; ++i) v[i] = int64_t(i) * 10;
  return v;
}
void expect_iota(const V& v, size_t n) {
  REQUIRE(v.size() == n);
  for (size_t i = 0; i < n; ++i) CHECK(v[i] == int64_t(i) * 10);
}
}  // namespace

TEST_CASE("up to N elements stay inside the object") {
  V v = iota(4);
  const auto* self = reinterpret_cast<const char*>(&v);
  CHECK(reinterpret_cast<const char*>(v.data()) >= self);
  CHECK(reinterpret_cast<const char*>(v.data() + 4) <= self + sizeof v);
  expect_iota(v, 4);
}

TEST_CASE("growing past N keeps the elements and zero-fills the new ones") {
  V v = iota(3);
  v.resize(9);
  REQUIRE(v.size() == 9);
  for (size_t i = 0; i < 3; ++i) CHECK(v[i] == int64_t(i) * 10);
  for (size_t i = 3; i < 9; ++i) CHECK(v[i] == 0);
  v.resize(2);
  expect_iota(v, 2);
  v.resize(5);
  CHECK(v[4] == 0);
}

TEST_CASE("the count-and-value constructor fills every element") {
  V small(3, 7), big(6, -1);
  CHECK(small.size() == 3);
  for (int64_t x : small) CHECK(x == 7);
  CHECK(big.size() == 6);
  for (int64_t x : big) CHECK(x == -1);
  CHECK(V().empty());
}

TEST_CASE("copies are independent, inline or on the heap") {
  for (size_t n : {size_t(2), size_t(7)}) {
    V a = iota(n);
    V b(a);
    V c;
    c = a;
    a[0] = 99;
    expect_iota(b, n);
    expect_iota(c, n);
    c = c;  // self-assignment keeps the contents
    expect_iota(c, n);
  }
}

TEST_CASE("moves take the contents and leave the source empty") {
  for (size_t n : {size_t(3), size_t(8)}) {
    V a = iota(n);
    V b(std::move(a));
    expect_iota(b, n);
    CHECK(a.size() == 0);
    V c = iota(6);  // on the heap: replaced by the moved contents
    c = std::move(b);
    expect_iota(c, n);
    CHECK(b.empty());
  }
}

TEST_CASE("push_back spills to the heap keeping order, and clear empties it for reuse") {
  V v;
  for (int64_t i = 0; i < 11; ++i) v.push_back(i * 10);
  expect_iota(v, 11);
  v.clear();
  CHECK(v.empty());
  for (int64_t i = 0; i < 3; ++i) v.push_back(i * 10);
  expect_iota(v, 3);
}

TEST_CASE("overwrite sets the size, keeps the first elements and returns storage for all of them") {
  V v = iota(3);
  int64_t* d = v.overwrite(9);  // past N: on the heap
  REQUIRE(v.size() == 9);
  CHECK(d == v.data());
  for (size_t i = 0; i < 3; ++i) CHECK(v[i] == int64_t(i) * 10);
  for (size_t i = 3; i < 9; ++i) d[i] = int64_t(i) * 10;
  expect_iota(v, 9);
  d = v.overwrite(2);
  CHECK(d == v.data());
  expect_iota(v, 2);
}
