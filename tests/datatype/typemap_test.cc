// The type engine on its own: typemaps, bounds, pack/unpack at arbitrary
// windows against a naive reference, iovec lists, MPI_Get_elements with
// partial elements, and external32 byte images.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "datatype/datatype.h"
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

// A typemap written out by hand: (byte offset from the buffer, length), in
// pack order, for `count` elements. The naive reference packs it byte by byte.
using Runs = std::vector<std::pair<int64_t, int64_t>>;

std::vector<uint8_t> naive_pack(const Runs& runs, const uint8_t* origin) {
  std::vector<uint8_t> out;
  for (auto [off, len] : runs)
    for (int64_t i = 0; i < len; ++i) out.push_back(origin[off + i]);
  return out;
}

// Packs and unpacks (type, count) at `origin` in random windows and compares
// with the reference; unpacking must touch exactly the typemap's bytes.
void check_against_reference(const Datatype& t, int64_t count, const Runs& runs, int64_t span_lo, int64_t span_hi,
                             unsigned seed) {
  std::vector<uint8_t> mem(size_t(span_hi - span_lo));
  std::iota(mem.begin(), mem.end(), uint8_t(seed));
  for (size_t i = 0; i < mem.size(); ++i) mem[i] = uint8_t(i * 131 + seed);
  uint8_t* origin = mem.data() - span_lo;
  std::vector<uint8_t> want = naive_pack(runs, origin);
  REQUIRE(int64_t(want.size()) == t.size * count);
  uint64_t total = want.size();
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint8_t> packed(total, 0xEE);
    uint64_t pos = 0;
    while (pos < total) {
      uint64_t n = std::min<uint64_t>(total - pos, 1 + rng() % (trial < 25 ? 13 : 4096));
      pack(t, origin, count, pos, packed.data() + pos, n);
      pos += n;
    }
    REQUIRE(packed == want);
    std::vector<uint8_t> back(mem.size(), 0x5A);
    uint8_t* borigin = back.data() - span_lo;
    pos = 0;
    while (pos < total) {
      uint64_t n = std::min<uint64_t>(total - pos, 1 + rng() % 97);
      unpack(t, borigin, count, pos, packed.data() + pos, n);
      pos += n;
    }
    std::vector<uint8_t> expect(mem.size(), 0x5A);
    for (auto [off, len] : runs) std::memcpy(expect.data() + (off - span_lo), origin + off, size_t(len));
    REQUIRE(back == expect);
  }
}
}  // namespace

TEST_CASE("predefined types have the C sizes, extents and names") {
  Predefined p;
  CHECK(p[MPI_INT].size == sizeof(int));
  CHECK(p[MPI_DOUBLE].extent == sizeof(double));
  CHECK(p[MPI_LONG_DOUBLE].size == sizeof(long double));
  CHECK(p[MPI_C_BOOL].size == sizeof(bool));
  CHECK(p[MPI_C_DOUBLE_COMPLEX].size == 2 * sizeof(double));
  CHECK(p[MPI_C_LONG_DOUBLE_COMPLEX].size == 2 * sizeof(long double));
  CHECK(p[MPI_INT8_T].size == 1);
  CHECK(p[MPI_UINT64_T].size == 8);
  CHECK(p[MPI_AINT].size == sizeof(MPI_Aint));
  CHECK(p[MPI_OFFSET].size == sizeof(MPI_Offset));
  CHECK(p[MPI_COUNT].size == sizeof(MPI_Count));
  CHECK(p[MPI_PACKED].size == 1);
  CHECK(p[MPI_INTEGER].size == 4);
  CHECK(p[MPI_DOUBLE_PRECISION].size == 8);
  CHECK(p[MPI_BYTE].contiguous);
  CHECK(p[MPI_INT].name == "MPI_INT");
  CHECK(p[MPI_UINT64_T].name == "MPI_UINT64_T");
  CHECK(p[MPI_INT].envelope.combiner == MPI_COMBINER_NAMED);
  // Pair types: value + int, padding excluded from the data.
  struct DI {
    double d;
    int i;
  };
  struct LDI {
    long double d;
    int i;
  };
  struct SI {
    short s;
    int i;
  };
  CHECK(p[MPI_DOUBLE_INT].size == sizeof(double) + sizeof(int));
  CHECK(p[MPI_DOUBLE_INT].extent == sizeof(DI));
  CHECK_FALSE(p[MPI_DOUBLE_INT].contiguous);  // the tail padding is a gap
  CHECK(p[MPI_LONG_DOUBLE_INT].extent == sizeof(LDI));
  CHECK(p[MPI_LONG_DOUBLE_INT].size == sizeof(long double) + sizeof(int));
  CHECK(p[MPI_SHORT_INT].extent == sizeof(SI));
  CHECK(p[MPI_SHORT_INT].size == 6);
  CHECK(p[MPI_2INT].contiguous);
  CHECK(p[MPI_FLOAT_INT].contiguous);
  // Markers: no data, no extent.
  CHECK(p[MPI_2REAL].size == 8);
  CHECK(p[MPI_2REAL].extent == 8);
  CHECK(p[MPI_LB].size == 0);
  CHECK(p[MPI_UB].extent == 0);
}

