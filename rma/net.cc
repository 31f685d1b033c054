// Put and Get through the network transport's RMA (net.h).
#include "rma/net.h"

#include <cstring>

#include "core/grequest.h"
#include "core/introspect.h"
#include "core/net_rma.h"
#include "rma/events.h"

namespace sonde::engine::rma {

namespace {

// One Put or Get in flight: its transfers (one per target segment), the
// buffer they use, and for a Get where the data goes.
struct NetOp final : transport::RmaCompletion {
  Window* w = nullptr;
  int target = 0;
  int parts = 0;
  Bytes buf;  // Put: the packed data; Get: where it lands unless direct
  // Get
  bool get = false;
  bool direct = false;  // landed in the origin buffer itself
  void* origin = nullptr;
  int64_t count = 0;
  Datatype* type = nullptr;
  Request* request = nullptr;
  uint64_t id = 0;

  void rma_complete() override {
    if (--parts > 0) return;
    if (get) {
      if (!direct && !buf.empty()) unpack(*type, origin, count, 0, buf.data(), buf.size());
      release_datatype(type);
      if (request) complete_generalized(request);
      fire_remote_done(w, id);
    }
    --w->net_in_flight[size_t(target)];
    delete this;
  }
};

// Can (target, segs) go through network RMA?
bool reachable(const Window* w, int target, const std::vector<Segment>& segs, uint64_t n) {
  if (w->net_ok.empty() || !w->net_ok[size_t(target)] || n == 0) return false;
  if (segs.empty() || segs.size() > kMaxNetSegments) return false;
  return net_reaches(w->comm->world[size_t(target)]);
}

// Counts `op` in flight to its target, one part per segment.
void start(NetOp* op, size_t parts) {
  op->parts = int(parts);
  ++op->w->net_in_flight[size_t(op->target)];
  ++introspect::rma_counters().network;
}

// One transfer per target segment, `local` advancing through contiguous
// bytes: `move(peer, local, length, base, offset, key, op)` is net_write or
// net_read.
template <typename Local, typename Move>
void per_segment(NetOp* op, const std::vector<Segment>& segs, Local* local, Move move) {
  const size_t t = size_t(op->target);
  const int peer = op->w->comm->world[t];
  const uint64_t key = op->w->net_key[t], base = op->w->net_base[t];
  for (const Segment& s : segs) {
    move(peer, local, s.length, base, s.offset, key, op);
    local += s.length;
  }
}

}  // namespace

void net_open(Window* w, uint64_t* key, uint64_t* base, int32_t* ok) {
  *ok = 0;
  if (w->flavor != MPI_WIN_FLAVOR_CREATE && w->flavor != MPI_WIN_FLAVOR_ALLOCATE) return;
  if (!w->base || w->size <= 0) return;
  bool any = false;
  for (int i = 0; i < w->comm->size && !any; ++i) any = i != w->comm->rank && net_reaches(w->comm->world[size_t(i)]);
  if (!any) return;
  uint64_t handle = 0;
  if (!net_register(w->base, size_t(w->size), key, &handle)) return;
  w->net_registered = true;
  w->net_handle = handle;
  *base = uint64_t(reinterpret_cast<uintptr_t>(w->base));
  *ok = 1;
}

void net_peers(Window* w, const std::vector<uint8_t>& ok, const std::vector<uint64_t>& key,
               const std::vector<uint64_t>& base) {
  const size_t n = ok.size();
  w->net_in_flight.assign(n, 0);
  bool any = false;
  for (size_t i = 0; i < n; ++i) any = any || ok[i];
  if (!any) return;
  w->net_ok = ok;
  w->net_key = key;
  w->net_base = base;
}

void net_close(Window* w) {
  if (w->net_registered) net_deregister(w->net_handle);
  w->net_registered = false;
}

bool net_put(Window* w, int target, const std::vector<Segment>& segs, Bytes& data) {
  if (!reachable(w, target, segs, data.size())) return false;
  auto* op = new NetOp;
  op->w = w;
  op->target = target;
  op->buf = std::move(data);
  start(op, segs.size());
  per_segment(op, segs, static_cast<const uint8_t*>(op->buf.data()), net_write);
  return true;
}

bool net_get(Window* w, int target, const std::vector<Segment>& segs, void* origin, int64_t count, Datatype* type,
             uint64_t n, Request** request) {
  if (!reachable(w, target, segs, n)) return false;
  auto* op = new NetOp;
  op->w = w;
  op->target = target;
  op->get = true;
  op->origin = origin;
  op->count = count;
  op->type = type;
  retain_datatype(type);
  if (request) {
    op->request = start_generalized(nullptr, nullptr, nullptr, nullptr);
    if (!op->request) {
      release_datatype(type);
      delete op;
      return false;
    }
    *request = op->request;
  }
  op->id = w->next_id++;
  start(op, segs.size());
  fire_issue(w, PERUSE_GET, origin, count, type, target, n, true, op->id);
  // A contiguous origin takes the data where it belongs; any other, a
  // packed buffer unpacked at the end.
  uint8_t* dst = nullptr;
  if (type->contiguous) {
    op->direct = true;
    dst = contiguous_start(*type, origin);
  } else {
    op->buf.resize(n);
    dst = op->buf.data();
  }
  per_segment(op, segs, dst, net_read);
  return true;
}

void net_wait(Window* w, int target) {
  if (w->net_in_flight.empty()) return;
  if (target >= 0) {
    wait_until([&] { return w->net_in_flight[size_t(target)] == 0; });
    return;
  }
  wait_until([&] {
    for (int x : w->net_in_flight)
      if (x) return false;
    return true;
  });
}

}  // namespace sonde::engine::rma
