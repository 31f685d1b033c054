// The residence profiler's fixed-size pieces on their own: the log histogram
// (bucket bounds, percentile precision, merging) and the key table (reuse of
// slots after erase, agreement with std::unordered_map under random churn).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "examples/residence/histogram.h"
#include "examples/residence/key_table.h"

using sonde::residence::Histogram;
using sonde::residence::KeyTable;

TEST_CASE("histogram buckets tile the value range without gaps or overlaps") {
  for (int b = 0; b + 1 < Histogram::kBuckets; ++b) {
    CHECK(Histogram::lower(b) <= Histogram::upper(b));
    CHECK(Histogram::upper(b) + 1 == Histogram::lower(b + 1));
    CHECK(Histogram::bucket(Histogram::lower(b)) == b);
    CHECK(Histogram::bucket(Histogram::upper(b)) == b);
  }
  CHECK(Histogram::bucket(0) == 0);
  CHECK(Histogram::bucket(15) == 15);
  CHECK(Histogram::bucket(16) == 16);
  CHECK(Histogram::bucket(UINT64_MAX) == Histogram::kBuckets - 1);
  CHECK(Histogram::bucket(uint64_t{1} << 41) == Histogram::kBuckets - 1);
  CHECK(Histogram::bucket((uint64_t{1} << 41) - 1) == Histogram::kBuckets - 1);
  // Every bucket from 16 ns on is at most 1/8 of its lower bound wide.
  for (int b = Histogram::kExact; b + 1 < Histogram::kBuckets; ++b)
    CHECK(Histogram::upper(b) - Histogram::lower(b) + 1 <= Histogram::lower(b) / 8);
}

TEST_CASE("count, sum, min and max are exact; empty is all zero") {
  Histogram h;
  CHECK(h.percentile(0.5) == 0);
  CHECK(h.mean() == 0);
  for (uint64_t v : {5u, 1000u, 70u, 123456u}) h.add(v);
  CHECK(h.count == 4);
  CHECK(h.sum == 5 + 1000 + 70 + 123456);
  CHECK(h.min == 5);
  CHECK(h.max == 123456);
  CHECK(h.percentile(1.0) == 123456);
  CHECK(h.percentile(0.01) == 5);  // exact bucket
}

TEST_CASE("percentiles are within 6.25% of the sample at that rank, and ordered") {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(9.0, 2.0);  // ~8 us median, wide tails
  for (int round = 0; round < 20; ++round) {
    Histogram h;
    std::vector<uint64_t> v(1 + rng() % 5000);
    for (uint64_t& x : v) {
      x = static_cast<uint64_t>(dist(rng));
      h.add(x);
    }
    std::sort(v.begin(), v.end());
    for (double p : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
      if (rank < 1) rank = 1;
      double truth = static_cast<double>(v[rank - 1]);
      double got = static_cast<double>(h.percentile(p));
      CHECK(std::fabs(got - truth) <= truth / 16 + 0.5);
    }
    CHECK(h.percentile(0.5) <= h.percentile(0.99));
    CHECK(h.percentile(0.99) <= h.max);
    CHECK(h.percentile(0.5) >= h.min);
  }
}

TEST_CASE("merging equals adding everything to one histogram") {
  Histogram a, b, all;
  for (uint64_t v = 1; v < 100000; v = v * 3 + 1) {
    (v % 2 ? a : b).add(v);
    all.add(v);
  }
  Histogram m = a;
  m.merge(b);
  CHECK(m.count == all.count);
  CHECK(m.sum == all.sum);
  CHECK(m.min == all.min);
  CHECK(m.max == all.max);
  for (int k = 0; k < Histogram::kBuckets; ++k) CHECK(m.bins[k] == all.bins[k]);
  Histogram empty;
  m.merge(empty);
  CHECK(m.count == all.count);
  empty.merge(a);
  CHECK(empty.min == a.min);
}

namespace {
struct Slot {
  uint64_t key;
  uint64_t value;
};
}  // namespace

TEST_CASE("key table: slots are reused, so a small table serves endless churn") {
  KeyTable<Slot> t;
  REQUIRE(t.init(16));
  CHECK(t.capacity() == 16);
  bool fresh = false;
  // 12 live at most (75 % of 16); a million insert/erase pairs never fill it.
  for (uint64_t i = 1; i <= 1000000; ++i) {
    Slot* s = t.insert(i * 8, &fresh);
    REQUIRE(s);
    CHECK(fresh);
    s->value = i;
    if (i > 10) {
      Slot* old = t.find((i - 10) * 8);
      REQUIRE(old);
      CHECK(old->value == i - 10);
      t.erase(old);
    }
  }
  CHECK(t.size() == 10);
  // Full at 12: the 13th live key is refused, and the caller counts it.
  CHECK(t.insert(1, &fresh));
  CHECK(t.insert(2, &fresh));
  CHECK(t.insert(3, &fresh) == nullptr);
  // Inserting an existing key finds it.
  Slot* again = t.insert(1, &fresh);
  REQUIRE(again);
  CHECK_FALSE(fresh);
}

TEST_CASE("key table agrees with std::unordered_map under random inserts and erases") {
  KeyTable<Slot> t;
  REQUIRE(t.init(1024));
  std::unordered_map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> keys;
  for (int op = 0; op < 200000; ++op) {
    bool fresh = false;
    if (keys.empty() || (ref.size() < 700 && rng() % 2)) {
      // Addresses as Sonde's ids are: 8-byte aligned, clustered.
      uint64_t k = 0x7f0000000000ULL + (rng() % 4096) * 8;
      Slot* s = t.insert(k, &fresh);
      REQUIRE(s);
      CHECK(fresh == (ref.count(k) == 0));
      if (fresh) keys.push_back(k);
      s->value = k ^ 0xabc;
      ref[k] = k ^ 0xabc;
    } else {
      size_t i = rng() % keys.size();
      uint64_t k = keys[i];
      keys[i] = keys.back();
      keys.pop_back();
      Slot* s = t.find(k);
      REQUIRE(s);
      CHECK(s->value == ref[k]);
      t.erase(s);
      ref.erase(k);
      CHECK(t.find(k) == nullptr);
    }
  }
  CHECK(t.size() == ref.size());
  for (auto& [k, v] : ref) {
    Slot* s = t.find(k);
    REQUIRE(s);
    CHECK(s->value == v);
  }
}
