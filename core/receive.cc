// The point-to-point engine: protocols (eager, synchronous eager,
// rendezvous with single-copy pull or streamed fallback), arrival handling,
// matching, completion and progress.
//
// Where PERUSE events will fire is marked "PERUSE:" (table in
// ARCHITECTURE.md). Receive R:
//   REQ_ACTIVATE, SEARCH_UNEX_Q_BEGIN/END, then MSG_REMOVE_FROM_UNEX_Q +
//   REQ_MATCH_UNEX or REQ_INSERT_IN_POSTED_Q; later REQ_REMOVE_FROM_POSTED_Q
//   + MSG_MATCH_POSTED_REQ; REQ_XFER_BEGIN/CONTINUE/END; REQ_COMPLETE;
//   REQ_NOTIFY (in wait/test).
// Arriving message M: MSG_ARRIVED, SEARCH_POSTED_Q_BEGIN/END, then a match or
//   MSG_INSERT_IN_UNEX_Q.
//
// This file: posting receives, matching, pulling rendezvous data, message
// arrival, probes. They share one file so the hot matching path inlines as
// one unit. The control packets that answer a protocol step (kCts, kFin,
// kSyncAck, kWriteDone, cancels) are core/control.cc's.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/engine_internal.h"
#include "core/stamp.h"

namespace sonde::engine {

// Single copy between the packed bytes [0, n) of r's (buf, count, type)
// and the peer's contiguous range at `remote`, through the iovecs of r's
// layout, a window at a time (no staging copy). Layouts of small runs (the
// kernel's per-iovec cost exceeds a memcpy of the run; bench/
// datatype_bandwidth.c) go through a bounded bounce buffer instead: pack or
// unpack a chunk, one remote copy per chunk. False when refused.
bool copy_scattered(transport::Transport& t, int peer, bool read, uint64_t remote, const Request& r, uint64_t n) {
  constexpr int64_t kMinIovRun = 1024;
  if (mean_run(*r.type) < kMinIovRun) {
    constexpr uint64_t kChunk = 256 * 1024;
    static thread_local std::vector<uint8_t> bounce(kChunk);
    for (uint64_t off = 0; off < n; off += kChunk) {
      uint64_t k = std::min(kChunk, n - off);
      if (read) {
        if (!t.read_remote(peer, remote + off, bounce.data(), k)) return false;
        unpack(*r.type, r.buf, r.count, off, bounce.data(), k);
      } else {
        pack(*r.type, r.buf, r.count, off, bounce.data(), k);
        if (!t.write_remote(peer, remote + off, bounce.data(), k)) return false;
      }
    }
    return true;
  }
  constexpr size_t kWindow = 256;
  iovec iov[kWindow];
  for (uint64_t off = 0; off < n;) {
    uint64_t covered = 0;
    size_t k = gather_iov(*r.type, r.buf, r.count, off, n - off, iov, kWindow, &covered);
    if (!(read ? t.read_remote_iov(peer, remote + off, iov, k) : t.write_remote_iov(peer, remote + off, iov, k)))
      return false;
    off += covered;
  }
  return true;
}

int Engine::issue_recv(Request* r) {
  uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);
  return SONDE_DISPATCH(w, kIssueRecvEvents, issue_recv_watched(r, w), issue_recv_as<false>(r, 0));
}

int Engine::issue_recv_watched(Request* r, uint32_t w) { return issue_recv_as<true>(r, w); }

// The state a receive starts from each time it is issued.
static void arm_recv(Request* r) {
  r->active = true;
  r->xfer_started = false;
  r->complete = false;
  r->cancelled = false;
  r->stream_asked = false;
  r->error = MPI_SUCCESS;
  r->status_bytes = 0;
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);
}

