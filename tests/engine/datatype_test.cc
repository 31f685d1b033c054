#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "engine/datatype.h"
#include "include/mpi.h"

using namespace sonde::engine;

namespace {
// The predefined table, as the engine builds it.
struct Predefined {
  std::vector<Datatype> storage = std::vector<Datatype>(SONDE_PREDEFINED_DATATYPES);
  Predefined() {
    std::vector<Datatype*> slots(SONDE_PREDEFINED_DATATYPES);
    for (int i = 0; i < SONDE_PREDEFINED_DATATYPES; ++i) slots[i] = &storage[i];
    init_predefined_datatypes(slots);
  }
  const Datatype& operator[](int handle) { return storage[handle & 0xFFFFF]; }
};
}  // namespace

TEST_CASE("predefined types have the C sizes, extents and names") {
  Predefined p;
  CHECK(p[MPI_INT].size == sizeof(int));
  CHECK(p[MPI_DOUBLE].extent == sizeof(double));
  CHECK(p[MPI_LONG_DOUBLE].size == sizeof(long double));
  CHECK(p[MPI_BYTE].contiguous);
  CHECK(p[MPI_INT].name == "MPI_INT");
  CHECK(p[MPI_UINT64_T].name == "MPI_UINT64_T");
  // Pair types: value + int, padding excluded from the data.
  struct DI { double d; int i; };
  CHECK(p[MPI_DOUBLE_INT].size == sizeof(double) + sizeof(int));
  CHECK(p[MPI_DOUBLE_INT].extent == sizeof(DI));
  CHECK_FALSE(p[MPI_DOUBLE_INT].contiguous);  // the tail padding is a gap
  CHECK(p[MPI_2INT].contiguous);
}

TEST_CASE("a vector type packs exactly its strided blocks, at any offset and piece size") {
  Predefined p;
  Datatype v;
  make_vector(v, 5, 3, 7 * sizeof(int), p[MPI_INT]);  // 5 blocks of 3 ints, stride 7 ints
  CHECK(v.size == 15 * int64_t(sizeof(int)));
  CHECK(v.extent == (4 * 7 + 3) * int64_t(sizeof(int)));
  CHECK_FALSE(v.contiguous);
  const int count = 4;
  std::vector<int> src(size_t(v.extent / int64_t(sizeof(int))) * count + 8);
  std::iota(src.begin(), src.end(), 0);
  std::vector<int> expect;
  for (int e = 0; e < count; ++e)
    for (int b = 0; b < 5; ++b)
      for (int j = 0; j < 3; ++j) expect.push_back(src[size_t(e * (v.extent / 4) + b * 7 + j)]);
  uint64_t total = uint64_t(v.size) * count;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> packed(total);
    uint64_t pos = 0;
    while (pos < total) {  // random piece sizes, as a transport would stream them
      uint64_t n = std::min<uint64_t>(total - pos, 1 + rng() % 29);
      pack(v, src.data(), count, pos, packed.data() + pos, n);
      pos += n;
    }
    REQUIRE(std::memcmp(packed.data(), expect.data(), total) == 0);
    std::vector<int> dst(src.size(), -1);
    pos = 0;
    while (pos < total) {
      uint64_t n = std::min<uint64_t>(total - pos, 1 + rng() % 31);
      unpack(v, dst.data(), count, pos, packed.data() + pos, n);
      pos += n;
    }
    for (int e = 0; e < count; ++e)
      for (int b = 0; b < 5; ++b)
        for (int j = 0; j < 3; ++j) {
          size_t i = size_t(e * (v.extent / 4) + b * 7 + j);
          REQUIRE(dst[i] == src[i]);
        }
    // Gaps are untouched.
    REQUIRE(dst[3] == -1);
  }
}

TEST_CASE("contiguous of contiguous stays contiguous; empty types have size 0") {
  Predefined p;
  Datatype c;
  make_contiguous(c, 10, p[MPI_DOUBLE]);
  CHECK(c.contiguous);
  CHECK(c.size == 80);
  CHECK(c.extent == 80);
  CHECK(c.basic == Basic::kDouble);
  CHECK(c.basic_count == 10);
  Datatype e;
  make_contiguous(e, 0, p[MPI_INT]);
  CHECK(e.size == 0);
  CHECK(e.extent == 0);
}

TEST_CASE("a negative stride gives a negative lower bound and packs in typemap order") {
  Predefined p;
  Datatype v;
  make_vector(v, 3, 1, -2 * int64_t(sizeof(int)), p[MPI_INT]);
  CHECK(v.lb == -4 * int64_t(sizeof(int)));
  CHECK(v.extent == 5 * int64_t(sizeof(int)));
  int base[5] = {10, 11, 12, 13, 14};
  int* buf = base + 4;  // element 0 at base[4], then base[2], base[0]
  int out[3];
  pack(v, buf, 1, 0, reinterpret_cast<uint8_t*>(out), sizeof out);
  CHECK(out[0] == 14);
  CHECK(out[1] == 12);
  CHECK(out[2] == 10);
}
