// The engine's control packets (kCts, kData, kFin, kSyncAck, kCtsWrite,
// kWriteDone, kCancelSend, kCancelAck) as a peer would send them, handed to
// Engine::on_header of a one-rank engine (tests/engine/engine_fixture.h):
// the cookies they carry are forged (raw bytes, or handles near the live
// ones), so each must be rejected with a message naming the peer (thrown
// here as Rejected) or, for the cancel packets, answered without touching
// anything it does not own; never a crash or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/engine_internal.h"
#include "core/p2p.h"
#include "tests/engine/engine_fixture.h"

using namespace sonde::engine;
using sonde::engine::testing::Rejected;

namespace {

const PacketType kControl[] = {PacketType::kCts,        PacketType::kData,     PacketType::kFin,
                               PacketType::kSyncAck,    PacketType::kCtsWrite, PacketType::kWriteDone,
                               PacketType::kCancelSend, PacketType::kCancelAck};

// A live posted receive, so that handles near live slots are tried.
void start_once() {
  static bool done = false;
  if (done) return;
  done = true;
  sonde::engine::testing::started_engine();
  static char buf[16];
  Request* r = nullptr;
  start_recv(buf, 16, &engine().tables().datatypes.predefined(1), 0, 12345, engine().world(), &r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  start_once();
  // Each packet: 1 byte type, 1 byte cookie form, then the header's bytes.
  constexpr size_t kRecord = 2 + sizeof(PacketHeader);
  for (; size >= kRecord; data += kRecord, size -= kRecord) {
    PacketHeader h;
    std::memcpy(&h, data + 2, sizeof h);
    h.type = kControl[data[0] % (sizeof kControl / sizeof kControl[0])];
    h.payload = h.type == PacketType::kCtsWrite ? 8 : 0;
    if (data[1] & 1)
      h.send_cookie = uint64_t(uint32_t(make_handle(SONDE_KIND_REQUEST, data[1] >> 1, h.send_cookie % 8)));
    if (data[1] & 2)
      h.recv_cookie = uint64_t(uint32_t(make_handle(SONDE_KIND_REQUEST, data[1] >> 2, h.recv_cookie % 8)));
    try {
      engine().on_header(0, h);
      engine().progress();  // a cancel's answer goes out and comes back
    } catch (const Rejected&) {
    }
  }
  return 0;
}
