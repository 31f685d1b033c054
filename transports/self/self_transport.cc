#include "transports/self/self_transport.h"

#include <boost/intrusive/list.hpp>
#include <cassert>
#include <cstring>
#include <vector>

namespace sonde::transport {
namespace {

// Only needed when a pack()-only item meets an unpack()-only sink.
constexpr size_t kBounceBytes = 64 * 1024;
// Bounds one progress() call when callbacks keep sending to self, so the
// engine's other transports still get their turn.
constexpr int kRoundsPerProgress = 64;

class SelfTransport final : public Transport {
 public:
  explicit SelfTransport(int my_rank) : me_(my_rank), bounce_(new uint8_t[kBounceBytes]) {
    caps_.kind = TransportKind::kSelf;
  }

  const char* name() const override { return "self"; }
  bool reaches(int peer) const override { return peer == me_; }

  bool try_send_now(int peer, const PacketHeader& header, const void* payload) override {
    assert(peer == me_);
    if (!queue_.empty()) return false;
    const auto* h = reinterpret_cast<const uint8_t*>(&header);
    buffered_.insert(buffered_.end(), h, h + sizeof header);
    const auto* p = static_cast<const uint8_t*>(payload);
    if (header.payload != 0) buffered_.insert(buffered_.end(), p, p + header.payload);
    return true;
  }

  void enqueue(int peer, SendItem* item) override {
    assert(peer == me_);
    item->handed = 0;
    queue_.push_back(*item);
  }

  bool dequeue(int peer, SendItem* item) override {
    if (peer != me_ || item == streaming_ || !item->is_linked()) return false;
    queue_.erase(queue_.iterator_to(*item));
    return true;
  }

  int progress(Delivery& delivery) override {
    if (in_progress_) return 0;  // a callback called progress(): the outer call continues
    in_progress_ = true;
    int delivered = 0;
    // Everything in buffered_ was handed over while queue_ was empty, so it
    // precedes every queued item; callbacks may add to either meanwhile.
    for (int round = 0; round < kRoundsPerProgress; ++round) {
      if (!buffered_.empty()) {
        delivered += deliver_buffered(delivery);
      } else if (!queue_.empty()) {
        deliver_item(delivery);
        ++delivered;
      } else {
        break;
      }
    }
    in_progress_ = false;
    return delivered;
  }

  bool read_remote(int peer, uint64_t remote_addr, void* dst, size_t len) override {
    if (peer != me_) return false;
    if (len != 0) std::memcpy(dst, reinterpret_cast<const void*>(remote_addr), len);
    return true;
  }

  bool write_remote(int peer, uint64_t remote_addr, const void* src, size_t len) override {
    if (peer != me_) return false;
    if (len != 0) std::memcpy(reinterpret_cast<void*>(remote_addr), src, len);
    return true;
  }

 private:
  int deliver_buffered(Delivery& delivery) {
    // Swapped out so that packets sent from callbacks land in the other
    // buffer and cannot reallocate the bytes being delivered.
    draining_.swap(buffered_);
    int delivered = 0;
    size_t at = 0;
    while (at < draining_.size()) {
      PacketHeader header;
      std::memcpy(&header, draining_.data() + at, sizeof header);
      at += sizeof header;
      PayloadSink* sink = delivery.on_header(me_, header);
      if (header.payload != 0 && sink != nullptr) {
        const uint8_t* bytes = draining_.data() + at;
        if (sink->contiguous != nullptr) {
          std::memcpy(sink->contiguous, bytes, header.payload);
        } else {
          sink->unpack(bytes, 0, header.payload);
        }
      }
      at += header.payload;
      delivery.on_payload_done(me_, header, sink);
      ++delivered;
    }
    draining_.clear();  // keeps its capacity: no allocation in steady state
    return delivered;
  }

  void deliver_item(Delivery& delivery) {
    SendItem& item = queue_.front();
    streaming_ = &item;
    const PacketHeader header = item.header;  // the item may be reused after on_handed
    PayloadSink* sink = delivery.on_header(me_, header);
    const uint64_t len = header.payload;
    if (len == 0 || sink == nullptr) {
      item.handed = len;
      item.on_first_byte();
    } else if (item.payload != nullptr) {
      if (sink->contiguous != nullptr) {
        std::memcpy(sink->contiguous, item.payload, len);
      } else {
        sink->unpack(item.payload, 0, len);
      }
      item.handed = len;
      item.on_first_byte();
    } else if (sink->contiguous != nullptr) {
      item.pack(sink->contiguous, 0, len);
      item.handed = len;
      item.on_first_byte();
    } else {
      while (item.handed < len) {
        const size_t offset = item.handed;
        const size_t n = std::min<uint64_t>(kBounceBytes, len - offset);
        item.pack(bounce_.get(), offset, n);
        sink->unpack(bounce_.get(), offset, n);
        item.handed += n;
        if (item.handed < len) sink->on_chunk(item.handed);
        if (offset == 0) {
          item.on_first_byte();
        } else if (item.handed < len) {
          item.on_progress();
        }
      }
    }
    queue_.erase(queue_.iterator_to(item));
    streaming_ = nullptr;
    item.on_handed();
    delivery.on_payload_done(me_, header, sink);
  }

  const int me_;
  bool in_progress_ = false;
  std::vector<uint8_t> buffered_;  // try_send_now packets: header then payload, back to back
  std::vector<uint8_t> draining_;
  boost::intrusive::list<SendItem> queue_;
  SendItem* streaming_ = nullptr;  // being delivered: no longer dequeueable
  std::unique_ptr<uint8_t[]> bounce_;
};

}  // namespace

std::unique_ptr<Transport> make_self_transport(int my_rank) { return std::make_unique<SelfTransport>(my_rank); }

}  // namespace sonde::transport
