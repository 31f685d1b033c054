// Rendezvous by RMA read through the ofi transport, and its registration
// cache, on forked ranks wired up by an in-memory exchange.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/ofi/ofi_pair.h"

namespace sonde::test {
namespace {

// Rendezvous by RMA read, at the transport's seam: rank 0 announces the
// same buffer three times with a kRts; rank 1 pulls each with start_read
// (contiguous, then through unpack into a scattered sink, then contiguous
// again), sees every fragment and the right bytes, and rank 0 gets a kFin
// per message. The registration cache registers the buffer once.
struct RmaDelivery final : transport::Delivery {
  std::vector<transport::PacketHeader> rts;
  int fins = 0, data_done = 0, acks = 0;
  transport::PayloadSink* on_header(int, const transport::PacketHeader& h) override {
    if (h.type == transport::PacketType::kSyncAck) ++acks;
    if (h.type == transport::PacketType::kRts) rts.push_back(h);
    if (h.type == transport::PacketType::kFin) ++fins;
    return nullptr;
  }
  void on_payload_done(int, const transport::PacketHeader& h, transport::PayloadSink*) override {
    if (h.type == transport::PacketType::kData) ++data_done;
  }
};

struct CountingSink final : transport::PayloadSink {
  std::vector<uint8_t>* out = nullptr;
  size_t chunks = 0, last = 0, next_offset = 0;
  bool in_order = true;
  void unpack(const uint8_t* bytes, size_t offset, size_t n) override {
    in_order = in_order && offset == next_offset;
    next_offset = offset + n;
    std::memcpy(out->data() + offset, bytes, n);
  }
  void on_chunk(size_t received) override {
    in_order = in_order && received > last;
    last = received;
    ++chunks;
  }
};

// The provider's connection first (as MPI_Init's traffic does): rank 1's
// frame goes back only once rank 0's is in; both ranks leave together.
void connect_pair(FakeExchange& ex, transport::Transport& ofi, RmaDelivery& in) {
  transport::PacketHeader hello{};
  hello.type = transport::PacketType::kSyncAck;
  if (ex.rank() == 0)
    while (!ofi.try_send_now(1, hello, nullptr)) ofi.progress(in);
  wait_until(
      ex,
      [&] {
        ofi.progress(in);
        return in.acks == 1;
      },
      "the first packet");
  if (ex.rank() == 1)
    while (!ofi.try_send_now(0, hello, nullptr)) ofi.progress(in);
  settle(ofi, in);
  if (ex.rank() == 0)
    wait_until(
        ex,
        [&] {
          ofi.progress(in);
          return in.acks == 1;
        },
        "the answer");
  ex.fence();
}

// Rank 0 offers `data` (n bytes) to rank 1 for reading: a kRts with its address.
void announce_rts(transport::Transport& ofi, RmaDelivery& in, const uint8_t* data, uint64_t n, uint64_t cookie) {
  transport::PacketHeader h{};
  h.type = transport::PacketType::kRts;
  h.total = n;
  h.send_cookie = cookie;
  h.recv_cookie = reinterpret_cast<uint64_t>(data);
  while (!ofi.try_send_now(1, h, nullptr)) ofi.progress(in);
}

void rma_rendezvous(FakeExchange& ex, const std::string& provider) {
  setenv("SONDE_OFI_READ_BYTES", "1048576", 1);  // this rank's process only; the default is smaller
  Endpoint ofi(make_ofi(ex, provider));
  if (!transport::ofi_has_rma(*ofi)) throw RankFailure(provider + ": no RMA");
  const uint64_t n = 3 * 1024 * 1024 + 123;  // with 1 MiB fragments: 4 reads
  RmaDelivery in;
  connect_pair(ex, *ofi, in);
  if (ex.rank() == 0) {
    std::vector<uint8_t> data = pattern(0, 5, n);
    for (int m = 0; m < 3; ++m) announce_rts(*ofi, in, data.data(), n, 1000 + uint64_t(m));
    wait_until(
        ex,
        [&] {
          ofi->progress(in);
          return in.fins == 3;
        },
        "three kFin");
    RANK_CHECK(transport::ofi_registrations(*ofi) == 1);
    settle(*ofi, in);
    ex.fence();
  } else {
    wait_until(
        ex,
        [&] {
          ofi->progress(in);
          return in.rts.size() == 3;
        },
        "three kRts");
    for (int m = 0; m < 3; ++m) {
      std::vector<uint8_t> got(n, 0);
      CountingSink sink;
      sink.out = &got;
      RANK_CHECK(ofi->start_read(0, in.rts[size_t(m)], m == 1 ? nullptr : got.data(), n, &sink));
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.data_done == m + 1;
          },
          "the read");
      RANK_CHECK(got == pattern(0, 5, n));
      RANK_CHECK(sink.chunks == 3 && sink.in_order);
      if (m == 1) RANK_CHECK(sink.next_offset == n);
    }
    settle(*ofi, in);
    ex.fence();
  }
}

