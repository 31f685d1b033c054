// Fast boxes beside the shm ring: packets of one pair keep their exact order
// whichever of box and ring each one takes, payloads arrive intact straight
// from a box, boxes are reused only after the reader is done with them, and
// busy boxes fall back to the ring and then to backpressure.
//
// Process mode is the deployment (separate address spaces); the same traffic
// also runs with ranks as threads. TSan cannot check the ring's or the boxes'
// memory ordering here, in either mode: each rank reaches a peer's segment
// through its own mapping, at another address, and TSan only relates
// accesses to the same address. fast_box_protocol_test runs the protocol
// over one object so that it can.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "tests/transports/shm_fixture.h"

namespace sonde::test {
namespace {

using transport::shm::kFastBoxes;
using transport::shm::kFastBoxPayload;
using transport::shm::kRingBytes;
constexpr size_t kSmallRing = transport::shm::kRingSizes[0];

// Sizes around every boundary that matters: empty, box-sized, the largest
// box payload and one more, ring-sized and larger than the ring.
uint64_t random_size(std::mt19937_64& random) {
  switch (random() % 10) {
    case 0: return 0;
    case 1: return kFastBoxPayload - random() % 2;
    case 2: return kFastBoxPayload + 1 + random() % 2;
    case 3:
    case 4:
    case 5: return random() % (kFastBoxPayload + 1);
    case 6:
    case 7: return kFastBoxPayload + random() % 8000;
    case 8: return random() % 64;
    default: return random() % 150000;
  }
}

// A fixed opening that puts box and ring packets side by side while the
// reader is not reading: box, ring, box, queued (pump into a box), ring via
// pack(), the largest box payload, one byte more, ...
struct Send {
  uint64_t bytes;
  int path;  // 0: try_send_now, 1: queued contiguous, 2: queued through pack()
};
const Send kOpening[] = {{10, 0},
                         {5000, 0},
                         {0, 0},
                         {3000, 2},
                         {20, 1},
                         {kFastBoxPayload, 0},
                         {kFastBoxPayload + 1, 0},
                         {0, 1},
                         {700, 2},
                         {1, 0},
                         {200000, 1},
                         {kFastBoxPayload, 2},
                         {5, 0}};

// Both ranks send `count` random packets each way (rank 0 starts with
// kOpening while rank 1 waits), progressing at random moments, then wait
// until everything has arrived in order with every byte checked.
void random_mix(FakeExchange& ex, const std::string& job, size_t ring, uint64_t seed, uint32_t count,
                bool my_boxes = true) {
  Endpoint shm(make_shm(ex, job, ring, {}, my_boxes));
  const int me = ex.rank();
  const int peer = 1 - me;
  std::mt19937_64 random(seed * 2 + static_cast<uint64_t>(me));
  CheckingDelivery in(2);
  uint32_t seq = 0;
  auto send = [&](uint64_t bytes, int path) {
    shm.send(me, peer, seq++, bytes, /*fast=*/path == 0, /*contiguous=*/path != 2);
  };
  const uint32_t opening = sizeof kOpening / sizeof kOpening[0];
  if (me == 0) {
    for (const Send& s : kOpening) send(s.bytes, s.path);
  }
  ex.fence();
  for (uint32_t i = 0; i < count; ++i) {
    send(random_size(random), static_cast<int>(random() % 3));
    if (random() % 3 == 0) shm->progress(in);
  }
  const uint32_t expected = count + (peer == 0 ? opening : 0);
  wait_until(
      ex,
      [&] {
        shm->progress(in);
        return shm.all_handed() && in.received_from(peer) == expected;
      },
      "every packet both ways, in sequence");
  ex.fence();  // nobody leaves while the peer still reads our boxes
}

TEST_CASE("shm delivers random mixes of box-sized and large packets in exact sequence") {
  for (size_t ring : {kSmallRing, kRingBytes}) {
    for (uint64_t seed : {1, 2, 3}) {
      CAPTURE(ring);
      CAPTURE(seed);
      const std::string job = unique_job_id();
      RunResult run = run_ranks(2, [&](FakeExchange& ex) { random_mix(ex, job, ring, seed, 400); });
      CHECK_MESSAGE(run.ok, run.report);
    }
  }
}

TEST_CASE("shm random mix with a per-job seed") {
  std::random_device device;
  const uint64_t seed = device();
  CAPTURE(seed);  // a failure names the seed to replay
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) { random_mix(ex, job, kSmallRing, seed, 400); });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm random mix with both ranks as threads of one process") {
  // TSan sees each rank's transport state, not the shared segments (above).
  const std::string job = unique_job_id();
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { random_mix(ex, job, kSmallRing, 7, 300); }, Launch::kThreads);
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm ranks need not agree on fast boxes") {
  // Rank 0 sends everything through the ring, rank 1 uses boxes; both read both.
  const std::string job = unique_job_id();
  RunResult run =
      run_ranks(2, [&](FakeExchange& ex) { random_mix(ex, job, kSmallRing, 11, 300, /*my_boxes=*/ex.rank() == 1); });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm fast boxes are reused across many wraps, with ring packets between them") {
  // Each round the receiver waits while the sender sends kFastBoxes + extra
  // small packets: the boxes take kFastBoxes, the ring the rest (the boxes
  // are busy). The next round starts kFastBoxes + extra sequence numbers on,
  // so over the rounds every box meets every position.
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job, kSmallRing));
    CheckingDelivery in(2);
    uint32_t seq = 0;
    for (uint32_t round = 0; round < 3 * kFastBoxes; ++round) {
      const uint32_t burst = kFastBoxes + round % 4;
      if (ex.rank() == 0) {
        for (uint32_t i = 0; i < burst; ++i) {
          const uint64_t bytes = (seq * 131) % (kFastBoxPayload + 1);
          auto data = pattern(0, seq, bytes);
          // Ring packets are at most 4 x (48 + 1096) bytes: the ring has room.
          RANK_CHECK(shm->try_send_now(1, make_header(0, seq, bytes), data.data()));
          ++seq;
        }
        // Boxes busy, ring still has room for a header: the ring takes it.
        RANK_CHECK(shm->try_send_now(1, make_header(0, seq, 0), nullptr));
        ++seq;
        ex.fence();
        ex.fence();
      } else {
        seq += burst + 1;
        ex.fence();
        wait_until(
            ex,
            [&] {
              shm->progress(in);
              return in.received_from(0) == seq;
            },
            "the round's packets");
        RANK_CHECK(shm->progress(in) == 0);
        ex.fence();
      }
    }
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm streams many thousands of box-sized packets each way while both read") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    const int me = ex.rank();
    const int peer = 1 - me;
    CheckingDelivery in(2, CheckingDelivery::Sinks::kAlternate);
    constexpr uint32_t kCount = 20000;
    std::mt19937_64 random(99 + static_cast<uint64_t>(me));
    std::vector<uint8_t> data;
    for (uint32_t seq = 0; seq < kCount; ++seq) {
      const uint64_t bytes = random() % (kFastBoxPayload + 1);
      data.resize(bytes);
      fill_pattern(data.data(), me, seq, 0, bytes);
      const PacketHeader h = make_header(me, seq, bytes);
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm->try_send_now(peer, h, data.data());
          },
          "room to send");
    }
    wait_until(
        ex,
        [&] {
          shm->progress(in);
          return in.received_from(peer) == kCount;
        },
        "every packet");
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm reader polling while box and ring packets alternate takes neither out of turn") {
  // The reader spins while the writer fills a box and right after pushes the
  // next packet into the ring: a reader that found the box empty and then the
  // ring non-empty must look at the box again before taking the ring's head.
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    CheckingDelivery in(2, CheckingDelivery::Sinks::kContiguous);
    constexpr uint32_t kPairs = 30000;
    if (ex.rank() == 0) {
      std::vector<uint8_t> small(64);
      std::vector<uint8_t> large(kFastBoxPayload + 100);
      for (uint32_t seq = 0; seq < 2 * kPairs; seq += 2) {
        // Both packets ready first, so the ring push follows the box at once.
        const PacketHeader box = make_header(0, seq, seq % 64);
        const PacketHeader ring = make_header(0, seq + 1, kFastBoxPayload + 1 + seq % 99);
        fill_pattern(small.data(), 0, seq, 0, box.payload);
        fill_pattern(large.data(), 0, seq + 1, 0, ring.payload);
        wait_until(
            ex, [&] { return shm->try_send_now(1, box, small.data()); }, "a free box");
        wait_until(
            ex, [&] { return shm->try_send_now(1, ring, large.data()); }, "room in the ring");
      }
    } else {
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(0) == 2 * kPairs;
          },
          "every packet in turn");
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

