#include "transports/shm/shm_transport.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <boost/intrusive/list.hpp>
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "transports/shm/endpoint.h"
#include "transports/shm/fast_box.h"
#include "transports/shm/ring_reader.h"
#include "transports/shm/segment.h"

namespace sonde::transport {
namespace {

using shm::FastBox;
using shm::kFastBoxPayload;
using shm::Segment;

constexpr char kExchangeKey[] = "sonde.shm";
// Packets up to this size (header included) are staged on the stack and
// pushed with one release store, so the reader finds them whole.
constexpr size_t kSmallPacket = 256;
// pack() and unpack() go through these; contiguous data never does.
constexpr size_t kBounceBytes = 16 * 1024;

// process_vm_readv or process_vm_writev: same signature, opposite direction.
using VmCopy = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

// All-or-nothing copy between the `n` iovecs of `local` here, in order, and
// the bytes from `remote` on in process `pid` (as many as the iovecs hold).
// A failed write may leave a prefix of the range written. The kernel may
// move fewer bytes than asked (and takes at most IOV_MAX iovecs): resume
// where it stopped.
bool copy_process(VmCopy copy, pid_t pid, uint64_t remote, const iovec* local, size_t n) {
  constexpr size_t kMaxIov = 1024;  // IOV_MAX on Linux
  iovec here[kMaxIov];
  size_t next = 0;  // first iovec of `local` not yet copied into `here`
  size_t used = 0, first = 0;
  uint64_t done = 0;
  for (;;) {
    // Refill: the unfinished iovecs, then as many more as fit.
    if (first == used) {
      used = first = 0;
      while (next < n && used < kMaxIov) here[used++] = local[next++];
      if (used == 0) return true;
    }
    size_t len = 0;
    for (size_t i = first; i < used; ++i) len += here[i].iov_len;
    if (len == 0) {
      first = used;
      continue;
    }
    iovec far{reinterpret_cast<void*>(remote + done), len};
    ssize_t got = copy(pid, here + first, used - first, &far, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // EPERM, ESRCH, ENOSYS, EFAULT: let the engine stream instead
    done += static_cast<uint64_t>(got);
    for (size_t left = static_cast<size_t>(got); left > 0;) {
      size_t take = std::min(left, here[first].iov_len);
      here[first].iov_base = static_cast<char*>(here[first].iov_base) + take;
      here[first].iov_len -= take;
      left -= take;
      if (here[first].iov_len == 0) ++first;
    }
    while (first < used && here[first].iov_len == 0) ++first;
  }
}

bool read_process(pid_t pid, uint64_t remote, void* dst, size_t len) {
  iovec here{dst, len};
  return copy_process(process_vm_readv, pid, remote, &here, 1);
}

bool write_process(pid_t pid, uint64_t remote, const void* src, size_t len) {
  // process_vm_writev only reads the local iovec.
  iovec here{const_cast<void*>(src), len};
  return copy_process(process_vm_writev, pid, remote, &here, 1);
}

// A switch read at construction: unset or anything but "0" means on.
bool enabled_by_env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr || std::strcmp(value, "0") != 0;
}

// What one rank's segment holds per local peer: that peer's ring to us and,
// beside it, its fast boxes to us (shm/fast_box.h).
template <size_t RingBytes>
struct Inbox {
  shm::RingSlot<RingBytes> ring;
  shm::FastBoxes boxes;
};

template <size_t RingBytes>
class ShmTransport final : public Transport {
  using Ring = shm::Ring<RingBytes>;
  using Slot = Inbox<RingBytes>;
  using SendQueue = boost::intrusive::list<SendItem, boost::intrusive::constant_time_size<false>>;

  struct Peer {
    int rank = -1;
    pid_t pid = 0;
    bool single_copy = false;  // the wire-up probe read the peer's cookie
    Ring* out = nullptr;       // ours, in the peer's segment
    shm::RingReader<Ring> in;  // reads the peer's ring, in our segment
    shm::BoxWriter out_boxes;  // ours, in the peer's segment
    shm::BoxReader in_boxes;   // the peer's, in our segment
    // Sending.
    SendQueue queue;
    bool front_started = false;  // the front item's header is in the ring or a box
    bool pumping = false;
    // Receiving: the ring packet whose payload is still arriving.
    bool receiving = false;
    PacketHeader rx_header{};
    PayloadSink* rx_sink = nullptr;
    uint64_t rx_done = 0;
  };

