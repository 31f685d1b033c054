// The TCP-keepalive liveness check alone (transports/ofi/liveness.h): a
// peer process that never calls accept() or is stopped stays healthy past
// the timeout (its kernel answers); a peer process that ends is "closed",
// never "error"; a host that does not answer the connection attempt within
// the timeout is "error". A link cut needs network namespaces: see
// tests/multihost/faults_test.sh (liveness_*).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "transports/ofi/liveness.h"

namespace sonde::transport {
namespace {

using State = Liveness::State;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

sockaddr_in loopback() {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A child process that listens and reports its address, then either never
// polls (poll_first = false: nothing is ever accepted) or polls once a
// peer has connected and then exits normally.
struct Peer {
  pid_t pid = -1;
  std::string address;

  explicit Peer(bool accept_then_exit) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      Liveness me(3);
      sockaddr_in a = loopback();
      if (!me.listen(reinterpret_cast<sockaddr*>(&a), sizeof a)) _exit(2);
      std::string addr = me.address() + "\n";
      if (write(fds[1], addr.data(), addr.size()) != ssize_t(addr.size())) _exit(3);
      if (accept_then_exit) {
        // Accept what is pending after a while, then end like a rank after
        // MPI_Finalize.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        me.poll(now_s());
        _exit(0);
      }
      for (;;) pause();
    }
    close(fds[1]);
    char buf[128] = {};
    size_t got = 0;
    while (got < sizeof buf - 1) {
      ssize_t n = read(fds[0], buf + got, sizeof buf - 1 - got);
      if (n <= 0) break;
      got += size_t(n);
      if (buf[got - 1] == '\n') break;
    }
    close(fds[0]);
    address.assign(buf, got ? got - 1 : 0);
    REQUIRE(!address.empty());
  }
  ~Peer() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Polls `w` every 50 ms for `seconds`; returns every change seen.
std::vector<Liveness::Change> poll_for(Liveness& w, double seconds) {
  std::vector<Liveness::Change> seen;
  double until = now_s() + seconds;
  while (now_s() < until) {
    for (auto& c : w.poll(now_s())) seen.push_back(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return seen;
}

// Polls until `peer` leaves kConnecting/kHealthy or `seconds` pass.
State poll_until_settled(Liveness& w, int peer, double seconds) {
  double until = now_s() + seconds;
  while (now_s() < until) {
    w.poll(now_s());
    State s = w.state(peer);
    if (s == State::kClosed || s == State::kError) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return w.state(peer);
}

TEST_CASE("a stopped peer that never accepts stays healthy past the timeout; killed, it is closed, not lost") {
  Peer peer(false);
  REQUIRE(kill(peer.pid, SIGSTOP) == 0);
  Liveness w(2);
  w.watch(1, peer.address, now_s());
  auto seen = poll_for(w, 7);  // three and a half timeouts
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].peer == 1);
  CHECK(seen[0].state == State::kHealthy);
  CHECK(w.state(1) == State::kHealthy);
  REQUIRE(kill(peer.pid, SIGKILL) == 0);
  waitpid(peer.pid, nullptr, 0);
  peer.pid = -1;
  CHECK(poll_until_settled(w, 1, 5) == State::kClosed);
}

TEST_CASE("a peer that accepted and then exits normally is closed") {
  Peer peer(true);
  Liveness w(2);
  w.watch(7, peer.address, now_s());
  CHECK(poll_until_settled(w, 7, 5) == State::kClosed);
  waitpid(peer.pid, nullptr, 0);
  peer.pid = -1;
}

TEST_CASE("an address nobody listens on any more is closed at once (refused)") {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback();
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(s);
  Liveness w(2);
  w.watch(3, "127.0.0.1:" + std::to_string(ntohs(a.sin_port)), now_s());
  CHECK(poll_until_settled(w, 3, 1) == State::kClosed);
}

TEST_CASE("a connection the far side never completes is lost after the timeout") {
  // A listener with a full accept queue drops further SYNs, as a host that
  // is gone answers none.
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback();
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(s, 0) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  std::vector<int> fillers;
  for (int i = 0; i < 2; ++i) {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
    fillers.push_back(c);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Liveness w(2);
  double start = now_s();
  w.watch(4, "127.0.0.1:" + std::to_string(ntohs(a.sin_port)), start);
  CHECK(poll_until_settled(w, 4, 6) == State::kError);
  CHECK(now_s() - start >= 1.9);
  for (int c : fillers) close(c);
  close(s);
}

TEST_CASE("a process that closes its liveness is closed for its watchers") {
  Liveness me(2), w(2);
  sockaddr_in a = loopback();
  REQUIRE(me.listen(reinterpret_cast<sockaddr*>(&a), sizeof a));
  w.watch(0, me.address(), now_s());
  double until = now_s() + 2;
  while (w.state(0) != State::kHealthy && now_s() < until) {
    me.poll(now_s());
    w.poll(now_s());
  }
  REQUIRE(w.state(0) == State::kHealthy);
  me.poll(now_s());  // accepted: held open
  auto quiet = poll_for(w, 0.3);
  CHECK(quiet.empty());
  me.close();
  CHECK(poll_until_settled(w, 0, 2) == State::kClosed);
}

TEST_CASE("no listener on the unspecified address; an unusable peer address is closed, reported once") {
  Liveness me(2);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  CHECK_FALSE(me.listen(reinterpret_cast<sockaddr*>(&any), sizeof any));
  CHECK(me.address().empty());
  me.watch(5, "not an address", now_s());
  auto first = me.poll(now_s());
  REQUIRE(first.size() == 1);
  CHECK(first[0].state == State::kClosed);
  CHECK(me.poll(now_s()).empty());
}

TEST_CASE("keepalive settings give up after about the timeout") {
  for (double t : {2.0, 3.0, 6.0, 60.0, 900.0}) {
    auto k = Liveness::keepalive_settings(t);
    double gives_up = k.idle_s + double(k.count) * k.interval_s;
    CHECK(gives_up >= t);
    CHECK(gives_up <= t + k.interval_s);
    CHECK(k.user_timeout_ms == unsigned(t * 1000));
  }
}

}  // namespace
}  // namespace sonde::transport
