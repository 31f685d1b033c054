// Fast boxes: a latency accelerator beside the rings, not a replacement.
//
// The Boost.Lockfree ring (shm/ring.h) stays the FIFO every packet may take;
// it is what carries large payloads, queued items and everything once the
// boxes are busy. But a message through the ring moves three cache lines
// between the cores: the writer's write_index, the data, and (on the writer's
// next push, which loads it) the reader's read_index. A fast box moves one:
// the writer puts a small packet and its sequence word in the same line(s)
// and the reader polls only the word of the box it expects next.
//
// Per ordered pair of local ranks, in the reader's segment next to the ring:
// kFastBoxes boxes and a `consumed` counter. Every packet of the pair, box or
// ring, takes the next number of one per-pair sequence (both sides count, so
// ring packets carry none on the wire). Packet `s` may only use box s % K, and
// only once packet s - K is consumed (consumed > s - K); otherwise, or if it
// does not fit, it takes the ring. The reader delivers strictly in sequence:
//   1. box[next % K].seq == next + 1: packet `next` is in that box;
//   2. otherwise, if the ring holds a header, load the box word again: the
//      writer stored packet `next` in its box (if it used one) before it
//      pushed any later packet into the ring, and the acquire load of the
//      ring's write index that saw the header makes that store visible; so
//      if the box still does not hold `next`, the ring's head is `next`.
// After on_payload_done (the payload may be delivered straight from the box
// into the sink) the reader stores consumed = next + 1 (release); the writer
// reloads it (acquire) only when its cached copy says no box is free, so in
// steady state a box costs the writer no load from the reader's lines; a
// writer that found every box busy does not reload it for the next
// kFastBoxes packets, unless it finds the ring empty first.
//
// A payload longer than the first line's last 8 bytes spills into more
// lines; the reader starts loading them as soon as it sees the word, before
// it matches the header, and never while it polls (that would pull them
// away from the writer mid-fill).
//
// Idle polling of a peer: the box word and the ring's write index, two loads
// of lines that stay in the reader's cache while nothing is written.
//
// bench/transport/fastbox_pingpong measures both paths between two cores.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/transport.h"

namespace sonde::transport::shm {

// The unit the cores exchange: a box's sequence word, header and first
// payload bytes share one.
inline constexpr size_t kCacheLine = 64;

// Boxes per ordered pair. A ping-pong needs one per direction; more let a
// burst of small messages through before the ring takes over, and make the
// writer load the reader's counter (a line the reader stores after every
// packet, so a miss) once per kFastBoxes packets in steady state, a small
// share of a small-message ping-pong's latency at 32. 32 boxes take 36 KiB
// per ordered pair, beside the pair's ring.
inline constexpr uint64_t kFastBoxes = 32;
// Bytes per box, a multiple of 128 so that boxes never share a line (or an
// adjacent-line prefetch pair) with each other or with the counter.
inline constexpr size_t kFastBoxBytes = 1152;

struct alignas(128) FastBox {
  // Sequence number + 1 of the packet inside (0: never used). Stored last,
  // with release, after header and payload.
  std::atomic<uint64_t> seq;
  PacketHeader header;
  uint8_t payload[kFastBoxBytes - sizeof(std::atomic<uint64_t>) - sizeof(PacketHeader)];
};
static_assert(sizeof(FastBox) == kFastBoxBytes);
static_assert(offsetof(FastBox, header) == 8 && offsetof(FastBox, payload) == 56,
              "word, header and the first payload bytes share the first cache line");

// The largest payload a box carries (1096 bytes).
inline constexpr size_t kFastBoxPayload = sizeof(FastBox::payload);

struct alignas(128) FastBoxes {
  FastBox box[kFastBoxes];
  // Packets of this pair the reader has finished with (box or ring), so the
  // next sequence number it will deliver. Written by the reader only.
  alignas(128) std::atomic<uint64_t> consumed;
};

// Lives in shared memory mapped at different addresses: only address-free
// atomics and plain bytes.
static_assert(std::atomic<uint64_t>::is_always_lock_free, "fast-box words must be lock-free");
static_assert(std::is_standard_layout_v<FastBoxes> && !std::is_polymorphic_v<FastBoxes>);

// The writer's end of one pair: numbers every packet, box or ring.
class BoxWriter {
 public:
  BoxWriter() = default;
  explicit BoxWriter(FastBoxes* boxes) : boxes_(boxes) {}

  // The box the next packet may use, or null while the packet that used it
  // last (kFastBoxes packets ago) is not consumed. Loads the reader's counter
  // only when the cached copy says that box is busy, and after a load that
  // found it still busy not again for the next kFastBoxes packets: a writer
  // that far ahead sends through the ring, and reloading the counter the
  // reader stores after every packet would move its line once per packet.
  FastBox* claim() {
    if (next_ - consumed_ >= kFastBoxes) {
      if (next_ < retry_at_) return nullptr;
      consumed_ = boxes_->consumed.load(std::memory_order_acquire);
      if (next_ - consumed_ >= kFastBoxes) {
        retry_at_ = next_ + kFastBoxes;
        return nullptr;
      }
    }
    return &boxes_->box[next_ % kFastBoxes];
  }
  // claim() answers null without loading the counter (a load found the
  // boxes busy fewer than kFastBoxes packets ago).
  bool backing_off() const { return next_ - consumed_ >= kFastBoxes && next_ < retry_at_; }
  // The reader has caught up (it emptied the ring): the next claim() loads
  // the counter again.
  void stop_backing_off() { retry_at_ = 0; }
  // Publishes the claimed box once header and payload are in it.
  void post(FastBox& box) { box.seq.store(++next_, std::memory_order_release); }
  // The next packet's header went into the ring instead.
  void skip() { ++next_; }
  // The reader has finished with every packet posted or skipped so far.
  bool all_consumed() const { return boxes_->consumed.load(std::memory_order_acquire) == next_; }

 private:
  FastBoxes* boxes_ = nullptr;
  uint64_t next_ = 0;      // sequence number of the next packet
  uint64_t consumed_ = 0;  // boxes_->consumed when last loaded
  uint64_t retry_at_ = 0;  // no reload before packet number retry_at_
};

// The reader's end of one pair: finds the next packet in sequence.
class BoxReader {
 public:
  enum class Next { kNothing, kBox, kRing };

  BoxReader() = default;
  explicit BoxReader(FastBoxes* boxes) : boxes_(boxes) {}

  // Where the next packet is: in box(), at the head of the ring `reader`
  // reads (shm/ring_reader.h; a whole header must be there for it to
  // count), or nowhere yet.
  template <typename Reader>
  Next locate(Reader& reader) const {
    const FastBox& next = box();
    if (next.seq.load(std::memory_order_acquire) == next_ + 1) return Next::kBox;
    if (!reader.has(sizeof(PacketHeader))) return Next::kNothing;
    // That acquire saw a header pushed after any earlier box was posted.
    return next.seq.load(std::memory_order_acquire) == next_ + 1 ? Next::kBox : Next::kRing;
  }
  FastBox& box() const { return boxes_->box[next_ % kFastBoxes]; }
  // The next packet is delivered, payload and all: its box (if it had one)
  // may be reused.
  void done() { boxes_->consumed.store(++next_, std::memory_order_release); }

 private:
  FastBoxes* boxes_ = nullptr;
  uint64_t next_ = 0;  // sequence number of the next packet to deliver
};

}  // namespace sonde::transport::shm
