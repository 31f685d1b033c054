// TCP-keepalive liveness of peers: see liveness.h.
#include "transports/ofi/liveness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace sonde::transport {

namespace {

// Errors that mean the peer's host (or the link to it) does not answer. The
// others a watching socket can get (ECONNRESET, ECONNREFUSED, EPIPE, and
// anything unexpected) are taken as "the process ended": never fatal on
// their own, the caller keeps its own checks.
bool host_lost(int err) {
  return err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH || err == EHOSTDOWN || err == ENETDOWN;
}

}  // namespace

std::string Liveness::format_address(const sockaddr_storage& a) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
  inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
  std::string s = std::string("[") + ip;
  if (in6->sin6_scope_id) s += "%" + std::to_string(in6->sin6_scope_id);
  return s + "]:" + std::to_string(ntohs(in6->sin6_port));
}

bool Liveness::parse_address(const std::string& s, sockaddr_storage* out, socklen_t* len) {
  std::memset(out, 0, sizeof *out);
  // Anything strtoul or inet_pton tolerate beyond what format_address
  // writes (signs, spaces, leading zeros, other spellings of an IPv6
  // address) is refused by the comparison at the end.
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 >= s.size()) return false;
  char* end = nullptr;
  unsigned long port = std::strtoul(s.c_str() + colon + 1, &end, 10);
  if (*end || port == 0 || port > 65535) return false;
  if (s[0] == '[') {
    if (colon < 2 || s[colon - 1] != ']') return false;
    std::string ip = s.substr(1, colon - 2);
    auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
    if (size_t pct = ip.find('%'); pct != std::string::npos) {
      in6->sin6_scope_id = uint32_t(std::strtoul(ip.c_str() + pct + 1, nullptr, 10));
      ip.resize(pct);
    }
    if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) != 1) return false;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(uint16_t(port));
    *len = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    if (inet_pton(AF_INET, s.substr(0, colon).c_str(), &in->sin_addr) != 1) return false;
    in->sin_family = AF_INET;
    in->sin_port = htons(uint16_t(port));
    *len = sizeof(sockaddr_in);
  }
  return format_address(*out) == s;
}

namespace {

int socket_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

}  // namespace

Liveness::Keepalive Liveness::keepalive_settings(double timeout_s) {
  // The first probe after timeout/4 of quiet, then one every timeout/8;
  // TCP_USER_TIMEOUT (which, with keepalives on, decides when unanswered
  // probes end the connection) and the probe count both say timeout_s.
  Keepalive k;
  k.idle_s = std::max(1, int(timeout_s / 4));
  k.interval_s = std::max(1, int(timeout_s / 8));
  k.count = std::max(1, int(std::ceil((timeout_s - k.idle_s) / k.interval_s)));
  k.user_timeout_ms = unsigned(std::max(1.0, timeout_s) * 1000);
  return k;
}

Liveness::Liveness(double timeout_s) : timeout_s_(timeout_s) {}

Liveness::~Liveness() { close(); }

bool Liveness::listen(const sockaddr* ip, socklen_t len) {
  sockaddr_storage a{};
  if (!ip || len > sizeof a) return false;
  std::memcpy(&a, ip, len);
  if (a.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a);
    if (in->sin_addr.s_addr == htonl(INADDR_ANY)) return false;
    in->sin_port = 0;
    len = sizeof(sockaddr_in);
  } else if (a.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr)) return false;
    in6->sin6_port = 0;
    len = sizeof(sockaddr_in6);
  } else {
    return false;
  }
  int fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  socklen_t got = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &got) != 0) {
    ::close(fd);
    return false;
  }
  listener_ = fd;
  address_ = format_address(a);
  return true;
}

void Liveness::watch(int peer, const std::string& address, double now) {
  Watch& w = watches_[peer];
  if (w.state != State::kNone) return;
  w.state = State::kConnecting;
  w.deadline = now + timeout_s_;
  if (!parse_address(address, &w.to, &w.to_len)) {
    w.state = State::kClosed;  // nothing to watch
    w.reason = "unusable liveness address \"" + address + "\"";
    w.report = true;
    return;
  }
  start_connect(w, now);
}

Liveness::State Liveness::state(int peer) const {
  auto it = watches_.find(peer);
  return it == watches_.end() ? State::kNone : it->second.state;
}