  // Resets a flag on every exit path, exceptions from callbacks included.
  class Busy {
   public:
    explicit Busy(bool& flag) : flag_(flag) { flag_ = true; }
    ~Busy() { flag_ = false; }

   private:
    bool& flag_;
  };

 public:
  ShmTransport(const ShmConfig& config, Exchange& exchange);

  const char* name() const override { return "shm"; }

  bool reaches(int peer) const override {
    return peer >= 0 && static_cast<size_t>(peer) < peer_index_.size() && peer_index_[peer] >= 0;
  }

  bool try_send_now(int peer, const PacketHeader& header, const void* payload) override {
    Peer& p = find(peer);
    if (!p.queue.empty()) return false;
    if (FastBox* box = free_box(p, header.payload)) {
      box->header = header;
      if (header.payload != 0) std::memcpy(box->payload, payload, header.payload);
      p.out_boxes.post(*box);
      return true;
    }
    Ring& ring = *p.out;
    const size_t total = sizeof header + header.payload;
    if (ring.write_available() < total) return false;
    const auto* head = reinterpret_cast<const char*>(&header);
    if (header.payload == 0) {
      ring.push(head, sizeof header);
    } else if (total <= kSmallPacket) {
      char staged[kSmallPacket];
      std::memcpy(staged, head, sizeof header);
      std::memcpy(staged + sizeof header, payload, header.payload);
      ring.push(staged, total);
    } else {
      ring.push(head, sizeof header);
      ring.push(static_cast<const char*>(payload), header.payload);
    }
    p.out_boxes.skip();
    return true;
  }

  bool peer_took_all(int peer) const override {
    const Peer& p = peers_[peer_index_[peer]];
    return p.queue.empty() && p.out_boxes.all_consumed();
  }

  bool peer_gone(int peer) const override {
    const Peer& p = peers_[peer_index_[peer]];
    return p.pid > 0 && ::kill(p.pid, 0) != 0 && errno == ESRCH;
  }

  void enqueue(int peer, SendItem* item) override {
    Peer& p = find(peer);
    item->handed = 0;
    p.queue.push_back(*item);
    pump(p);
  }

  bool dequeue(int peer, SendItem* item) override {
    Peer& p = find(peer);
    if (item->handed != 0 || !item->is_linked()) return false;
    if (p.front_started && &p.queue.front() == item) return false;  // header already sent
    p.queue.erase(p.queue.iterator_to(*item));
    return true;
  }

  int progress(Delivery& delivery) override {
    if (in_progress_) return 0;
    Busy busy(in_progress_);
    int moved = 0;
    for (size_t i = 0; i < npeers_; ++i) {
      Peer& p = peers_[i];
      if (!p.queue.empty()) moved += pump(p);
      moved += drain(p, delivery);
    }
    return moved;
  }

  bool read_remote(int peer, uint64_t remote_addr, void* dst, size_t len) override {
    if (!reaches(peer)) return false;
    const Peer& p = peers_[peer_index_[peer]];
    return p.single_copy && read_process(p.pid, remote_addr, dst, len);
  }

  bool write_remote(int peer, uint64_t remote_addr, const void* src, size_t len) override {
    if (!reaches(peer)) return false;
    const Peer& p = peers_[peer_index_[peer]];
    return p.single_copy && write_process(p.pid, remote_addr, src, len);
  }

  bool read_remote_iov(int peer, uint64_t remote_addr, const iovec* local, size_t n) override {
    if (!reaches(peer)) return false;
    const Peer& p = peers_[peer_index_[peer]];
    return p.single_copy && copy_process(process_vm_readv, p.pid, remote_addr, local, n);
  }

