// The fast-box protocol (shm/fast_box.h) on its own, between two threads over
// ordinary memory: one FastBoxes and one Boost ring at a single address, the
// ring read through a RingReader (shm/ring_reader.h) as the transport does.
//
// The transport tests cannot show ThreadSanitizer the box and ring memory
// ordering: even with both ranks as threads, the writer reaches the reader's
// segment through its own mapping of it, at another virtual address, and
// TSan only relates accesses to the same address. Here both threads use the
// same object, so TSan checks that the box's header and payload are ordered
// by its sequence word, the box's reuse by `consumed`, and ring packets by
// the ring's indices; the reader checks the sequence and every byte.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include "tests/transports/test_packets.h"
#include "transports/shm/fast_box.h"
#include "transports/shm/ring.h"
#include "transports/shm/ring_reader.h"

namespace sonde::test {
namespace {

using transport::shm::BoxReader;
using transport::shm::BoxWriter;
using transport::shm::FastBox;
using transport::shm::kFastBoxPayload;

constexpr size_t kRing = transport::shm::kRingSizes[0];

struct Pair {
  transport::shm::RingSlot<kRing> ring;
  transport::shm::FastBoxes boxes;
};

// Set when the reader gives up, so that the writer stops waiting for room.
std::atomic<bool> g_stop{false};

// Waits for `n` bytes of room and pushes them (a whole header, or a piece).
void push(transport::shm::Ring<kRing>& ring, const uint8_t* bytes, size_t n) {
  while (ring.write_available() < n) {
    if (g_stop.load()) return;
    std::this_thread::yield();
  }
  ring.push(reinterpret_cast<const char*>(bytes), n);
}

template <typename Reader>
void pop(Reader& ring, uint8_t* bytes, size_t n) {
  while (n != 0) {
    size_t got = ring.take(reinterpret_cast<char*>(bytes), n);
    if (got == 0) std::this_thread::yield();
    bytes += got;
    n -= got;
  }
}

// Sends `count` packets: box-sized ones through a box when one is free
// (else the ring, as the transport does), larger ones through the ring.
void writer(Pair& pair, uint32_t count, uint64_t seed) {
  BoxWriter boxes(&pair.boxes);
  auto& ring = pair.ring.ring;
  std::mt19937_64 random(seed);
  std::vector<uint8_t> data;
  for (uint32_t seq = 0; seq < count; ++seq) {
    const uint64_t bytes = random() % 4 == 0 ? kFastBoxPayload + random() % 3000 : random() % (kFastBoxPayload + 1);
    const PacketHeader h = make_header(0, seq, bytes);
    data = pattern(0, seq, bytes);
    FastBox* box = bytes <= kFastBoxPayload ? boxes.claim() : nullptr;
    if (box != nullptr) {
      box->header = h;
      if (bytes != 0) std::memcpy(box->payload, data.data(), bytes);
      boxes.post(*box);
      continue;
    }
    push(ring, reinterpret_cast<const uint8_t*>(&h), sizeof h);
    boxes.skip();
    for (size_t at = 0; at < bytes; at += 512) push(ring, data.data() + at, std::min<size_t>(512, bytes - at));
  }
}

// Receives `count` packets; returns what went wrong, or nothing. A stash of
// `Stash` bytes: a small one splits headers between batches.
template <size_t Stash>
std::string reader(Pair& pair, uint32_t count, uint32_t* boxed) {
  BoxReader boxes(&pair.boxes);
  transport::shm::RingReader<transport::shm::Ring<kRing>, Stash> ring(&pair.ring.ring);
  std::vector<uint8_t> data;
  for (uint32_t seq = 0; seq < count; ++seq) {
    BoxReader::Next next;
    while ((next = boxes.locate(ring)) == BoxReader::Next::kNothing) std::this_thread::yield();
    PacketHeader h;
    if (next == BoxReader::Next::kBox) {
      h = boxes.box().header;
      data.assign(boxes.box().payload, boxes.box().payload + std::min<uint64_t>(h.payload, kFastBoxPayload));
      ++*boxed;
    } else {
      pop(ring, reinterpret_cast<uint8_t*>(&h), sizeof h);
      data.resize(h.payload);
      pop(ring, data.data(), data.size());
    }
    std::string problem = header_problem(h, 0, seq);
    if (problem.empty() && data != pattern(0, seq, h.payload))
      problem = "packet " + std::to_string(seq) + ": wrong bytes";
    if (!problem.empty()) return problem;
    boxes.done();
  }
  return {};
}

template <size_t Stash>
void run_pair() {
  for (uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    CAPTURE(Stash);
    auto pair = std::make_unique<Pair>();
    constexpr uint32_t kCount = 20000;
    uint32_t boxed = 0;
    g_stop = false;
    std::thread write([&] { writer(*pair, kCount, seed); });
    const std::string problem = reader<Stash>(*pair, kCount, &boxed);
    g_stop = true;
    write.join();
    CHECK_MESSAGE(problem.empty(), problem);
    CHECK(boxed > kCount / 4);  // the boxes were used, and reused many times over
    CHECK(boxed < kCount);      // ... and so was the ring
  }
}

TEST_CASE("fast boxes and the ring between two threads: exact sequence, intact bytes, boxes reused") {
  run_pair<4096>();  // the transport's stash
  run_pair<200>();   // headers split between batches, payloads popped past the stash
}

}  // namespace
}  // namespace sonde::test
