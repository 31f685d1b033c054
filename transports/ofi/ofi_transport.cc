// libfabric transport: see ofi_transport.h for the wire format and the
// flow-control argument.
#include "transports/ofi/ofi_transport.h"

#include "transports/ofi/liveness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace sonde::transport {

TransportChoice transport_choice_from_env() {
  TransportChoice c;
  if (const char* t = std::getenv("SONDE_TRANSPORT"); t && *t) c.transport = t;
  if (const char* p = std::getenv("SONDE_OFI_PROVIDER"); p && *p) c.provider = p;
  return c;
}

namespace {

constexpr const char* kAddrKey = "ofi.addr";
constexpr const char* kLiveKey = "ofi.live";  // Liveness::address(), empty: none

// kCredit frames carry no packet and use no credit: credit returns, and
// keepalives (an idle connection's sign of life, see check_idle()).
enum class FrameKind : uint8_t { kFirst = 1, kMore = 2, kCredit = 3 };

// FrameHeader::flags
constexpr uint8_t kFrameRmaKey = 1;  // kFirst of a kRts: an RmaKey follows the PacketHeader

struct FrameHeader {
  int32_t src;       // sender's world rank
  uint32_t seq;      // per (sender, receiver), every frame kind
  uint16_t credits;  // frames the sender has consumed from us since it last said
  FrameKind kind;
  uint8_t flags;
  uint32_t reserved2;
};
static_assert(sizeof(FrameHeader) == 16);

// What a receiver needs to fi_read a rendezvous message's bytes: `addr` is
// the message's first byte in the sender's memory, `base` the start of the
// registered region that holds it (offsets are from there unless the
// provider wants FI_MR_VIRT_ADDR), `key` the region's remote key.
struct RmaKey {
  uint64_t addr;
  uint64_t base;
  uint64_t key;
};

// Everything posted to the provider starts with one of these: the
// fi_context2 lets providers that need FI_CONTEXT / FI_CONTEXT2 use it, and
// the completion's op_context brings us back here.
struct Op {
  fi_context2 ctx;
  enum Kind : uint8_t { kRx, kTx, kRead } kind = kTx;
};

// A bounce buffer.
struct Buffer : Op {
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

// TCP's reliable-datagram endpoint exists twice in libfabric: ofi_rxm
// layered over the tcp provider's connections ("tcp;ofi_rxm", listed first)
// and the native one ("net" in 1.17, a development fork of tcp; the tcp
// provider itself from 1.18). Native first: measured between two network
// namespaces, its ping-pong takes 0.6-0.9 times as long at 0-16 KiB at
// the same bandwidth (per message rxm adds a self-signal through a
// socketpair, a write and a read, and copies through its own bounce
// buffers; docs/ofi.md, Benchmark). Both ends must agree: every rank applies
// this same rule to the same library. The two do not interoperate.
bool tcp_family(const std::string& prov) {
  return prov == "net" || prov == "tcp" || prov.rfind("tcp;", 0) == 0 || prov.rfind("net;", 0) == 0;
}

int native_tcp_rank(const std::string& prov) {
  if (prov == "net") return 0;
  if (prov == "tcp") return 1;  // libfabric >= 1.18: tcp's own RDM endpoint
  return 2;
}

// The provider to use from fi_getinfo's list: libfabric's first choice, or,
// when that is TCP-based (or `want` is "tcp"), the best TCP-based one by
// native_tcp_rank. Empty if `want` is "tcp" and nothing TCP-based is there.
std::string choose_provider(fi_info* list, const std::string& want) {
  std::string first = list->fabric_attr->prov_name;
  if (want != "tcp" && !tcp_family(first)) return first;
  std::string best;
  for (fi_info* i = list; i; i = i->next) {
    std::string prov = i->fabric_attr->prov_name;
    if (!tcp_family(prov)) continue;
    if (best.empty() || native_tcp_rank(prov) < native_tcp_rank(best)) best = prov;
  }
  return best;
}

// Among the entries of provider `prov`: prefer a real IPv4 interface, then
// IPv4 loopback, then whatever comes first (shm's string addresses, IPv6).
// Every rank applies the same rule.
fi_info* pick(fi_info* list, const std::string& prov) {
  fi_info* loopback = nullptr;
  fi_info* first = nullptr;
  for (fi_info* i = list; i; i = i->next) {
    if (prov != i->fabric_attr->prov_name) continue;
    if (!first) first = i;
    if (i->addr_format != FI_SOCKADDR_IN || !i->src_addr) continue;
    auto* sin = static_cast<const sockaddr_in*>(i->src_addr);
    if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) {
      if (!loopback) loopback = i;
      continue;
    }
    return i;
  }
  return loopback ? loopback : first;
}

// Registrations of user memory for RMA, keyed by address range. A message
// whose range lies inside a cached region reuses it; regions nobody uses are
// closed least recently used first beyond `capacity`. Registrations are
// page-rounded so that buffers reused in place hit. Capacity 0: every
// registration is closed when its last user releases it.
//
// Staleness: a cached region outlives free()/munmap() of its memory (there
// is no hook here to notice). With the software providers (tcp, sockets,
// udp, shm: a registration is a key checked against a virtual range, the
// bytes are read through the current mapping at read time) that is
// harmless, so they cache. Providers that pin pages (verbs, efa, cxi) get
// capacity 0 by default and rely on libfabric's own cache, which hooks the
// memory monitor (FI_MR_CACHE_MONITOR); SONDE_OFI_MR_CACHE overrides.
class MrCache {
 public:
  struct Entry {
    uint8_t* start = nullptr;
    size_t len = 0;
    fid_mr* mr = nullptr;
    int refs = 0;
    uint64_t used = 0;
    bool stale = false;  // its memory was freed while in use: never reused, closed at its last release
  };