template <bool kWatched>
int Engine::issue_recv_as(Request* r, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  Message* found;
  {
    // One reader section for the events up to the match; the copy (or pull)
    // of a matched message runs outside it.
    peruse::ReaderIf<kWatched> rd;
    FIRE_REQ_WITH(rd, r->comm, PERUSE_COMM_REQ_ACTIVATE, r);
    arm_recv(r);
    // The posted-queue entry's source and tag were set with peer and tag
    // (new_request): copying them here would load both in one wide read of
    // two words just stored one by one, which waits for those stores (and
    // every store before them, a fast box's included) to reach the cache.
    const int peer = r->peer, tag = r->tag;
    if (peer == MPI_PROC_NULL) {
      r->status_source = MPI_PROC_NULL;
      r->status_tag = MPI_ANY_TAG;
      complete(r);
      return MPI_SUCCESS;
    }
    Comm* c = r->comm;
    const uint64_t sid = (w & kSearchUnexBits) ? new_id(kIdSearch) : 0;
    if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, c, sid, peer, tag);
    found = static_cast<Message*>(c->queues.match_receive(peer, tag, nullptr));
    if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_UNEX_Q_END, c, sid, peer, tag);
    if (!found) {
      FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, r);
      r->since = stamp_now();
      c->queues.post(r);
      return MPI_SUCCESS;
    }
    FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, c, found->uid, found->header);
    FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_MATCH_UNEX, r);
  }
  match_message(r, found);
  return MPI_SUCCESS;
}

// With no event watched, nothing shows whether the search ran before the
// request was made, so it runs first, and a message that is already here
// whole needs no request at all.
int Engine::recv_blocking(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm,
                          MPI_Status* status) {
  if (SONDE_WATCHED_MASK(comm->peruse) != 0 || source == MPI_PROC_NULL || !tables_.requests.can_allocate())
    return recv(buf, count, type, source, tag, comm, status);
  auto* m = static_cast<Message*>(comm->queues.match_receive(source, tag));
  if (m && m->header.type == PacketType::kEager && m->all_arrived) return deliver_eager(m, buf, count, type, status);
  // can_allocate() said there is a slot.
  Request* r = new_request(RequestKind::kRecv, buf, count, type, source, tag, comm);
  arm_recv(r);
  if (m) {
    match_message(r, m);
  } else {
    r->since = stamp_now();
    comm->queues.post(r);
  }
  return wait(r, status);
}

bool Engine::recv_now(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, int* error) {
  // Watched communicators take the request path, which fires the events.
  if (SONDE_WATCHED_MASK(comm->peruse) != 0 || source == MPI_PROC_NULL) return false;
  auto* m = static_cast<Message*>(comm->queues.reserved_front(source, tag));
  if (!m || m->header.type != PacketType::kEager || !m->all_arrived || m->claimed) return false;
  comm->queues.remove_unexpected(m);
  *error = deliver_eager(m, buf, count, type, MPI_STATUS_IGNORE);
  return true;
}

int Engine::deliver_eager(Message* m, void* buf, int64_t count, Datatype* type, MPI_Status* status) {
  const uint64_t bytes = uint64_t(count) * uint64_t(type->size);
  const uint64_t n = std::min<uint64_t>(m->header.payload, bytes);
  if (n && type->contiguous) std::memcpy(contiguous_start(*type, buf), m->data, n);
  else if (n) unpack(*type, buf, count, 0, m->data, n);
  fill_recv_status(status, m->header.source, m->header.tag, n, false);
  const int rc = m->header.payload > bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  free_message(m);
  return rc;
}

