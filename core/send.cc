// Sending: the blocking fast path (send_now), protocol choice (eager,
// synchronous, rendezvous), the transport's view of a send (SendPart),
// control packets and the cooperative rendezvous write.
#include <cstring>

#include "core/engine_internal.h"
#include "core/stamp.h"

namespace sonde::engine {

bool Engine::send_now(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  uint32_t w = SONDE_WATCHED_MASK(comm->peruse);
  return SONDE_DISPATCH(w, kSendNowEvents, send_now_watched(buf, count, type, dest, tag, comm),
                        send_now_as<false>(buf, count, type, dest, tag, comm));
}

bool Engine::send_now_watched(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  return send_now_as<true>(buf, count, type, dest, tag, comm);
}

template <bool kWatched>
bool Engine::send_now_as(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  uint64_t bytes = uint64_t(count) * uint64_t(type->size);
  if (!type->contiguous || dest == MPI_PROC_NULL) return false;
  int peer = comm->world[size_t(dest)];
  if (bytes > eager_limit_of(router_.to(peer))) return false;
  PacketHeader h{};
  h.type = PacketType::kEager;
  h.context = comm->context;
  h.source = comm->rank;
  h.tag = tag;
  h.payload = bytes;
  h.total = bytes;
  if (!router_.to(peer)->try_send_now(peer, h, contiguous_start(*type, buf))) return false;
  // The whole life of this request fits in this call, so its events fire
  // together once the data is handed over (a transient id: no descriptor).
  if constexpr (kWatched) {
    SONDE_FIRE_SEQUENCE_IF(SONDE_WATCHED_MASK(comm->peruse), comm->peruse, new_id(kIdTransientRequest), comm->handle,
                           buf, count, type->handle, dest, tag, PERUSE_SEND, PERUSE_COMM_REQ_ACTIVATE,
                           PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE,
                           PERUSE_COMM_REQ_NOTIFY);
  }
  return true;
}

int Engine::issue_send(Request* r) {
  const uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);  // one load for this operation's events
  FIRE_REQ_IF(w, PERUSE_COMM_REQ_ACTIVATE, r);
  r->active = true;
  r->xfer_started = false;
  r->complete = false;
  r->handed = false;
  r->matched = false;
  r->cancelled = false;  // a persistent request cancelled last time
  r->cancel_state = 0;
  r->error = MPI_SUCCESS;
  r->status_bytes = 0;
  if (r->peer == MPI_PROC_NULL) {
    complete(r);
    return MPI_SUCCESS;
  }
  Comm* c = r->comm;
  r->world_peer = c->world[r->peer];
  transport::Transport* t = router_.to(r->world_peer);
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);

  const void* src = r->buf;
  bool contiguous = r->type->contiguous;
  if (r->mode == SendMode::kBuffered) {
    // Copy out now so the user's buffer is free at once (MPI_Bsend).
    int64_t need = int64_t(r->bytes) + MPI_BSEND_OVERHEAD;
    if (!bsend_.reserve(need)) {
      r->error = MPI_ERR_BUFFER;
      complete(r);
      return MPI_ERR_BUFFER;
    }
    r->staged = static_cast<uint8_t*>(std::malloc(r->bytes ? r->bytes : 1));
    pack(*r->type, r->buf, r->count, 0, r->staged, r->bytes);
    src = r->staged;
    contiguous = true;
  }

  PacketHeader h{};
  h.context = c->context;
  h.source = c->rank;
  h.tag = r->tag;
  h.total = r->bytes;
  h.send_cookie = cookie_of(r);
  const uint8_t* data = contiguous ? (src == r->staged ? r->staged : contiguous_start(*r->type, src)) : nullptr;

  if (r->bytes <= eager_limit_of(t)) {
    bool sync = r->mode == SendMode::kSync;
    h.type = sync ? PacketType::kEagerSync : PacketType::kEager;
    h.payload = r->bytes;
    if ((data || r->bytes == 0) && !sync && r->mode != SendMode::kBuffered && t->try_send_now(r->world_peer, h, data)) {
      xfer_begin_if(w, r);  // handed over in one piece
      FIRE_REQ_IF(w, PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      complete(r);
      return MPI_SUCCESS;
    }
    r->item.header = h;
    r->item.payload = data;
    r->item.handed = 0;
    r->since = stamp_now();
    t->enqueue(r->world_peer, &r->item);
    return MPI_SUCCESS;
  }

  // Rendezvous: announce; the receiver pulls (single copy) or asks us to
  // stream. Non-contiguous data is not staged: the receiver has us write
  // it straight from our layout into its buffer, or asks for a stream we
  // pack into the transport (docs/datatypes.md).
  h.type = PacketType::kRts;
  h.payload = 0;
  h.recv_cookie = reinterpret_cast<uint64_t>(data);
  if (!data) h.flags = kRtsScattered;
  r->item.payload = data;
  r->item.header = h;
  r->item.handed = 0;
  r->since = stamp_now();
  if (!t->try_send_now(r->world_peer, h, nullptr)) t->enqueue(r->world_peer, &r->item);
  return MPI_SUCCESS;
}

