// The seam between the engine's protocols and the things that move bytes.
//
// A transport moves *packets* between ranks of one job: a fixed PacketHeader
// followed by `header.payload` bytes. It knows nothing of communicators,
// matching or requests (the engine owns those); it only promises
//   - FIFO order per (sender, receiver) pair, for every packet type;
//   - header first, then the payload streamed into wherever the engine says;
//   - backpressure instead of unbounded buffering: a packet that does not fit
//     now stays queued on the sender and moves during later progress() calls.
// Implementations: self (loopback), shm (rings in shared memory), and later
// ofi (libfabric). Everything here is single-threaded: the engine serializes
// calls into a transport.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include <boost/intrusive/list.hpp>

namespace sonde::transport {

enum class PacketType : uint8_t {
  kEager = 1,      // whole message in the payload
  kEagerSync = 2,  // same, and the receiver answers kSyncAck once matched (Ssend)
  kRts = 3,        // rendezvous request: message of `total` bytes at `remote_addr`
  kCts = 4,        // receiver matched an RTS but cannot pull: please stream kData
  kData = 5,       // rendezvous data streamed by the sender after a kCts
  kFin = 6,        // receiver pulled the data itself: the send is complete
  kSyncAck = 7,    // receiver matched a kEagerSync
  kCtsWrite = 8,   // receiver pulls the tail itself; sender, please write the
                   // first `total` bytes to the address in the 8-byte payload
  kWriteDone = 9,  // sender wrote its part (flags: 1 = the write was refused)
  // MPI_Cancel of a send whose message already left:
  kCancelSend = 10,  // drop the message (envelope, send_cookie) if still unmatched;
                     // recv_cookie: the sender's request handle, echoed back
  kCancelAck = 11,   // the answer, same cookies: flags 1 = dropped, 2 = still arriving
                     // (ask again), 0 = matched/kept
};

// 48 bytes on the wire, the same layout in every process of the job.
struct PacketHeader {
  PacketType type;
  uint8_t flags;
  uint16_t reserved;
  uint32_t context;      // communicator context id (message packets)
  int32_t source;        // sender's rank in that communicator
  int32_t tag;           // user tag, or a reserved negative collective tag
  uint64_t payload;      // payload bytes that follow this header
  uint64_t total;        // message size in bytes (kEager*, kRts)
  uint64_t send_cookie;  // sender's request (kEagerSync, kRts, kCts, kFin, kSyncAck)
  uint64_t recv_cookie;  // receiver's request (kCts, kData); kRts: sender's address
};
static_assert(sizeof(PacketHeader) == 48);

// What is wrong with a header that came from another process, or null: its
// type must be one of PacketType's and a kCtsWrite's payload the 8-byte
// address it announces. Transports check every header they receive with
// this before handing it to the engine, and end the job naming the peer.
inline const char* packet_header_error(const PacketHeader& h) {
  const auto t = static_cast<uint8_t>(h.type);
  if (t < static_cast<uint8_t>(PacketType::kEager) || t > static_cast<uint8_t>(PacketType::kCancelAck)) {
    return "unknown packet type";
  }
  if (h.type == PacketType::kCtsWrite && h.payload != 8) return "CTS-write without its 8-byte address";
  return nullptr;
}

// Where an arriving payload goes. Either `contiguous` points at `header.payload`
// writable bytes, or it is null and `unpack` takes the bytes in order in
// pieces (a non-contiguous datatype, or a discard). `cookie` is the engine's.
class PayloadSink {
 public:
  uint8_t* contiguous = nullptr;
  // Called with consecutive pieces; `offset` is the byte offset within the payload.
  virtual void unpack(const uint8_t* bytes, size_t offset, size_t n) {}
  // A piece of the payload other than the last is in place (`received`
  // bytes so far); the last one is reported by on_payload_done instead.
  // Lets the engine report PERUSE_COMM_REQ_XFER_CONTINUE per fragment.
  virtual void on_chunk(size_t received) {}
  virtual ~PayloadSink() = default;
};

// Implemented by the engine: what happens when packets arrive.
class Delivery {
 public:
  // A header arrived from world rank `peer`. Return the sink for its payload
  // (ignored when header.payload == 0). The sink must stay valid until
  // on_payload_done for this packet.
  virtual PayloadSink* on_header(int peer, const PacketHeader& header) = 0;
  // Every payload byte of that packet is in the sink (also called for
  // payload == 0, right after on_header).
  virtual void on_payload_done(int peer, const PacketHeader& header, PayloadSink* sink) = 0;
  virtual ~Delivery() = default;
};

// A packet queued for sending, owned by the engine (embedded in a request),
// linked into the transport's per-peer FIFO. Zero allocation in the transport.
class SendItem : public boost::intrusive::list_base_hook<> {
 public:
  PacketHeader header{};
  const uint8_t* payload = nullptr;  // contiguous source; null: use pack()
  uint64_t handed = 0;               // payload bytes handed over so far (transport-owned)
  // Non-contiguous sources: write `n` bytes of payload starting at `offset` to `out`.
  virtual void pack(uint8_t* out, size_t offset, size_t n) {}
  // First payload byte handed to the medium (XFER_BEGIN point); also called
  // for an empty payload, immediately before on_handed.
  virtual void on_first_byte() {}
  // More bytes handed over (XFER_CONTINUE point); `handed` is up to date.
  virtual void on_progress() {}
  // The last byte is handed over: the transport no longer touches this item.
  virtual void on_handed() = 0;
  virtual ~SendItem() = default;
};

// What a transport can do, declared once when it is built. The core reads
// this instead of calling methods that would refuse: a method that a
// capability names is called only when the capability is set.
enum class TransportKind : uint8_t { kSelf, kShm, kOfi };
struct Capabilities {
  TransportKind kind = TransportKind::kSelf;
  // The eager/rendezvous switch this transport prefers for its peers:
  // messages of at most this many bytes go eagerly. kEngineEagerLimit means
  // the engine's settings().eager_limit, which SONDE_EAGER_LIMIT and the MPI_T
  // cvar sonde_eager_limit set.
  static constexpr uint64_t kEngineEagerLimit = ~uint64_t(0);
  uint64_t eager_limit = kEngineEagerLimit;
  // start_read: an asynchronous single-copy pull (RMA read over a network).
  bool rma_read = false;
  // drained() can be false: handed-over sends may still need this rank's
  // progress after its last send (network providers with manual progress).
  bool needs_draining = false;
  // watch(): the transport checks the liveness of peers.
  bool liveness = false;
  // forget_memory(): the transport caches registrations of user memory.
  bool registration_cache = false;
  // register_window(), rma_write(), rma_read(): one-sided transfers into
  // memory another process registered (RMA windows over a network).
  bool rma_window = false;
};

// Told, from the transport's progress(), that a one-sided transfer
// (Transport::rma_write / rma_read) is complete: a write's data is in the
// target's memory, a read's in the local buffer.
class RmaCompletion {
 public:
  virtual void rma_complete() = 0;

