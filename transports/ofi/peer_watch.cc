// Whether the ofi transport's peers are still there: peers the engine waits
// on (watch), keepalives and the silence check, stalled sends, reads and
// credit waits, and TCP-keepalive liveness (liveness.h). The checks run from
// progress().
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

void OfiTransport::watch(int peer) {
  if (!reaches(peer)) return;
  Peer& p = peer_[size_t(peer)];
  if (p.watched) return;
  p.watched = true;
  if (p.send_seq == 0 && p.recv_seq == 0) {
    p.last_heard = now_s();
    p.last_sent = 0;
  }
}

// A connection with nothing in flight never fails a send, so a link that
// dies under it would go unnoticed by a rank waiting for a message from
// the far side. So while we progress, every peer hears from us at least
// every stall_timeout/4 seconds (a keepalive: a credit frame, at most one
// not yet consumed by the peer), and a peer we have not heard from for
// stall_timeout seconds is taken for gone. A peer that stays outside MPI
// (no progress) for that long looks the same: the price of detection.
// Peers we have never exchanged a frame with are left alone unless the
// engine waits on them (watch).
// Silence only counts while we progress: time spent away from progress()
// (computing outside MPI) is forgiven to every peer, which could not have
// been heard meanwhile. Sampled every 64 calls: a long gap between two
// samples holds the time away.
void OfiTransport::note_time() {
  double t = now_s();
  double gap = t - last_tick_;
  if (last_tick_ != 0 && gap > 0.5) {
    for (int peer : cfg_.peers) {
      Peer& p = peer_[size_t(peer)];
      p.last_heard = std::min(t, p.last_heard + gap);
    }
  }
  last_tick_ = t;
}

void OfiTransport::check_idle(double t) {
  double every = cfg_.stall_timeout_s / 4;
  for (int peer : cfg_.peers) {
    Peer& p = peer_[size_t(peer)];
    // Only connections in use: keepalives to every rank of a large job
    // would make the provider connect all to all.
    bool fresh = p.send_seq == 0 && p.recv_seq == 0;
    if (fresh && !p.watched) continue;
    // Its host answers TCP keepalives: silence is a busy peer, not a dead one.
    if (p.live == Peer::Live::kHealthy) p.last_heard = t;
    if (t - p.last_heard > cfg_.stall_timeout_s) {
      fatal("sonde ofi: no sign of life from rank " + std::to_string(peer) + " for " +
            std::to_string(int(t - p.last_heard)) +
            " s (its host or the link is gone, or it stayed outside MPI; SONDE_OFI_STALL_TIMEOUT)");
    }
    // Keepalives go to peers we talk to also under TCP liveness: a peer whose
    // own liveness check fell back to silence must keep hearing from us. Not
    // to one we only watch (a wait on MPI_ANY_SOURCE watches a whole
    // communicator): they would make the provider connect all to all.
    if (fresh && p.live != Peer::Live::kNone) continue;
    if (t - p.last_sent > every && !p.keepalive_out && !free_tx_.empty()) {
      uint32_t seq = p.send_seq;
      if (post_frame(peer, free_tx_.back(), FrameKind::kCredit, sizeof(FrameHeader))) {
        p.keepalive_seq = seq;
        p.keepalive_out = true;
      }
    }
  }
}

void OfiTransport::check_stalls() {
  if (++idle_checks_ % 256) return;
  double t = now_s();
  if (live_) check_liveness(t);
  if (cfg_.stall_timeout_s <= 0) return;
  check_idle(t);
  for (const auto& op : reads_) {
    if (alive(op->peer)) continue;  // its host answers TCP keepalives: a busy sender may serve reads late
    for (const ReadFrag& f : op->frags) {
      if (f.busy && !f.done && t - f.posted_at > cfg_.stall_timeout_s) {
        fatal("sonde ofi: a read of a message of rank " + std::to_string(op->peer) + " has not completed for " +
              std::to_string(int(t - f.posted_at)) + " s (the peer or the link is gone; SONDE_OFI_STALL_TIMEOUT)");
      }
    }
  }
  for (const Buffer& b : tx_) {
    if (b.in_flight && !alive(b.peer) && t - b.posted_at > cfg_.stall_timeout_s) {
      fatal("sonde ofi: a send to rank " + std::to_string(b.peer) + " has not completed for " +
            std::to_string(int(t - b.posted_at)) + " s (the peer or the link is gone; SONDE_OFI_STALL_TIMEOUT)");
    }
  }
  for (int peer : cfg_.peers) {
    Peer& p = peer_[size_t(peer)];
    // A busy receiver whose host answers TCP keepalives legitimately returns
    // no credits.
    if (p.waiting_since != 0 && !alive(peer) && t - p.waiting_since > cfg_.stall_timeout_s) {
      fatal("sonde ofi: no progress sending to rank " + std::to_string(peer) + " for " +
            std::to_string(int(t - p.waiting_since)) + " s (the peer or the link is gone; SONDE_OFI_STALL_TIMEOUT)");
    }
  }
}

