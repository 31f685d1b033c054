// Private declarations of the ofi transport, shared by its source files: the
// frame format, what is posted to the provider, and the OfiTransport class.
// Its members are defined by concern:
//   ofi_transport.cc  construction, drained, shutdown, fatal, ofi_transport.h's functions
//   endpoint.cc       provider choice, endpoint and buffer set-up, address exchange, closing
//   send.cc           the send path: frames, queued items, credits
//   progress.cc       progress(): the completion queue, the receive path, receive buffers
//   rma_read.cc       rendezvous by RMA read: keys lent by the sender, fi_read fragments
//   window_rma.cc     one-sided transfers into registered windows (fi_write / fi_read)
//   peer_watch.cc     keepalives, silence and stall checks, TCP liveness
// mr_cache.h holds the registration cache. Nothing outside transports/ofi
// includes this header.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transports/exchange.h"
#include "transports/ofi/fabric_api.h"
#include "transports/ofi/frame.h"
#include "transports/ofi/liveness.h"
#include "transports/ofi/mr_cache.h"
#include "transports/ofi/ofi_transport.h"
#include "transports/transport.h"

namespace sonde::transport::ofi {

// Exchange keys each rank puts at start-up (see make_ofi_transport).
constexpr const char* kAddrKey = "ofi.addr";
constexpr const char* kLiveKey = "ofi.live";  // Liveness::address(), empty: none

// Everything posted to the provider starts with one of these: the
// fi_context2 lets providers that need FI_CONTEXT / FI_CONTEXT2 use it, and
// the completion's op_context brings us back here.
struct Op {
  fi_context2 ctx;
  enum Kind : uint8_t { kRx, kTx, kRead, kWin } kind = kTx;
};

// A bounce buffer.
struct Buffer : Op {
  uint8_t* data = nullptr;
  int peer = -1;  // tx: destination (for error messages)
  bool is_rx = false;
  size_t len = 0;          // rx: bytes received
  bool in_flight = false;  // tx: posted, completion not in yet
  double posted_at = 0;    // tx: when (for the stall check)
};

// "sonde ofi: <what> failed: <libfabric's message> (<rc>)".
inline std::string fi_error(const char* what, int rc) {
  return std::string("sonde ofi: ") + what + " failed: " + fabric_api().strerror(-rc) + " (" + std::to_string(rc) + ")";
}

// Seconds on the steady clock.
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
  PacketHeader header{};  // what on_payload_done reports (kData)
  std::vector<ReadFrag> frags;
  std::vector<uint8_t> bounce;
  MrCache::Entry* local = nullptr;  // FI_MR_LOCAL: our side's registration
  uint64_t next = 0;                // next offset to read
  uint64_t landed = 0;              // bytes in place (in order, for the bounce case)
  size_t deliver = 0;               // bounce: the fragment whose piece is next in order
};

// One fi_write / fi_read of a window transfer (window_rma.cc): a transfer
// longer than the provider's largest message is several, and its
// completion is reported once the last one is in.
struct WinXfer {
  RmaCompletion* done = nullptr;
  int parts = 0;  // fi_write / fi_read not yet complete
};
struct WinOp : Op {
  WinXfer* xfer = nullptr;
  bool write = false;
  int peer = -1;
  uint8_t* local = nullptr;
  size_t len = 0;
  uint64_t remote = 0, key = 0;
};

// The transport; ofi_transport.h describes what it does and promises.
class OfiTransport final : public Transport {
 public:
  // Applies the environment's overrides to `config`, opens the endpoint and
  // takes part in the start-up exchange (put, commit, fence, as
  // make_ofi_transport says; also when opening failed), then inserts the
  // peers' addresses and posts the receive buffers. Throws
  // std::invalid_argument for bad credits or frame_bytes (before the
  // exchange), std::runtime_error for the rest, with everything closed.
  OfiTransport(const OfiConfig& config, Exchange& exchange);
  ~OfiTransport() override;

