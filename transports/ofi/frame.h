// The ofi transport's frames on the wire, and their pure decode step: what
// arrives from a peer is checked here before any of it is trusted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/transport.h"

namespace sonde::transport::ofi {

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

// One received frame, taken apart. `payload` points into the frame.
struct ParsedFrame {
  FrameHeader frame{};
  bool has_packet = false;  // kFirst
  PacketHeader packet{};
  bool has_key = false;  // kFirst with kFrameRmaKey
  RmaKey key{};
  const uint8_t* payload = nullptr;
  size_t payload_bytes = 0;
};

// Decodes `len` bytes of one frame into *out. Returns null if the frame is
// well formed (a known kind; a kFirst holding a whole PacketHeader of a
// known type, and the RmaKey its flag announces; a kCredit of nothing but
// its header; no unknown flags), else what is wrong with it. Whether it
// fits the peer's stream (sequence, an open packet, the payload length) is
// the caller's to check.
const char* parse_frame(const uint8_t* data, size_t len, ParsedFrame* out);

}  // namespace sonde::transport::ofi