// Holds packet 0 (a box) inside on_header while the sender tries to reuse
// its box: the writer must treat that box as busy until on_payload_done.
class HoldingDelivery final : public transport::Delivery {
 public:
  explicit HoldingDelivery(FakeExchange& ex) : ex_(ex), checker_(2, CheckingDelivery::Sinks::kContiguous) {}
  PayloadSink* on_header(int peer, const PacketHeader& h) override {
    PayloadSink* sink = checker_.on_header(peer, h);
    if (h.tag == 0) {
      ex_.fence();  // the sender now fills every other box and the ring
      ex_.fence();  // ... and has checked what it could send
    }
    return sink;
  }
  void on_payload_done(int peer, const PacketHeader& h, PayloadSink* sink) override {
    checker_.on_payload_done(peer, h, sink);  // packet 0's bytes are still its own
  }
  uint32_t received_from(int peer) const { return checker_.received_from(peer); }

 private:
  FakeExchange& ex_;
  CheckingDelivery checker_;
};

TEST_CASE("shm keeps a box busy until on_payload_done, then reuses it") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job, kSmallRing));
    HoldingDelivery in(ex);
    constexpr uint64_t kPayload = 100;
    if (ex.rank() == 0) {
      uint32_t seq = 0;
      auto send = [&] {
        auto data = pattern(0, seq, kPayload);
        if (!shm->try_send_now(1, make_header(0, seq, kPayload), data.data())) return false;
        ++seq;
        return true;
      };
      RANK_CHECK(send());  // packet 0, box 0
      ex.fence();          // the receiver is inside on_header of packet 0
      while (send()) {
      }
      // Boxes 1..K-1 and the ring; box 0 stayed busy.
      const uint32_t ring_fit = static_cast<uint32_t>(kSmallRing / (sizeof(PacketHeader) + kPayload));
      RANK_CHECK(seq == kFastBoxes + ring_fit);
      ex.fence();  // let the receiver go on
      const uint32_t total = seq + 3 * kFastBoxes;
      CheckingDelivery none(2);  // rank 1 sends nothing
      while (seq < total) {
        wait_until(
            ex,
            [&] {
              shm->progress(none);
              return send();
            },
            "room again");
      }
      ex.fence();
    } else {
      const uint32_t ring_fit = static_cast<uint32_t>(kSmallRing / (sizeof(PacketHeader) + kPayload));
      const uint32_t total = kFastBoxes + ring_fit + 3 * kFastBoxes;
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(0) == total;
          },
          "every packet, intact");
      ex.fence();
    }
  });
  CHECK_MESSAGE(run.ok, run.report);
}