  bool write_remote_iov(int peer, uint64_t remote_addr, const iovec* local, size_t n) override {
    if (!reaches(peer)) return false;
    const Peer& p = peers_[peer_index_[peer]];
    return p.single_copy && copy_process(process_vm_writev, p.pid, remote_addr, local, n);
  }

  void shutdown() override {
    // Later calls must find no peer rather than unmapped rings.
    peer_index_.clear();
    npeers_ = 0;
    mapped_.clear();
    own_ = Segment();
  }

 private:
  Peer& find(int peer) {
    assert(reaches(peer));
    return peers_[peer_index_[peer]];
  }

  // Moves queued packets to `p`, each into a free fast box if it fits one and
  // else into the ring, until the ring is full (and no box free), the queue is
  // empty or one ring's worth has moved (so one huge send does not starve
  // receives).
  int pump(Peer& p) {
    if (p.pumping) return 0;  // enqueue() from a callback of the item being pumped
    Busy busy(p.pumping);
    Ring& ring = *p.out;
    int handed = 0;
    size_t budget = RingBytes;
    while (!p.queue.empty()) {
      SendItem& item = p.queue.front();
      const uint64_t len = item.header.payload;
      if (!p.front_started) {
        if (budget < sizeof(PacketHeader)) break;
        FastBox* box = budget >= sizeof(PacketHeader) + len ? free_box(p, len) : nullptr;
        if (box != nullptr) {
          box->header = item.header;
          if (len != 0) {
            if (item.payload != nullptr) {
              std::memcpy(box->payload, item.payload, len);
            } else {
              item.pack(box->payload, 0, len);
            }
          }
          p.out_boxes.post(*box);
          p.front_started = true;
          item.handed = len;
          budget -= sizeof(PacketHeader) + len;
          if (len != 0) item.on_first_byte();
        } else {
          if (ring.write_available() < sizeof(PacketHeader)) break;
          ring.push(reinterpret_cast<const char*>(&item.header), sizeof(PacketHeader));
          p.out_boxes.skip();
          p.front_started = true;
          budget -= sizeof(PacketHeader);
        }
      }
      while (item.handed < len && budget != 0) {
        const size_t room = ring.write_available();
        if (room == 0) break;
        const size_t offset = item.handed;
        size_t n = std::min<uint64_t>({room, len - offset, budget});
        if (item.payload != nullptr) {
          n = ring.push(reinterpret_cast<const char*>(item.payload) + offset, n);
        } else {
          n = std::min(n, kBounceBytes);
          item.pack(tx_bounce_, offset, n);
          n = ring.push(reinterpret_cast<const char*>(tx_bounce_), n);  // all of it: only we push
        }
        item.handed += n;
        budget -= n;
        if (offset == 0) {
          item.on_first_byte();
        } else if (item.handed < len) {
          item.on_progress();
        }
      }
      if (item.handed < len) break;
      if (len == 0) item.on_first_byte();
      // Callbacks may only append or remove unstarted items: `item` is still the front.
      p.queue.pop_front();
      p.front_started = false;
      item.on_handed();
      ++handed;
    }
    return handed;
  }

