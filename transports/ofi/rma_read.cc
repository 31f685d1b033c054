// Rendezvous by RMA read in the ofi transport. The sender lends the
// registration of a kRts's data (remote key in the frame) until the
// receiver's kFin or kCts; the receiver fi_reads the data in fragments,
// a window of them at a time, and sends the kFin when the last is in.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

bool OfiTransport::start_read(int peer, const PacketHeader& rts, uint8_t* dst, uint64_t n, PayloadSink* sink) {
  Peer& p = peer_[size_t(peer)];
  auto it = p.keys.find(rts.send_cookie);
  if (it == p.keys.end()) return false;
  RmaKey key = it->second;
  p.keys.erase(it);
  auto op = std::make_unique<ReadOp>();
  op->peer = peer;
  op->key = key;
  op->n = n;
  op->dst = dst;
  op->sink = sink;
  op->header.type = PacketType::kData;
  op->header.payload = n;
  op->header.total = n;
  op->header.send_cookie = rts.send_cookie;
  size_t frags = std::min<uint64_t>(uint64_t(cfg_.reads_per_message), (n + cfg_.read_bytes - 1) / cfg_.read_bytes);
  op->frags.resize(frags);
  if (!dst) op->bounce.resize(frags * cfg_.read_bytes);
  if (mr_local_) {
    // The provider wants our side registered too.
    uint8_t* at = dst ? dst : op->bounce.data();
    size_t len = dst ? n : op->bounce.size();
    op->local = mr_cache_.acquire(at, len, FI_READ);
    if (!op->local) return false;  // nothing started: the engine streams instead
  }
  for (size_t i = 0; i < frags; ++i) {
    ReadFrag& f = op->frags[i];
    f.kind = Op::kRead;
    f.op = op.get();
    f.bounce = dst ? nullptr : op->bounce.data() + i * cfg_.read_bytes;
  }
  ReadOp* raw = op.get();
  reads_.push_back(std::move(op));
  for (ReadFrag& f : raw->frags) read_wait_.push_back(&f);
  post_reads();
  return true;
}

size_t OfiTransport::attach_key(int peer, const PacketHeader& h, uint8_t* out) {
  if (!rma_ || h.type != PacketType::kRts || h.recv_cookie == 0 || h.total == 0) return 0;
  auto* data = reinterpret_cast<const uint8_t*>(h.recv_cookie);
  MrCache::Entry* e = mr_cache_.acquire(data, h.total, FI_REMOTE_READ);
  if (!e) return 0;
  RmaKey key{h.recv_cookie, uint64_t(reinterpret_cast<uintptr_t>(e->start)), fi_mr_key(e->mr)};
  std::memcpy(out, &key, sizeof key);
  Peer& p = peer_[size_t(peer)];
  auto [it, fresh] = p.lent.emplace(h.send_cookie, e);
  if (!fresh) {  // a stale loan of a request now reused: cannot be in use
    mr_cache_.release(it->second);
    it->second = e;
  }
  return sizeof key;
}

void OfiTransport::lent_back(int peer, uint64_t send_cookie) {
  Peer& p = peer_[size_t(peer)];
  auto it = p.lent.find(send_cookie);
  if (it == p.lent.end()) return;
  mr_cache_.release(it->second);
  p.lent.erase(it);
}

void OfiTransport::post_reads() {
  while (!read_wait_.empty() && reads_in_flight_ < cfg_.reads_in_flight) {
    ReadFrag* f = read_wait_.front();
    ReadOp* op = f->op;
    if (op->next >= op->n) {  // nothing left for this fragment to read
      read_wait_.pop_front();
      continue;
    }
    uint64_t len = std::min<uint64_t>(cfg_.read_bytes, op->n - op->next);
    uint8_t* to = op->dst ? op->dst + op->next : f->bounce;
    uint64_t raddr = (virt_addr_ ? op->key.addr : op->key.addr - op->key.base) + op->next;
    void* desc = op->local ? fi_mr_desc(op->local->mr) : nullptr;
    ssize_t rc = fi_read(ep_, to, len, desc, peer_[size_t(op->peer)].addr, raddr, op->key.key, &f->ctx);
    if (rc == -FI_EAGAIN) break;
    if (rc) fatal(fi_error("fi_read", int(rc)) + " from rank " + std::to_string(op->peer));
    read_wait_.pop_front();
    f->off = op->next;
    f->len = len;
    f->busy = true;
    f->done = false;
    f->posted_at = now_s();
    op->next += len;
    ++reads_in_flight_;
  }
}

int OfiTransport::read_done(ReadFrag* f) {
  --reads_in_flight_;
  ReadOp* op = f->op;
  f->done = true;
  if (op->dst) {
    op->landed += f->len;
    f->busy = false;
    if (op->landed < op->n) op->sink->on_chunk(op->landed);
    if (op->next < op->n) read_wait_.push_back(f);
  } else {
    // Completions may come out of order; unpack strictly in order.
    for (;;) {
      ReadFrag& g = op->frags[op->deliver];
      if (!g.busy || !g.done) break;
      op->sink->unpack(g.bounce, g.off, g.len);
      op->landed += g.len;
      g.busy = false;
      op->deliver = (op->deliver + 1) % op->frags.size();
      if (op->landed < op->n) op->sink->on_chunk(op->landed);
      if (op->next < op->n) read_wait_.push_back(&g);
    }
  }
  if (op->landed < op->n) {
    post_reads();
    return 0;
  }
  int peer = op->peer;
  PacketHeader fin{};
  fin.type = PacketType::kFin;
  fin.send_cookie = op->header.send_cookie;
  peer_[size_t(peer)].control.push_back(fin);
  PacketHeader h = op->header;
  PayloadSink* sink = op->sink;
  if (op->local) mr_cache_.release(op->local);
  // Fragments never posted (the window was full) may still wait.
  std::erase_if(read_wait_, [op](ReadFrag* g) { return g->op == op; });
  for (auto it = reads_.begin(); it != reads_.end(); ++it) {
    if (it->get() == op) {
      reads_.erase(it);
      break;
    }
  }
  pump(peer);
  delivery_->on_payload_done(peer, h, sink);
  return 1;
}

}  // namespace sonde::transport::ofi