// TCP liveness (liveness.h): the peer's kernel answers TCP keepalives
// whether or not the peer calls MPI, so a peer whose liveness connection is
// healthy is never taken for dead by the silence and stall checks; its host
// or link failing is reported in about liveness_timeout_s instead. Providers
// without an IP address (shm...) and liveness_timeout_s <= 0: no liveness,
// the silence checks alone.
std::string OfiTransport::start_liveness() {
  if (cfg_.liveness_timeout_s <= 0 || !info_) return {};
  sockaddr_storage ip{};
  size_t len = 0;
  auto usable = [](const void* a, size_t n) {
    if (!a || n < sizeof(sockaddr_in) || n > sizeof(sockaddr_storage)) return false;
    int family = static_cast<const sockaddr*>(a)->sa_family;
    return family == AF_INET || family == AF_INET6;
  };
  bool sockaddr_format = info_->addr_format == FI_SOCKADDR || info_->addr_format == FI_SOCKADDR_IN ||
                         info_->addr_format == FI_SOCKADDR_IN6;
  if (sockaddr_format && usable(info_->src_addr, info_->src_addrlen)) {
    std::memcpy(&ip, info_->src_addr, info_->src_addrlen);
    len = info_->src_addrlen;
  } else if (sockaddr_format) {
    size_t n = sizeof ip;
    if (fi_getname(&ep_->fid, &ip, &n) == 0 && usable(&ip, n)) len = n;
  }
  if (!len) return {};
  auto live = std::make_unique<Liveness>(cfg_.liveness_timeout_s);
  if (!live->listen(reinterpret_cast<const sockaddr*>(&ip), socklen_t(len))) return {};
  live_ = std::move(live);
  return live_->address();
}

void OfiTransport::check_liveness(double t) {
  // News matter on a scale of seconds: at most one look per 10 ms.
  if (t < live_next_) return;
  live_next_ = t + 0.01;
  for (int peer : cfg_.peers) {
    Peer& p = peer_[size_t(peer)];
    if (p.live == Peer::Live::kPending && p.recv_seq != p.live_recv_seq) {
      p.live_recv_seq = p.recv_seq;
      p.live_heard_at = t;
    }
    if (p.live != Peer::Live::kNone || p.live_addr.empty()) continue;
    if (p.send_seq == 0 && p.recv_seq == 0 && !p.watched) continue;
    p.live = Peer::Live::kPending;
    p.live_recv_seq = p.recv_seq;
    p.live_heard_at = 0;
    live_->watch(peer, p.live_addr, t);
  }
  for (const Liveness::Change& c : live_->poll(t)) {
    Peer& p = peer_[size_t(c.peer)];
    // Its frames still reach us (within the last half timeout) while its
    // liveness port never answered: the host is up and something (a
    // firewall) drops that port. Not a death; this peer keeps the
    // silence checks.
    bool filtered = c.state == Liveness::State::kError && c.never_connected && p.live_heard_at > 0 &&
                    t - p.live_heard_at < cfg_.liveness_timeout_s / 2;
    if (filtered) {
      std::fprintf(stderr,
                   "sonde ofi: rank %d: no TCP connection to rank %d's liveness port (%s) though its frames "
                   "arrive (a firewall?); silence checks only for it (SONDE_OFI_LIVENESS_TIMEOUT)\n",
                   cfg_.my_rank, c.peer, p.live_addr.c_str());
    }
    if (c.state == Liveness::State::kHealthy) {
      p.live = Peer::Live::kHealthy;
    } else if (c.state == Liveness::State::kError && !filtered) {
      fatal("sonde ofi: lost rank " + std::to_string(c.peer) + ": its host does not answer TCP keepalives for ~" +
            std::to_string(int(cfg_.liveness_timeout_s)) + " s (" + c.reason +
            "; link or host gone; SONDE_OFI_LIVENESS_TIMEOUT)");
    } else {
      // Closed: the peer process ended (normally, after MPI_Finalize,
      // with its last frames maybe still in flight) or we could not
      // watch it. Back to the silence checks, from now on: the time
      // liveness vouched for is not silence.
      p.live = Peer::Live::kNone;
      p.live_addr.clear();
      p.last_heard = std::max(p.last_heard, t);
      if (p.waiting_since != 0) p.waiting_since = t;
    }
  }
}

}  // namespace sonde::transport::ofi