  void init(fid_domain* domain, bool prov_key, bool virt_addr, size_t capacity) {
    domain_ = domain;
    prov_key_ = prov_key;
    virt_addr_ = virt_addr;
    capacity_ = capacity;
  }

  // A region holding [addr, addr + len) readable by peers and by our reads;
  // null if the provider refuses to register it.
  Entry* acquire(const void* addr, size_t len, uint64_t) {
    auto* a = reinterpret_cast<uint8_t*>(uintptr_t(addr) & ~uintptr_t(4095));
    auto* end = reinterpret_cast<uint8_t*>((uintptr_t(addr) + len + 4095) & ~uintptr_t(4095));
    for (auto& e : entries_) {
      if (!e->stale && e->start <= a && end <= e->start + e->len) {
        ++e->refs;
        e->used = ++tick_;
        ++hits_;
        return e.get();
      }
    }
    auto e = std::make_unique<Entry>();
    e->start = a;
    e->len = size_t(end - a);
    // Without FI_MR_PROV_KEY we choose the keys: unique in the domain.
    // Without FI_MR_VIRT_ADDR, peers address the region by offset. The
    // `offset` argument says so a second time: libfabric 1.17's software
    // providers (the util MR map) sometimes run the map in virtual-address
    // mode though the domain reports no FI_MR_VIRT_ADDR (seen with
    // tcp;ofi_rxm in forked processes) and then add that argument to the
    // remote address instead of the region's base; with both equal to the
    // base, either way lands on the same byte.
    uint64_t offset = virt_addr_ ? 0 : uint64_t(reinterpret_cast<uintptr_t>(a));
    int rc = fi_mr_reg(domain_, a, e->len, FI_READ | FI_REMOTE_READ, offset, prov_key_ ? 0 : ++next_key_, 0, &e->mr,
                       nullptr);
    if (rc) return nullptr;
    ++registrations_;
    e->refs = 1;
    e->used = ++tick_;
    entries_.push_back(std::move(e));
    Entry* got = entries_.back().get();
    trim();
    return got;
  }

  void release(Entry* e) {
    if (--e->refs) return;
    if (e->stale) {
      close(e);
      return;
    }
    trim();
  }

  // The memory [addr, addr + len) is being freed (MPI_Free_mem): no region
  // overlapping it may serve a later buffer that reuses the addresses (a
  // provider that pins pages would read the old pages). Unused regions
  // close now; one still lent to a transfer (the user freed memory of a
  // pending operation, which MPI forbids) closes at its last release.
  // Returns how many regions were dropped.
  size_t forget(const void* addr, size_t len) {
    auto* a = static_cast<const uint8_t*>(addr);
    size_t dropped = 0;
    for (size_t i = entries_.size(); i-- > 0;) {
      Entry* e = entries_[i].get();
      if (e->stale || e->start >= a + len || a >= e->start + e->len) continue;
      ++dropped;
      if (e->refs) {
        e->stale = true;
      } else {
        close(e);
      }
    }
    return dropped;
  }

