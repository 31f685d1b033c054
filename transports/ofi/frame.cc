#include "transports/ofi/frame.h"

#include <cstring>

namespace sonde::transport::ofi {

const char* parse_frame(const uint8_t* data, size_t len, ParsedFrame* out) {
  *out = ParsedFrame{};
  if (len < sizeof(FrameHeader)) return "short frame";
  std::memcpy(&out->frame, data, sizeof(FrameHeader));
  const FrameHeader& f = out->frame;
  const uint8_t* at = data + sizeof(FrameHeader);
  size_t left = len - sizeof(FrameHeader);
  if ((f.flags & ~kFrameRmaKey) != 0) return "unknown frame flags";
  switch (f.kind) {
    case FrameKind::kFirst:
      if (left < sizeof(PacketHeader)) return "first frame without a whole packet header";
      std::memcpy(&out->packet, at, sizeof(PacketHeader));
      out->has_packet = true;
      at += sizeof(PacketHeader);
      left -= sizeof(PacketHeader);
      if (const char* why = packet_header_error(out->packet)) return why;
      if (f.flags & kFrameRmaKey) {
        if (out->packet.type != PacketType::kRts) return "RMA key on a packet other than an RTS";
        if (left < sizeof(RmaKey)) return "RMA key cut short";
        std::memcpy(&out->key, at, sizeof(RmaKey));
        out->has_key = true;
        at += sizeof(RmaKey);
        left -= sizeof(RmaKey);
      }
      if (left > out->packet.payload) return "more payload than the packet header says";
      break;
    case FrameKind::kMore:
      if (f.flags != 0) return "flags on a payload frame";
      break;
    case FrameKind::kCredit:
      if (f.flags != 0 || left != 0) return "credit frame with contents";
      break;
    default: return "unknown frame kind";
  }
  out->payload = at;
  out->payload_bytes = left;
  return nullptr;
}

}  // namespace sonde::transport::ofi
