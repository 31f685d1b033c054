// Liveness of peers that does not depend on the peers calling MPI.
//
// The ofi transport's silence clock (check_idle) cannot tell a peer that
// computes outside MPI from one whose host or link died: answering a
// keepalive frame needs the peer's progress. This module asks the peer's
// *kernel* instead. Each process listens on one TCP socket bound to the IP
// address its provider uses; a process that watches a peer connects to that
// socket with TCP keepalives. The handshake completes in the peer's kernel
// even if the peer never calls accept(), and the kernel answers keepalive
// probes whether the peer process computes, sleeps or is stopped. So:
//   - healthy: the connection is established and the peer's kernel answers;
//   - error:   the peer's host does not answer (keepalive or user timeout,
//              host/net unreachable, or no connection within the timeout):
//              its host or the link is gone;
//   - closed:  the peer's kernel closed or refused the connection (EOF,
//              RST): the peer *process* has ended, maybe normally after
//              MPI_Finalize with its last data still in flight. Not an
//              error here; the caller falls back to its own logic.
// What this cannot see: a peer process that is alive but hung (that is not
// a dead peer), and a dead link on a path other than the one to the
// address given (the provider's own IP, so the same route as its traffic).
//
// Nothing here blocks: every socket is non-blocking and poll() waits 0 s.
// Not thread-safe (the transport's progress is single-threaded).
#pragma once

#include <sys/socket.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace sonde::transport {

class Liveness {
 public:
  enum class State : uint8_t { kNone, kConnecting, kHealthy, kClosed, kError };

  struct Change {
    int peer;
    State state;         // kHealthy, kClosed or kError
    std::string reason;  // kClosed / kError: what the kernel said
    // kError before any connection was made (no answer to the handshake
    // within the timeout, or no route until then): the host, or only this
    // port (a firewall that drops it), does not answer.
    bool never_connected = false;
  };

  // `timeout_s` (> 0): a peer's host that answers nothing for about that
  // long is reported as kError; keepalive probes and the connect deadline
  // derive from it (keepalive_settings()).
  explicit Liveness(double timeout_s);
  ~Liveness();
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  // Listens (non-blocking, SOMAXCONN backlog) on the IP address of `ip`
  // (sockaddr_in or sockaddr_in6; its port is ignored), on a port of the
  // kernel's choice. False, with nothing open, when that fails or the
  // address is not a usable IP (the unspecified address): liveness is then
  // off for this process.
  bool listen(const sockaddr* ip, socklen_t len);
  // "a.b.c.d:port" or "[v6%scope]:port" for peers (format_address);
  // empty if not listening.
  const std::string& address() const { return address_; }

  // Starts watching `peer` through another process's address(): a
  // non-blocking connect, completed by poll(). Watching a peer twice, or a
  // peer already closed or in error, does nothing. An unparseable address
  // makes the peer kClosed (reported by the next poll()).
  void watch(int peer, const std::string& address, double now);
  State state(int peer) const;

  // One poll(..., 0) over the listener and every watched socket: accepts
  // pending connections (held open until close(); closing one would look
  // like death to its watcher), completes connects, notices closes and
  // errors, retries a connect that failed for lack of a route until the
  // deadline. Returns each watched peer whose state changed.
  std::vector<Change> poll(double now);

  // Closes every socket (listener, accepted, watching): watchers of this
  // process see it as ended (kClosed).
  void close();

  // The TCP settings used for a timeout of `timeout_s` seconds (for the
  // docs and tests): detection takes about timeout_s, at most
  // timeout_s + interval.
  struct Keepalive {
    int idle_s, interval_s, count;
    unsigned user_timeout_ms;
  };
  static Keepalive keepalive_settings(double timeout_s);

  // A listening address as address() writes it, and the pure decode step
  // of watch(): another process's text, published at wire-up, accepted
  // exactly as format_address writes it (an IPv4 or IPv6 address, a port
  // in 1..65535) and refused otherwise (fuzzed:
  // tests/fuzz/liveness_address_fuzz.cc).
  static std::string format_address(const sockaddr_storage& a);
  static bool parse_address(const std::string& s, sockaddr_storage* out, socklen_t* len);

 private:
  struct Watch {
    State state = State::kNone;
    int fd = -1;
    sockaddr_storage to{};
    socklen_t to_len = 0;
    double deadline = 0;  // kConnecting: give up (kError) after this
    double retry_at = 0;  // kConnecting without fd: the next attempt from here
    std::string reason;
    bool report = false;  // a state change made outside poll(), for its next result
  };

  void start_connect(Watch& w, double now);
  void settle(int peer, Watch& w, State state, const std::string& reason, std::vector<Change>& out,
              bool never_connected = false);

  double timeout_s_;
  int listener_ = -1;
  std::string address_;
  std::vector<int> accepted_;
  std::unordered_map<int, Watch> watches_;
  std::vector<int> polled_peers_;  // scratch for poll()
};

}  // namespace sonde::transport