// Answers every arriving packet from inside on_payload_done, as the engine
// answers an Ssend or a rendezvous request.
class Echo final : public transport::Delivery {
 public:
  Echo(Endpoint& shm, int me) : shm_(shm), me_(me), checker_(2) {}
  PayloadSink* on_header(int peer, const PacketHeader& h) override { return checker_.on_header(peer, h); }
  void on_payload_done(int peer, const PacketHeader& h, PayloadSink* sink) override {
    checker_.on_payload_done(peer, h, sink);
    if (me_ != 1) return;
    shm_.send(me_, peer, replies_, h.payload % 2000, /*fast=*/true, /*contiguous=*/replies_ % 2 == 0);
    ++replies_;
  }
  uint32_t received_from(int peer) const { return checker_.received_from(peer); }

 private:
  Endpoint& shm_;
  int me_;
  CheckingDelivery checker_;
  uint32_t replies_ = 0;
};

TEST_CASE("shm packets sent from inside delivery callbacks keep their sequence") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job, kSmallRing));
    Echo in(shm, ex.rank());
    constexpr uint32_t kCount = 2000;
    if (ex.rank() == 0) {
      std::mt19937_64 random(5);
      for (uint32_t seq = 0; seq < kCount; ++seq) {
        shm.send(0, 1, seq, random_size(random) % 3000, /*fast=*/true);
        shm->progress(in);
      }
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm.all_handed() && in.received_from(1) == kCount;
          },
          "every echo");
    } else {
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return shm.all_handed() && in.received_from(0) == kCount;
          },
          "every packet echoed");
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("SONDE_SHM_FAST_BOXES=0 sends everything through the ring") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    setenv("SONDE_SHM_FAST_BOXES", "0", 1);
    Endpoint shm(make_shm(ex, job, kSmallRing));
    unsetenv("SONDE_SHM_FAST_BOXES");  // read at construction only
    CheckingDelivery in(2);
    if (ex.rank() == 0) {
      uint32_t seq = 0;
      while (shm->try_send_now(1, make_header(0, seq, 0), nullptr)) ++seq;
      RANK_CHECK(seq == kSmallRing / sizeof(PacketHeader));  // the ring alone
      ex.fence();
    } else {
      ex.fence();
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(0) == kSmallRing / sizeof(PacketHeader);
          },
          "every packet");
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
