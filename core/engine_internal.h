// What the core's point-to-point files share (private to core/): PERUSE
// firing helpers, the watched/plain dispatch of the hot operations, the
// template body of request completion, and protocol constants.
// engine.h has the reading order of the files.
#pragma once

#include <cstdint>

#include "core/engine.h"
#include "core/lookup.h"
#include "core/p2p.h"
#include "peruse/registry.h"

namespace sonde::engine {

using transport::PacketHeader;
using transport::PacketType;

inline bool is_message(PacketType t) {
  return t == PacketType::kEager || t == PacketType::kEagerSync || t == PacketType::kRts;
}

// A request named in a packet (send_cookie, recv_cookie) travels as its
// handle (index and generation, base/handles.h), never as its address: the
// receiver of the packet looks it up (Engine::named_request), so a forged
// or stale cookie is caught instead of dereferenced.
inline uint64_t cookie_of(const Request* r) { return uint64_t(uint32_t(r->handle)); }

// --- datatypes in the rendezvous (docs/datatypes.md) ---
// kRts flag: the sender's data is non-contiguous, so there is no address
// to pull from (recv_cookie is 0).
inline constexpr uint8_t kRtsScattered = 1;

// Single copy between the packed bytes [0, n) of r's (buf, count, type) and
// the peer's contiguous range at `remote` (receive.cc). False when refused.
bool copy_scattered(transport::Transport& t, int peer, bool read, uint64_t remote, const Request& r, uint64_t n);

// PERUSE firing helpers: a request's id is its descriptor's address; the spec
// carries the user's own arguments.
inline uint64_t uid(const Request* r) { return reinterpret_cast<uint64_t>(r); }
inline int operation(const Request* r) { return r->kind == RequestKind::kSend ? PERUSE_SEND : PERUSE_RECV; }
// r's spec, built once per request (its arguments are fixed from
// new_request on); every dispatch gets its own copy.
[[gnu::always_inline]] inline const peruse_comm_spec_t& req_spec(Request* r) {
  if (__builtin_expect(!r->peruse_spec_ready, 0)) {
    peruse::set_spec(r->peruse_spec, r->comm->handle, r->buf, static_cast<int>(r->count), r->type->handle, r->peer,
                     r->tag, operation(r));
    r->peruse_spec_ready = true;
  }
  return r->peruse_spec;
}
// The _IF forms take a watched mask the caller loaded once for several events
// and dispatch inline (watched twins); the others load the mask and call.
#define FIRE_REQ_IF(w, event, r) SONDE_FIRE_SPEC_IF((w), (r)->comm->peruse, (event), uid(r), req_spec(r))
#define FIRE_REQ(event, r) SONDE_FIRE_SPEC((r)->comm->peruse, (event), uid(r), req_spec(r))
// Several request events back to back (in firing order), one dispatch.
#define FIRE_REQ_SEQUENCE_IF(w, r, ...) \
  SONDE_FIRE_SPEC_SEQUENCE_IF((w), (r)->comm->peruse, uid(r), req_spec(r), __VA_ARGS__)
// In an open reader section `rd` (peruse::ReaderIf): the events of one
// engine operation share it.
// `c` is r->comm (a register the caller already holds).
#define FIRE_REQ_WITH(rd, c, event, r) SONDE_FIRE_SPEC_WITH(rd, (c)->peruse, (event), uid(r), req_spec(r))
// Message events carry the envelope: sender, tag, size in bytes.
#define FIRE_MSG_WITH(rd, w, event, c, id, h)                                                                 \
  SONDE_FIRE_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total), \
                  MPI_BYTE, (h).source, (h).tag, PERUSE_RECV)
// _LAST_: the last event of the section (its end ends the upcall).
#define FIRE_REQ_LAST_WITH(rd, c, event, r) SONDE_FIRE_SPEC_LAST_WITH(rd, (c)->peruse, (event), uid(r), req_spec(r))
#define FIRE_MSG_LAST_WITH(rd, w, event, c, id, h)                                                                 \
  SONDE_FIRE_LAST_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total), \
                       MPI_BYTE, (h).source, (h).tag, PERUSE_RECV)
// Queue searches (PERUSE_COMM_SEARCH_*): in the watched twins they fire
// around the matcher's call, which is the whole search.
#define FIRE_SEARCH_WITH(rd, w, event, c, id, source, tag)                                                          \
  SONDE_FIRE_WITH(rd, (w), (c)->peruse, (event), (id), (c)->handle, nullptr, 0, MPI_DATATYPE_NULL, (source), (tag), \
                  PERUSE_RECV)
inline constexpr uint32_t kSearchPostedBits =
    peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_END);
inline constexpr uint32_t kSearchUnexBits =
    peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_END);
#define FIRE_MSG(event, c, id, h)                                                                                     \
  SONDE_FIRE((c)->peruse, (event), (id), (c)->handle, nullptr, static_cast<int64_t>((h).total), MPI_BYTE, (h).source, \
             (h).tag, PERUSE_RECV)

