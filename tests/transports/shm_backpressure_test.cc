// Full rings (and busy fast boxes) push back on the sender without blocking it
// or losing order, and ranks that flood each other at once still finish:
// progress() drains inbound rings while outbound ones are full.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "tests/transports/shm_fixture.h"

namespace sonde::test {
namespace {

using transport::shm::kRingBytes;
constexpr size_t kSmallRing = transport::shm::kRingSizes[0];

TEST_CASE("shm full ring and busy fast boxes refuse the fast path, hold queued items, and resume in order") {
  for (bool boxes : {false, true}) {
    for (size_t ring : {kSmallRing, kRingBytes}) {
      CAPTURE(boxes);
      CAPTURE(ring);
      const std::string job = unique_job_id();
      RunResult run = run_ranks(2, [&](FakeExchange& ex) {
        Endpoint shm(make_shm(ex, job, ring, {}, boxes));
        CheckingDelivery in(2);
        constexpr uint64_t kPayload = 100;
        const uint32_t ring_fit = static_cast<uint32_t>(ring / (sizeof(PacketHeader) + kPayload));
        const uint32_t fit = ring_fit + (boxes ? transport::shm::kFastBoxes : 0);
        if (ex.rank() == 0) {
          // The receiver sits in a fence: nothing drains the ring or frees a box.
          uint32_t seq = 0;
          for (;;) {
            auto data = pattern(0, seq, kPayload);
            if (!shm->try_send_now(1, make_header(0, seq, kPayload), data.data())) break;
            ++seq;
          }
          RANK_CHECK(seq == fit);  // exactly as many as the boxes and the ring hold
          std::vector<TestItem*> queued;
          for (uint32_t i = 0; i < 5; ++i) queued.push_back(&shm.enqueue(0, 1, seq + i, 3 * ring, i % 2 == 0));
          // Small enough for a box, but behind the others and no box is free.
          TestItem& small = shm.enqueue(0, 1, seq + 5, 0);
          uint64_t handed = 0;
          for (int i = 0; i < 1000; ++i) shm->progress(in);  // returns: never waits for room
          for (TestItem* item : queued) {
            RANK_CHECK(!item->handed_over);
            handed += item->handed;
          }
          RANK_CHECK(small.first_bytes == 0 && !small.handed_over);
          RANK_CHECK(handed < ring - ring_fit * (sizeof(PacketHeader) + kPayload));  // only the leftover room
          RANK_CHECK(!shm->try_send_now(1, make_header(0, seq + 6, 0), nullptr));
          ex.fence();
          wait_until(
              ex,
              [&] {
                shm->progress(in);
                return shm.all_handed();
              },
              "queued items to drain");
        } else {
          ex.fence();
          wait_until(
              ex,
              [&] {
                shm->progress(in);
                return in.received_from(0) == fit + 6;
              },
              "every packet, in order");
        }
      });
      CHECK_MESSAGE(run.ok, run.report);
    }
  }
}

// Every rank queues `count` messages of `bytes` to every other rank before
// anyone receives, then progresses until everything is handed and received.
void flood_each_other(FakeExchange& ex, const std::string& job, size_t ring, uint32_t count, uint64_t bytes) {
  Endpoint shm(make_shm(ex, job, ring));
  const int me = ex.rank();
  CheckingDelivery in(ex.size());
  for (uint32_t seq = 0; seq < count; ++seq) {
    for (int peer = 0; peer < ex.size(); ++peer) {
      if (peer != me) shm.send(me, peer, seq, bytes + seq, /*fast=*/true, /*contiguous=*/seq % 2 == 0);
    }
  }
  auto done = [&] {
    for (int peer = 0; peer < ex.size(); ++peer) {
      if (peer != me && in.received_from(peer) != count) return false;
    }
    return shm.all_handed();
  };
  wait_until(
      ex,
      [&] {
        shm->progress(in);
        return done();
      },
      "all messages both ways");
  ex.fence();  // nobody leaves while a peer still has an item of ours to drain
}

TEST_CASE("shm ranks sending large messages to each other at once do not deadlock") {
  for (size_t ring : {kSmallRing, kRingBytes}) {
    CAPTURE(ring);
    const std::string job = unique_job_id();
    RunResult run = run_ranks(2, [&](FakeExchange& ex) { flood_each_other(ex, job, ring, 8, 1 << 20); });
    CHECK_MESSAGE(run.ok, run.report);
  }
}

TEST_CASE("shm all-to-all flood among four ranks completes") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(4, [&](FakeExchange& ex) { flood_each_other(ex, job, kSmallRing, 6, 300000); });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm mutual flood with both ranks as threads of one process") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { flood_each_other(ex, job, kSmallRing, 4, 200000); }, Launch::kThreads);
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
