// Single copy to and from a node-local peer (remote_copy.h).
#include "core/remote_copy.h"

#include "core/engine.h"

namespace sonde::engine {

namespace {
transport::Transport* single_copy_route(int peer) {
  Engine& e = engine();
  if (peer < 0 || peer >= e.peer_count() || peer == e.world_rank() || !e.settings().single_copy) return nullptr;
  transport::Transport* t = e.router().to(peer);
  return t->capabilities().kind == transport::TransportKind::kShm ? t : nullptr;
}
}  // namespace

bool on_this_node(int peer) {
  Engine& e = engine();
  if (peer == e.world_rank()) return true;
  if (peer < 0 || peer >= e.peer_count()) return false;
  const auto kind = e.router().to(peer)->capabilities().kind;
  return kind == transport::TransportKind::kShm || kind == transport::TransportKind::kSelf;
}

bool read_peer(int peer, uint64_t remote, const iovec* local, size_t n) {
  transport::Transport* t = single_copy_route(peer);
  return t && t->read_remote_iov(peer, remote, local, n);
}

bool write_peer(int peer, uint64_t remote, const iovec* local, size_t n) {
  transport::Transport* t = single_copy_route(peer);
  return t && t->write_remote_iov(peer, remote, local, n);
}

}  // namespace sonde::engine