// r matched message m that was waiting in the unexpected queue (or probed).
void Engine::match_message(Request* r, Message* m) {
  const PacketHeader& h = m->header;
  r->status_source = h.source;
  r->status_tag = h.tag;
  r->world_peer = m->world_peer;
  if (h.type == PacketType::kRts) {
    PacketHeader copy = h;
    int peer = m->world_peer;
    free_message(m);
    pull(r, peer, copy);
    return;
  }
  if (h.type == PacketType::kEagerSync) send_control(m->world_peer, PacketType::kSyncAck, h.send_cookie, 0);
  if (!m->all_arrived) {
    // Payload still streaming into the message buffer: finish on arrival.
    m->receiver = r;
    r->since = stamp_now();
    return;
  }
  xfer_begin(r);  // copy out of the unexpected buffer
  uint64_t n = std::min<uint64_t>(h.payload, r->bytes);
  if (n) unpack(*r->type, r->buf, r->count, 0, m->data, n);
  r->status_bytes = n;
  if (h.payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
  FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
  free_message(m);
  complete(r);
}

bool Engine::cancel_recv(Request* r) {
  if (!r->active || r->kind != RequestKind::kRecv) return false;
  if (!r->comm->queues.cancel(r)) return false;
  FIRE_REQ(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, r);
  r->cancelled = true;
  r->status_source = MPI_ANY_SOURCE;
  r->status_tag = MPI_ANY_TAG;
  complete(r);
  return true;
}

void Engine::setup_sink(Request* r, uint64_t payload) {
  r->status_bytes = std::min<uint64_t>(payload, r->bytes);
  if (payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
  r->sink.request = r;
  r->sink.message = nullptr;
  r->sink.contiguous = nullptr;
  if (payload <= r->bytes && r->type->contiguous && payload > 0)
    r->sink.contiguous = contiguous_start(*r->type, r->buf);
}

void RecvSink::on_chunk(size_t received) {
  if (request) FIRE_REQ(PERUSE_COMM_REQ_XFER_CONTINUE, request);
}

void RecvSink::unpack(const uint8_t* bytes, size_t offset, size_t n) {
  Request* r = request;
  if (offset >= r->bytes) return;  // beyond the receive buffer: truncated
  uint64_t keep = std::min<uint64_t>(n, r->bytes - offset);
  engine::unpack(*r->type, r->buf, r->count, offset, bytes, keep);
}

// Rendezvous at the receiver once r matched an RTS: pull the data ourselves
// when the transport can (one copy), or ask the sender to stream it.
void Engine::pull(Request* r, int peer, const PacketHeader& h) {
  if (in_progress_) {
    deferred_.push_back({Deferred::kPull, peer, r, h});
    return;
  }
  r->world_peer = peer;
  r->since = stamp_now();  // the data is on its way
  uint64_t n = std::min<uint64_t>(h.total, r->bytes);
  setup_sink(r, h.total);
  if (!settings_.single_copy) {
    // Single copy turned off at run time (MPI_T cvar sonde_shm_single_copy): stream.
    ask_stream(r, peer, h.send_cookie);
    return;
  }
  // A network transport reads with RMA and reports fragments and the end
  // itself (transport.h start_read); everything below is synchronous.
  if (n > 0 && !(h.flags & kRtsScattered) && router_.to(peer)->capabilities().rma_read &&
      router_.to(peer)->start_read(peer, h, r->type->contiguous ? contiguous_start(*r->type, r->buf) : nullptr, n,
                                   &r->sink)) {
    xfer_begin(r);
    return;
  }
  bool pulled = false;
  const bool scattered = h.flags & kRtsScattered;  // the sender's data has no single address
  bool coop = !scattered && settings_.coop_threshold && n >= settings_.coop_threshold && r->type->contiguous &&
              peer != world_rank_ && single_copy_state_[size_t(peer)] > 0;
  if (coop) {
    // Both cores copy: the sender writes [0, split) into our buffer while we
    // read [split, n). Done when our read and its kWriteDone are both in.
    uint64_t split = (n / 2) & ~uint64_t(4095);
    uint8_t* dst = contiguous_start(*r->type, r->buf);
    uint64_t dst_addr = reinterpret_cast<uint64_t>(dst);
    r->coop_addr = h.recv_cookie;
    r->coop_split = split;
    r->coop_waiting = 2;
    send_control(peer, PacketType::kCtsWrite, h.send_cookie, cookie_of(r), split, 0, &dst_addr);
    xfer_begin(r);
    if (router_.to(peer)->read_remote(peer, h.recv_cookie + split, dst + split, n - split)) {
      send_control(peer, PacketType::kFin, h.send_cookie, 0);
      coop_part_done(r);
      return;
    }
    // Refused after all: stream everything (the sender's write, if it
    // happens, puts the same bytes in the same place).
    single_copy_state_[size_t(peer)] = -1;
    r->coop_waiting = 0;
    ask_stream(r, peer, h.send_cookie);
    return;
  }
  if (scattered && n > 0) {
    if (r->type->contiguous && peer != world_rank_ && single_copy_state_[size_t(peer)] >= 0) {
      // Only the sender knows its layout: it writes all n bytes straight
      // into our buffer (the cooperative exchange with an empty share for
      // us). coop_addr 0 says a refused write falls back to streaming.
      uint64_t dst_addr = reinterpret_cast<uint64_t>(contiguous_start(*r->type, r->buf));
      r->coop_addr = 0;
      r->coop_split = n;
      r->coop_waiting = 1;  // its kWriteDone
      send_control(peer, PacketType::kCtsWrite, h.send_cookie, cookie_of(r), n, 0, &dst_addr);
      xfer_begin(r);
      send_control(peer, PacketType::kFin, h.send_cookie, 0);  // our (empty) share is done
      return;
    }
    // Scattered on both sides: the sender packs into the transport and we
    // unpack from it, two copies and no staging buffer.
    ask_stream(r, peer, h.send_cookie);
    return;
  }
  if (n == 0) {
    xfer_begin(r);  // nothing to move (truncated to 0 bytes), but the transfer still happens
    pulled = true;
  } else if (r->type->contiguous) {
    xfer_begin(r);
    pulled = router_.to(peer)->read_remote(peer, h.recv_cookie, contiguous_start(*r->type, r->buf), n);
  } else {
    // Straight into our scattered buffer: the iovecs of our layout.
    xfer_begin(r);
    pulled = copy_scattered(*router_.to(peer), peer, /*read=*/true, h.recv_cookie, *r, n);
  }
  if (n) single_copy_state_[size_t(peer)] = pulled ? 1 : -1;
  if (pulled) {
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    send_control(peer, PacketType::kFin, h.send_cookie, 0);
    complete(r);
    return;
  }
  ask_stream(r, peer, h.send_cookie);
}

// ---------------------------------------------------------------- arrivals

Message* Engine::new_message(int peer, const PacketHeader& h, Comm* comm) {
  Message* m = nullptr;
  int handle = tables_.messages.allocate(&m);
  if (!handle) {
    std::fprintf(stderr, "sonde: out of message descriptors\n");
    std::abort();
  }
  m->handle = 0;
  m->header = h;
  m->world_peer = peer;
  m->comm = comm;
  m->receiver = nullptr;
  m->all_arrived = h.payload == 0;
  m->source = h.source;
  m->tag = h.tag;
  m->bytes = h.total;
  m->since = arrival_stamp();
  m->sink.message = m;
  m->sink.request = nullptr;
  if (h.payload > m->capacity) {
    std::free(m->data);
    m->data = static_cast<uint8_t*>(std::malloc(h.payload));
    m->capacity = h.payload;
  }
  m->sink.contiguous = m->data;
  // The slot's handle is kept privately so free_message can release it.
  m->handle = handle;
  return m;
}

void Engine::free_message(Message* m) {
  int h = m->handle;
  // Large buffers go back to the system; small ones stay with the slot.
  if (m->capacity > 64 * 1024) {
    std::free(m->data);
    m->data = nullptr;
    m->capacity = 0;
  }
  tables_.messages.release(h);
}

transport::PayloadSink* Engine::on_header(int peer, const PacketHeader& h) {
  if (!is_message(h.type)) {
    deliver_control(peer, h);
    if (h.type == PacketType::kData) {
      Request* r = named_request(peer, h.recv_cookie, RequestKind::kRecv, h);
      xfer_begin(r);
      return &r->sink;
    }
    if (h.type == PacketType::kCtsWrite) {
      // The 8-byte payload is the receiver's buffer address.
      Request* r = named_request(peer, h.send_cookie, RequestKind::kSend, h);
      r->sink.request = nullptr;
      r->sink.message = nullptr;
      r->sink.contiguous = reinterpret_cast<uint8_t*>(&r->coop_addr);
      return &r->sink;
    }
    return nullptr;
  }
  Comm* comm = contexts_.find(h.context);
  return on_message(peer, h, comm);
}

transport::PayloadSink* Engine::on_message(int peer, const PacketHeader& h, Comm* comm) {
  uint64_t id = new_id(kIdTransientMessage);  // the message's id until it is matched or removed
  if (!comm) {
    // A communicator we have not finished creating: hold the message; its
    // MSG_ARRIVED fires when the communicator exists (create_comm).
    Message* m = new_message(peer, h, nullptr);
    m->uid = id;
    early_.push_back(*m);
    return &m->sink;
  }
  uint32_t w = SONDE_WATCHED_MASK(comm->peruse);
  return SONDE_DISPATCH(w, kArrivalEvents, on_message_watched(peer, h, comm, id, w),
                        on_message_as<false>(peer, h, comm, id, 0));
}

transport::PayloadSink* Engine::on_message_watched(int peer, const PacketHeader& h, Comm* comm, uint64_t id,
                                                   uint32_t w) {
  return on_message_as<true>(peer, h, comm, id, w);
}

template <bool kWatched>
transport::PayloadSink* Engine::on_message_as(int peer, const PacketHeader& h, Comm* comm, uint64_t id, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  Request* r;
  {
    // One reader section for the events of an arrival; a rendezvous pull runs
    // outside it.
    peruse::ReaderIf<kWatched> rd;
    FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_ARRIVED, comm, id, h);
    const uint64_t sid = (w & kSearchPostedBits) ? new_id(kIdSearch) : 0;
    if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, comm, sid, h.source, h.tag);
    r = static_cast<Request*>(comm->queues.match_arrival(h.source, h.tag, nullptr));
    if (sid) FIRE_SEARCH_WITH(rd, w, PERUSE_COMM_SEARCH_POSTED_Q_END, comm, sid, h.source, h.tag);
    if (!r) {
      Message* m = new_message(peer, h, comm);
      m->uid = id;
      FIRE_MSG_LAST_WITH(rd, w, PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, comm, id, h);
      comm->queues.push_unexpected(m);
      return &m->sink;
    }
    FIRE_REQ_WITH(rd, comm, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, r);
    FIRE_MSG_WITH(rd, w, PERUSE_COMM_MSG_MATCH_POSTED_REQ, comm, id, h);
    r->status_source = h.source;
    r->status_tag = h.tag;
    r->world_peer = peer;
    if (h.type != PacketType::kRts) {
      if (h.type == PacketType::kEagerSync)
        deferred_.push_back({Deferred::kControl, peer, r, [&] {
                               PacketHeader ack{};
                               ack.type = PacketType::kSyncAck;
                               ack.send_cookie = h.send_cookie;
                               return ack;
                             }()});
      setup_sink(r, h.payload);
      xfer_begin_last_with(rd, comm, r);
      return &r->sink;
    }
  }
  pull(r, peer, h);
  return nullptr;
}