  const char* name() const override { return "ofi"; }
  std::string selected() const { return selected_; }
  bool rma() const { return rma_; }
  uint64_t registrations() const { return mr_cache_.registrations(); }
  bool manual_progress() const { return info_ && info_->domain_attr->data_progress == FI_PROGRESS_MANUAL; }
  std::string liveness_address() const { return live_ ? live_->address() : std::string(); }

  bool reaches(int peer) const override {
    return peer >= 0 && size_t(peer) < peer_.size() && peer_[size_t(peer)].reached;
  }

  // Transport's interface (transports/transport.h).
  bool try_send_now(int peer, const PacketHeader& header, const void* payload) override;  // send.cc
  void enqueue(int peer, SendItem* item) override;                                        // send.cc
  bool dequeue(int peer, SendItem* item) override;                                        // send.cc
  int progress(Delivery& delivery) override;                                              // progress.cc
  bool read_remote(int, uint64_t, void*, size_t) override { return false; }
  // A rank waiting on `peer` (Engine::waiting_on): watch it like a peer we
  // have talked to. The next idle check connects to its liveness port
  // where it has one (check_liveness). Without: one never talked to gets
  // its silence clock started now and a keepalive at the next check, which
  // also opens the connection; the peer, having heard from us, keeps us
  // posted. (peer_watch.cc)
  void watch(int peer) override;

  void forget_memory(const void* addr, size_t len) override {
    if (cq_) mr_cache_.forget(addr, len);
  }

  // False, with nothing started, when the kRts carried no key or our side
  // cannot be registered: the engine then asks for a stream. (rma_read.cc)
  bool start_read(int peer, const PacketHeader& rts, uint8_t* dst, uint64_t n, PayloadSink* sink) override;
  // Every frame's send completion is in (for rxm: the peer has the bytes).
  bool drained() const override;
  // Lets posted frames leave (for at most 2 s), ends liveness and closes
  // everything, the provider's resources outside the process included.
  void shutdown() override;

 private:
  struct Peer {
    bool reached = false;
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int credits = 0;  // frames we may still send to it
    int owed = 0;     // frames of its we consumed and not yet acknowledged
    uint32_t send_seq = 0;
    uint32_t recv_seq = 0;              // next frame to deliver from it
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

  // ------------------------------------------------------------- endpoint.cc
  // Chooses the provider and opens fabric, domain, completion queue, address
  // vector, endpoint and the buffer pools; throws std::runtime_error.
  void open();
  // This endpoint's address for the peers (fi_getname); throws.
  std::string name();
  // Swaps info_ for the same provider with manual progress where that is
  // wanted and offered; throws on a bad SONDE_OFI_PROGRESS.
  void prefer_manual_progress();
  // Inserts every peer's address from the exchange into the address vector
  // and takes its liveness address; throws if a peer has no address (it
  // could not open an endpoint).
  void connect(Exchange& exchange);
  // Closes whatever open() opened; safe to call more than once.
  void close_all();

  // ------------------------------------------------------------- send.cc
  // Sends the frame in tx buffer `b` (payload already in place after the
  // FrameHeader); false, with nothing changed, if the provider says EAGAIN.
  bool post_frame(int peer, Buffer* b, FrameKind kind, size_t len, uint8_t flags = 0);
  // A send completion: the buffer is free again.
  void tx_done(Buffer* b);
  // A credit-only frame, if a tx buffer is free (else the next progress() retries).
  void send_credits(int peer);
  // Moves frames of the peer's queued items while credits, buffers and the
  // provider allow. Returns the number of packets fully handed over.
  int pump(int peer);

  // ------------------------------------------------------------- progress.cc
  // An error completion: fatal, naming the peer, unless shut down or canceled.
  void cq_error();
  void post_receives();
  // A buffer the provider would not take now (EAGAIN) is retried at the
  // next progress(); until then it simply is not posted.
  void repost(Buffer* b);
  void repost_pending();
  // A frame arrived: delivered in sequence order (early ones held). Returns
  // the number of packets completed.
  int arrived(Buffer* b);
  // Takes the next frame in order from `p`: the credits and acknowledgement
  // it carries, then its packet bytes to the engine (delivery_); reposts its
  // buffer. Returns 1 when it completed a packet.
  int consume(Peer& p, const FrameHeader& f, Buffer* b);

