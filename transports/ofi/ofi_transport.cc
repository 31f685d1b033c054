// libfabric transport: see ofi_transport.h for the wire format and the
// flow-control argument.
#include "transports/ofi/ofi_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

namespace sonde::transport {

TransportChoice transport_choice_from_env() {
  TransportChoice c;
  if (const char* t = std::getenv("SONDE_TRANSPORT"); t && *t) c.transport = t;
  if (const char* p = std::getenv("SONDE_OFI_PROVIDER"); p && *p) c.provider = p;
  return c;
}

namespace {

constexpr const char* kAddrKey = "ofi.addr";

enum class FrameKind : uint8_t { kFirst = 1, kMore = 2, kCredit = 3 };

struct FrameHeader {
  int32_t src;       // sender's world rank
  uint32_t seq;      // per (sender, receiver), every frame kind
  uint16_t credits;  // frames the sender has consumed from us since it last said
  FrameKind kind;
  uint8_t reserved;
  uint32_t reserved2;
};
static_assert(sizeof(FrameHeader) == 16);

// A bounce buffer; the fi_context2 lets providers that need FI_CONTEXT /
// FI_CONTEXT2 use it, and the completion's op_context brings us back here.
struct Buffer {
  fi_context2 ctx;
  uint8_t* data = nullptr;
  int peer = -1;     // tx: destination (for error messages)
  bool is_rx = false;
  size_t len = 0;    // rx: bytes received
  bool in_flight = false;  // tx: posted, completion not in yet
  double posted_at = 0;    // tx: when (for the stall check)
};

std::string fi_error(const char* what, int rc) {
  return std::string("sonde ofi: ") + what + " failed: " + fi_strerror(-rc) + " (" + std::to_string(rc) + ")";
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Prefer a real IPv4 interface, then IPv4 loopback, then whatever comes first
// (shm's string addresses, IPv6). Every rank applies the same rule.
fi_info* pick(fi_info* list) {
  fi_info* loopback = nullptr;
  for (fi_info* i = list; i; i = i->next) {
    if (i->addr_format != FI_SOCKADDR_IN || !i->src_addr) continue;
    auto* sin = static_cast<const sockaddr_in*>(i->src_addr);
    if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) {
      if (!loopback) loopback = i;
      continue;
    }
    return i;
  }
  return loopback ? loopback : list;
}

class OfiTransport final : public Transport {
 public:
  OfiTransport(const OfiConfig& config, Exchange& exchange) : cfg_(config) {
    if (cfg_.credits < 2 || cfg_.credits % 2) throw std::invalid_argument("sonde ofi: credits must be even, >= 2");
    if (cfg_.frame_bytes < 1024) throw std::invalid_argument("sonde ofi: frame_bytes too small");
    if (const char* s = std::getenv("SONDE_OFI_STALL_TIMEOUT"); s && *s) cfg_.stall_timeout_s = std::atof(s);
    peer_.resize(size_t(cfg_.world_size));
    for (int p : cfg_.peers) peer_[size_t(p)].reached = true;

    std::string error;
    std::string addr;
    try {
      open();
      addr = name();
    } catch (const std::exception& e) {
      error = e.what();
    }
    // Collective whatever happened here: an empty address tells the peers.
    exchange.put(kAddrKey, addr);
    exchange.commit();
    exchange.fence();
    if (!error.empty()) {
      close_all();
      throw std::runtime_error(error);
    }
    try {
      connect(exchange);
      post_receives();
    } catch (...) {
      close_all();
      throw;
    }
  }

  ~OfiTransport() override {
    for (auto& p : peer_) {
      while (!p.queue.empty()) p.queue.pop_front();
    }
    close_all();
  }

  const char* name() const override { return "ofi"; }
  std::string selected() const { return selected_; }

  bool reaches(int peer) const override {
    return peer >= 0 && size_t(peer) < peer_.size() && peer_[size_t(peer)].reached;
  }

