// The ofi transport's frames (transports/ofi/frame.h) and the stream rules
// the receiver applies on top (progress.cc): input is a sequence of frames,
// each a u16 length then that many bytes. A frame parse_frame accepts must
// hold what it says: a packet header of a known type, payload within the
// frame and within what the packet announced.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transports/ofi/frame.h"

using namespace sonde::transport;
using namespace sonde::transport::ofi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool open = false;
  uint64_t expected = 0, received = 0;
  while (size >= 2) {
    size_t len = data[0] | size_t(data[1]) << 8;
    data += 2;
    size -= 2;
    if (len > size) len = size;
    ParsedFrame pf;
    if (parse_frame(data, len, &pf) == nullptr) {
      const uint8_t* end = data + len;
      if (pf.payload < data || pf.payload + pf.payload_bytes != end) __builtin_trap();
      if (pf.has_packet && packet_header_error(pf.packet) != nullptr) __builtin_trap();
      // The receiver's stream rules.
      bool stream_ok = true;
      if (pf.frame.kind == FrameKind::kFirst) {
        if (open) stream_ok = false;
        open = stream_ok;
        expected = pf.packet.payload;
        received = 0;
      } else if (pf.frame.kind == FrameKind::kMore && !open) {
        stream_ok = false;
      }
      if (stream_ok && pf.frame.kind != FrameKind::kCredit) {
        if (pf.payload_bytes > expected - received) {
          open = false;  // the job would end here: payload overrun
        } else {
          // Touch every payload byte, as the copy into the sink does.
          volatile uint8_t sum = 0;
          for (size_t i = 0; i < pf.payload_bytes; ++i) sum = sum + pf.payload[i];
          received += pf.payload_bytes;
          if (received == expected) open = false;
        }
      }
    }
    data += len;
    size -= len;
  }
  return 0;
}
