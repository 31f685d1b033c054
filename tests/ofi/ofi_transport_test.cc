// The ofi transport alone: order, bytes and callbacks across frames, credit
// backpressure without deadlock, on forked ranks wired up by an in-memory
// exchange. tcp is the provider between hosts; udp (ofi_rxd) may deliver
// frames out of order, which the transport must hide.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <rdma/fabric.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

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

// Does libfabric offer an FI_EP_RDM endpoint by provider `name` (exactly)?
bool libfabric_has_rdm(const char* name) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup(name);
  fi_info* list = nullptr;
  bool found = false;
  if (fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list) == 0) {
    for (fi_info* i = list; i; i = i->next) found |= std::string(i->fabric_attr->prov_name) == name;
    fi_freeinfo(list);
  }
  fi_freeinfo(hints);
  return found;
}

// The provider name the transport must have picked when asked for `asked`:
// "tcp" means TCP's native RDM endpoint where libfabric has one ("net" in
// 1.17, "tcp" itself from 1.18), else ofi_rxm over tcp.
std::string expected_provider(const std::string& asked) {
  if (asked != "tcp") return asked;
  if (libfabric_has_rdm("net")) return "net";
  if (libfabric_has_rdm("tcp")) return "tcp";
  return "tcp;ofi_rxm";
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
    if (ex.rank() == 0) ofi.send(0, 1, 0, 10, true);
    wait_until(
        ex,
        [&] {
          ofi->progress(in);
          return in.received_from(1 - ex.rank()) == 1;
        },
        "the first packet");
    if (ex.rank() == 1) ofi.send(1, 0, 0, 10, true);
    settle(*ofi, in);
    if (ex.rank() == 0) {
      wait_until(
          ex,
          [&] {
            ofi->progress(in);
            return in.received_from(1) == 1;
          },
          "the answer");
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

// A two-rank tcp transport with these timeouts (the environment's
// overrides cleared), its fatal errors thrown as RankFailure.
transport::OfiConfig timed_pair(FakeExchange& ex, double stall_timeout_s, double liveness_timeout_s) {
  transport::OfiConfig config;
  config.my_rank = ex.rank();
  config.world_size = ex.size();
  config.peers = {1 - ex.rank()};
  config.provider = "tcp";
  config.stall_timeout_s = stall_timeout_s;
  config.liveness_timeout_s = liveness_timeout_s;
  config.fatal = [](const std::string& m) { throw RankFailure(m); };
  unsetenv("SONDE_OFI_STALL_TIMEOUT");
  unsetenv("SONDE_OFI_LIVENESS_TIMEOUT");
  return config;
}

// Rank 0 sends a packet and rank 1 answers it: the two have talked, so
// each watches the other.
void greet(FakeExchange& ex, Endpoint& ofi, CheckingDelivery& in) {
  if (ex.rank() == 0) ofi.send(0, 1, 0, 10, true);
  wait_until(
      ex,
      [&] {
        ofi->progress(in);
        return in.received_from(1 - ex.rank()) == 1;
      },
      "the first packet");
  if (ex.rank() == 1) ofi.send(1, 0, 0, 10, true);
  if (ex.rank() == 0)
    wait_until(
        ex,
        [&] {
          ofi->progress(in);
          return in.received_from(1) == 1;
        },
        "the answer");
}

// Progresses until `until`; what the transport reported fatal, empty if
// nothing.
std::string progress_until(Endpoint& ofi, CheckingDelivery& in, std::chrono::steady_clock::time_point until) {
  try {
    while (std::chrono::steady_clock::now() < until) ofi->progress(in);
  } catch (const RankFailure& e) {
    return e.what();
  }
  return {};
}

// TCP liveness (liveness.h) at the transport's seam: rank 1 stays away from
// progress for three times the stall timeout after the two have talked.
// Rank 0, progressing all along, must keep it for alive while its host
// answers keepalives; with liveness off the same silence is taken for a
// dead peer ("no sign of life"). Returns what rank 0's transport reported,
// empty if nothing.
std::string busy_peer(FakeExchange& ex, double liveness_timeout_s) {
  Endpoint ofi(transport::make_ofi_transport(timed_pair(ex, 2, liveness_timeout_s), ex));
  CheckingDelivery in(2);
  greet(ex, ofi, in);
  settle(*ofi, in);
  ex.fence();
  std::string reported;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  if (ex.rank() == 1) {
    std::this_thread::sleep_until(until);  // busy: no progress at all
  } else {
    reported = progress_until(ofi, in, until);
  }
  ex.fence();
  if (ex.rank() == 1 || reported.empty()) settle(*ofi, in);
  return reported;
}

TEST_CASE("ofi tcp: a peer away from progress past the stall timeout stays alive while its host answers TCP") {
  RunResult run = run_ranks(
      2,
      [&](FakeExchange& ex) {
        std::string reported = busy_peer(ex, 2);
        if (!reported.empty()) throw RankFailure("busy peer taken for gone: " + reported);
      },
      Launch::kProcesses, std::chrono::seconds(60));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp: with liveness off the same busy peer is taken for gone by its silence") {
  RunResult run = run_ranks(
      2,
      [&](FakeExchange& ex) {
        std::string reported = busy_peer(ex, 0);
        if (ex.rank() == 0 && reported.find("no sign of life from rank 1") == std::string::npos) {
          throw RankFailure("expected the silence check to fire, got: \"" + reported + "\"");
        }
      },
      Launch::kProcesses, std::chrono::seconds(60));
  CHECK_MESSAGE(run.ok, run.report);
}

// Which providers get TCP liveness: those whose address is an IP address,
// all of them here. (The shm provider, whose addresses are strings, does
// not open in this forked harness: fi_domain ENODATA.)
TEST_CASE("ofi: TCP liveness listens on the provider's IP address unless turned off") {
  for (const char* provider : {"tcp", "tcp;ofi_rxm", "sockets", "udp"}) {
    for (double timeout : {60.0, 0.0}) {
      RunResult run = run_ranks(
          2,
          [&](FakeExchange& ex) {
            unsetenv("SONDE_OFI_LIVENESS_TIMEOUT");
            transport::OfiConfig config;
            config.my_rank = ex.rank();
            config.world_size = 2;
            config.peers = {1 - ex.rank()};
            config.provider = provider;
            config.liveness_timeout_s = timeout;
            config.fatal = [](const std::string& m) { throw RankFailure(m); };
            auto ofi = transport::make_ofi_transport(config, ex);
            std::string live = transport::ofi_liveness_address(*ofi);
            std::fprintf(stderr, "%s (%g s): \"%s\"\n", provider, timeout, live.c_str());
            if (live.empty() == (timeout > 0))
              throw RankFailure(std::string(provider) + ": liveness address \"" + live + "\"");
            ex.fence();
            ofi->shutdown();
          },
          Launch::kProcesses, std::chrono::seconds(60));
      INFO(provider);
      CHECK_MESSAGE(run.ok, run.report);
    }
  }
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

// The exchange as the transport sees it, but rank 1's liveness address
// replaced by `fake`.
class FakeLiveAddress final : public transport::Exchange {
 public:
  FakeLiveAddress(FakeExchange& ex, std::string fake) : ex_(ex), fake_(std::move(fake)) {}
  void put(std::string_view key, std::string_view value) override { ex_.put(key, value); }
  void commit() override { ex_.commit(); }
  void fence() override { ex_.fence(); }
  std::optional<std::string> get(int rank, std::string_view key) override {
    if (key == "ofi.live" && rank == 1) return fake_;
    return ex_.get(rank, key);
  }

 private:
  FakeExchange& ex_;
  std::string fake_;
};

// Rank 0 is given, as rank 1's liveness address, a port whose SYNs are
// dropped (a listener with a full accept queue): the liveness connection
// never forms. If rank 1's frames keep arriving meanwhile (`peer_talks`),
// that is a filtered port, not a dead host: no fatal, silence checks only.
// If rank 1 falls silent, a host that answers neither frames nor TCP is
// lost. Returns what rank 0's transport reported, empty if nothing.
std::string filtered_port(FakeExchange& ex, bool peer_talks) {
  int hole = -1;
  std::vector<int> fillers;
  std::string fake = "127.0.0.1:1";
  if (ex.rank() == 0) {
    hole = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    RANK_CHECK(bind(hole, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(hole, 0) == 0 &&
               getsockname(hole, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    for (int i = 0; i < 2; ++i) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      fillers.push_back(c);
    }
    fake = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  FakeLiveAddress live_ex(ex, fake);
  Endpoint ofi(transport::make_ofi_transport(timed_pair(ex, 600, 2), live_ex));
  CheckingDelivery in(2);
  greet(ex, ofi, in);
  ex.fence();
  std::string reported;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  if (ex.rank() == 1) {
    uint32_t seq = 1;
    while (peer_talks && std::chrono::steady_clock::now() < until) {
      ofi.send(1, 0, seq++, 10, true);
      auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (std::chrono::steady_clock::now() < next) ofi->progress(in);
    }
    std::this_thread::sleep_until(until);
  } else {
    reported = progress_until(ofi, in, until);
  }
  ex.fence();
  if (ex.rank() == 1 || reported.empty()) settle(*ofi, in);
  for (int c : fillers) close(c);
  if (hole >= 0) close(hole);
  return reported;
}

TEST_CASE("ofi tcp: a liveness port that never answers while the peer's frames arrive is a firewall, not a death") {
  RunResult run = run_ranks(
      2,
      [&](FakeExchange& ex) {
        std::string reported = filtered_port(ex, true);
        if (!reported.empty()) throw RankFailure("talking peer taken for gone: " + reported);
      },
      Launch::kProcesses, std::chrono::seconds(60));
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("ofi tcp: a peer that answers neither frames nor TCP connection attempts is lost") {
  RunResult run = run_ranks(
      2,
      [&](FakeExchange& ex) {
        std::string reported = filtered_port(ex, false);
        if (ex.rank() == 0 && reported.find("lost rank 1") == std::string::npos) {
          throw RankFailure("expected \"lost rank 1\", got: \"" + reported + "\"");
        }
      },
      Launch::kProcesses, std::chrono::seconds(60));
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