  bool try_send_now(int peer, const PacketHeader& header, const void* payload) override {
    Peer& p = peer_[size_t(peer)];
    if (!p.queue.empty()) return false;
    size_t need = sizeof(FrameHeader) + sizeof(PacketHeader) + header.payload;
    if (need > cfg_.frame_bytes || p.credits == 0 || free_tx_.empty()) return false;
    Buffer* b = free_tx_.back();
    uint8_t* out = b->data + sizeof(FrameHeader);
    std::memcpy(out, &header, sizeof header);
    if (header.payload) std::memcpy(out + sizeof header, payload, header.payload);
    return post_frame(peer, b, FrameKind::kFirst, need);
  }

  void enqueue(int peer, SendItem* item) override {
    item->handed = 0;
    peer_[size_t(peer)].queue.push_back(*item);
    pump(peer);
  }

  bool dequeue(int peer, SendItem* item) override {
    Peer& p = peer_[size_t(peer)];
    if (!item->is_linked() || item->handed != 0) return false;
    if (&p.queue.front() == item && p.front_started) return false;
    p.queue.erase(p.queue.iterator_to(*item));
    return true;
  }

  int progress(Delivery& delivery) override {
    if (in_progress_ || !cq_) return 0;
    in_progress_ = true;
    delivery_ = &delivery;
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
        auto* b = static_cast<Buffer*>(entries[i].op_context);
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
    if (!unposted_.empty()) repost_pending();
    for (int peer : cfg_.peers) {
      Peer& p = peer_[size_t(peer)];
      if (!p.queue.empty()) n += pump(peer);
      if (p.owed >= cfg_.credits / 2) send_credits(peer);
    }
    if (n == 0) check_stalls();
    in_progress_ = false;
    return n;
  }

  bool read_remote(int, uint64_t, void*, size_t) override { return false; }

  // Every frame's send completion is in (for rxm: the peer has the bytes).
  bool drained() const override {
    if (!cq_) return true;
    if (free_tx_.size() != tx_.size()) return false;
    for (int peer : cfg_.peers) {
      if (!peer_[size_t(peer)].queue.empty()) return false;
    }
    return true;
  }

  void shutdown() override {
    // Let frames already posted leave before the endpoint closes (bounded:
    // everyone has passed MPI_Finalize's barrier, nobody needs them).
    double until = now_s() + 2;
    while (free_tx_.size() < tx_.size() && now_s() < until) {
      fi_cq_msg_entry e[16];
      ssize_t got = fi_cq_read(cq_, e, 16);
      if (got > 0) {
        for (ssize_t i = 0; i < got; ++i) {
          auto* b = static_cast<Buffer*>(e[i].op_context);
          if (!b->is_rx) tx_done(b);
        }
      } else if (got == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq_, &err, 0);
        auto* b = static_cast<Buffer*>(err.op_context);
        if (b && !b->is_rx) tx_done(b);
      }
    }
    shut_down_ = true;
    // The engine is never destroyed, so this is where providers get to
    // remove what they own outside the process (the shm provider's
    // regions in /dev/shm).
    for (auto& p : peer_) {
      while (!p.queue.empty()) p.queue.pop_front();
      p.early.clear();
    }
    close_all();
  }

 private:
  struct Peer {
    bool reached = false;
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int credits = 0;        // frames we may still send to it
    int owed = 0;           // frames of its we consumed and not yet acknowledged
    uint32_t send_seq = 0;
    uint32_t recv_seq = 0;  // next frame to deliver from it
    std::map<uint32_t, Buffer*> early;  // frames that overtook recv_seq
    boost::intrusive::list<SendItem> queue;
    bool front_started = false;  // the front item's first frame is out
    // Inbound packet in progress (between on_header and on_payload_done).
    bool open = false;
    PacketHeader header{};
    PayloadSink* sink = nullptr;
    uint64_t received = 0;
    double waiting_since = 0;  // we have had something to send but could not
  };