 protected:
  ~RmaCompletion() = default;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // Declared by the transport's constructor, fixed from then on. A plain
  // member, not a virtual, so the send fast path pays one load.
  const Capabilities& capabilities() const { return caps_; }
  // Does this transport carry traffic from us to world rank `peer`?
  virtual bool reaches(int peer) const = 0;
  // Fast path for small packets: hand header + contiguous payload over now,
  // all or nothing. False when the peer has queued items (FIFO) or no room;
  // the caller then queues a SendItem. On success the caller's buffer is free.
  virtual bool try_send_now(int peer, const PacketHeader& header, const void* payload) = 0;
  // Queue an item behind everything already queued for `peer`; it moves
  // during progress() (perhaps partly right away).
  virtual void enqueue(int peer, SendItem* item) = 0;
  // Remove a queued item that has not started (handed == 0). False otherwise.
  virtual bool dequeue(int peer, SendItem* item) = 0;
  // Move what can move, both directions, delivering arrivals to `delivery`.
  // Returns how many packets were delivered or handed over (0 = idle).
  virtual int progress(Delivery& delivery) = 0;
  // Single-copy: read `len` bytes at `remote_addr` in peer's address space
  // into `dst`. False when the system refuses (no permission, no support);
  // the engine then falls back to kCts + kData streaming. Never partial.
  virtual bool read_remote(int peer, uint64_t remote_addr, void* dst, size_t len) = 0;
  // Single-copy, the other way: write `len` bytes from `src` to `remote_addr`
  // in peer's address space (process_vm_writev). Same refusal rules as
  // read_remote; true means every byte was written. After false, a prefix of
  // the range may have been written (never a byte outside it). The default
  // refuses.
  virtual bool write_remote(int peer, uint64_t remote_addr, const void* src, size_t len) { return false; }
  // Single-copy with a scattered local side (a non-contiguous datatype's
  // memory, datatype/datatype.h gather_iov): the remote range starting at
  // `remote_addr` is as long as the `n` local iovecs together, and is read
  // into / written from them in order. Same refusal rules as above. The
  // defaults go piece by piece through read_remote / write_remote.
  virtual bool read_remote_iov(int peer, uint64_t remote_addr, const iovec* local, size_t n) {
    for (size_t i = 0; i < n; remote_addr += local[i].iov_len, ++i)
      if (!read_remote(peer, remote_addr, local[i].iov_base, local[i].iov_len)) return false;
    return true;
  }
  virtual bool write_remote_iov(int peer, uint64_t remote_addr, const iovec* local, size_t n) {
    for (size_t i = 0; i < n; remote_addr += local[i].iov_len, ++i)
      if (!write_remote(peer, remote_addr, local[i].iov_base, local[i].iov_len)) return false;
    return true;
  }
  // Called once before MPI_Finalize returns, after all traffic has drained.
  virtual void shutdown() {}
  // False while something already handed over may still need this rank's
  // progress() to reach its peer (a network provider with manual progress
  // may hold a send it accepted). MPI_Finalize progresses until every
  // transport is drained, or nothing has moved for a while, before its
  // final fence, where nothing progresses. Capabilities::needs_draining.
  virtual bool drained() const { return true; }
  // Capabilities::rma_read. Asynchronous pull for transports whose reads complete later (RMA over
  // a network): the sender's transport attached a remote key to the kRts
  // `rts`; start reading its first `n` (> 0) bytes into `dst` (contiguous),
  // or, when dst is null, into `sink` through unpack() in order. Progress
  // then reports sink->on_chunk per fragment and finally
  // delivery.on_payload_done(peer, a kData header, sink), and the sender's
  // engine receives the kFin from the transport. False, with nothing
  // started: no key for that message (the engine falls back as usual).
  virtual bool start_read(int peer, const PacketHeader& rts, uint8_t* dst, uint64_t n, PayloadSink* sink) {
    return false;
  }
  // Capabilities::registration_cache. MPI_Free_mem calls this before freeing [addr, addr + len): a transport
  // that caches registrations of user memory drops those overlapping it,
  // so memory later allocated at the same addresses is registered afresh.
  virtual void forget_memory(const void* addr, size_t len) {}
  // Capabilities::rma_window. Registers [base, base + len) for the peers'
  // one-sided reads and writes: *key is what they pass to rma_write /
  // rma_read (with `base` and offsets from it), *handle what
  // deregister_window takes. False, with nothing registered, when the
  // provider refuses.
  virtual bool register_window(void* base, size_t len, uint64_t* key, uint64_t* handle) { return false; }
  virtual void deregister_window(uint64_t handle) {}
  // Capabilities::rma_window. Starts writing `len` bytes from `src` to
  // `offset` bytes past `base` in `peer`'s memory registered there under
  // `key`, or reading them into `dst`; `done->rma_complete()` is called
  // from a later progress() once the data is in place at the far end (a
  // write: in the target's memory, not only sent). `src` / `dst` and
  // `done` must stay valid until then. A transfer the provider cannot take
  // now waits inside the transport and starts during later progress()
  // calls.
  virtual void rma_write(int peer, const void* src, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                         RmaCompletion* done) {}
  virtual void rma_read(int peer, void* dst, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                        RmaCompletion* done) {}
  // Capabilities::liveness. The engine has been waiting for a while on `peer` (a receive from it or
  // from MPI_ANY_SOURCE on a communicator holding it, a send to it, a
  // request of a Waitall/any/some, or a user's loop of tests or probes
  // that keeps finding nothing): a transport that checks the liveness of
  // peers it exchanged traffic with starts checking this one too. Called
  // rarely (once per long wait), possibly again for a peer already watched.
  virtual void watch(int peer) {}
  // Everything handed to this transport for `peer` so far has been taken
  // by the peer's progress (read out of the medium, delivered). A peer that
  // took a request answers it in that same progress pass. Transports that
  // cannot tell say false.
  virtual bool peer_took_all(int peer) const { return false; }
  // The peer's process is known to be gone (false when alive or unknown).
  virtual bool peer_gone(int peer) const { return false; }

 protected:
  Capabilities caps_;
};

}  // namespace sonde::transport