TEST_CASE("a vector type packs exactly its strided blocks, at any offset and piece size") {
  Predefined p;
  Datatype v;
  const int64_t I = sizeof(int);
  make_vector(v, 5, 3, 7 * I, p[MPI_INT]);  // 5 blocks of 3 ints, stride 7 ints
  CHECK(v.size == 15 * I);
  CHECK(v.extent == (4 * 7 + 3) * I);
  CHECK_FALSE(v.contiguous);
  Runs runs;
  for (int e = 0; e < 4; ++e)
    for (int b = 0; b < 5; ++b) runs.push_back({e * v.extent + b * 7 * I, 3 * I});
  check_against_reference(v, 4, runs, 0, 4 * v.extent, 7);
}

TEST_CASE("contiguous of contiguous stays contiguous; empty types have size 0") {
  Predefined p;
  Datatype c;
  make_contiguous(c, 10, p[MPI_DOUBLE]);
  CHECK(c.contiguous);
  CHECK(c.size == 80);
  CHECK(c.extent == 80);
  CHECK(c.basic == Basic::kDouble);
  Datatype cc;
  make_contiguous(cc, 3, c);
  CHECK(cc.contiguous);
  CHECK(cc.layout->items.size() == 1);
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
  CHECK(v.true_lb == -4 * int64_t(sizeof(int)));
  int base[5] = {10, 11, 12, 13, 14};
  int* buf = base + 4;  // element 0 at base[4], then base[2], base[0]
  int out[3];
  pack(v, buf, 1, 0, reinterpret_cast<uint8_t*>(out), sizeof out);
  CHECK(out[0] == 14);
  CHECK(out[1] == 12);
  CHECK(out[2] == 10);
  // Several elements of it, and of a vector of it with a negative stride too.
  Datatype w;
  make_vector(w, 3, 2, -7 * int64_t(sizeof(int)), v);
  Runs runs;
  const int64_t I = sizeof(int);
  for (int e = 0; e < 2; ++e)
    for (int b = 0; b < 3; ++b)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k) runs.push_back({e * w.extent + b * -7 * I + j * v.extent + k * -2 * I, I});
  int64_t lo = 0, hi = 0;
  for (auto [off, len] : runs) lo = std::min(lo, off), hi = std::max(hi, off + len);
  check_against_reference(w, 2, runs, lo, hi, 3);
}

TEST_CASE("indexed blocks pack in the order given, not in address order") {
  Predefined p;
  const int64_t D = sizeof(double);
  int64_t bl[] = {2, 1, 3, 0, 1};
  int64_t disp[] = {10 * D, 0, 4 * D, 2 * D, 9 * D};
  Datatype t;
  make_hindexed(t, 5, bl, disp, p[MPI_DOUBLE]);
  CHECK(t.size == 7 * D);
  CHECK(t.lb == 0);
  CHECK(t.extent == 12 * D);
  Runs runs;
  for (int e = 0; e < 3; ++e)
    for (int i = 0; i < 5; ++i)
      if (bl[i]) runs.push_back({e * t.extent + disp[i], bl[i] * D});
  check_against_reference(t, 3, runs, 0, 3 * t.extent, 11);
}