void Engine::on_payload_done(int peer, const PacketHeader& h, transport::PayloadSink* s) {
  if (h.type == PacketType::kCtsWrite) {
    Request* r = named_request(peer, h.send_cookie, RequestKind::kSend, h);
    r->coop_split = h.total;
    r->coop_waiting = 2;  // our write, and the receiver's kFin
    deferred_.push_back({Deferred::kCoopWrite, peer, r, h});
    return;
  }
  if (!s) return;
  auto* sink = static_cast<EngineSink*>(s);
  if (sink->request) {
    if (h.type == PacketType::kEager || h.type == PacketType::kEagerSync || h.type == PacketType::kData) {
      Request* r = sink->request;
      const uint32_t w = SONDE_WATCHED_MASK(r->comm->peruse);
      if (__builtin_expect((w & kPayloadDoneEvents) != 0, 0)) {
        payload_done_watched(r, w);
      } else {
        complete_as<false>(r, 0);
      }
    }
    return;
  }
  Message* m = sink->message;
  m->all_arrived = true;
  if (Request* r = m->receiver) {
    xfer_begin(r);  // copy out of the message buffer
    uint64_t n = std::min<uint64_t>(m->header.payload, r->bytes);
    if (n) unpack(*r->type, r->buf, r->count, 0, m->data, n);
    r->status_bytes = n;
    if (m->header.payload > r->bytes) r->error = MPI_ERR_TRUNCATE;
    FIRE_REQ(PERUSE_COMM_REQ_XFER_END, r);
    free_message(m);
    complete(r);
  }
}