// REQ_XFER_BEGIN once per activation, even when a first attempt (single
// copy refused) hands over to another protocol.
[[gnu::always_inline]] inline void xfer_begin_if(uint32_t w, Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ_IF(w, PERUSE_COMM_REQ_XFER_BEGIN, r);
}
// The last event of an arrival's section; r is the matched receive.
template <class ReaderT>
inline void xfer_begin_last_with(ReaderT& rd, Comm* c, Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ_LAST_WITH(rd, c, PERUSE_COMM_REQ_XFER_BEGIN, r);
}
inline void xfer_begin(Request* r) {
  if (r->xfer_started) return;
  r->xfer_started = true;
  FIRE_REQ(PERUSE_COMM_REQ_XFER_BEGIN, r);
}

// Reports queue searches as PERUSE_COMM_SEARCH_* from inside the matcher (a
// probe's search); only handed to it when one of those events is watched on
// the communicator. The watched twins of receives and arrivals fire the
// search events themselves, around the matcher's call (FIRE_SEARCH_WITH).
class SearchEvents final : public matching::SearchObserver {
 public:
  // `w`: the communicator's watched mask, already loaded by the caller.
  SearchEvents(Comm* c, uint32_t w, int source, int tag) : c_(c), w_(w), source_(source), tag_(tag) {}
  // The observer to give the matcher for a posted-queue / unexpected-queue search.
  matching::SearchObserver* posted() {
    return w_ & (peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_POSTED_Q_END))
               ? this
               : nullptr;
  }
  matching::SearchObserver* unexpected() {
    return w_ & (peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN) | peruse::bit(PERUSE_COMM_SEARCH_UNEX_Q_END)) ? this
                                                                                                            : nullptr;
  }
  void search_posted_begin() override { begin(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN); }
  void search_posted_end() override { fire(PERUSE_COMM_SEARCH_POSTED_Q_END); }
  void search_unexpected_begin() override { begin(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN); }
  void search_unexpected_end() override { fire(PERUSE_COMM_SEARCH_UNEX_Q_END); }

 private:
  void begin(int event) {
    id_ = engine().new_id(Engine::kIdSearch);
    fire(event);
  }
  void fire(int event) {
    // Only reached while watched (posted(), unexpected()): dispatch inline.
    SONDE_FIRE_IF(SONDE_WATCHED_MASK(c_->peruse), c_->peruse, event, id_, c_->handle, nullptr, 0, MPI_DATATYPE_NULL,
                  source_, tag_, PERUSE_RECV);
  }
  Comm* c_;
  uint32_t w_;
  int source_, tag_;
  uint64_t id_ = 0;
};

// The hot operations come in two compiled forms: <false> carries no PERUSE
// code at all, <true> fires events. The dispatch is one load of the
// communicator's watched mask and one predictable branch per operation.
// `events`: the events the watched twin can fire. An operation takes its
// watched twin only when one of them is active, so an active event an
// operation never fires costs it nothing (same test as `mask != 0`).
#define SONDE_DISPATCH(mask, events, call_watched, call_plain) \
  (__builtin_expect(((mask) & (events)) != 0, 0) ? (call_watched) : (call_plain))
inline constexpr uint32_t kCompleteEvents = peruse::bits_of({PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kPayloadDoneEvents =
    peruse::bits_of({PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kSendNowEvents =
    peruse::bits_of({PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END,
                     PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY});
inline constexpr uint32_t kIssueRecvEvents = peruse::bits_of(
    {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, PERUSE_COMM_SEARCH_UNEX_Q_END,
     PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, PERUSE_COMM_REQ_MATCH_UNEX});
inline constexpr uint32_t kArrivalEvents =
    peruse::bits_of({PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, PERUSE_COMM_SEARCH_POSTED_Q_END,
                     PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
                     PERUSE_COMM_MSG_MATCH_POSTED_REQ, PERUSE_COMM_REQ_XFER_BEGIN});

template <bool kWatched, bool kFireComplete>
void Engine::complete_as(Request* r, uint32_t w) {
  if constexpr (!kWatched) w = 0;
  // `active` stays set until the user's wait/test retires the request: a
  // persistent request that completed early still owes its status.
  r->complete = true;
  if (__builtin_expect(r->on_complete != nullptr, 0)) r->on_complete(r->owner);
  if (r->wait_all_index >= 0) wait_all_done_.push_back(r);  // claim_wait_all_notes
  if constexpr (kFireComplete) FIRE_REQ_IF(w, PERUSE_COMM_REQ_COMPLETE, r);
  if (r->mode == SendMode::kBuffered && r->kind == RequestKind::kSend && r->staged) {
    bsend_.give_back(int64_t(r->bytes) + MPI_BSEND_OVERHEAD);
  }
  if (r->user_freed) {
    // Nobody will wait for it (MPI_Request_free, or a detached Bsend): its
    // life as a request ends here.
    FIRE_REQ_IF(w, PERUSE_COMM_REQ_NOTIFY, r);
    release(r);
  }
}

}  // namespace sonde::engine