void SendPart::pack(uint8_t* out, size_t offset, size_t n) {
  engine::pack(*request->type, request->buf, request->count, offset, out, n);
}

void SendPart::on_first_byte() {
  // Control packets carry no user data and never count as a transfer.
  if (header.type == PacketType::kEager || header.type == PacketType::kEagerSync || header.type == PacketType::kData)
    xfer_begin(request);
}

void SendPart::on_progress() {
  if (header.type == PacketType::kEager || header.type == PacketType::kEagerSync || header.type == PacketType::kData)
    FIRE_REQ(PERUSE_COMM_REQ_XFER_CONTINUE, request);
}

void Engine::complete_at_once(Request* r) {
  FIRE_REQ(PERUSE_COMM_REQ_ACTIVATE, r);
  r->active = true;
  complete(r);
}

void SendPart::on_handed() {
  Request* r = request;
  switch (header.type) {
    case PacketType::kEager:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      engine().complete(r);
      break;
    case PacketType::kEagerSync:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      if (r->matched) {
        engine().complete(r);
      } else {
        r->since = stamp_now();  // now waiting for the acknowledgement
      }
      break;
    case PacketType::kData:
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      r->handed = true;
      engine().complete(r);
      break;
    case PacketType::kRts: break;  // wait for kFin or kCts
    default:
      // A queued control packet (see send_control): its request is internal.
      engine().release(r);
      break;
  }
}

void Engine::send_control(int peer, PacketType type, uint64_t send_cookie, uint64_t recv_cookie, uint64_t total,
                          uint8_t flags, const uint64_t* word) {
  PacketHeader h{};
  h.type = type;
  h.flags = flags;
  h.total = total;
  h.send_cookie = send_cookie;
  h.recv_cookie = recv_cookie;
  h.payload = word ? sizeof(uint64_t) : 0;
  transport::Transport* t = router_.to(peer);
  if (t->try_send_now(peer, h, word)) return;
  // No room now: queue it on an internal request that owns a copy of the word.
  Request* r = new_request(RequestKind::kSend);
  r->item.header = h;
  if (word) r->coop_addr = *word;
  r->item.payload = word ? reinterpret_cast<const uint8_t*>(&r->coop_addr) : nullptr;
  r->world_peer = peer;
  t->enqueue(peer, &r->item);
}

// Sender, cooperative rendezvous: write our part straight into the
// receiver's buffer while it reads the rest.
void Engine::coop_write(Request* r, int peer, uint64_t recv_cookie) {
  xfer_begin(r);  // the sender's share of a cooperative copy
  bool ok = r->item.payload ? router_.to(peer)->write_remote(peer, r->coop_addr, r->item.payload, r->coop_split)
                            : copy_scattered(*router_.to(peer), peer, /*read=*/false, r->coop_addr, *r, r->coop_split);
  send_control(peer, PacketType::kWriteDone, cookie_of(r), recv_cookie, r->coop_split, ok ? 0 : 1);
  // Refused: the receiver reads our head itself and says so with a second
  // kFin; until then our buffer must stay untouched, so we are not done.
  if (ok) coop_part_done(r);
}

// One of the two halves of a cooperative copy is done on this side.
void Engine::coop_part_done(Request* r) {
  if (r->coop_waiting > 0 && --r->coop_waiting == 0) {
    if (r->kind == RequestKind::kSend) {
      r->handed = true;
      r->matched = true;
    }
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    complete(r);
  }
}

}  // namespace sonde::engine