// A receive's payload is in: REQ_XFER_END and REQ_COMPLETE back to back with
// one spec, one reader section. Out of line, so the plain path keeps its
// registers.
void Engine::payload_done_watched(Request* r, uint32_t w) {
  FIRE_REQ_SEQUENCE_IF(w, r, PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE);
  complete_as<true, false>(r, w);
}

// ---------------------------------------------------------------- probe

Message* Engine::probe(Comm* comm, int source, int tag) {
  // A probe searches (and fires the search events) but activates nothing.
  SearchEvents search(comm, SONDE_WATCHED_MASK(comm->peruse), source, tag);
  return static_cast<Message*>(comm->queues.find_unexpected(source, tag, search.unexpected()));
}

void Engine::take_message(Comm* comm, Message* m) {
  FIRE_MSG(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, comm, m->uid, m->header);  // matched probe
  comm->queues.remove_unexpected(m);
}

int Engine::receive_message(Request* r, Message* m) {
  // MPI_Mrecv / MPI_Imrecv: the message left the queue at MPI_Mprobe; the
  // request activates and matches it now.
  FIRE_REQ(PERUSE_COMM_REQ_ACTIVATE, r);
  FIRE_REQ(PERUSE_COMM_REQ_MATCH_UNEX, r);
  r->xfer_started = false;
  r->active = true;
  r->complete = false;
  r->stream_asked = false;
  r->error = MPI_SUCCESS;
  r->bytes = uint64_t(r->count) * uint64_t(r->type->size);
  match_message(r, m);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