// MPI_Free_mem's hook (Transport::forget_memory): a cached registration of
// freed memory never serves the buffer that next lives at those addresses.
// Rank 0 announces one buffer five times: the second hits the cache; after
// forget_memory the third registers again; the fourth is forgotten while
// lent (between its kRts and the read: the read still completes, the
// region closes with its kFin) and the fifth registers again.
void rma_forget(FakeExchange& ex) {
  Endpoint ofi(make_ofi(ex, "tcp"));
  if (!transport::ofi_has_rma(*ofi)) throw RankFailure("tcp: no RMA");
  const uint64_t n = 256 * 1024 + 5;
  RmaDelivery in;
  connect_pair(ex, *ofi, in);
  if (ex.rank() == 0) {
    std::vector<uint8_t> data = pattern(0, 7, n);
    auto announce = [&](int m) { announce_rts(*ofi, in, data.data(), n, 2000 + uint64_t(m)); };
    auto finished = [&](int fins) {
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.fins == fins;
          },
          "kFin");
    };
    announce(0);
    finished(1);
    RANK_CHECK(transport::ofi_registrations(*ofi) == 1);
    announce(1);
    finished(2);
    RANK_CHECK(transport::ofi_registrations(*ofi) == 1);
    ofi->forget_memory(data.data(), n);
    announce(2);
    finished(3);
    RANK_CHECK(transport::ofi_registrations(*ofi) == 2);
    announce(3);
    ofi->forget_memory(data.data() + n / 2, 1);  // any overlap counts
    ex.fence();                                  // rank 1 reads only now, from the forgotten region
    finished(4);
    announce(4);
    finished(5);
    RANK_CHECK(transport::ofi_registrations(*ofi) == 3);
    settle(*ofi, in);
    ex.fence();
  } else {
    for (int m = 0; m < 5; ++m) {
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.rts.size() == size_t(m + 1);
          },
          "a kRts");
      if (m == 3) ex.fence();
      std::vector<uint8_t> got(n, 0);
      CountingSink sink;
      sink.out = &got;
      RANK_CHECK(ofi->start_read(0, in.rts[size_t(m)], got.data(), n, &sink));
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.data_done == m + 1;
          },
          "the read");
      RANK_CHECK(got == pattern(0, 7, n));
    }
    settle(*ofi, in);
    ex.fence();
  }
}

TEST_CASE("ofi tcp: MPI_Free_mem's forget_memory drops cached registrations, also one still lent") {
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { rma_forget(ex); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp: rendezvous by RMA read, fragment by fragment, registration cached") {
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { rma_rendezvous(ex, "tcp"); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp;ofi_rxm: rendezvous by RMA read, fragment by fragment, registration cached") {
  RunResult run = run_ranks(
      2, [&](FakeExchange& ex) { rma_rendezvous(ex, "tcp;ofi_rxm"); }, Launch::kProcesses, std::chrono::seconds(120));
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
