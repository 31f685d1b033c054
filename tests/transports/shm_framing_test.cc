// The byte-ring framing of the shm transport, seen from outside: headers
// never torn, payloads streamed across wrap-around intact, FIFO order across
// both send paths, dequeue of unstarted items.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>

#include "tests/transports/shm_fixture.h"

namespace sonde::test {
namespace {

using transport::shm::kRingBytes;
constexpr size_t kSmallRing = transport::shm::kRingSizes[0];
constexpr uint32_t kBoxes = transport::shm::kFastBoxes;

std::vector<uint64_t> framing_sizes() {
  std::vector<uint64_t> sizes = {0,    1,    2,    7,      47,      48,    49,    200,          207,
                                 208,  209,  255,  256,    1000,    4047,  4048,  4049,         4095,
                                 4096, 4097, 4143, 10000,  65487,   65488, 65535, 65536,        65537,
                                 0,    0,    3,    131075, 1 << 20, 0,     5,     (1 << 20) - 1};
  std::mt19937_64 random(42);
  for (int i = 0; i < 60; ++i) {
    int bits = static_cast<int>(random() % 21);  // log-uniform up to 1 MiB
    sizes.push_back(random() % ((uint64_t(1) << bits) + 1));
  }
  return sizes;
}

// Both ranks stream every size to each other at once, each packet through a
// different mix of paths (fast path, contiguous item, pack() item) and sinks.
void exchange_all_sizes(FakeExchange& ex, const std::string& job, size_t ring_bytes) {
  Endpoint shm(make_shm(ex, job, ring_bytes));
  const int me = ex.rank();
  const int peer = 1 - me;
  const std::vector<uint64_t> sizes = framing_sizes();
  CheckingDelivery in(2);
  for (uint32_t seq = 0; seq < sizes.size(); ++seq) {
    shm.send(me, peer, seq, sizes[seq], /*fast=*/seq % 3 == 0, /*contiguous=*/seq % 2 == 0);
    if (seq % 5 == 0) shm->progress(in);  // sometimes give the receiver a head start
  }
  wait_until(
      ex,
      [&] {
        shm->progress(in);
        return shm.all_handed() && in.received_from(peer) == sizes.size();
      },
      "all sizes to cross in both directions");
}

TEST_CASE("shm streams packets of 0 B to 1 MiB intact and in order, across ring wrap-around") {
  for (size_t ring : {kSmallRing, kRingBytes}) {
    CAPTURE(ring);
    const std::string job = unique_job_id();
    RunResult run = run_ranks(2, [&](FakeExchange& ex) { exchange_all_sizes(ex, job, ring); });
    CHECK_MESSAGE(run.ok, run.report);
  }
}

TEST_CASE("shm framing holds with both ranks as threads of one process") {
  // Same traffic in one process. TSan sees each rank's transport state but
  // not the rings' memory ordering: the writer reaches the reader's segment
  // through its own mapping, at another address (fast_box_protocol_test
  // covers the ordering over a single mapping).
  const std::string job = unique_job_id();
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { exchange_all_sizes(ex, job, kSmallRing); }, Launch::kThreads);
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm keeps FIFO order between try_send_now and queued items") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    CheckingDelivery in(2);
    if (ex.rank() == 0) {
      auto small = pattern(0, 0, 10);
      RANK_CHECK(shm->try_send_now(1, make_header(0, 0, 10), small.data()));
      shm.enqueue(0, 1, 1, 5 * kRingBytes);  // cannot go at once: stays queued
      auto next = pattern(0, 2, 10);
      RANK_CHECK(!shm->try_send_now(1, make_header(0, 2, 10), next.data()));
      shm.enqueue(0, 1, 2, 10);
      shm.enqueue(0, 1, 3, 3000, /*contiguous=*/false);
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm.all_handed();
          },
          "queued items handed over");
      // Queue empty again: the fast path is open (once the ring has room).
      auto last = pattern(0, 4, 0);
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm->try_send_now(1, make_header(0, 4, 0), last.data());
          },
          "the fast path to reopen");
    } else {
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(0) == 5;
          },
          "5 packets in order");
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm dequeue removes unstarted items and refuses started ones") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job, kSmallRing));
    CheckingDelivery in(2);
    if (ex.rank() == 0) {
      // Fill the fast boxes and the ring with empty packets: the receiver is
      // not reading yet.
      uint32_t seq = 0;
      while (shm->try_send_now(1, make_header(0, seq, 0), nullptr)) ++seq;
      RANK_CHECK(seq == kBoxes + kSmallRing / sizeof(PacketHeader));
      TestItem& big = shm.enqueue(0, 1, seq, 3 * kSmallRing);
      TestItem& dropped = shm.enqueue(0, 1, 999999, 100);
      shm.enqueue(0, 1, seq + 1, 100);
      RANK_CHECK(big.handed == 0);
      RANK_CHECK(shm->dequeue(1, &dropped));
      RANK_CHECK(!shm->dequeue(1, &dropped));
      ex.fence();  // let the receiver read
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return big.handed > 0;
          },
          "the big item to start");
      RANK_CHECK(!big.handed_over);
      RANK_CHECK(!shm->dequeue(1, &big));
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm.all_handed();
          },
          "the rest handed over");
      RANK_CHECK(!dropped.handed_over && dropped.first_bytes == 0);
      ex.fence();
    } else {
      ex.fence();
      const uint32_t expected = kBoxes + kSmallRing / sizeof(PacketHeader) + 2;
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(0) == expected;
          },
          "all but the dropped packet");
      ex.fence();
      RANK_CHECK(shm->progress(in) == 0);
    }
  });
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