  // ------------------------------------------------------------- rma_read.cc
  // Sender: a kRts of contiguous data gets the remote key of a registration
  // holding it, written at `out` (the frame's flag says so); returns the
  // bytes written, 0 when there is no RMA or registration failed (the
  // receiver then asks for a stream, as without RMA).
  size_t attach_key(int peer, const PacketHeader& h, uint8_t* out);
  // Sender: the registration lent with `send_cookie`'s kRts goes back to the cache.
  void lent_back(int peer, uint64_t send_cookie);
  // Posts waiting fragment reads while the window allows.
  void post_reads();
  // A fragment read completed: the bytes are in place (or unpacked in
  // order), XFER_CONTINUE goes out through on_chunk, and the last one
  // completes the receive and sends the kFin. Returns 1 when it did.
  int read_done(ReadFrag* f);

  // ------------------------------------------------------------- window_rma.cc
 public:
  bool register_window(void* base, size_t len, uint64_t* key, uint64_t* handle) override;
  void deregister_window(uint64_t handle) override;
  void rma_write(int peer, const void* src, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                 RmaCompletion* done) override;
  void rma_read(int peer, void* dst, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                RmaCompletion* done) override;
  uint64_t window_transfers() const { return win_transfers_; }
  // Whether the provider can serve them (decides caps_.rma_window at start-up).
  bool window_rma_offered() const;

 private:
  // Cuts a transfer into operations of at most the provider's largest
  // message and queues them.
  void start_window_transfer(bool write, int peer, uint8_t* local, size_t len, uint64_t remote, uint64_t key,
                             RmaCompletion* done);
  // Posts queued window operations while the provider takes them.
  void post_window_ops();
  // A window operation completed; returns 1 when it ended its transfer.
  int window_done(WinOp* op);

  // ------------------------------------------------------------- peer_watch.cc
  // Forgives peers the time spent away from progress() (sampled).
  void note_time();
  // Keepalives to idle peers, and the silence check.
  void check_idle(double t);
  // On every 256th progress() that found nothing to do: TCP liveness, then
  // the silence check and sends, reads and credit waits stalled past
  // stall_timeout_s (fatal).
  void check_stalls();
  // Listens on the provider's own IP address; returns the address for the
  // peers, empty when liveness is off.
  std::string start_liveness();
  bool alive(int peer) const { return peer >= 0 && peer_[size_t(peer)].live == Peer::Live::kHealthy; }
  // From the idle check: connects to peers we talk to or watch (lazily, so
  // nothing on the message path), then one poll() for news.
  void check_liveness(double t);

  // ------------------------------------------------------------- ofi_transport.cc
  // Calls OfiConfig::fatal; if there is none or it returns, prints the
  // message and exits with status 1.
  [[noreturn]] void fatal(const std::string& message);

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
  // One-sided transfers into windows (window_rma.cc): whether they are
  // offered (FI_RMA with writes, no FI_MR_LOCAL, not turned off by
  // SONDE_OFI_RMA_WINDOWS=0), the windows' registrations by handle, the
  // operations the provider has not taken yet, and transfers started.
  std::unordered_map<uint64_t, fid_mr*> windows_;
  uint64_t next_window_ = 0;
  std::deque<WinOp*> win_wait_;
  int win_in_flight_ = 0;  // posted, completion not in yet
  uint64_t win_transfers_ = 0;
  size_t win_max_ = 0;
  uint64_t calls_ = 0;  // progress() calls (note_time samples every 64th)
  double last_tick_ = 0;
  Delivery* delivery_ = nullptr;
  bool in_progress_ = false;
  bool pumping_ = false;
  bool shut_down_ = false;
  uint64_t idle_checks_ = 0;
  std::unique_ptr<Liveness> live_;  // null: liveness off (check_liveness)
  double live_next_ = 0;            // check_liveness: next poll not before
};

}  // namespace sonde::transport::ofi