TEST_CASE("a struct with gaps has the padded C extent and packs only its fields") {
  Predefined p;
  struct S {
    char c;
    double d;
    short s[3];
  };
  int64_t bl[] = {1, 1, 3};
  int64_t disp[] = {offsetof(S, c), offsetof(S, d), offsetof(S, s)};
  const Datatype* types[] = {&p[MPI_CHAR], &p[MPI_DOUBLE], &p[MPI_SHORT]};
  Datatype t;
  make_struct(t, 3, bl, disp, types);
  CHECK(t.size == 1 + 8 + 6);
  CHECK(t.extent == int64_t(sizeof(S)));  // rounded up to double's alignment
  CHECK(t.true_extent == int64_t(offsetof(S, s) + 6));
  CHECK(t.basic == Basic::kNone);
  Runs runs;
  for (int e = 0; e < 5; ++e) {
    runs.push_back({e * t.extent + disp[0], 1});
    runs.push_back({e * t.extent + disp[1], 8});
    runs.push_back({e * t.extent + disp[2], 6});
  }
  check_against_reference(t, 5, runs, 0, 5 * t.extent, 5);
  // A struct of vectors.
  Datatype v;
  make_vector(v, 4, 1, 3 * int64_t(sizeof(int)), p[MPI_INT]);
  int64_t bl2[] = {2, 1};
  int64_t disp2[] = {-8, 200};
  const Datatype* types2[] = {&v, &t};
  Datatype sv;
  make_struct(sv, 2, bl2, disp2, types2);
  Runs runs2;
  for (int e = 0; e < 2; ++e) {
    for (int k = 0; k < 2; ++k)
      for (int b = 0; b < 4; ++b) runs2.push_back({e * sv.extent - 8 + k * v.extent + b * 12, 4});
    for (auto [off, len] : std::vector<std::pair<int64_t, int64_t>>{{disp[0], 1}, {disp[1], 8}, {disp[2], 6}})
      runs2.push_back({e * sv.extent + 200 + off, len});
  }
  CHECK(sv.lb == -8);
  check_against_reference(sv, 2, runs2, -8, 2 * sv.extent, 9);
}

TEST_CASE("resized types change the stride between elements, not the data") {
  Predefined p;
  Datatype r;
  make_resized(r, p[MPI_INT], -4, 12);
  CHECK(r.lb == -4);
  CHECK(r.extent == 12);
  CHECK(r.true_lb == 0);
  CHECK(r.true_extent == 4);
  CHECK_FALSE(r.contiguous);
  Runs runs;
  for (int e = 0; e < 6; ++e) runs.push_back({e * 12, 4});
  check_against_reference(r, 6, runs, 0, 72, 2);
  // Resizing to the size makes it contiguous again.
  Datatype back;
  make_resized(back, r, 0, 4);
  CHECK(back.contiguous);
}

TEST_CASE("MPI_LB and MPI_UB markers are sticky through every constructor") {
  Predefined p;
  int64_t bl[] = {1, 1, 1};
  int64_t disp[] = {-16, 0, 40};
  const Datatype* types[] = {&p[MPI_LB], &p[MPI_INT], &p[MPI_UB]};
  Datatype t;
  make_struct(t, 3, bl, disp, types);
  CHECK(t.lb == -16);
  CHECK(t.extent == 56);
  CHECK(t.size == 4);
  CHECK(t.true_lb == 0);
  CHECK(t.true_extent == 4);
  // A struct that adds data outside the markers keeps the markers' bounds.
  int64_t bl2[] = {1, 1};
  int64_t disp2[] = {0, 100};
  const Datatype* types2[] = {&t, &p[MPI_DOUBLE]};
  Datatype u;
  make_struct(u, 2, bl2, disp2, types2);
  CHECK(u.lb == -16);
  CHECK(u.extent == 56);
  CHECK(u.true_extent == 108);
  Datatype c;
  make_contiguous(c, 3, t);
  CHECK(c.lb == -16);
  CHECK(c.extent == 3 * 56);
  // An lb marker alone: ub stays 0, so the extent is negative (as MPICH).
  int64_t one = 1, ten = 10;
  const Datatype* lb_only[] = {&p[MPI_LB]};
  Datatype m;
  make_struct(m, 1, &one, &ten, lb_only);
  CHECK(m.lb == 10);
  CHECK(m.extent == -10);
}

TEST_CASE("subarrays in C and Fortran order select the same elements of the transposed array") {
  Predefined p;
  int sizes[] = {5, 7}, subs[] = {2, 3}, starts[] = {1, 4};
  Datatype c;
  make_subarray(c, 2, sizes, subs, starts, false, p[MPI_INT]);
  CHECK(c.lb == 0);
  CHECK(c.extent == 35 * 4);
  Runs runs;
  for (int i = 0; i < 2; ++i) runs.push_back({((1 + i) * 7 + 4) * 4, 3 * 4});
  check_against_reference(c, 1, runs, 0, 35 * 4, 1);
  Datatype f;
  make_subarray(f, 2, sizes, subs, starts, true, p[MPI_INT]);
  Runs fr;  // Fortran: dimension 0 varies fastest
  for (int j = 0; j < 3; ++j) fr.push_back({((4 + j) * 5 + 1) * 4, 2 * 4});
  check_against_reference(f, 1, fr, 0, 35 * 4, 4);
}