  void clear() {
    for (auto& e : entries_) fi_close(&e->mr->fid);
    entries_.clear();
  }

  uint64_t registrations() const { return registrations_; }
  uint64_t hits() const { return hits_; }

 private:
  void trim() {
    for (;;) {
      size_t unused = 0;
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if ((*it)->refs) continue;
        ++unused;
        if (victim == entries_.end() || (*it)->used < (*victim)->used) victim = it;
      }
      if (unused <= capacity_) return;
      fi_close(&(*victim)->mr->fid);
      entries_.erase(victim);
    }
  }

  void close(Entry* e) {
    fi_close(&e->mr->fid);
    std::erase_if(entries_, [e](const std::unique_ptr<Entry>& x) { return x.get() == e; });
  }

  fid_domain* domain_ = nullptr;
  bool prov_key_ = false;
  bool virt_addr_ = false;
  size_t capacity_ = 0;
  uint64_t next_key_ = 0;
  uint64_t tick_ = 0;
  uint64_t registrations_ = 0, hits_ = 0;
  std::vector<std::unique_ptr<Entry>> entries_;
};

struct ReadOp;

// One fi_read of a rendezvous message, `len` bytes at offset `off`.
struct ReadFrag : Op {
  ReadOp* op = nullptr;
  uint8_t* bounce = nullptr;  // non-contiguous receive: lands here, unpacked in order
  uint64_t off = 0, len = 0;
  bool busy = false;  // posted, not yet delivered
  bool done = false;  // completion in
  double posted_at = 0;
};

// A rendezvous message the receiver pulls with RMA reads.
struct ReadOp {
  int peer = -1;
  RmaKey key{};
  uint64_t n = 0;
  uint8_t* dst = nullptr;  // contiguous destination, or null: bounce + unpack
  PayloadSink* sink = nullptr;
  PacketHeader header{};   // what on_payload_done reports (kData)
  std::vector<ReadFrag> frags;
  std::vector<uint8_t> bounce;
  MrCache::Entry* local = nullptr;  // FI_MR_LOCAL: our side's registration
  uint64_t next = 0;     // next offset to read
  uint64_t landed = 0;   // bytes in place (in order, for the bounce case)
  size_t deliver = 0;    // bounce: the fragment whose piece is next in order
};

class OfiTransport final : public Transport {
 public:
  OfiTransport(const OfiConfig& config, Exchange& exchange) : cfg_(config) {
    if (cfg_.credits < 2 || cfg_.credits % 2) throw std::invalid_argument("sonde ofi: credits must be even, >= 2");
    if (const char* s = std::getenv("SONDE_OFI_FRAME_BYTES"); s && *s) cfg_.frame_bytes = std::atol(s);
    if (cfg_.frame_bytes < 1024) throw std::invalid_argument("sonde ofi: frame_bytes too small");
    if (const char* s = std::getenv("SONDE_OFI_STALL_TIMEOUT"); s && *s) cfg_.stall_timeout_s = std::atof(s);
    if (const char* s = std::getenv("SONDE_OFI_LIVENESS_TIMEOUT"); s && *s) cfg_.liveness_timeout_s = std::atof(s);
    if (const char* s = std::getenv("SONDE_OFI_READ_BYTES"); s && *s) cfg_.read_bytes = std::max<size_t>(4096, std::atol(s));
    if (const char* s = std::getenv("SONDE_OFI_READS_PER_MESSAGE"); s && *s) cfg_.reads_per_message = std::max(1, std::atoi(s));
    if (const char* s = std::getenv("SONDE_OFI_READS_IN_FLIGHT"); s && *s) cfg_.reads_in_flight = std::max(1, std::atoi(s));
    // Eager limit for network peers: SONDE_OFI_EAGER_LIMIT; else an explicit
    // SONDE_EAGER_LIMIT (the user's choice for every transport at start-up;
    // later MPI_T writes of sonde_eager_limit affect shm and self only);
    // else the config's (64 KiB: a rendezvous costs 1.5 round trips here,
    // more than copying 64 KiB; docs/ofi.md, Benchmark).
    eager_limit = cfg_.eager_limit;
    if (const char* s = std::getenv("SONDE_EAGER_LIMIT"); s && *s) eager_limit = std::strtoull(s, nullptr, 0);
    if (const char* s = std::getenv("SONDE_OFI_EAGER_LIMIT"); s && *s) eager_limit = std::strtoull(s, nullptr, 0);
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
    exchange.put(kLiveKey, error.empty() ? start_liveness() : std::string());
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
    live_.reset();
    for (auto& p : peer_) {
      while (!p.queue.empty()) p.queue.pop_front();
    }
    if (ep_) fi_close(&ep_->fid);
    ep_ = nullptr;
    mr_cache_.clear();
    close_all();
  }

