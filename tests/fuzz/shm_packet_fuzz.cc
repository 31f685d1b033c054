// Packets another local rank wrote into our shared-memory segment
// (transports/shm): a stream of PacketHeader + payload as the ring carries
// them, or a fast box (sequence word, header, payload). Every header goes
// through transport::packet_header_error and, for a box, the box's payload
// bound, as drain() does; what passes must be deliverable without reading
// past the box or the stream.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transports/shm/fast_box.h"
#include "transports/transport.h"

using namespace sonde::transport;
using namespace sonde::transport::shm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool as_box = data[0] & 1;
  ++data;
  --size;
  if (as_box) {
    static FastBox box;
    std::memset(static_cast<void*>(&box), 0, sizeof box);
    const size_t n = size < sizeof(FastBox) - 8 ? size : sizeof(FastBox) - 8;
    std::memcpy(reinterpret_cast<uint8_t*>(&box) + 8, data, n);
    const PacketHeader h = box.header;
    if (packet_header_error(h) != nullptr || h.payload > kFastBoxPayload) return 0;  // the job ends
    static uint8_t sink[kFastBoxPayload];
    std::memcpy(sink, box.payload, h.payload);
    return 0;
  }
  while (size >= sizeof(PacketHeader)) {
    PacketHeader h;
    std::memcpy(&h, data, sizeof h);
    data += sizeof h;
    size -= sizeof h;
    if (packet_header_error(h) != nullptr) return 0;  // the job ends
    // The ring delivers the payload as it arrives; here, what is there.
    const uint64_t n = h.payload < size ? h.payload : size;
    volatile uint8_t sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum = sum + data[i];
    data += n;
    size -= n;
  }
  return 0;
}
