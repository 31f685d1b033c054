// Loopback for packets a rank sends to itself.
//
// Same contract as every transport (transports/transport.h) so the engine
// needs no special case for "peer == me":
//   - FIFO across try_send_now() and enqueue(): packets are delivered in the
//     order they were handed to the transport, whichever path they took;
//   - nothing is delivered outside progress(): a packet sent from inside a
//     Delivery callback arrives during a later progress() call (or later in
//     the same one), never re-entrantly;
//   - try_send_now() always succeeds while no SendItem is queued (it copies
//     into an internal buffer that grows as needed and keeps its capacity);
//   - a queued SendItem is streamed straight from its source (payload pointer
//     or pack()) into the receiver's sink (contiguous or unpack()), with no
//     intermediate copy unless both sides are non-contiguous.
// Callbacks on a SendItem, for every transport in Sonde: on_first_byte()
// once the first chunk is handed (or, for an empty payload, right before
// on_handed()), on_progress() after each further chunk that does not finish
// the payload, on_handed() after the last one, by which time the item is no
// longer linked in the transport.
#pragma once

#include <memory>

#include "transports/transport.h"

namespace sonde::transport {

// A transport that reaches exactly `my_rank` (a world rank). read_remote()
// and write_remote() with peer == my_rank are a memcpy within this process.
std::unique_ptr<Transport> make_self_transport(int my_rank);

}  // namespace sonde::transport
