// The ofi transport alone: order, bytes and callbacks across frames, credit
// backpressure without deadlock, the progress mode each provider gets, on
// forked ranks wired up by an in-memory exchange. tcp is the provider
// between hosts; udp (ofi_rxd) may deliver frames out of order, which the
// transport must hide.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>

#include "tests/ofi/ofi_pair.h"

namespace sonde::test {
namespace {

// Every rank queues `count` packets of about `bytes` to every other rank
// before anyone receives; all must arrive in order with the right bytes.
void flood(FakeExchange& ex, const std::string& provider, uint32_t count, uint64_t bytes, int credits, int tx_buffers,
           size_t frame) {
  Endpoint ofi(make_ofi(ex, provider, credits, tx_buffers, frame));
  RANK_CHECK(std::string(ofi->name()) == "ofi");
  RANK_CHECK(transport::ofi_selected_provider(*ofi).rfind(expected_provider(provider) + ";", 0) == 0);
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
  wait_until(
      ex,
      [&] {
        ofi->progress(in);
        return done();
      },
      "all packets both ways", std::chrono::seconds(90));
  settle(*ofi, in);
  ex.fence();
}

TEST_CASE("ofi tcp: packets of many frames arrive in order with every byte, both sink kinds") {
  RunResult run = run_ranks(
      3, [&](FakeExchange& ex) { flood(ex, "tcp", 24, 200000, 8, 64, 64 * 1024); }, Launch::kProcesses,
      std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp: two credits and two send buffers still move everything, no deadlock") {
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { flood(ex, "tcp", 40, 30000, 2, 2, 4096); }, Launch::kProcesses,
      std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

// The layered endpoint, asked for by its full name (libfabric 1.17 offers
// it first): the same traffic through it.
TEST_CASE("ofi tcp;ofi_rxm asked by name: packets of many frames arrive in order, both sink kinds") {
  RunResult run = run_ranks(
      3, [&](FakeExchange& ex) { flood(ex, "tcp;ofi_rxm", 24, 200000, 8, 64, 64 * 1024); }, Launch::kProcesses,
      std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi udp (ofi_rxd): frames the provider may reorder are delivered in order") {
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { flood(ex, "udp", 16, 20000, 4, 8, 8192); }, Launch::kProcesses,
      std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi: a peer that does not receive pushes back; try_send_now refuses, queued items wait in order") {
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint ofi(make_ofi(ex, "tcp", 4, 64, 4096));
    CheckingDelivery in(2);
    // One packet each way first, so the provider's connection is up: rank 1
    // answers only once it has rank 0's, so its answer returns that credit.
    greet(ex, ofi, in);
    settle(*ofi, in);
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
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return ofi.all_handed();
          },
          "queued item to drain");
      settle(*ofi, in);
      RANK_CHECK(big.handed_over && big.progresses > 0);
      ex.fence();
    } else {
      ex.fence();
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.received_from(0) == 6;
          },
          "every packet, in order");
      ex.fence();
    }
  });
  CHECK_MESSAGE(run.ok, run.report);
}

// sockets reports automatic progress by default and then runs a spinning
// progress thread that competes with the ranks' polling (3.7 ms per half
// round trip on two cores, docs/ofi.md): the transport asks it for manual
// progress. SONDE_OFI_PROGRESS=manual asks every provider that offers it,
// =auto keeps the provider's default (for sockets: automatic).
TEST_CASE("ofi: sockets is driven by the engine's own progress; SONDE_OFI_PROGRESS chooses for any provider") {
  struct Case {
    const char* provider;
    const char* mode;  // SONDE_OFI_PROGRESS, null: unset
    bool manual;       // expected
  };
  for (Case c : {Case{"sockets", nullptr, true}, Case{"sockets", "auto", false}, Case{"tcp", "manual", true},
                 Case{"tcp;ofi_rxm", "manual", true}, Case{"udp", "manual", true}}) {
    RunResult run = run_ranks(
        2,
        [&](FakeExchange& ex) {
          if (c.mode) setenv("SONDE_OFI_PROGRESS", c.mode, 1);
          else unsetenv("SONDE_OFI_PROGRESS");
          Endpoint ofi(make_ofi(ex, c.provider));
          if (transport::ofi_manual_progress(*ofi) != c.manual) {
            throw RankFailure(std::string("progress is ") + (c.manual ? "automatic" : "manual") + " on " +
                              transport::ofi_selected_provider(*ofi));
          }
          // And data still moves: one packet each way.
          CheckingDelivery in(2);
          greet(ex, ofi, in);
          settle(*ofi, in);
          ex.fence();
        },
        Launch::kProcesses, std::chrono::seconds(60));
    INFO(c.provider, " SONDE_OFI_PROGRESS=", c.mode ? c.mode : "(unset)");
    CHECK_MESSAGE(run.ok, run.report);
  }
  // A value it does not know fails start-up on every rank, naming it.
  RunResult bad = run_ranks(
      2,
      [&](FakeExchange& ex) {
        setenv("SONDE_OFI_PROGRESS", "sometimes", 1);
        try {
          make_ofi(ex, "tcp");
        } catch (const std::runtime_error& e) {
          if (std::string(e.what()).find("SONDE_OFI_PROGRESS is \"sometimes\"") != std::string::npos) return;
          throw RankFailure(std::string("unexpected error: ") + e.what());
        }
        throw RankFailure("a bad SONDE_OFI_PROGRESS was accepted");
      },
      Launch::kProcesses, std::chrono::seconds(60));
  CHECK_MESSAGE(bad.ok, bad.report);
  unsetenv("SONDE_OFI_PROGRESS");
}

}  // namespace
}  // namespace sonde::test