  // Delivers what `p` has written to us, up to about one ring's worth.
  int drain(Peer& p, Delivery& delivery) {
    shm::RingReader<Ring>& ring = p.in;
    int delivered = 0;
    size_t budget = RingBytes;
    for (;;) {
      if (!p.receiving) {
        if (budget < sizeof(PacketHeader)) break;
        // The next packet in sequence is in its box or at the ring's head.
        const shm::BoxReader::Next next = p.in_boxes.locate(ring);  // headers arrive whole
        if (next == shm::BoxReader::Next::kNothing) break;
        if (next == shm::BoxReader::Next::kBox) {
          FastBox& box = p.in_boxes.box();
          check_header(p, box.header, kFastBoxPayload);
          budget -= std::min<uint64_t>(budget, sizeof(PacketHeader) + box.header.payload);
          deliver_box(p, box, delivery);
          ++delivered;
          continue;
        }
        ring.take(reinterpret_cast<char*>(&p.rx_header), sizeof(PacketHeader));
        check_header(p, p.rx_header, UINT64_MAX);
        budget -= sizeof(PacketHeader);
        p.rx_sink = delivery.on_header(p.rank, p.rx_header);
        if (p.rx_header.payload == 0) {
          delivery.on_payload_done(p.rank, p.rx_header, p.rx_sink);
          p.in_boxes.done();
          ++delivered;
          continue;
        }
        p.receiving = true;
        p.rx_done = 0;
      }
      if (budget == 0) break;
      const uint64_t len = p.rx_header.payload;
      size_t n = std::min<uint64_t>(len - p.rx_done, budget);
      PayloadSink* sink = p.rx_sink;
      if (sink != nullptr && sink->contiguous != nullptr) {
        n = ring.take(reinterpret_cast<char*>(sink->contiguous) + p.rx_done, n);
      } else {
        n = ring.take(reinterpret_cast<char*>(rx_bounce_), std::min(n, kBounceBytes));
        if (sink != nullptr && n != 0) sink->unpack(rx_bounce_, p.rx_done, n);
      }
      if (n == 0) break;
      p.rx_done += n;
      budget -= n;
      if (p.rx_done < len && sink != nullptr && n != 0) sink->on_chunk(p.rx_done);
      if (p.rx_done == len) {
        p.receiving = false;
        delivery.on_payload_done(p.rank, p.rx_header, sink);
        p.in_boxes.done();
        ++delivered;
      }
    }
    return delivered;
  }

  // The box the next packet to `p` may use, or null: boxes off, payload too
  // big, or that box still busy.
  // A writer backing off (shm/fast_box.h) claims again at once when it finds
  // the ring empty: the reader has caught up, so the boxes are likely free.
  FastBox* free_box(Peer& p, uint64_t payload) {
    if (!fast_boxes_ || payload > kFastBoxPayload) return nullptr;
    FastBox* box = p.out_boxes.claim();
    if (box == nullptr && p.out_boxes.backing_off() && p.out->write_available() == RingBytes) {
      p.out_boxes.stop_backing_off();
      box = p.out_boxes.claim();
    }
    return box;
  }

  // A header peer `p` wrote must be well formed, its payload at most
  // `max_payload` bytes (a box's); otherwise the job ends, naming the peer.
  // The check inline, the report out of line: every packet passes here.
  void check_header(const Peer& p, const PacketHeader& h, uint64_t max_payload) {
    const char* why = transport::packet_header_error(h);
    if (why == nullptr && h.payload <= max_payload) [[likely]]
      return;
    refuse_header(p, why != nullptr ? why : "a fast box claiming more payload than it holds");
  }
  [[gnu::noinline, noreturn]] void refuse_header(const Peer& p, const char* why) {
    const std::string message = "sonde shm: malformed packet from rank " + std::to_string(p.rank) + ": " + why;
    if (fatal_) fatal_(message);
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }

  // Delivers the next packet from its box: the payload goes straight from the
  // box into the sink; the box is released only after on_payload_done.
  // check_header has bounded its payload.
  void deliver_box(Peer& p, FastBox& box, Delivery& delivery) {
    const PacketHeader header = box.header;
    if (header.payload > kFastBoxPayload) check_header(p, header, kFastBoxPayload);
    // The payload past the box's first line is still in the writer's cache:
    // start those loads now, so they overlap with matching in on_header
    // instead of stalling the copy after it. (Not before the sequence word
    // is seen: polling these lines would pull them away while the writer
    // fills them.)
    const size_t first_line = shm::kCacheLine - offsetof(FastBox, payload);
    for (size_t at = first_line; at < header.payload; at += shm::kCacheLine) __builtin_prefetch(box.payload + at);
    PayloadSink* sink = delivery.on_header(p.rank, header);
    if (header.payload != 0 && sink != nullptr) {
      if (sink->contiguous != nullptr) {
        std::memcpy(sink->contiguous, box.payload, header.payload);
      } else {
        sink->unpack(box.payload, 0, header.payload);
      }
    }
    delivery.on_payload_done(p.rank, header, sink);
    p.in_boxes.done();
  }

