// The ofi transport's send path: packets cut into frames, sent at once
// when a credit and a bounce buffer are free (try_send_now), else queued
// per peer and pumped during progress; credit-only frames.
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

bool OfiTransport::try_send_now(int peer, const PacketHeader& header, const void* payload) {
  Peer& p = peer_[size_t(peer)];
  if (!p.queue.empty() || !p.control.empty()) return false;
  size_t need = sizeof(FrameHeader) + sizeof(PacketHeader) + header.payload;
  if (need + sizeof(RmaKey) > cfg_.frame_bytes || p.credits == 0 || free_tx_.empty()) return false;
  Buffer* b = free_tx_.back();
  uint8_t* out = b->data + sizeof(FrameHeader);
  std::memcpy(out, &header, sizeof header);
  if (header.payload) std::memcpy(out + sizeof header, payload, header.payload);
  size_t key = attach_key(peer, header, out + sizeof header);
  if (post_frame(peer, b, FrameKind::kFirst, need + key, key ? kFrameRmaKey : 0)) return true;
  if (key) lent_back(peer, header.send_cookie);
  return false;
}

void OfiTransport::enqueue(int peer, SendItem* item) {
  item->handed = 0;
  peer_[size_t(peer)].queue.push_back(*item);
  pump(peer);
}

bool OfiTransport::dequeue(int peer, SendItem* item) {
  Peer& p = peer_[size_t(peer)];
  if (!item->is_linked() || item->handed != 0) return false;
  if (&p.queue.front() == item && p.front_started) return false;
  p.queue.erase(p.queue.iterator_to(*item));
  return true;
}

bool OfiTransport::post_frame(int peer, Buffer* b, FrameKind kind, size_t len, uint8_t flags) {
  Peer& p = peer_[size_t(peer)];
  FrameHeader f{};
  f.src = cfg_.my_rank;
  f.seq = p.send_seq;
  f.credits = uint16_t(p.owed);
  f.kind = kind;
  f.flags = flags;
  f.reserved2 = p.recv_seq;  // frames of the peer's we have consumed
  std::memcpy(b->data, &f, sizeof f);
  b->peer = peer;
  ssize_t rc = fi_send(ep_, b->data, len, desc_, p.addr, &b->ctx);
  if (rc == -FI_EAGAIN) return false;
  if (rc) fatal(fi_error("fi_send", int(rc)) + " to rank " + std::to_string(peer));
  free_tx_.pop_back();
  b->in_flight = true;
  b->posted_at = now_s();
  p.last_sent = b->posted_at;
  ++p.send_seq;
  p.owed = 0;
  if (kind != FrameKind::kCredit) --p.credits;
  p.waiting_since = 0;
  return true;
}

void OfiTransport::tx_done(Buffer* b) {
  b->in_flight = false;
  free_tx_.push_back(b);
}

void OfiTransport::send_credits(int peer) {
  if (free_tx_.empty()) return;  // retried at the next progress()
  post_frame(peer, free_tx_.back(), FrameKind::kCredit, sizeof(FrameHeader));
}

int OfiTransport::pump(int peer) {
  Peer& p = peer_[size_t(peer)];
  if (pumping_) return 0;  // the outer pump (or progress) will get to it
  pumping_ = true;
  int done = 0;
  while (!p.queue.empty() || !p.control.empty()) {
    if (p.credits == 0 || free_tx_.empty()) {
      if (p.waiting_since == 0) p.waiting_since = now_s();
      break;
    }
    if (!p.front_started && !p.control.empty()) {
      Buffer* b = free_tx_.back();
      std::memcpy(b->data + sizeof(FrameHeader), &p.control.front(), sizeof(PacketHeader));
      if (!post_frame(peer, b, FrameKind::kFirst, sizeof(FrameHeader) + sizeof(PacketHeader))) {
        if (p.waiting_since == 0) p.waiting_since = now_s();
        break;
      }
      p.control.pop_front();
      ++done;
      continue;
    }
    if (p.queue.empty()) break;
    SendItem* item = &p.queue.front();
    Buffer* b = free_tx_.back();
    uint8_t* out = b->data + sizeof(FrameHeader);
    size_t room = cfg_.frame_bytes - sizeof(FrameHeader);
    FrameKind kind = FrameKind::kMore;
    size_t key = 0;
    if (!p.front_started) {
      kind = FrameKind::kFirst;
      std::memcpy(out, &item->header, sizeof(PacketHeader));
      out += sizeof(PacketHeader);
      room -= sizeof(PacketHeader);
      key = attach_key(peer, item->header, out);
      out += key;
      room -= key;
    }
    uint64_t n = std::min<uint64_t>(room, item->header.payload - item->handed);
    if (n) {
      if (item->payload) {
        std::memcpy(out, item->payload + item->handed, n);
      } else {
        item->pack(out, item->handed, n);
      }
    }
    size_t len = size_t(out - b->data) + n;
    if (!post_frame(peer, b, kind, len, key ? kFrameRmaKey : 0)) {
      if (key) lent_back(peer, item->header.send_cookie);
      if (p.waiting_since == 0) p.waiting_since = now_s();
      break;
    }
    bool first = !p.front_started;
    p.front_started = true;
    item->handed += n;
    bool finished = item->handed == item->header.payload;
    if (finished) {
      p.queue.pop_front();
      p.front_started = false;
      if (first) item->on_first_byte();
      item->on_handed();
      ++done;
    } else if (first) {
      item->on_first_byte();
    } else {
      item->on_progress();
    }
  }
  pumping_ = false;
  // A callback may have queued more for other peers while we pumped.
  return done;
}

}  // namespace sonde::transport::ofi