TEST_CASE("darray: block and cyclic distributions give each rank its own elements, together all of them") {
  Predefined p;
  int gsizes[] = {7, 10}, psizes[] = {2, 3};
  for (int kind = 0; kind < 3; ++kind) {
    int distribs[] = {kind == 0 ? 1 : 2, kind == 2 ? 1 : 2};
    int dargs[] = {-1, kind == 1 ? 2 : -1};
    std::vector<int> owner(70, 0);
    int64_t total = 0;
    for (int rank = 0; rank < 6; ++rank) {
      Datatype t;
      REQUIRE(make_darray(t, 6, rank, 2, gsizes, distribs, dargs, psizes, false, p[MPI_INT]));
      CHECK(t.extent == 70 * 4);
      total += t.size;
      std::vector<int> a(70);
      std::iota(a.begin(), a.end(), 0);
      std::vector<int> got(size_t(t.size / 4));
      pack(t, a.data(), 1, 0, reinterpret_cast<uint8_t*>(got.data()), uint64_t(t.size));
      for (int v : got) owner[size_t(v)]++;
      // In C order the elements come in increasing global index.
      CHECK(std::is_sorted(got.begin(), got.end()));
    }
    CHECK(total == 70 * 4);
    CHECK(std::all_of(owner.begin(), owner.end(), [](int n) { return n == 1; }));
  }
  int bad_dargs[] = {1, -1}, block[] = {1, 1};
  Datatype t;
  CHECK_FALSE(make_darray(t, 6, 0, 2, gsizes, block, bad_dargs, psizes, false, p[MPI_INT]));  // 1*2 < 7
}

