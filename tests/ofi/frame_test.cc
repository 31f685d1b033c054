// What a peer sends is checked before it is trusted: ofi frames
// (transports/ofi/frame.h) and packet headers (transport.h).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "transports/ofi/frame.h"

using namespace sonde::transport;
using namespace sonde::transport::ofi;

namespace {

std::vector<uint8_t> frame(FrameKind kind, uint8_t flags, const PacketHeader* h = nullptr, size_t extra = 0) {
  FrameHeader f{};
  f.src = 1;
  f.kind = kind;
  f.flags = flags;
  std::vector<uint8_t> out(sizeof f);
  std::memcpy(out.data(), &f, sizeof f);
  if (h != nullptr) {
    out.resize(out.size() + sizeof *h);
    std::memcpy(out.data() + sizeof f, h, sizeof *h);
  }
  out.resize(out.size() + extra, 0xab);
  return out;
}

PacketHeader header(PacketType t, uint64_t payload) {
  PacketHeader h{};
  h.type = t;
  h.payload = payload;
  h.total = payload;
  return h;
}

const char* parse(const std::vector<uint8_t>& bytes) {
  ParsedFrame pf;
  return parse_frame(bytes.data(), bytes.size(), &pf);
}

}  // namespace

TEST_CASE("well-formed frames parse") {
  PacketHeader eager = header(PacketType::kEager, 10);
  ParsedFrame pf;
  auto f = frame(FrameKind::kFirst, 0, &eager, 4);
  REQUIRE(parse_frame(f.data(), f.size(), &pf) == nullptr);
  CHECK(pf.has_packet);
  CHECK(pf.packet.payload == 10);
  CHECK(pf.payload_bytes == 4);
  CHECK(parse(frame(FrameKind::kMore, 0, nullptr, 6)) == nullptr);
  CHECK(parse(frame(FrameKind::kCredit, 0)) == nullptr);
  PacketHeader rts = header(PacketType::kRts, 0);
  CHECK(parse(frame(FrameKind::kFirst, kFrameRmaKey, &rts, sizeof(RmaKey))) == nullptr);
}

TEST_CASE("an unknown frame kind is refused, not taken for payload") {
  CHECK(parse(frame(static_cast<FrameKind>(0), 0)) != nullptr);
  CHECK(parse(frame(static_cast<FrameKind>(7), 0, nullptr, 3)) != nullptr);
}

TEST_CASE("malformed frames are refused") {
  CHECK(parse(std::vector<uint8_t>(5)) != nullptr);                   // short
  CHECK(parse(frame(FrameKind::kFirst, 0, nullptr, 10)) != nullptr);  // no whole packet header
  PacketHeader bogus = header(static_cast<PacketType>(99), 0);
  CHECK(parse(frame(FrameKind::kFirst, 0, &bogus)) != nullptr);
  PacketHeader eager = header(PacketType::kEager, 2);
  CHECK(parse(frame(FrameKind::kFirst, 0, &eager, 3)) != nullptr);             // more than announced
  CHECK(parse(frame(FrameKind::kFirst, kFrameRmaKey, &eager, 2)) != nullptr);  // key on a non-RTS
  PacketHeader rts = header(PacketType::kRts, 0);
  CHECK(parse(frame(FrameKind::kFirst, kFrameRmaKey, &rts, 5)) != nullptr);  // key cut short
  CHECK(parse(frame(FrameKind::kCredit, 0, nullptr, 1)) != nullptr);         // credit with contents
  CHECK(parse(frame(FrameKind::kMore, 0x80, nullptr, 1)) != nullptr);        // unknown flags
}

TEST_CASE("packet headers of unknown types or inconsistent CTS-writes are refused") {
  CHECK(packet_header_error(header(PacketType::kEager, 0)) == nullptr);
  CHECK(packet_header_error(header(PacketType::kCancelAck, 0)) == nullptr);
  CHECK(packet_header_error(header(static_cast<PacketType>(0), 0)) != nullptr);
  CHECK(packet_header_error(header(static_cast<PacketType>(12), 0)) != nullptr);
  CHECK(packet_header_error(header(PacketType::kCtsWrite, 8)) == nullptr);
  CHECK(packet_header_error(header(PacketType::kCtsWrite, 9)) != nullptr);
}
