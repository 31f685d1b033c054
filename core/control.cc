// The point-to-point engine's control packets: each answers one step of
// one protocol (kCts: stream the rendezvous data; kFin: the receiver pulled
// it; kSyncAck: a synchronous send matched; kWriteDone: a cooperative
// write's part is done; kCancelSend / kCancelAck), and is checked against
// the state of the request it names before it is acted on: a packet that
// names no live request of ours, or one in another step, is a protocol
// error that ends the job naming the sender.

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "core/engine_internal.h"

namespace sonde::engine {

// What is wrong with packet h naming r (a live, incomplete request of the
// packet's kind talking to its sender) in r's protocol state, or null: each
// control packet answers one step of one protocol, and only a request in
// that step may take it (a duplicate or early answer would queue a send
// twice, a cooperative write longer than the send would read past its
// buffer, data beyond what the receive announced would overflow it).
const char* Engine::unexpected_now(const Request& r, const PacketHeader& h) {
  switch (h.type) {
    case PacketType::kCts:
    case PacketType::kFin:
    case PacketType::kCtsWrite:
      // Answers to a rendezvous announcement that has left (an RTS still
      // queued here cannot have been answered; after a kCts the send
      // streams, and nothing but its data follows).
      if (r.item.header.type != PacketType::kRts || r.item.is_linked()) return "announced no rendezvous";
      if (h.type == PacketType::kCtsWrite && r.coop_waiting != 0) return "is already being written";
      if (h.type == PacketType::kCtsWrite && h.total > r.bytes) return "has fewer bytes than the write asks for";
      return nullptr;
    case PacketType::kSyncAck:
      if (r.item.header.type != PacketType::kEagerSync || r.matched) return "waits for no synchronous match";
      return nullptr;
    case PacketType::kData:
      if (!r.stream_asked) return "asked for no stream";
      // Straight into the user's buffer when it holds the whole message
      // (setup_sink): no more than the message's size.
      if (r.sink.contiguous && h.payload > r.status_bytes) return "expects fewer bytes";
      return nullptr;
    case PacketType::kWriteDone:
      if (r.is_linked()) return "is not matched yet";  // still in the posted queue
      return nullptr;
    default: return nullptr;
  }
}

// The receive r asks its sender to stream the data (its rendezvous cannot
// be pulled).
void Engine::ask_stream(Request* r, int peer, uint64_t send_cookie) {
  r->stream_asked = true;
  send_control(peer, PacketType::kCts, send_cookie, cookie_of(r));
}

Request* Engine::named_request(int peer, uint64_t cookie, RequestKind kind, const PacketHeader& h) {
  Request* r = cookie >> 32 ? nullptr : tables_.requests.lookup(int(cookie));
  // Every packet that names a request comes before that request completes
  // (a send completes on its kFin or kSyncAck, a receive on its data).
  const char* wrong = nullptr;
  if (r && r->kind == kind && r->world_peer == peer && !r->complete) {
    wrong = unexpected_now(*r, h);
    if (!wrong) return r;
  }
  char what[300];
  if (wrong) {
    std::snprintf(what, sizeof what,
                  "malformed packet from rank %d: packet type %u names request 0x%" PRIx64 ", a %s of ours that %s",
                  peer, unsigned(h.type), cookie, kind == RequestKind::kSend ? "send" : "receive", wrong);
  } else {
    std::snprintf(what, sizeof what,
                  "malformed packet from rank %d: packet type %u names request 0x%" PRIx64
                  ", not a live, incomplete %s of ours talking to that rank",
                  peer, unsigned(h.type), cookie, kind == RequestKind::kSend ? "send" : "receive");
  }
  if (protocol_error_) protocol_error_(what);
  std::fprintf(stderr, "sonde: %s\n", what);
  std::fflush(stderr);
  std::_Exit(1);
}

void Engine::deliver_control(int peer, const PacketHeader& h) {
  switch (h.type) {
    case PacketType::kCts: {
      auto* r = named_request(peer, h.send_cookie, RequestKind::kSend, h);
      r->coop_waiting = 0;  // streaming replaces any single-copy exchange
      // Streaming from now on (run_deferred queues the data): a second kCts
      // is refused.
      r->item.header.type = PacketType::kData;
      PacketHeader d{};
      d.type = PacketType::kData;
      d.payload = r->bytes;
      d.total = r->bytes;
      d.recv_cookie = h.recv_cookie;
      d.send_cookie = h.send_cookie;
      deferred_.push_back({Deferred::kStreamData, peer, r, d});
      break;
    }
    case PacketType::kFin: {
      auto* r = named_request(peer, h.send_cookie, RequestKind::kSend, h);
      if (r->coop_waiting) {  // cooperative: our own write may still be pending
        coop_part_done(r);
        break;
      }
      r->handed = true;
      r->matched = true;
      // PERUSE: the receiver pulled the data in one copy; the sender learns of it
      // only now, so its XFER_BEGIN/END are reported here (docs/peruse.md).
      xfer_begin(r);
      FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
      complete(r);
      break;
    }
    case PacketType::kSyncAck: {
      auto* r = named_request(peer, h.send_cookie, RequestKind::kSend, h);
      r->matched = true;
      if (r->handed) complete(r);
      break;
    }
    case PacketType::kData: break;  // the sink is the receive's (set up by pull)
    case PacketType::kCancelSend: drop_cancelled_message(peer, h); break;
    case PacketType::kCancelAck: on_cancel_answer(h); break;
    case PacketType::kWriteDone: {
      auto* r = named_request(peer, h.recv_cookie, RequestKind::kRecv, h);
      if (!r->coop_waiting) break;  // we fell back to streaming meanwhile
      if ((h.flags & 1) && r->coop_addr == 0) {
        // A scattered sender could not write, and there is no address to
        // read from: have it stream instead.
        single_copy_state_[size_t(peer)] = -1;
        r->coop_waiting = 0;
        r->stream_asked = true;
        deferred_.push_back({Deferred::kControl, peer, r, [&] {
                               PacketHeader cts{};
                               cts.type = PacketType::kCts;
                               cts.send_cookie = h.send_cookie;
                               cts.recv_cookie = cookie_of(r);
                               return cts;
                             }()});
        break;
      }
      if (h.flags & 1) {
        // The sender could not write its part: read it ourselves, then let
        // it go (it waits for this second kFin before reusing its buffer).
        uint8_t* dst = contiguous_start(*r->type, r->buf);
        if (!router_.to(peer)->read_remote(peer, r->coop_addr, dst, r->coop_split)) r->error = MPI_ERR_OTHER;
        deferred_.push_back({Deferred::kControl, peer, r, [&] {
                               PacketHeader fin{};
                               fin.type = PacketType::kFin;
                               fin.send_cookie = h.send_cookie;
                               return fin;
                             }()});
      }
      coop_part_done(r);
      break;
    }
    default: break;
  }
}

}  // namespace sonde::engine