TEST_CASE("a vector of a million blocks stays a handful of items and seeks without rescanning") {
  Predefined p;
  Datatype v;
  make_vector(v, 1000000, 1, 2 * int64_t(sizeof(double)), p[MPI_DOUBLE]);
  CHECK(v.layout->items.size() == 1);
  CHECK(v.size == 8000000);
  std::vector<double> a(2000000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = double(i);
  double tail[3];
  pack(v, a.data(), 1, 8 * 999997, reinterpret_cast<uint8_t*>(tail), sizeof tail);
  CHECK(tail[0] == 2 * 999997.0);
  CHECK(tail[2] == 2 * 999999.0);
  // A struct of such vectors: still one item per field.
  int64_t bl[] = {1, 1};
  int64_t disp[] = {0, 8};
  const Datatype* types[] = {&v, &v};
  Datatype s;
  make_struct(s, 2, bl, disp, types);
  CHECK(s.layout->items.size() == 2);
  double mid;
  pack(s, a.data(), 1, 8000000 + 8 * 5, reinterpret_cast<uint8_t*>(&mid), 8);
  CHECK(mid == 11.0);
}

TEST_CASE("iovec lists cover a window, merge adjacent runs and stop at the limit") {
  Predefined p;
  Datatype v;
  make_vector(v, 10, 2, 3 * int64_t(sizeof(int)), p[MPI_INT]);  // 2 ints, 1 gap
  std::vector<int> a(40);
  iovec iov[4];
  uint64_t covered = 0;
  size_t n = gather_iov(v, a.data(), 1, 4, 40, iov, 4, &covered);
  CHECK(n == 4);
  CHECK(covered == 4 + 8 + 8 + 8);  // the rest of block 0, then blocks 1..3
  CHECK(iov[0].iov_base == &a[1]);
  CHECK(iov[0].iov_len == 4);
  CHECK(iov[1].iov_base == &a[3]);
  CHECK(iov[3].iov_len == 8);
  Datatype c;
  make_contiguous(c, 5, p[MPI_INT]);
  n = gather_iov(c, a.data(), 2, 8, 12, iov, 4, &covered);
  CHECK(n == 1);
  CHECK(covered == 12);
  CHECK(iov[0].iov_base == &a[2]);
}

TEST_CASE("element counts include partial elements and refuse split basics") {
  Predefined p;
  struct S {
    int i;
    double d[2];
  };
  int64_t bl[] = {1, 2};
  int64_t disp[] = {offsetof(S, i), offsetof(S, d)};
  const Datatype* types[] = {&p[MPI_INT], &p[MPI_DOUBLE]};
  Datatype t;
  make_struct(t, 2, bl, disp, types);
  CHECK(count_elements(t, 0) == 0);
  CHECK(count_elements(t, 4) == 1);
  CHECK(count_elements(t, 12) == 2);
  CHECK(count_elements(t, 20) == 3);
  CHECK(count_elements(t, 20 + 4 + 8) == 5);
  CHECK(count_elements(t, 6) == -1);
  CHECK(count_elements(p[MPI_DOUBLE_INT], 3 * 12) == 6);
  CHECK(count_elements(p[MPI_DOUBLE_INT], 8) == 1);
  CHECK(count_elements(p[MPI_INT], 7) == -1);
  Datatype v;
  make_vector(v, 3, 2, 5 * 8, t);
  CHECK(count_elements(v, uint64_t(v.size) + 4) == 3 * 2 * 3 + 1);
}

TEST_CASE("external32 is big-endian with the standard's sizes") {
  Predefined p;
  auto image = [](const Datatype& t, const void* buf, int64_t count) {
    std::vector<uint8_t> out(size_t(external32_size(t) * count));
    pack_external32(t, buf, count, out.data());
    return out;
  };
  int32_t i = 0x01020304;
  CHECK(image(p[MPI_INT], &i, 1) == std::vector<uint8_t>{1, 2, 3, 4});
  double d = 1.0;
  CHECK(image(p[MPI_DOUBLE], &d, 1) == std::vector<uint8_t>{0x3f, 0xf0, 0, 0, 0, 0, 0, 0});
  long l = -2;  // external32 long is 4 bytes
  CHECK(image(p[MPI_LONG], &l, 1) == std::vector<uint8_t>{0xff, 0xff, 0xff, 0xfe});
  long lb = 0;
  unpack_external32(p[MPI_LONG], image(p[MPI_LONG], &l, 1).data(), &lb, 1);
  CHECK(lb == -2);
  MPI_Aint a = -3;
  CHECK(image(p[MPI_AINT], &a, 1) == std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd});
  float cf[2] = {1.0f, -2.0f};
  CHECK(image(p[MPI_C_FLOAT_COMPLEX], cf, 1) == std::vector<uint8_t>{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0});
  long double ld = -1.5L;  // binary128: sign 1, exponent 0x3fff, fraction .1
  std::vector<uint8_t> q(16, 0);
  q[0] = 0xbf, q[1] = 0xff, q[2] = 0x80;
  CHECK(image(p[MPI_LONG_DOUBLE], &ld, 1) == q);
  struct {
    float v;
    int i;
  } fi = {2.0f, 7};
  CHECK(image(p[MPI_FLOAT_INT], &fi, 1) == std::vector<uint8_t>{0x40, 0, 0, 0, 0, 0, 0, 7});
  CHECK(external32_size(p[MPI_DOUBLE_INT]) == 12);
  CHECK(external32_size(p[MPI_LONG_DOUBLE_INT]) == 20);
  CHECK(external32_size(p[MPI_WCHAR]) == 2);
  CHECK(external32_size(p[MPI_LONG_INT]) == 8);
  // Round trip of a struct with gaps through external32 (gaps untouched).
  struct S {
    char c;
    long double x;
    short s;
  } in[2] = {{'a', 3.25L, -5}, {'z', -1e300L, 9}}, out[2];
  std::memset(out, 0, sizeof out);
  int64_t bl[] = {1, 1, 1};
  int64_t disp[] = {offsetof(S, c), offsetof(S, x), offsetof(S, s)};
  const Datatype* types[] = {&p[MPI_CHAR], &p[MPI_LONG_DOUBLE], &p[MPI_SHORT]};
  Datatype t;
  make_struct(t, 3, bl, disp, types);
  CHECK(external32_size(t) == 1 + 16 + 2);
  std::vector<uint8_t> img = image(t, in, 2);
  CHECK(img[0] == 'a');
  CHECK(img[17] == 0xff);  // -5 as a big-endian short
  CHECK(img[18] == 0xfb);
  unpack_external32(t, img.data(), out, 2);
  for (int k = 0; k < 2; ++k) CHECK((out[k].c == in[k].c && out[k].x == in[k].x && out[k].s == in[k].s));
}