  std::string endpoint(const std::string& segment_name) const;
  void connect(int index, const std::string& endpoint, size_t segment_bytes, bool single_copy);

  const int me_;
  std::function<void(const std::string&)> fatal_;
  int my_local_ = 0;             // my index among the sorted local ranks
  std::vector<int> peer_index_;  // world rank -> index in peers_, or -1
  std::unique_ptr<Peer[]> peers_;
  size_t npeers_ = 0;
  std::vector<int> peer_local_;  // peers_[i]'s index among the sorted local ranks
  Segment own_;                  // our inbound rings and boxes, peers_[i]'s at slot i
  std::vector<Segment> mapped_;  // the peers' segments, where our outbound ones are
  bool in_progress_ = false;
  bool fast_boxes_ = true;     // ours to our peers; we read theirs either way
  uint64_t probe_cookie_ = 0;  // peers read it at wire-up to check single-copy works
  uint64_t local_hash_ = 0;
  uint8_t tx_bounce_[kBounceBytes];
  uint8_t rx_bounce_[kBounceBytes];
};

template <size_t RingBytes>
ShmTransport<RingBytes>::ShmTransport(const ShmConfig& config, Exchange& exchange)
    : me_(config.my_rank), fatal_(config.fatal) {
  caps_.kind = TransportKind::kShm;
  std::vector<int> local = config.local_ranks;
  std::sort(local.begin(), local.end());
  local.erase(std::unique(local.begin(), local.end()), local.end());
  if (!std::binary_search(local.begin(), local.end(), me_)) {
    throw std::invalid_argument("sonde shm: local_ranks does not contain my_rank " + std::to_string(me_));
  }
  if (local.front() < 0) throw std::invalid_argument("sonde shm: negative rank in local_ranks");
  if (!shm::valid_job_id(config.job_id)) {
    throw std::invalid_argument("sonde shm: job id '" + config.job_id + "' is not [A-Za-z0-9]+");
  }

  const bool single_copy = config.single_copy && enabled_by_env("SONDE_SHM_SINGLE_COPY");
  fast_boxes_ = config.fast_boxes && enabled_by_env("SONDE_SHM_FAST_BOXES");
  // Ranks are siblings, not ancestors: without this, Yama's ptrace_scope=1
  // refuses process_vm_readv/writev between them. Fails harmlessly without Yama.
  if (single_copy) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  probe_cookie_ = shm::random_u64() | 1;
  // Ring slots are indexed by position in the local set, so every local rank
  // must have been given the same set; the hash lets peers check that.
  local_hash_ = 0xcbf29ce484222325ull;
  for (int rank : local) local_hash_ = (local_hash_ ^ static_cast<uint32_t>(rank)) * 0x100000001b3ull;

  npeers_ = local.size() - 1;
  peers_ = std::make_unique<Peer[]>(npeers_);
  peer_index_.assign(static_cast<size_t>(local.back()) + 1, -1);
  for (size_t l = 0, i = 0; l < local.size(); ++l) {
    if (local[l] == me_) {
      my_local_ = static_cast<int>(l);
      continue;
    }
    peers_[i].rank = local[l];
    peer_index_[local[l]] = static_cast<int>(i);
    peer_local_.push_back(static_cast<int>(l));
    ++i;
  }
  const size_t segment_bytes = npeers_ * sizeof(Slot);

  // Failures are published rather than thrown until both fences are done,
  // so that no local peer waits forever for this rank.
  std::string error;
  if (npeers_ != 0) {
    try {
      own_ = Segment::create(config.job_id, segment_bytes);
      auto* slots = static_cast<Slot*>(own_.data());
      for (size_t i = 0; i < npeers_; ++i) {
        Slot* inbox = new (&slots[i]) Slot();
        peers_[i].in = shm::RingReader<Ring>(&inbox->ring.ring);
        peers_[i].in_boxes = shm::BoxReader(&inbox->boxes);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  exchange.put(kExchangeKey, error.empty() ? endpoint(own_.name()) : "error " + error);
  exchange.commit();
  exchange.fence();
  for (size_t i = 0; i < npeers_ && error.empty(); ++i) {
    const int rank = peers_[i].rank;
    try {
      std::optional<std::string> value = exchange.get(rank, kExchangeKey);
      if (!value) throw std::runtime_error("published no shm endpoint");
      connect(static_cast<int>(i), *value, segment_bytes, single_copy);
    } catch (const std::exception& e) {
      error = "local rank " + std::to_string(rank) + ": " + e.what();
    }
  }
  exchange.fence();  // every local peer has mapped our segment: the name can go
  own_.unlink();
  if (!error.empty()) {
    throw std::runtime_error("sonde shm wire-up on rank " + std::to_string(me_) + ": " + error);
  }
}

// "v2 <ring bytes> <local set hash> <segment name> <pid> <cookie address> <cookie>"
template <size_t RingBytes>
std::string ShmTransport<RingBytes>::endpoint(const std::string& segment_name) const {
  shm::Endpoint e;
  e.ring_bytes = RingBytes;
  e.local_hash = local_hash_;
  e.segment = segment_name.empty() ? "-" : segment_name;
  e.pid = static_cast<int>(getpid());
  e.cookie_addr = reinterpret_cast<uint64_t>(&probe_cookie_);
  e.cookie = probe_cookie_;
  return shm::format_shm_endpoint(e);
}

template <size_t RingBytes>
void ShmTransport<RingBytes>::connect(int index, const std::string& endpoint, size_t segment_bytes, bool single_copy) {
  if (endpoint.rfind("error ", 0) == 0) throw std::runtime_error(endpoint.substr(6));
  shm::Endpoint ep;
  if (std::string why = shm::parse_shm_endpoint(endpoint, &ep); !why.empty()) throw std::runtime_error(why);
  const size_t ring_bytes = ep.ring_bytes;
  const uint64_t local_hash = ep.local_hash;
  const int pid = ep.pid;
  const uint64_t cookie_addr = ep.cookie_addr, cookie = ep.cookie;
  const std::string& name = ep.segment;
  if (ring_bytes != RingBytes) {
    throw std::runtime_error("uses " + std::to_string(ring_bytes) + "-byte rings, this rank " +
                             std::to_string(RingBytes));
  }
  if (local_hash != local_hash_) throw std::runtime_error("was given a different set of local ranks");
  Peer& p = peers_[index];
  mapped_.push_back(Segment::open(name, segment_bytes));
  // Peer's slots skip the peer itself, exactly as ours skip us.
  const int peer_local = peer_local_[index];
  const int slot = my_local_ < peer_local ? my_local_ : my_local_ - 1;
  Slot& inbox = static_cast<Slot*>(mapped_.back().data())[slot];
  p.out = &inbox.ring.ring;
  p.out_boxes = shm::BoxWriter(&inbox.boxes);
  p.pid = pid;
  // Reading the cookie proves the pid names the peer in our pid namespace
  // and that the kernel lets us read it; otherwise the engine streams.
  uint64_t seen = 0;
  p.single_copy = single_copy && read_process(pid, cookie_addr, &seen, sizeof seen) && seen == cookie;
}

template <size_t I = 0>
std::unique_ptr<Transport> make_sized(const ShmConfig& config, Exchange& exchange) {
  constexpr size_t kCount = sizeof shm::kRingSizes / sizeof shm::kRingSizes[0];
  if constexpr (I == kCount) {
    throw std::invalid_argument("sonde shm: ring_bytes " + std::to_string(config.ring_bytes) +
                                " is not one of shm::kRingSizes");
  } else {
    static_assert(shm::ring_is_position_independent<shm::kRingSizes[I]>());
    if (config.ring_bytes == shm::kRingSizes[I]) {
      return std::make_unique<ShmTransport<shm::kRingSizes[I]>>(config, exchange);
    }
    return make_sized<I + 1>(config, exchange);
  }
}

}  // namespace

std::unique_ptr<Transport> make_shm_transport(const ShmConfig& config, Exchange& exchange) {
  return make_sized(config, exchange);
}

}  // namespace sonde::transport
