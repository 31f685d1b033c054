// Cancelling a send whose message has left (kCancelSend / kCancelAck).

#include <chrono>
#include <iterator>

#include "core/engine_internal.h"

namespace sonde::engine {

// ---------------------------------------------------------------- cancelling sends
// MPI_Cancel of a send whose message has left: the
// receiver drops it if it still waits unmatched in its unexpected queue and
// says so (kCancelSend / kCancelAck). Until the answer the send does not
// complete, so MPI_Wait returns once either the cancel or the transfer has
// happened, never neither (MPI 4.1 3.8.4).

bool Engine::ask_cancel_send(Request* r) {
  if (r->kind != RequestKind::kSend || r->mode == SendMode::kBuffered || r->peer == MPI_PROC_NULL || r->cancel_state ||
      r->cancelled || r->world_peer < 0)
    return false;
  if (r->complete) {
    // Only an eager standard/ready send completes before it is matched (a
    // synchronous one completes on the match, a rendezvous one on the data).
    if (r->mode == SendMode::kSync || r->bytes > eager_limit_of(router_.to(r->world_peer))) return false;
    r->cancel_state = kCancelAfterComplete;
    r->complete = false;
  } else if ((r->item.header.type == PacketType::kRts || r->item.header.type == PacketType::kEagerSync) &&
             !r->matched) {
    // An RTS, or synchronous eager data, the receiver has not matched: the
    // send would wait for that match forever.
    r->cancel_state = kCancelInFlight;
  } else {
    return false;  // standard eager data still going out, or a rendezvous under way
  }
  send_cancel_request(r);
  await_cancel_answer(r);
  return true;
}

// The answer, where it can come at once:
// - to oneself it is local: this process's own progress delivers the
//   request and the answer, so MPI_Cancel waits for it, however long;
// - a receiver on this node (shm) answers in the progress pass that takes
//   the request out of shared memory. Once the transport says the peer took
//   everything sent to it, the answer is on its way (behind the peer's
//   earlier packets to us, which a message still streaming to us can hold
//   back until the peer's next progress): MPI_Cancel waits for it, with
//   progress, unless the peer's process is gone. A peer that has
//   not taken the request is outside MPI (shm has no progress thread), and
//   may stay there waiting for something this process does after
//   MPI_Cancel (MPI_Cancel is local): the wait for it to take the request
//   is bounded by kCancelUntakenWait, and its answer then arrives through
//   the progress of a later test or wait;
// - over the network (ofi) the answer is a round trip away: a later test or
//   wait sees it.
void Engine::await_cancel_answer(Request* r) {
  transport::Transport* t = router_.to(r->world_peer);
  const transport::TransportKind kind = t->capabilities().kind;
  if (kind == transport::TransportKind::kOfi) return;
  const int peer = r->world_peer;
  const auto deadline = std::chrono::steady_clock::now() + kCancelUntakenWait;
  int idle_passes = 0;
  while (r->cancel_state) {
    if (progress() != 0) {
      idle_passes = 0;
      continue;
    }
    if (kind == transport::TransportKind::kShm) {
      if (t->peer_took_all(peer) ? t->peer_gone(peer) : std::chrono::steady_clock::now() >= deadline) return;
    }
    idle(idle_passes);
  }
}

void Engine::send_cancel_request(Request* r) {
  PacketHeader h{};
  h.type = PacketType::kCancelSend;
  h.context = r->comm->context;
  h.source = r->comm->rank;
  h.tag = r->tag;
  h.send_cookie = cookie_of(r);
  h.recv_cookie = cookie_of(r);
  transport::Transport* t = router_.to(r->world_peer);
  if (!t->try_send_now(r->world_peer, h, nullptr)) {
    Request* q = new_request(RequestKind::kSend);  // released by SendPart::on_handed
    q->item.header = h;
    q->world_peer = r->world_peer;
    t->enqueue(r->world_peer, &q->item);
  }
}

void Engine::drop_cancelled_message(int peer, const PacketHeader& h) {
  uint8_t dropped = 0;
  Comm* c = contexts_.find(h.context);
  if (!c) {
    // A communicator this process has not finished creating: the message
    // waits in the early list, where no tool has seen it yet (its
    // MSG_ARRIVED fires when the communicator exists), so it goes quietly.
    for (auto it = early_.rbegin(); it != early_.rend(); ++it) {
      auto* m = static_cast<Message*>(&*it);
      if (m->header.context != h.context || m->world_peer != peer || m->header.send_cookie != h.send_cookie) continue;
      if (!m->all_arrived) {
        dropped = 2;  // its payload is still coming in: ask again
      } else {
        early_.erase(std::next(it).base());
        free_message(m);
        dropped = 1;
      }
      break;
    }
  } else {
    // Newest first: an older message from the same request slot (same
    // cookie) may still wait, but never a newer one with the same envelope.
    for (auto* e = c->queues.older_exact(h.source, h.tag, nullptr); e; e = c->queues.older_exact(h.source, h.tag, e)) {
      auto* m = static_cast<Message*>(e);
      if (m->world_peer != peer || m->header.send_cookie != h.send_cookie) continue;
      if (!m->all_arrived) {
        dropped = 2;  // its payload is still coming in: ask again
      } else if (!m->claimed && !m->receiver) {
        FIRE_MSG(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, c, m->uid, m->header);
        c->queues.remove_unexpected(m);
        free_message(m);
        dropped = 1;
      }
      break;
    }
  }
  PacketHeader ack{};
  ack.type = PacketType::kCancelAck;
  ack.flags = dropped;
  ack.send_cookie = h.send_cookie;  // a transport may key per-send state on it (ofi's lent registrations)
  ack.recv_cookie = h.recv_cookie;
  deferred_.push_back({Deferred::kControl, peer, nullptr, ack});
}

void Engine::on_cancel_answer(const PacketHeader& h) {
  Request* r = tables_.requests.lookup(int(uint32_t(h.recv_cookie)));
  // Null or not waiting: the send finished (matched) and was released meanwhile.
  if (!r || r->kind != RequestKind::kSend || !r->cancel_state) return;
  if (h.flags & 2) {
    // The receiver had the message half arrived: ask again once progress()
    // is out of the transport (never from inside its callback).
    deferred_.push_back({Deferred::kCancelAgain, r->world_peer, r, PacketHeader{}});
    return;
  }
  uint8_t state = r->cancel_state;
  r->cancel_state = 0;
  if (h.flags & 1) r->cancelled = true;
  if (state == kCancelAfterComplete) {
    r->complete = true;             // its completion events fired the first time
    if (r->user_freed) release(r);  // MPI_Request_free while the answer was awaited
  } else if (r->cancelled) {
    complete(r);  // no data will move: the receiver forgot the RTS
  }
}

}  // namespace sonde::engine
