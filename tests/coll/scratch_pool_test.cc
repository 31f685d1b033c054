// The collectives' large scratch blocks are kept for the next call: a
// block given back is handed out again for a request it fits, the pool
// never keeps more than its limits, and small requests bypass it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/scratch_pool.h"

using sonde::engine::coll::detail::ScratchAllocator;
using sonde::engine::coll::detail::ScratchBytes;
using sonde::engine::coll::detail::ScratchPool;

TEST_CASE("a large block given back is handed out again for a request it fits") {
  ScratchPool::drain();
  size_t cap = 0;
  uint8_t* a = ScratchPool::acquire(1 << 20, &cap);
  CHECK(cap >= size_t(1 << 20));
  std::memset(a, 7, 1 << 20);  // all of it is usable
  ScratchPool::release(a, cap);
  CHECK(ScratchPool::kept_blocks() == 1);
  CHECK(ScratchPool::kept_bytes() == cap);
  size_t cap2 = 0;
  uint8_t* b = ScratchPool::acquire((1 << 20) - 100, &cap2);
  CHECK(b == a);
  CHECK(cap2 == cap);
  CHECK(ScratchPool::kept_blocks() == 0);
  // Too large for the kept block: a new one.
  ScratchPool::release(b, cap2);
  size_t cap3 = 0;
  uint8_t* c = ScratchPool::acquire(2 << 20, &cap3);
  CHECK(c != a);
  CHECK(ScratchPool::kept_blocks() == 1);
  ScratchPool::release(c, cap3);
  CHECK(ScratchPool::kept_blocks() == 2);
  ScratchPool::drain();
  CHECK(ScratchPool::kept_blocks() == 0);
  CHECK(ScratchPool::kept_bytes() == 0);
}

TEST_CASE("the smallest kept block that fits is chosen") {
  ScratchPool::drain();
  size_t c1, c2, c3;
  uint8_t* big = ScratchPool::acquire(4 << 20, &c1);
  uint8_t* mid = ScratchPool::acquire(1 << 20, &c2);
  uint8_t* small = ScratchPool::acquire(128 << 10, &c3);
  ScratchPool::release(big, c1);
  ScratchPool::release(mid, c2);
  ScratchPool::release(small, c3);
  size_t got = 0;
  uint8_t* p = ScratchPool::acquire(512 << 10, &got);
  CHECK(p == mid);
  ScratchPool::release(p, got);
  ScratchPool::drain();
}

TEST_CASE("the pool keeps at most kMaxBlocks blocks, preferring the larger ones") {
  ScratchPool::drain();
  const size_t n = ScratchPool::kMaxBlocks + 3;
  uint8_t* blocks[ScratchPool::kMaxBlocks + 3];
  size_t caps[ScratchPool::kMaxBlocks + 3];
  for (size_t i = 0; i < n; ++i) blocks[i] = ScratchPool::acquire((i + 1) * ScratchPool::kMinBytes, &caps[i]);
  for (size_t i = 0; i < n; ++i) ScratchPool::release(blocks[i], caps[i]);
  CHECK(ScratchPool::kept_blocks() == ScratchPool::kMaxBlocks);
  size_t expect = 0;
  for (size_t i = n - ScratchPool::kMaxBlocks; i < n; ++i) expect += caps[i];
  CHECK(ScratchPool::kept_bytes() == expect);
  ScratchPool::drain();
}

TEST_CASE("a block larger than the pool's byte limit is freed, not kept") {
  ScratchPool::drain();
  size_t cap = 0;
  uint8_t* huge = ScratchPool::acquire(ScratchPool::kMaxBytes + 4096, &cap);
  ScratchPool::release(huge, cap);
  CHECK(ScratchPool::kept_blocks() == 0);
  CHECK(ScratchPool::kept_bytes() == 0);
}

TEST_CASE("small requests bypass the pool; ScratchBytes gives its block back") {
  ScratchPool::drain();
  {
    ScratchBytes s(100);
    CHECK(s.size() == 100);
    std::memset(s.data(), 1, 100);
  }
  CHECK(ScratchPool::kept_blocks() == 0);
  {
    ScratchBytes s(256 << 10);
    std::memset(s.data(), 1, 256 << 10);
    s.reset(300 << 10);  // the first block goes back, a second is taken
    CHECK(s.size() == size_t(300 << 10));
    CHECK(ScratchPool::kept_blocks() == 1);
  }
  CHECK(ScratchPool::kept_blocks() == 2);
  ScratchPool::drain();
}

TEST_CASE("a vector on ScratchAllocator takes its storage from the pool and gives it back") {
  using Bytes = std::vector<uint8_t, ScratchAllocator<uint8_t>>;
  ScratchPool::drain();
  const uint8_t* first = nullptr;
  {
    Bytes v(1 << 20);
    std::memset(v.data(), 7, v.size());
    first = v.data();
    CHECK(reinterpret_cast<uintptr_t>(first) % 64 == 0);
  }
  CHECK(ScratchPool::kept_blocks() == 1);
  {
    Bytes v(1 << 20);  // the same block
    CHECK(v.data() == first);
    CHECK(ScratchPool::kept_blocks() == 0);
    Bytes z(1000, 0);  // small: not from the pool; an explicit value is written
    CHECK(z[999] == 0);
    CHECK(ScratchPool::kept_blocks() == 0);
    Bytes moved(std::move(v));
    CHECK(moved.data() == first);
  }
  CHECK(ScratchPool::kept_blocks() == 1);
  ScratchPool::drain();
}
