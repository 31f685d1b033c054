// The ofi transport's progress: the completion-queue loop that dispatches
// receive, send and read completions and then moves what waits; error
// completions; the receive path (frames delivered in sequence order to the
// engine's Delivery) and the reposting of receive buffers.
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <cstring>
#include <string>
#include <vector>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

int OfiTransport::progress(Delivery& delivery) {
  if (in_progress_ || !cq_) return 0;
  in_progress_ = true;
  delivery_ = &delivery;
  if ((++calls_ & 63) == 0) note_time();
  int n = 0;
  fi_cq_msg_entry entries[16];
  for (;;) {
    ssize_t got = fi_cq_read(cq_, entries, 16);
    if (got == -FI_EAGAIN) break;
    if (got == -FI_EAVAIL) {
      cq_error();
      continue;
    }
    if (got < 0) fatal(fi_error("fi_cq_read", int(got)));
    for (ssize_t i = 0; i < got; ++i) {
      auto* op = static_cast<Op*>(entries[i].op_context);
      if (op->kind == Op::kRead) {
        n += read_done(static_cast<ReadFrag*>(op));
        continue;
      }
      if (op->kind == Op::kWin) {
        n += window_done(static_cast<WinOp*>(op));
        continue;
      }
      auto* b = static_cast<Buffer*>(op);
      if (b->is_rx) {
        b->len = entries[i].len;
        n += arrived(b);
      } else {
        tx_done(b);
        ++n;
      }
    }
    if (got < 16) break;
  }
  if (!read_wait_.empty()) post_reads();
  if (!win_wait_.empty()) post_window_ops();
  if (!unposted_.empty()) repost_pending();
  for (int peer : cfg_.peers) {
    Peer& p = peer_[size_t(peer)];
    if (!p.queue.empty() || !p.control.empty()) n += pump(peer);
    if (p.owed >= cfg_.credits / 2) send_credits(peer);
  }
  if (n == 0) check_stalls();
  in_progress_ = false;
  return n;
}

void OfiTransport::cq_error() {
  fi_cq_err_entry err{};
  ssize_t rc = fi_cq_readerr(cq_, &err, 0);
  if (rc < 0) return;
  auto* op = static_cast<Op*>(err.op_context);
  if (shut_down_ || err.err == FI_ECANCELED) return;
  char buf[256] = {};
  const char* detail = fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof buf);
  std::string who = " receiving";
  if (op && op->kind == Op::kRead) {
    who = " reading a message of rank " + std::to_string(static_cast<ReadFrag*>(op)->op->peer);
  } else if (op && op->kind == Op::kWin) {
    who = " in a one-sided transfer with rank " + std::to_string(static_cast<WinOp*>(op)->peer);
  } else if (op && op->kind == Op::kTx && static_cast<Buffer*>(op)->peer >= 0) {
    who = " sending to rank " + std::to_string(static_cast<Buffer*>(op)->peer);
  }
  fatal("sonde ofi: network error" + who + ": " + fabric_api().strerror(err.err) +
        (detail ? std::string(" (") + detail + ")" : ""));
}

void OfiTransport::post_receives() {
  for (Buffer& b : rx_) repost(&b);
}

void OfiTransport::repost(Buffer* b) {
  ssize_t rc = fi_recv(ep_, b->data, cfg_.frame_bytes, desc_, FI_ADDR_UNSPEC, &b->ctx);
  if (rc == -FI_EAGAIN) {
    unposted_.push_back(b);
    return;
  }
  if (rc) fatal(fi_error("fi_recv", int(rc)));
}

void OfiTransport::repost_pending() {
  std::vector<Buffer*> retry;
  retry.swap(unposted_);
  for (Buffer* b : retry) repost(b);
}

int OfiTransport::arrived(Buffer* b) {
  if (b->len < sizeof(FrameHeader)) fatal("sonde ofi: short frame received");
  FrameHeader f;
  std::memcpy(&f, b->data, sizeof f);
  if (f.src < 0 || size_t(f.src) >= peer_.size() || !peer_[size_t(f.src)].reached) {
    fatal("sonde ofi: frame from unknown rank " + std::to_string(f.src));
  }
  Peer& p = peer_[size_t(f.src)];
  p.last_heard = now_s();
  if (f.seq != p.recv_seq) {
    p.early.emplace(f.seq, b);
    return 0;
  }
  int n = consume(p, f, b);
  while (!p.early.empty() && p.early.begin()->first == p.recv_seq) {
    Buffer* next = p.early.begin()->second;
    p.early.erase(p.early.begin());
    FrameHeader g;
    std::memcpy(&g, next->data, sizeof g);
    n += consume(p, g, next);
  }
  return n;
}

int OfiTransport::consume(Peer& p, const FrameHeader& f, Buffer* b) {
  ++p.recv_seq;
  p.credits += f.credits;
  if (f.credits) p.waiting_since = 0;
  if (int32_t(f.reserved2 - p.consumed_by_peer) > 0) p.consumed_by_peer = f.reserved2;
  if (p.keepalive_out && int32_t(p.consumed_by_peer - p.keepalive_seq) > 0) p.keepalive_out = false;
  ParsedFrame pf;
  if (const char* why = parse_frame(b->data, b->len, &pf)) {
    fatal(std::string("sonde ofi: malformed frame from rank ") + std::to_string(f.src) + ": " + why);
  }
  const uint8_t* at = pf.payload;
  size_t left = pf.payload_bytes;
  if (f.kind == FrameKind::kFirst) {
    if (p.open) fatal("sonde ofi: malformed packet from rank " + std::to_string(f.src));
    p.header = pf.packet;
    if (pf.has_key) p.keys[p.header.send_cookie] = pf.key;
    // The receiver took the data (kFin) or will have it streamed (kCts):
    // the registration lent with our kRts is no longer needed.
    if (p.header.type == PacketType::kFin || p.header.type == PacketType::kCts) lent_back(f.src, p.header.send_cookie);
    p.open = true;
    p.received = 0;
    p.sink = delivery_->on_header(f.src, p.header);
  } else if (f.kind == FrameKind::kMore) {
    if (!p.open) fatal("sonde ofi: stray payload frame from rank " + std::to_string(f.src));
  }
  if (f.kind != FrameKind::kCredit) {
    ++p.owed;
    if (left > p.header.payload - p.received) fatal("sonde ofi: payload overrun from rank " + std::to_string(f.src));
    if (left && p.sink) {
      if (p.sink->contiguous) {
        std::memcpy(p.sink->contiguous + p.received, at, left);
      } else {
        p.sink->unpack(at, p.received, left);
      }
    }
    p.received += left;
    if (p.received == p.header.payload) {
      p.open = false;
      PacketHeader h = p.header;
      PayloadSink* sink = p.sink;
      p.sink = nullptr;
      // The buffer goes back before the engine runs: its callbacks may send.
      repost(b);
      delivery_->on_payload_done(f.src, h, sink);
      return 1;
    }
    if (p.sink && left) p.sink->on_chunk(p.received);
  }
  repost(b);
  return 0;
}

}  // namespace sonde::transport::ofi
