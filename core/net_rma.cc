// One-sided transfers through a network transport's RMA (net_rma.h).
#include "core/net_rma.h"

#include "core/engine.h"

namespace sonde::engine {

namespace {
transport::Transport* rma_transport() {
  for (const auto& t : engine().router().transports())
    if (t->capabilities().rma_window) return t.get();
  return nullptr;
}
}  // namespace

bool net_register(void* base, size_t len, uint64_t* key, uint64_t* handle) {
  transport::Transport* t = rma_transport();
  return t && t->register_window(base, len, key, handle);
}

void net_deregister(uint64_t handle) {
  if (transport::Transport* t = rma_transport()) t->deregister_window(handle);
}

bool net_reaches(int peer) {
  Engine& e = engine();
  if (peer < 0 || peer >= e.peer_count() || peer == e.world_rank()) return false;
  transport::Transport* t = e.router().to(peer);
  return t && t->capabilities().rma_window;
}

void net_write(int peer, const void* src, size_t len, uint64_t base, uint64_t offset, uint64_t key,
               transport::RmaCompletion* done) {
  engine().router().to(peer)->rma_write(peer, src, len, base, offset, key, done);
}

void net_read(int peer, void* dst, size_t len, uint64_t base, uint64_t offset, uint64_t key,
              transport::RmaCompletion* done) {
  engine().router().to(peer)->rma_read(peer, dst, len, base, offset, key, done);
}

}  // namespace sonde::engine
