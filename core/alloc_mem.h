// MPI_Alloc_mem / MPI_Free_mem: memory the library hands out, remembered so
// that MPI_Free_mem can tell a pointer it returned from any other (a stack
// address, a malloc'd block, one freed already) and refuse the others
// instead of passing them to free(). Callers hold the engine lock.
#pragma once

#include <cstdint>

namespace sonde::engine {

// `size` bytes (one when 0), 64-byte aligned, in *out. MPI_SUCCESS or
// MPI_ERR_NO_MEM.
int alloc_mem(int64_t size, void** out);

// Frees a block alloc_mem returned and has not freed yet, after telling the
// transports with a registration cache to forget it
// (Transport::forget_memory). Null is a no-op. Any other pointer:
// MPI_ERR_BASE, nothing freed.
int free_mem(void* base);

}  // namespace sonde::engine
