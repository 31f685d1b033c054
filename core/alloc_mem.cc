// The blocks MPI_Alloc_mem handed out (alloc_mem.h).
#include "core/alloc_mem.h"

#include <malloc.h>

#include <cstdlib>
#include <new>
#include <unordered_map>

#include "core/engine.h"

namespace sonde::engine {

namespace {
// Live blocks and their usable sizes. Never destroyed: MPI_Free_mem may follow
// static destruction in a program that frees at exit.
std::unordered_map<void*, size_t>& blocks() {
  static auto* m = new std::unordered_map<void*, size_t>;
  return *m;
}
}  // namespace

int alloc_mem(int64_t size, void** out) {
  // 64-byte alignment: cache lines, and any vector type a user may store.
  const size_t bytes = size_t(size ? size : 1);
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes) != 0) return MPI_ERR_NO_MEM;
  try {
    blocks().emplace(p, malloc_usable_size(p));  // what a registration may cover
  } catch (const std::bad_alloc&) {
    std::free(p);
    return MPI_ERR_NO_MEM;
  }
  *out = p;
  return MPI_SUCCESS;
}

int free_mem(void* base) {
  if (!base) return MPI_SUCCESS;
  auto it = blocks().find(base);
  if (it == blocks().end()) return MPI_ERR_BASE;
  // Registrations a transport cached for this memory must not serve whatever
  // is allocated at these addresses next.
  for (auto& t : engine().router().transports())
    if (t->capabilities().registration_cache) t->forget_memory(base, it->second);
  blocks().erase(it);
  std::free(base);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
