// One-sided transfers through a network transport's RMA
// (transport::Capabilities::rma_window): what one-sided communication
// (rma/) uses to reach the window memory of a target on another node
// without the target's MPI progress taking part in each operation. The
// first transport that offers it serves every peer it reaches; a peer
// reached otherwise (shm, self) is not served here. Callers hold the
// engine lock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/transport.h"

namespace sonde::engine {

// Registers [base, base + len) with the transport that offers network RMA,
// for its peers' reads and writes. *key is what those peers pass to
// net_write / net_read, *handle what net_deregister takes. False when no
// transport offers it or the registration was refused.
bool net_register(void* base, size_t len, uint64_t* key, uint64_t* handle);
void net_deregister(uint64_t handle);

// Is engine peer `peer` reached by the transport that offers network RMA?
bool net_reaches(int peer);

// Starts a transfer of `len` bytes between local memory and `offset`
// bytes past `base` in `peer`'s memory registered there under `key`
// (net_reaches(peer) must hold). `done->rma_complete()` runs from a later
// progress pass, once a write's data is in the target's memory or a
// read's is here.
void net_write(int peer, const void* src, size_t len, uint64_t base, uint64_t offset, uint64_t key,
               transport::RmaCompletion* done);
void net_read(int peer, void* dst, size_t len, uint64_t base, uint64_t offset, uint64_t key,
              transport::RmaCompletion* done);

}  // namespace sonde::engine
