#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "base/handles.h"

using sonde::engine::handle_index;
using sonde::engine::handle_kind;
using sonde::engine::HandleTable;
using sonde::engine::make_handle;

namespace {
struct Obj {
  int value = 0;
};
constexpr uint32_t kKind = 4;
using Table = HandleTable<Obj, kKind>;
}  // namespace

TEST_CASE("a freed handle no longer resolves, even after its slot is reused") {
  Table t;
  Obj* a;
  int ha = t.allocate(&a);
  REQUIRE(ha != 0);
  CHECK(t.lookup(ha) == a);
  t.release(ha);
  CHECK(t.lookup(ha) == nullptr);
  Obj* b;
  int hb = t.allocate(&b);
  CHECK(handle_index(hb) == handle_index(ha));  // same slot reused...
  CHECK(hb != ha);                              // ...under a new generation
  CHECK(t.lookup(ha) == nullptr);
  CHECK(t.lookup(hb) == b);
}

TEST_CASE("null, forged, out-of-range and other-kind handles are rejected") {
  Table t(2);
  Obj* a;
  int h = t.allocate(&a);
  CHECK(t.lookup(make_handle(kKind, 0, 0)) == nullptr);                    // null
  CHECK(t.lookup(make_handle(kKind, 0, 1)) == &t.predefined(1));           // predefined
  CHECK(t.lookup(make_handle(kKind, 7, 1)) == nullptr);                    // predefined slot, wrong generation
  CHECK(t.lookup(make_handle(kKind, 1, 100000)) == nullptr);               // beyond the table
  CHECK(t.lookup(make_handle(kKind + 1, 1, handle_index(h))) == nullptr);  // wrong kind
  CHECK(t.lookup(0x7fffffff) == nullptr);
  CHECK(t.lookup(-1) == nullptr);
  CHECK(handle_kind(h) == kKind);
}

TEST_CASE("objects keep their address while the table grows, and reuse keeps memory flat") {
  Table t;
  std::vector<std::pair<int, Obj*>> live;
  for (int i = 0; i < 5000; ++i) {
    Obj* o;
    int h = t.allocate(&o);
    o->value = i;
    live.emplace_back(h, o);
  }
  for (auto& [h, o] : live) CHECK(t.lookup(h) == o);
  for (auto& [h, o] : live) t.release(h);
  CHECK(t.live_count() == 0);
  // 300 generations on each of 5000 slots: the generation wraps but never hits 0.
  std::set<int> seen;
  for (int round = 0; round < 300; ++round) {
    Obj* o;
    int h = t.allocate(&o);
    CHECK(((static_cast<uint32_t>(h) >> 20) & 0x7F) != 0);
    CHECK(h > 0);
    t.release(h);
  }
  CHECK(t.live_count() == 0);
}
