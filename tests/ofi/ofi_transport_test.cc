// The ofi transport alone: order, bytes and callbacks across frames, credit
// backpressure without deadlock, on forked ranks wired up by an in-memory
// exchange. tcp is the provider between hosts; udp (ofi_rxd) may deliver
// frames out of order, which the transport must hide.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "tests/transports/shm_fixture.h"
#include "transports/ofi/ofi_transport.h"

namespace sonde::test {
namespace {

std::unique_ptr<transport::Transport> make_ofi(FakeExchange& ex, const std::string& provider, int credits = 8,
                                               int tx_buffers = 64, size_t frame = 64 * 1024) {
  transport::OfiConfig config;
  config.my_rank = ex.rank();
  config.world_size = ex.size();
  for (int r = 0; r < ex.size(); ++r)
    if (r != ex.rank()) config.peers.push_back(r);
  config.provider = provider;
  config.credits = credits;
  config.tx_buffers = tx_buffers;
  config.frame_bytes = frame;
  config.fatal = [](const std::string& m) { throw RankFailure(m); };
  return transport::make_ofi_transport(config, ex);
}

// What MPI_Finalize does before its fence: progress until the transport is
// drained or nothing moves for 2 s (a peer already in the fence does not
// acknowledge, but has everything it needs).
void settle(transport::Transport& ofi, transport::Delivery& in) {
  auto quiet = std::chrono::steady_clock::now();
  while (!ofi.drained()) {
    auto now = std::chrono::steady_clock::now();
    if (ofi.progress(in) > 0) {
      quiet = now;
    } else if (now - quiet > std::chrono::seconds(2)) {
      break;
    }
  }
}

// Every rank queues `count` packets of about `bytes` to every other rank
// before anyone receives; all must arrive in order with the right bytes.
void flood(FakeExchange& ex, const std::string& provider, uint32_t count, uint64_t bytes, int credits,
           int tx_buffers, size_t frame) {
  Endpoint ofi(make_ofi(ex, provider, credits, tx_buffers, frame));
  RANK_CHECK(std::string(ofi->name()) == "ofi");
  RANK_CHECK(transport::ofi_selected_provider(*ofi).rfind(provider, 0) == 0);
  const int me = ex.rank();
  CheckingDelivery in(ex.size());
  for (uint32_t seq = 0; seq < count; ++seq) {
    for (int peer = 0; peer < ex.size(); ++peer) {
      if (peer != me) ofi.send(me, peer, seq, bytes * (seq % 3) + seq, /*fast=*/seq % 2 == 1, seq % 4 < 2);
    }
  }
  auto done = [&] {
    for (int peer = 0; peer < ex.size(); ++peer) {
      if (peer != me && in.received_from(peer) != count) return false;
    }
    return ofi.all_handed();
  };
  // Generous: ofi_rxd recovers datagrams dropped under load by timed
  // retransmission.
  wait_until(ex, [&] { ofi->progress(in); return done(); }, "all packets both ways", std::chrono::seconds(90));
  settle(*ofi, in);
  ex.fence();
}

TEST_CASE("ofi tcp: packets of many frames arrive in order with every byte, both sink kinds") {
  RunResult run = run_ranks(3, [&](FakeExchange& ex) { flood(ex, "tcp", 24, 200000, 8, 64, 64 * 1024); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp: two credits and two send buffers still move everything, no deadlock") {
  RunResult run = run_ranks(2, [&](FakeExchange& ex) { flood(ex, "tcp", 40, 30000, 2, 2, 4096); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi udp (ofi_rxd): frames the provider may reorder are delivered in order") {
  RunResult run = run_ranks(2, [&](FakeExchange& ex) { flood(ex, "udp", 16, 20000, 4, 8, 8192); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi: a peer that does not receive pushes back; try_send_now refuses, queued items wait in order") {
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint ofi(make_ofi(ex, "tcp", 4, 64, 4096));
    CheckingDelivery in(2);
    // One packet each way first, so the provider's connection is up: rank 1
    // answers only once it has rank 0's, so its answer returns that credit.
    if (ex.rank() == 0) ofi.send(0, 1, 0, 10, true);
    wait_until(ex, [&] { ofi->progress(in); return in.received_from(1 - ex.rank()) == 1; }, "the first packet");
    if (ex.rank() == 1) ofi.send(1, 0, 0, 10, true);
    settle(*ofi, in);
    if (ex.rank() == 0) {
      wait_until(ex, [&] { ofi->progress(in); return in.received_from(1) == 1; }, "the answer");
    }
    ex.fence();
    if (ex.rank() == 0) {
      // Rank 1 sits in the fence: no credits come back after the first 4.
      // (The provider may say EAGAIN while it connects: keep progressing.)
      uint32_t seq = 1;
      for (int i = 0; i < 5000; ++i) {
        auto data = pattern(0, seq, 100);
        if (ofi->try_send_now(1, make_header(0, seq, 100), data.data())) {
          ++seq;
        } else {
          ofi->progress(in);
        }
      }
      if (seq != 5) throw RankFailure("sent " + std::to_string(seq - 1) + " packets on 4 credits");
      TestItem& big = ofi.enqueue(0, 1, seq, 50000, false);
      TestItem& last = ofi.enqueue(0, 1, seq + 1, 10);
      for (int i = 0; i < 2000; ++i) ofi->progress(in);
      RANK_CHECK(big.first_bytes == 0 && !big.handed_over);
      RANK_CHECK(ofi->dequeue(1, &last));
      RANK_CHECK(!ofi->try_send_now(1, make_header(0, seq + 1, 0), nullptr));
      ex.fence();
      wait_until(ex, [&] { ofi->progress(in); return ofi.all_handed(); }, "queued item to drain");
      settle(*ofi, in);
      RANK_CHECK(big.handed_over && big.progresses > 0);
      ex.fence();
    } else {
      ex.fence();
      wait_until(ex, [&] { ofi->progress(in); return in.received_from(0) == 6; }, "every packet, in order");
      ex.fence();
    }
  });
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
