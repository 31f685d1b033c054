// RingReader (shm/ring_reader.h) over a Boost ring in one thread: the stash
// and the ring read as one FIFO whatever the sizes of pushes and takes, has()
// counts both, and reads larger than the stash go straight from the ring.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "transports/shm/ring.h"
#include "transports/shm/ring_reader.h"

namespace sonde::test {
namespace {

constexpr size_t kRing = transport::shm::kRingSizes[0];
using Ring = transport::shm::Ring<kRing>;

uint8_t byte_at(uint64_t i) { return static_cast<uint8_t>(i * 131 + (i >> 8)); }

TEST_CASE("a ring reader hands out the ring's bytes in order, across refills and direct pops") {
  for (uint64_t seed : {1, 2, 3, 4}) {
    CAPTURE(seed);
    auto ring = std::make_unique<Ring>();
    transport::shm::RingReader<Ring, 256> reader(ring.get());
    std::mt19937_64 random(seed);
    uint64_t pushed = 0, taken = 0;
    std::vector<char> out(4096);
    while (taken < 1'000'000) {
      // Push a random amount that fits.
      size_t room = ring->write_available();
      size_t n = room == 0 ? 0 : random() % (room + 1);
      for (size_t i = 0; i < n; ++i) {
        const char c = static_cast<char>(byte_at(pushed++));
        ring->push(c);
      }
      // has() tells exactly whether that many can be taken.
      const uint64_t held = pushed - taken;
      const size_t ask = random() % 3000;
      REQUIRE(reader.has(ask) == (ask <= held));
      const size_t got = reader.take(out.data(), ask);
      REQUIRE(got <= ask);
      REQUIRE(got <= held);
      if (ask <= held && ask < 128) REQUIRE(got == ask);  // small reads are whole once has() said so
      for (size_t i = 0; i < got; ++i) REQUIRE(static_cast<uint8_t>(out[i]) == byte_at(taken + i));
      taken += got;
    }
  }
}

TEST_CASE("a ring reader takes nothing from an empty ring and says so") {
  auto ring = std::make_unique<Ring>();
  transport::shm::RingReader<Ring> reader(ring.get());
  char c = 0;
  CHECK_FALSE(reader.has(1));
  CHECK(reader.has(0));
  CHECK(reader.take(&c, 1) == 0);
  ring->push('x');
  CHECK(reader.has(1));
  CHECK_FALSE(reader.has(2));
  CHECK(reader.take(&c, 8) == 1);
  CHECK(c == 'x');
  CHECK(reader.stashed() == 0);
}

}  // namespace
}  // namespace sonde::test