  // ------------------------------------------------------------- set-up
  void open() {
    fi_info* hints = fi_allocinfo();
    if (!hints) throw std::runtime_error("sonde ofi: fi_allocinfo failed");
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->msg_order = FI_ORDER_NONE;  // we reorder ourselves
    if (!cfg_.provider.empty()) hints->fabric_attr->prov_name = strdup(cfg_.provider.c_str());
    int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list_);
    fi_freeinfo(hints);
    if (rc) {
      throw std::runtime_error(fi_error("fi_getinfo", rc) + " (no libfabric provider offers FI_EP_RDM with FI_MSG" +
                               (cfg_.provider.empty() ? std::string() : " named \"" + cfg_.provider + "\"") +
                               "; see fi_info -l, SONDE_OFI_PROVIDER, FI_PROVIDER)");
    }
    info_ = pick(list_);
    selected_ = std::string(info_->fabric_attr->prov_name) + ";" + info_->fabric_attr->name + ";" +
                info_->domain_attr->name;
    rc = fi_fabric(info_->fabric_attr, &fabric_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_fabric", rc));
    rc = fi_domain(fabric_, info_, &domain_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_domain", rc));
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = 0;
    rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_cq_open", rc));
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_av_open", rc));
    rc = fi_endpoint(domain_, info_, &ep_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_endpoint", rc));
    rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV);
    if (rc) throw std::runtime_error(fi_error("fi_ep_bind(cq)", rc));
    rc = fi_ep_bind(ep_, &av_->fid, 0);
    if (rc) throw std::runtime_error(fi_error("fi_ep_bind(av)", rc));
    rc = fi_enable(ep_);
    if (rc) throw std::runtime_error(fi_error("fi_enable", rc));

    size_t max_msg = info_->ep_attr->max_msg_size;
    if (max_msg && cfg_.frame_bytes > max_msg) cfg_.frame_bytes = max_msg;
    size_t rx_count = cfg_.peers.size() * size_t(cfg_.credits + 2);
    size_t tx_count = size_t(cfg_.tx_buffers);
    pool_bytes_ = (rx_count + tx_count) * cfg_.frame_bytes;
    pool_ = static_cast<uint8_t*>(std::aligned_alloc(4096, (pool_bytes_ + 4095) & ~size_t(4095)));
    if (!pool_) throw std::runtime_error("sonde ofi: cannot allocate buffer pool");
    if (info_->domain_attr->mr_mode & FI_MR_LOCAL) {
      rc = fi_mr_reg(domain_, pool_, pool_bytes_, FI_SEND | FI_RECV, 0, 0, 0, &mr_, nullptr);
      if (rc) throw std::runtime_error(fi_error("fi_mr_reg", rc));
      desc_ = fi_mr_desc(mr_);
    }
    rx_.resize(rx_count);
    tx_.resize(tx_count);
    uint8_t* at = pool_;
    for (Buffer& b : rx_) {
      b.data = at;
      b.is_rx = true;
      at += cfg_.frame_bytes;
    }
    for (Buffer& b : tx_) {
      b.data = at;
      at += cfg_.frame_bytes;
      free_tx_.push_back(&b);
    }
  }

  std::string name() {
    char buf[512];
    size_t len = sizeof buf;
    int rc = fi_getname(&ep_->fid, buf, &len);
    if (rc) throw std::runtime_error(fi_error("fi_getname", rc));
    return std::string(buf, len);
  }

  void connect(Exchange& exchange) {
    for (int peer : cfg_.peers) {
      std::optional<std::string> a = exchange.get(peer, kAddrKey);
      if (!a || a->empty()) {
        throw std::runtime_error("sonde ofi: rank " + std::to_string(peer) +
                                 " could not open a libfabric endpoint (see its error)");
      }
      fi_addr_t fa = FI_ADDR_UNSPEC;
      int rc = fi_av_insert(av_, a->data(), 1, &fa, 0, nullptr);
      if (rc != 1) throw std::runtime_error(fi_error("fi_av_insert", rc < 0 ? rc : -FI_EINVAL));
      Peer& p = peer_[size_t(peer)];
      p.addr = fa;
      p.credits = cfg_.credits;
    }
  }

  void post_receives() {
    for (Buffer& b : rx_) repost(&b);
  }

  // A buffer the provider would not take now (EAGAIN) is retried at the
  // next progress(); until then it simply is not posted.
  void repost(Buffer* b) {
    ssize_t rc = fi_recv(ep_, b->data, cfg_.frame_bytes, desc_, FI_ADDR_UNSPEC, &b->ctx);
    if (rc == -FI_EAGAIN) {
      unposted_.push_back(b);
      return;
    }
    if (rc) fatal(fi_error("fi_recv", int(rc)));
  }

  void repost_pending() {
    std::vector<Buffer*> retry;
    retry.swap(unposted_);
    for (Buffer* b : retry) repost(b);
  }

  void close_all() {
    if (ep_) fi_close(&ep_->fid);
    if (mr_) fi_close(&mr_->fid);
    if (av_) fi_close(&av_->fid);
    if (cq_) fi_close(&cq_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    ep_ = nullptr;
    mr_ = nullptr;
    av_ = nullptr;
    cq_ = nullptr;
    domain_ = nullptr;
    fabric_ = nullptr;
    if (list_) fi_freeinfo(list_);
    list_ = nullptr;
    std::free(pool_);
    pool_ = nullptr;
  }

  // ------------------------------------------------------------- sending
  // Sends the frame in tx buffer `b` (payload already in place after the
  // FrameHeader); false, with nothing changed, if the provider says EAGAIN.
  bool post_frame(int peer, Buffer* b, FrameKind kind, size_t len) {
    Peer& p = peer_[size_t(peer)];
    FrameHeader f{};
    f.src = cfg_.my_rank;
    f.seq = p.send_seq;
    f.credits = uint16_t(p.owed);
    f.kind = kind;
    std::memcpy(b->data, &f, sizeof f);
    b->peer = peer;
    ssize_t rc = fi_send(ep_, b->data, len, desc_, p.addr, &b->ctx);
    if (rc == -FI_EAGAIN) return false;
    if (rc) fatal(fi_error("fi_send", int(rc)) + " to rank " + std::to_string(peer));
    free_tx_.pop_back();
    b->in_flight = true;
    b->posted_at = now_s();
    ++p.send_seq;
    p.owed = 0;
    if (kind != FrameKind::kCredit) --p.credits;
    p.waiting_since = 0;
    return true;
  }

  void tx_done(Buffer* b) {
    b->in_flight = false;
    free_tx_.push_back(b);
  }

  void send_credits(int peer) {
    if (free_tx_.empty()) return;  // retried at the next progress()
    post_frame(peer, free_tx_.back(), FrameKind::kCredit, sizeof(FrameHeader));
  }

  // Moves frames of the peer's queued items while credits, buffers and the
  // provider allow. Returns the number of packets fully handed over.
  int pump(int peer) {
    Peer& p = peer_[size_t(peer)];
    if (pumping_) return 0;  // the outer pump (or progress) will get to it
    pumping_ = true;
    int done = 0;
    while (!p.queue.empty()) {
      if (p.credits == 0 || free_tx_.empty()) {
        if (p.waiting_since == 0) p.waiting_since = now_s();
        break;
      }
      SendItem* item = &p.queue.front();
      Buffer* b = free_tx_.back();
      uint8_t* out = b->data + sizeof(FrameHeader);
      size_t room = cfg_.frame_bytes - sizeof(FrameHeader);
      FrameKind kind = FrameKind::kMore;
      if (!p.front_started) {
        kind = FrameKind::kFirst;
        std::memcpy(out, &item->header, sizeof(PacketHeader));
        out += sizeof(PacketHeader);
        room -= sizeof(PacketHeader);
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
      if (!post_frame(peer, b, kind, len)) {
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

  // ------------------------------------------------------------- receiving
  int arrived(Buffer* b) {
    if (b->len < sizeof(FrameHeader)) fatal("sonde ofi: short frame received");
    FrameHeader f;
    std::memcpy(&f, b->data, sizeof f);
    if (f.src < 0 || size_t(f.src) >= peer_.size() || !peer_[size_t(f.src)].reached) {
      fatal("sonde ofi: frame from unknown rank " + std::to_string(f.src));
    }
    Peer& p = peer_[size_t(f.src)];
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

  int consume(Peer& p, const FrameHeader& f, Buffer* b) {
    ++p.recv_seq;
    p.credits += f.credits;
    if (f.credits) p.waiting_since = 0;
    const uint8_t* at = b->data + sizeof(FrameHeader);
    size_t left = b->len - sizeof(FrameHeader);
    if (f.kind == FrameKind::kFirst) {
      if (p.open || left < sizeof(PacketHeader)) fatal("sonde ofi: malformed packet from rank " + std::to_string(f.src));
      std::memcpy(&p.header, at, sizeof(PacketHeader));
      at += sizeof(PacketHeader);
      left -= sizeof(PacketHeader);
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

  // ------------------------------------------------------------- faults
  void cq_error() {
    fi_cq_err_entry err{};
    ssize_t rc = fi_cq_readerr(cq_, &err, 0);
    if (rc < 0) return;
    auto* b = static_cast<Buffer*>(err.op_context);
    if (shut_down_ || err.err == FI_ECANCELED) return;
    char buf[256] = {};
    const char* detail = fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof buf);
    std::string who = (b && !b->is_rx && b->peer >= 0) ? " sending to rank " + std::to_string(b->peer) : " receiving";
    fatal("sonde ofi: network error" + who + ": " + fi_strerror(err.err) + (detail ? std::string(" (") + detail + ")" : ""));
  }

  void check_stalls() {
    if (cfg_.stall_timeout_s <= 0) return;
    if (++idle_checks_ % 4096) return;
    double t = now_s();
    for (const Buffer& b : tx_) {
      if (b.in_flight && t - b.posted_at > cfg_.stall_timeout_s) {
        fatal("sonde ofi: a send to rank " + std::to_string(b.peer) + " has not completed for " +
              std::to_string(int(t - b.posted_at)) + " s (the peer or the link is gone; SONDE_OFI_STALL_TIMEOUT)");
      }
    }
    for (int peer : cfg_.peers) {
      Peer& p = peer_[size_t(peer)];
      if (p.waiting_since != 0 && t - p.waiting_since > cfg_.stall_timeout_s) {
        fatal("sonde ofi: no progress sending to rank " + std::to_string(peer) + " for " +
              std::to_string(int(t - p.waiting_since)) +
              " s (the peer or the link is gone; SONDE_OFI_STALL_TIMEOUT)");
      }
    }
  }

  [[noreturn]] void fatal(const std::string& message) {
    if (cfg_.fatal) cfg_.fatal(message);
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    _exit(1);
  }

  OfiConfig cfg_;
  std::string selected_;
  fi_info* list_ = nullptr;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_mr* mr_ = nullptr;
  void* desc_ = nullptr;
  uint8_t* pool_ = nullptr;
  size_t pool_bytes_ = 0;
  std::vector<Buffer> rx_, tx_;
  std::vector<Buffer*> free_tx_;
  std::vector<Buffer*> unposted_;
  std::vector<Peer> peer_;
  Delivery* delivery_ = nullptr;
  bool in_progress_ = false;
  bool pumping_ = false;
  bool shut_down_ = false;
  uint64_t idle_checks_ = 0;
};

}  // namespace

std::unique_ptr<Transport> make_ofi_transport(const OfiConfig& config, Exchange& exchange) {
  return std::make_unique<OfiTransport>(config, exchange);
}

std::string ofi_selected_provider(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->selected() : std::string();
}

}  // namespace sonde::transport
