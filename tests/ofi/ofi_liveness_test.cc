// The ofi transport's watch on its peers: the stall timeout's silence
// check and TCP liveness (transports/ofi/liveness.h), with busy, silent,
// firewalled and lost peers, on forked ranks wired up by an in-memory
// exchange.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/ofi/ofi_pair.h"

namespace sonde::test {
namespace {

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
