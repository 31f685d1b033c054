// Synchronous single copy between this process and another process of its
// node, without that process's progress: what one-sided communication
// (rma/) uses to reach a node-local target's memory directly. It goes
// through the transport that reaches the peer (shm: process_vm_readv /
// process_vm_writev); every other transport refuses. Callers hold the
// engine lock.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace sonde::engine {

// Is engine peer `peer` (a world rank or a connected process's id) this
// process or reached by a transport of this node (shm)?
bool on_this_node(int peer);

// Copies between the local iovecs and the contiguous range at `remote` in
// `peer`'s address space, as long as the iovecs together. False when
// refused: another node, this process itself, single copy turned off
// (SONDE_SHM_SINGLE_COPY, MPI_T cvar sonde_shm_single_copy) or refused by
// the system for that peer. After a refused write a prefix of the range
// may have been written, never a byte outside it.
bool read_peer(int peer, uint64_t remote, const iovec* local, size_t n);
bool write_peer(int peer, uint64_t remote, const iovec* local, size_t n);

}  // namespace sonde::engine
