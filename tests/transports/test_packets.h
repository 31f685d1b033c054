// Self-checking packets for transport tests: every header field and every
// payload byte is a function of (sender, sequence number), so the receiver
// can tell a torn header, a reordered packet or a misplaced byte apart.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/transports/rank_harness.h"
#include "transports/transport.h"

namespace sonde::test {

using transport::PacketHeader;
using transport::PayloadSink;
using transport::SendItem;

inline uint8_t pattern_byte(int sender, uint32_t seq, uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(seq) << 32) ^ uint64_t(sender);
  return static_cast<uint8_t>(x >> 56);
}

inline void fill_pattern(uint8_t* out, int sender, uint32_t seq, uint64_t offset, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = pattern_byte(sender, seq, offset + i);
}

inline std::vector<uint8_t> pattern(int sender, uint32_t seq, uint64_t n) {
  std::vector<uint8_t> bytes(n);
  fill_pattern(bytes.data(), sender, seq, 0, n);
  return bytes;
}

inline PacketHeader make_header(int sender, uint32_t seq, uint64_t payload) {
  PacketHeader h{};
  h.type = transport::PacketType::kEager;
  h.flags = static_cast<uint8_t>(seq * 7);
  h.context = 0xC0DE0000u ^ seq;
  h.source = sender;
  h.tag = static_cast<int32_t>(seq);
  h.payload = payload;
  h.total = payload;
  h.send_cookie = (uint64_t(seq) + 1) * 0x9E3779B97F4A7C15ull ^ uint64_t(sender);
  h.recv_cookie = ~h.send_cookie;
  return h;
}

// Empty when `h` is exactly what make_header(sender, seq, h.payload) makes.
inline std::string header_problem(const PacketHeader& h, int sender, uint32_t seq) {
  PacketHeader want = make_header(sender, seq, h.payload);
  if (std::memcmp(&h, &want, sizeof h) == 0 && h.payload == h.total) return {};
  return "packet from " + std::to_string(sender) + ": got seq " + std::to_string(h.tag) + " payload " +
         std::to_string(h.payload) + ", expected seq " + std::to_string(seq) + " (or a torn header)";
}

// A queued packet with a pattern payload, read through the contiguous
// pointer or through pack(); checks the callback order transport.h promises.
class TestItem final : public SendItem {
 public:
  TestItem(int sender, uint32_t seq, uint64_t bytes, bool contiguous) : data_(pattern(sender, seq, bytes)) {
    header = make_header(sender, seq, bytes);
    if (contiguous) payload = data_.data();
  }
  void pack(uint8_t* out, size_t offset, size_t n) override {
    RANK_CHECK(payload == nullptr);
    RANK_CHECK(offset == packed_);  // pieces in order, none skipped
    RANK_CHECK(offset + n <= data_.size());
    std::memcpy(out, data_.data() + offset, n);
    packed_ += n;
  }
  void on_first_byte() override {
    RANK_CHECK(first_bytes == 0 && !handed_over);
    RANK_CHECK(handed > 0 || header.payload == 0);
    ++first_bytes;
    last_handed_ = handed;
  }
  void on_progress() override {
    RANK_CHECK(first_bytes == 1 && !handed_over);
    RANK_CHECK(handed > last_handed_ && handed < header.payload);
    ++progresses;
    last_handed_ = handed;
  }
  void on_handed() override {
    RANK_CHECK(first_bytes == 1 && !handed_over);
    RANK_CHECK(handed == header.payload);
    RANK_CHECK(!is_linked());
    handed_over = true;
  }
  int first_bytes = 0;
  int progresses = 0;
  bool handed_over = false;

 private:
  std::vector<uint8_t> data_;
  uint64_t packed_ = 0;
  uint64_t last_handed_ = 0;
};

// Receives pattern packets from any number of senders, checking order,
// headers and bytes. Sinks alternate between contiguous and unpack() unless
// told otherwise.
class CheckingDelivery final : public transport::Delivery {
 public:
  enum class Sinks { kAlternate, kContiguous, kUnpack };
  explicit CheckingDelivery(int ranks, Sinks sinks = Sinks::kAlternate)
      : next_(ranks, 0), sinks_(sinks), open_(ranks, false), sink_(ranks) {}

  PayloadSink* on_header(int peer, const PacketHeader& h) override {
    RANK_CHECK(peer >= 0 && peer < static_cast<int>(next_.size()));
    RANK_CHECK(!open_[peer]);
    std::string problem = header_problem(h, peer, next_[peer]);
    if (!problem.empty()) throw RankFailure(problem);
    open_[peer] = true;
    bool contiguous = sinks_ == Sinks::kContiguous || (sinks_ == Sinks::kAlternate && next_[peer] % 2 == 0);
    sink_[peer].reset(peer, h, contiguous);
    return &sink_[peer];
  }
  void on_payload_done(int peer, const PacketHeader& h, PayloadSink* sink) override {
    RANK_CHECK(open_[peer] && sink == &sink_[peer]);
    const Sink& s = sink_[peer];
    if (s.contiguous == nullptr) {
      RANK_CHECK(s.received == h.payload);
    } else {
      for (uint64_t i = 0; i < h.payload; ++i) {
        if (s.buffer[i] != pattern_byte(peer, next_[peer], i)) {
          throw RankFailure("packet " + std::to_string(next_[peer]) + " from " + std::to_string(peer) +
                            ": wrong byte at " + std::to_string(i) + " of " + std::to_string(h.payload));
        }
      }
    }
    open_[peer] = false;
    ++next_[peer];
    ++total_;
    bytes_ += h.payload;
  }

  uint32_t received_from(int peer) const { return next_[peer]; }
  uint64_t total() const { return total_; }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Sink final : PayloadSink {
    void reset(int peer, const PacketHeader& h, bool use_contiguous) {
      sender = peer;
      seq = static_cast<uint32_t>(h.tag);
      received = 0;
      if (use_contiguous) {
        buffer.resize(h.payload);
        contiguous = buffer.data();
      } else {
        contiguous = nullptr;
      }
      expected = h.payload;
    }
    void unpack(const uint8_t* bytes, size_t offset, size_t n) override {
      RANK_CHECK(contiguous == nullptr);
      RANK_CHECK(offset == received && n > 0 && offset + n <= expected);
      for (size_t i = 0; i < n; ++i) {
        if (bytes[i] != pattern_byte(sender, seq, offset + i)) {
          throw RankFailure("unpacked packet " + std::to_string(seq) + ": wrong byte at " + std::to_string(offset + i));
        }
      }
      received += n;
    }
    int sender = 0;
    uint32_t seq = 0;
    uint64_t expected = 0;
    uint64_t received = 0;
    std::vector<uint8_t> buffer;
  };

  std::vector<uint32_t> next_;
  Sinks sinks_;
  std::vector<bool> open_;  // a packet from this peer is between on_header and on_payload_done
  std::vector<Sink> sink_;
  uint64_t total_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace sonde::test