// A new non-blocking connection attempt. A failure at once either waits
// for a retry (no route yet: fd stays -1 until retry_at) or ends the watch
// (kClosed, reported by the next poll()).
void Liveness::start_connect(Watch& w, double now) {
  int fd = socket(w.to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    w.state = State::kClosed;  // out of descriptors, say: the caller's own checks remain
    w.reason = std::string("cannot open a socket: ") + std::strerror(errno);
    w.report = true;
    return;
  }
  Keepalive k = keepalive_settings(timeout_s_);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &k.idle_s, sizeof k.idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &k.interval_s, sizeof k.interval_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &k.count, sizeof k.count);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &k.user_timeout_ms, sizeof k.user_timeout_ms);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&w.to), w.to_len) == 0 || errno == EINPROGRESS) {
    w.fd = fd;
    return;
  }
  int err = errno;
  ::close(fd);
  w.reason = std::strerror(err);
  if (host_lost(err)) {
    w.retry_at = now + 1;
  } else {
    w.state = State::kClosed;
    w.report = true;
  }
}

void Liveness::settle(int peer, Watch& w, State state, const std::string& reason, std::vector<Change>& out,
                      bool never_connected) {
  if (w.fd >= 0) ::close(w.fd);
  w.fd = -1;
  w.state = state;
  w.reason = reason;
  out.push_back({peer, state, reason, never_connected});
}

std::vector<Liveness::Change> Liveness::poll(double now) {
  std::vector<Change> out;
  std::vector<pollfd> fds;
  polled_peers_.clear();
  if (listener_ >= 0) fds.push_back({listener_, POLLIN, 0});
  for (auto& [peer, w] : watches_) {
    if (w.state == State::kConnecting && w.fd < 0) {
      if (now >= w.deadline) {
        settle(peer, w, State::kError,
               "no connection within " + std::to_string(int(timeout_s_)) + " s (" +
                   (w.reason.empty() ? "no answer" : w.reason) + ")",
               out, true);
        continue;
      }
      if (now >= w.retry_at) start_connect(w, now);
    }
    if (w.report) {
      w.report = false;
      out.push_back({peer, w.state, w.reason});
      continue;
    }
    if (w.fd < 0) continue;
    fds.push_back({w.fd, short(w.state == State::kConnecting ? POLLOUT : POLLIN), 0});
    polled_peers_.push_back(peer);
  }
  if (fds.empty()) return out;
  int n = ::poll(fds.data(), fds.size(), 0);
  size_t first = listener_ >= 0 ? 1 : 0;
  if (n > 0 && first && (fds[0].revents & POLLIN)) {
    for (;;) {
      int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;  // EAGAIN, or out of descriptors: the rest wait in the backlog, answered by the kernel
      accepted_.push_back(fd);
    }
  }
  for (size_t i = first; i < fds.size(); ++i) {
    int peer = polled_peers_[i - first];
    Watch& w = watches_[peer];
    short ev = fds[i].revents;
    if (w.state == State::kConnecting) {
      if (!ev) {
        if (now >= w.deadline) {
          settle(peer, w, State::kError, "no connection within " + std::to_string(int(timeout_s_)) + " s", out, true);
        }
        continue;
      }
      int err = socket_error(w.fd);
      if (err == 0) {
        w.state = State::kHealthy;
        out.push_back({peer, State::kHealthy, {}});
      } else if (host_lost(err) && now < w.deadline) {
        ::close(w.fd);  // e.g. no ARP answer yet: try again until the deadline
        w.fd = -1;
        w.reason = std::strerror(err);
        w.retry_at = now + 1;
      } else {
        settle(peer, w, host_lost(err) ? State::kError : State::kClosed, std::strerror(err), out, true);
      }
      continue;
    }
    if (!ev) continue;
    // Healthy: the peer never sends, so readable means EOF or an error.
    int err = socket_error(w.fd);
    if (err == 0) {
      char buf[64];
      ssize_t got = recv(w.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      if (got < 0) err = errno;
    }
    if (err == 0) {
      settle(peer, w, State::kClosed, "connection closed by the peer", out);
    } else {
      settle(peer, w, host_lost(err) ? State::kError : State::kClosed, std::strerror(err), out);
    }
  }
  return out;
}

void Liveness::close() {
  if (listener_ >= 0) ::close(listener_);
  listener_ = -1;
  for (int fd : accepted_) ::close(fd);
  accepted_.clear();
  for (auto& [peer, w] : watches_) {
    if (w.fd >= 0) ::close(w.fd);
    w.fd = -1;
  }
}

}  // namespace sonde::transport
