// Put and Get through the network transport's RMA (core/net_rma.h:
// libfabric fi_write / fi_read where the provider has FI_RMA) to targets
// on other nodes, without the target's MPI progress taking part in each
// operation:
// - at creation (MPI_Win_create, MPI_Win_allocate) each rank registers its
//   window memory with the transport, and the key and base address travel
//   in the creation's allgather; a rank whose registration failed, or a
//   window none of whose ranks is reached that way, is served by active
//   messages (am.h) as before;
// - Put: the origin data, packed, is written to the target's memory, one
//   write per target segment (a target layout of at most kMaxNetSegments
//   runs); locally complete when the call returns;
// - Get: one read per target segment into a packed buffer (or straight
//   into a contiguous origin buffer), unpacked when the last is in;
// - every transfer is counted in Window::net_in_flight until its
//   completion, which for a write means the data is in the target's memory;
//   flush, flush_all, unlock, fence and complete wait for them.
// Dynamic windows and the accumulate family always go as active messages.
#pragma once

#include <cstdint>
#include <vector>

#include "rma/am.h"
#include "rma/window.h"

namespace sonde::engine::rma {

inline constexpr size_t kMaxNetSegments = 64;

// Creation: registers this rank's memory when a rank of the window is
// reached through network RMA (key and base into *key / *base, *ok set).
void net_open(Window* w, uint64_t* key, uint64_t* base, int32_t* ok);
// After the allgather: which ranks' memory network RMA reaches.
void net_peers(Window* w, const std::vector<uint8_t>& ok, const std::vector<uint64_t>& key,
               const std::vector<uint64_t>& base);
// MPI_Win_free (after every transfer completed).
void net_close(Window* w);

// True when the access went through network RMA. Put takes the packed
// origin data (moved from). Get fires its PERUSE issue events itself (the
// completion may come before the call returns).
bool net_put(Window* w, int target, const std::vector<Segment>& segs, Bytes& data);
bool net_get(Window* w, int target, const std::vector<Segment>& segs, void* origin, int64_t count, Datatype* type,
             uint64_t n, Request** request);

// Waits until this process's transfers to `target` (all targets: -1) are
// complete.
void net_wait(Window* w, int target);

}  // namespace sonde::engine::rma