  const char* name() const override { return "ofi"; }
  std::string selected() const { return selected_; }
  bool rma() const { return rma_; }
  uint64_t registrations() const { return mr_cache_.registrations(); }
  bool manual_progress() const { return info_ && info_->domain_attr->data_progress == FI_PROGRESS_MANUAL; }
  std::string liveness_address() const { return live_ ? live_->address() : std::string(); }

  bool reaches(int peer) const override {
    return peer >= 0 && size_t(peer) < peer_.size() && peer_[size_t(peer)].reached;
  }

  bool try_send_now(int peer, const PacketHeader& header, const void* payload) override {
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

  bool read_remote(int, uint64_t, void*, size_t) override { return false; }

  // A rank waiting on `peer` (Engine::waiting_on): watch it like a peer we
  // have talked to. The next idle check connects to its liveness port
  // where it has one (check_liveness). Without: one never talked to gets
  // its silence clock started now and a keepalive at the next check, which
  // also opens the connection; the peer, having heard from us, keeps us
  // posted.
  void watch(int peer) override {
    if (!reaches(peer)) return;
    Peer& p = peer_[size_t(peer)];
    if (p.watched) return;
    p.watched = true;
    if (p.send_seq == 0 && p.recv_seq == 0) {
      p.last_heard = now_s();
      p.last_sent = 0;
    }
  }

  void forget_memory(const void* addr, size_t len) override {
    if (cq_) mr_cache_.forget(addr, len);
  }

  bool start_read(int peer, const PacketHeader& rts, uint8_t* dst, uint64_t n, PayloadSink* sink) override {
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

  // Every frame's send completion is in (for rxm: the peer has the bytes).
  bool drained() const override {
    if (!cq_) return true;
    if (free_tx_.size() != tx_.size() || !reads_.empty()) return false;
    for (int peer : cfg_.peers) {
      if (!peer_[size_t(peer)].queue.empty() || !peer_[size_t(peer)].control.empty()) return false;
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
          auto* op = static_cast<Op*>(e[i].op_context);
          if (op->kind == Op::kTx) tx_done(static_cast<Buffer*>(op));
        }
      } else if (got == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq_, &err, 0);
        auto* op = static_cast<Op*>(err.op_context);
        if (op && op->kind == Op::kTx) tx_done(static_cast<Buffer*>(op));
      }
    }
    shut_down_ = true;
    live_.reset();  // our watchers see this process end (closed, not lost)
    // The engine is never destroyed, so this is where providers get to
    // remove what they own outside the process (the shm provider's
    // regions in /dev/shm).
    for (auto& p : peer_) {
      while (!p.queue.empty()) p.queue.pop_front();
      p.early.clear();
    }
    mr_cache_.clear();
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
    // Transport-made packets (the kFin after an RMA read), sent between items.
    std::deque<PacketHeader> control;
    // Sender: registrations lent to the receiver with a kRts, by send_cookie,
    // until its kFin or kCts comes back. Receiver: the keys of its kRts.
    std::unordered_map<uint64_t, MrCache::Entry*> lent;
    std::unordered_map<uint64_t, RmaKey> keys;
    // Liveness (check_idle): when we last heard from it / sent to it, the
    // seq of our last keepalive, and how many of our frames it has consumed.
    double last_heard = 0, last_sent = 0;
    uint32_t keepalive_seq = 0;
    bool keepalive_out = false;
    uint32_t consumed_by_peer = 0;
    bool watched = false;  // watch(): checked even before any traffic
    // TCP-keepalive liveness (check_liveness): the peer's Liveness address
    // (empty: none, or given up after the connection closed), and what
    // we know. While kHealthy its host answers, so silence and stalls are
    // a busy peer, never a dead one.
    std::string live_addr;
    enum class Live : uint8_t { kNone, kPending, kHealthy } live = Live::kNone;
    // While kPending: recv_seq at the last check, and when it last moved
    // (0: no frame since the watch began), to tell a filtered port from a
    // dead host (check_liveness).
    uint32_t live_recv_seq = 0;
    double live_heard_at = 0;
  };

  // ------------------------------------------------------------- set-up
  void open() {
    // ofi_rxm sends a message of at most FI_OFI_RXM_BUFFER_SIZE (16 KiB, its
    // header included) eagerly and anything larger by its own rendezvous:
    // a round trip more. Our frames are up to frame_bytes, so unless the
    // user chose, make rxm's buffers hold a whole frame (measured: 16 KiB
    // ping-pong 36 -> 13 us, 64 KiB 36 -> 16 us; docs/ofi.md). libfabric
    // reads it when the providers load, at the first fi_getinfo below.
    setenv("FI_OFI_RXM_BUFFER_SIZE", std::to_string(cfg_.frame_bytes + 256).c_str(), /*overwrite=*/0);
    // rxm posts FI_OFI_RXM_MSG_RX_SIZE of those buffers (4096 by default with
    // its shared receive context): 4096 x 64 KiB = +250 MB per process
    // (measured peak RSS 98 -> 345 MB). Our credits bound what can arrive
    // at once to peers x (credits + 3) frames (open() below), so post that
    // and some room for rxm's own messages: RSS back to ~100 MB for two
    // ranks, no measurable loss at 128 (64 was 10-20 % slower).
    size_t rx = std::max<size_t>(128, cfg_.peers.size() * size_t(cfg_.credits + 3) + 64);
    setenv("FI_OFI_RXM_MSG_RX_SIZE", std::to_string(rx).c_str(), /*overwrite=*/0);
    // net (TCP's native endpoint, choose_provider) reads a message's first
    // bytes through a prefetch buffer of FI_NET_PREFETCH_RBUF_SIZE (9000)
    // and the rest straight into our buffer. With 9000, a 16 KiB ping-pong
    // after a phase of >= 4 KiB messages settled at 10-13 us in most rounds
    // (Open MPI and MPICH: 7-9); 2304 (a message of up to 2 KiB still
    // arrives in one recvfrom) took it to 0.58-0.89 of that, small sizes
    // unchanged (0.99-1.01); 0 costs small messages a second recvfrom
    // (1.05-1.24). docs/ofi.md, Benchmark.
    setenv("FI_NET_PREFETCH_RBUF_SIZE", "2304", /*overwrite=*/0);
    fi_info* hints = fi_allocinfo();
    if (!hints) throw std::runtime_error("sonde ofi: fi_allocinfo failed");
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->msg_order = FI_ORDER_NONE;  // we reorder ourselves
    // "tcp" asks for the TCP family (choose_provider): libfabric's filter
    // by name would leave out the native endpoint ("net" in 1.17). Ask for
    // "tcp;ofi_rxm" by that name to get the layered one.
    if (!cfg_.provider.empty() && cfg_.provider != "tcp") hints->fabric_attr->prov_name = strdup(cfg_.provider.c_str());
    int rc = -FI_ENODATA;
    if (!std::getenv("SONDE_OFI_NO_RMA")) rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list_);
    rma_ = rc == 0;
    if (rc) {
      // The provider lacks RMA: rendezvous data goes as pipelined sends.
      hints->caps = FI_MSG;
      rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list_);
    }
    fi_freeinfo(hints);
    std::string prov;
    if (rc == 0) {
      prov = choose_provider(list_, cfg_.provider);
      if (prov.empty()) rc = -FI_ENODATA;
    }
    if (rc) {
      throw std::runtime_error(fi_error("fi_getinfo", rc) + " (no libfabric provider offers FI_EP_RDM with FI_MSG" +
                               (cfg_.provider.empty() ? std::string() : " named \"" + cfg_.provider + "\"") +
                               "; see fi_info -l, SONDE_OFI_PROVIDER, FI_PROVIDER)");
    }
    info_ = pick(list_, prov);
    prefer_manual_progress();
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
    if (!cfg_.shm_region_name.empty() && std::strcmp(info_->fabric_attr->prov_name, "shm") == 0) {
      std::string name = cfg_.shm_region_name;  // fi_setname takes a mutable buffer
      rc = fi_setname(&ep_->fid, name.data(), name.size() + 1);
      if (rc) throw std::runtime_error(fi_error("fi_setname", rc) + " (" + cfg_.shm_region_name + ")");
    }
    rc = fi_enable(ep_);
    if (rc) throw std::runtime_error(fi_error("fi_enable", rc));

    size_t max_msg = info_->ep_attr->max_msg_size;
    if (max_msg && cfg_.frame_bytes > max_msg) cfg_.frame_bytes = max_msg;
    // credits + 2 credit-only frames + 1 keepalive per peer (see check_idle).
    size_t rx_count = cfg_.peers.size() * size_t(cfg_.credits + 3);
    size_t tx_count = size_t(cfg_.tx_buffers);
    pool_bytes_ = (rx_count + tx_count) * cfg_.frame_bytes;
    pool_ = static_cast<uint8_t*>(std::aligned_alloc(4096, (pool_bytes_ + 4095) & ~size_t(4095)));
    if (!pool_) throw std::runtime_error("sonde ofi: cannot allocate buffer pool");
    const int mr_mode = info_->domain_attr->mr_mode;
    mr_local_ = mr_mode & FI_MR_LOCAL;
    virt_addr_ = mr_mode & FI_MR_VIRT_ADDR;
    {
      std::string prov = info_->fabric_attr->prov_name;
      bool software = false;
      for (const char* s : {"tcp", "net", "sockets", "udp", "shm"}) software |= prov.find(s) != std::string::npos;
      size_t capacity = software ? 64 : 0;
      if (const char* c = std::getenv("SONDE_OFI_MR_CACHE"); c && *c) capacity = size_t(std::atol(c));
      mr_cache_.init(domain_, mr_mode & FI_MR_PROV_KEY, virt_addr_, capacity);
    }
    if (mr_local_) {
      // Our own keys for the pool too (FI_MR_PROV_KEY unset): far from the cache's.
      rc = fi_mr_reg(domain_, pool_, pool_bytes_, FI_SEND | FI_RECV, 0, (mr_mode & FI_MR_PROV_KEY) ? 0 : ~0ull >> 1, 0,
                     &mr_, nullptr);
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

  // Progress model. sockets reports automatic progress by default and then
  // runs a progress thread that spins (FI_SOCKETS_PE_WAITTIME) and competes
  // with the rank's own polling for the cores: on this two-core machine 3.7
  // ms per half round trip, 19 us with manual progress (docs/ofi.md). The
  // engine reads the completion queue whenever the rank is in MPI, which is
  // all manual progress asks, so for sockets, and for every provider with
  // SONDE_OFI_PROGRESS=manual, ask the same provider on the same interface
  // again for manual progress and take that where it is offered.
  // SONDE_OFI_PROGRESS=auto keeps the provider's default for sockets too.
  // net keeps its default (automatic) unless asked: manual measured no
  // better in latency and 0.90-0.94 of it in bandwidth.
  void prefer_manual_progress() {
    const char* mode = std::getenv("SONDE_OFI_PROGRESS");
    bool want_manual = mode && std::strcmp(mode, "manual") == 0;
    bool want_auto = mode && std::strcmp(mode, "auto") == 0;
    if (mode && *mode && !want_manual && !want_auto) {
      throw std::runtime_error(std::string("sonde ofi: SONDE_OFI_PROGRESS is \"") + mode + "\"; use auto or manual");
    }
    if (want_auto || (!want_manual && std::strcmp(info_->fabric_attr->prov_name, "sockets") != 0)) return;
    const fi_domain_attr* d = info_->domain_attr;
    if (d->data_progress != FI_PROGRESS_AUTO && d->control_progress != FI_PROGRESS_AUTO) return;
    fi_info* hints = fi_dupinfo(info_);
    if (!hints) return;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    fi_info* manual = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &manual);
    fi_freeinfo(hints);
    if (rc != 0 || !manual) return;
    if (std::strcmp(manual->fabric_attr->prov_name, info_->fabric_attr->prov_name) != 0 ||
        manual->domain_attr->data_progress != FI_PROGRESS_MANUAL) {
      fi_freeinfo(manual);
      return;
    }
    fi_freeinfo(list_);
    list_ = manual;
    info_ = manual;
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
      p.last_heard = p.last_sent = now_s();
      if (live_) p.live_addr = exchange.get(peer, kLiveKey).value_or("");
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
  bool post_frame(int peer, Buffer* b, FrameKind kind, size_t len, uint8_t flags = 0) {
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

  // ------------------------------------------------------------- receiving
  int arrived(Buffer* b) {
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

  int consume(Peer& p, const FrameHeader& f, Buffer* b) {
    ++p.recv_seq;
    p.credits += f.credits;
    if (f.credits) p.waiting_since = 0;
    if (int32_t(f.reserved2 - p.consumed_by_peer) > 0) p.consumed_by_peer = f.reserved2;
    if (p.keepalive_out && int32_t(p.consumed_by_peer - p.keepalive_seq) > 0) p.keepalive_out = false;
    const uint8_t* at = b->data + sizeof(FrameHeader);
    size_t left = b->len - sizeof(FrameHeader);
    if (f.kind == FrameKind::kFirst) {
      if (p.open || left < sizeof(PacketHeader)) fatal("sonde ofi: malformed packet from rank " + std::to_string(f.src));
      std::memcpy(&p.header, at, sizeof(PacketHeader));
      at += sizeof(PacketHeader);
      left -= sizeof(PacketHeader);
      if (f.flags & kFrameRmaKey) {
        if (left < sizeof(RmaKey)) fatal("sonde ofi: malformed packet from rank " + std::to_string(f.src));
        RmaKey key;
        std::memcpy(&key, at, sizeof key);
        at += sizeof key;
        left -= sizeof key;
        p.keys[p.header.send_cookie] = key;
      }
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

  // ------------------------------------------------------------- RMA
  // Sender: a kRts of contiguous data gets the remote key of a registration
  // holding it, written at `out` (the frame's flag says so); returns the
  // bytes written, 0 when there is no RMA or registration failed (the
  // receiver then asks for a stream, as without RMA).
  size_t attach_key(int peer, const PacketHeader& h, uint8_t* out) {
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

  void lent_back(int peer, uint64_t send_cookie) {
    Peer& p = peer_[size_t(peer)];
    auto it = p.lent.find(send_cookie);
    if (it == p.lent.end()) return;
    mr_cache_.release(it->second);
    p.lent.erase(it);
  }

  // Posts waiting fragment reads while the window allows.
  void post_reads() {
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

  // A fragment read completed: the bytes are in place (or unpacked in
  // order), XFER_CONTINUE goes out through on_chunk, and the last one
  // completes the receive and sends the kFin. Returns 1 when it did.
  int read_done(ReadFrag* f) {
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

  // ------------------------------------------------------------- liveness
  // A connection with nothing in flight never fails a send, so a link that
  // dies under it would go unnoticed by a rank waiting for a message from
  // the far side. So while we progress, every peer hears from us at least
  // every stall_timeout/4 seconds (a keepalive: a credit frame, at most one
  // not yet consumed by the peer), and a peer we have not heard from for
  // stall_timeout seconds is taken for gone. A peer that stays outside MPI
  // (no progress) for that long looks the same: the price of detection.
  // Peers we have never exchanged a frame with are left alone.
  // Silence only counts while we progress: time spent away from progress()
  // (computing outside MPI) is forgiven to every peer, which could not have
  // been heard meanwhile. Sampled every 64 calls: a long gap between two
  // samples holds the time away.
  void note_time() {
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

  void check_idle(double t) {
    double every = cfg_.stall_timeout_s / 4;
    for (int peer : cfg_.peers) {
      Peer& p = peer_[size_t(peer)];
      // Only connections in use: keepalives to every rank of a large job
      // would make the provider connect all to all.
      bool fresh = p.send_seq == 0 && p.recv_seq == 0;
      if (fresh && !p.watched) continue;
      // (liveness) Its host answers: silence is a busy peer, not a dead one.
      if (p.live == Peer::Live::kHealthy) p.last_heard = t;
      if (t - p.last_heard > cfg_.stall_timeout_s) {
        fatal("sonde ofi: no sign of life from rank " + std::to_string(peer) + " for " +
              std::to_string(int(t - p.last_heard)) +
              " s (its host or the link is gone, or it stayed outside MPI; SONDE_OFI_STALL_TIMEOUT)");
      }
      // (liveness) Keepalives still go to peers we talk to: a peer whose own
      // liveness check fell back to silence must keep hearing from us. Not
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

  // ------------------------------------------------------------- TCP liveness
  // liveness.h: the peer's kernel answers TCP keepalives whether or not the
  // peer calls MPI, so a peer whose liveness connection is healthy is
  // never taken for dead by the silence and stall checks; its host or link
  // failing is reported in about liveness_timeout_s instead. Providers
  // without an IP address (shm...) and liveness_timeout_s <= 0: none, the
  // silence checks alone as before.

  // Listens on the provider's own IP address; returns the address for the
  // peers, empty when liveness is off.
  std::string start_liveness() {
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

  bool alive(int peer) const { return peer >= 0 && peer_[size_t(peer)].live == Peer::Live::kHealthy; }

  // From the idle check: connects to peers we talk to or watch (lazily, so
  // nothing on the message path), then one poll() for news.
  void check_liveness(double t) {
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

  // ------------------------------------------------------------- faults
  void cq_error() {
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
    } else if (op && op->kind == Op::kTx && static_cast<Buffer*>(op)->peer >= 0) {
      who = " sending to rank " + std::to_string(static_cast<Buffer*>(op)->peer);
    }
    fatal("sonde ofi: network error" + who + ": " + fi_strerror(err.err) + (detail ? std::string(" (") + detail + ")" : ""));
  }

  void check_stalls() {
    if (++idle_checks_ % 256) return;
    double t = now_s();
    if (live_) check_liveness(t);
    if (cfg_.stall_timeout_s <= 0) return;
    check_idle(t);
    for (const auto& op : reads_) {
      if (alive(op->peer)) continue;  // (liveness) a busy sender may serve reads late
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
      // (liveness) A busy receiver legitimately returns no credits.
      if (p.waiting_since != 0 && !alive(peer) && t - p.waiting_since > cfg_.stall_timeout_s) {
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
  // RMA (rendezvous by fi_read)
  bool rma_ = false;        // the provider reads remote memory
  bool mr_local_ = false;   // FI_MR_LOCAL: our read targets need registering
  bool virt_addr_ = false;  // FI_MR_VIRT_ADDR: remote addresses are virtual, not offsets
  MrCache mr_cache_;
  std::vector<std::unique_ptr<ReadOp>> reads_;
  std::deque<ReadFrag*> read_wait_;  // fragments ready to read
  int reads_in_flight_ = 0;
  uint64_t calls_ = 0;     // progress() calls (note_time samples every 64th)
  double last_tick_ = 0;
  Delivery* delivery_ = nullptr;
  bool in_progress_ = false;
  bool pumping_ = false;
  bool shut_down_ = false;
  uint64_t idle_checks_ = 0;
  std::unique_ptr<Liveness> live_;  // null: liveness off (check_liveness)
  double live_next_ = 0;            // check_liveness: next poll not before
};

}  // namespace

std::unique_ptr<Transport> make_ofi_transport(const OfiConfig& config, Exchange& exchange) {
  return std::make_unique<OfiTransport>(config, exchange);
}

std::string ofi_selected_provider(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->selected() : std::string();
}

bool ofi_has_rma(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o && o->rma();
}

uint64_t ofi_registrations(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->registrations() : 0;
}

bool ofi_manual_progress(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o && o->manual_progress();
}

std::string ofi_liveness_address(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->liveness_address() : std::string();
}

}  // namespace sonde::transport
