// The PERUSE side of the profiler: the one callback every watched event
// calls, and what each event records in the tables (residence.h has the
// metrics and the locking rules). Registration and release of the handles
// are here too.
#include <time.h>

#include <cstdint>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

namespace {

// Per thread: the posted-queue sample between REQ_REMOVE_FROM_POSTED_Q and the
// MSG_MATCH_POSTED_REQ that names its sender, and the sender of the message
// MSG_REMOVE_FROM_UNEX_Q just took (for a wildcard REQ_MATCH_UNEX).
struct Pending {
  bool valid;
  int32_t comm;
  uint64_t request;
  uint64_t duration;
  int internal;
  int64_t event;  // its kEvPostOut in the event buffer, or -1
};
struct LastUnex {
  bool valid;
  int32_t comm;
  int peer;
};
__thread Pending t_pending;
__thread LastUnex t_last_unex;

// A queue or send event of user traffic into the event buffer (trace.h).
Event* buffer(uint8_t kind, uint64_t now, uint64_t uid, const CommRec& c, const peruse_comm_spec_t* s) {
  Event* e = record(kind, now);
  if (!e) return nullptr;
  e->uid = uid;
  e->comm = c.serial;
  e->peer = s->peer;
  e->tag = s->tag;
  e->count = s->count;
  e->datatype = static_cast<int32_t>(s->datatype);
  return e;
}

ReqSlot* request_slot(uint64_t uid, int32_t comm, const peruse_comm_spec_t* s, int internal, bool* fresh) {
  ReqSlot* r = g.requests.insert(uid, fresh);
  if (!r) {
    ++g.table_full;
    return nullptr;
  }
  if (*fresh) {
    r->comm = comm;
    r->peer = s->peer;
    r->flags = static_cast<uint8_t>((s->operation == PERUSE_SEND ? kIsSend : 0) | (internal ? kIsInternal : 0));
    ++g.comms[comm].live;
  }
  return r;
}

void drop_request(ReqSlot* r) {
  CommRec& c = g.comms[r->comm];
  if (r->flags & kInPosted) queue_out(c, (r->flags & kIsInternal) ? 1 : 0, kPostedQ);
  --c.live;
  g.requests.erase(r);
}

}  // namespace

void flush_pending() {
  if (!t_pending.valid) return;
  t_pending.valid = false;
  // Left the posted queue without a match: MPI_Cancel.
  if (t_pending.comm >= 0 && t_pending.comm < kMaxComms && g.comms[t_pending.comm].used)
    ++g.comms[t_pending.comm].cancelled;
}

void forget_pending(int32_t ci) {
  if (t_pending.valid && t_pending.comm == ci) t_pending.valid = false;
}

namespace {

void on_event(int event, uint64_t uid, const peruse_comm_spec_t* s, uint64_t now) {
  int32_t ci = comm_index(s->comm, true);
  if (ci < 0) {
    ++g.lost_comms;
    return;
  }
  CommRec& c = g.comms[ci];
  int internal = s->tag <= kInternalTagMax ? 1 : 0;
  if (internal && !g.keep_internal) {
    ++c.filtered;
    return;
  }
  if (t_pending.valid && event != PERUSE_COMM_MSG_MATCH_POSTED_REQ) flush_pending();
  LastUnex last_unex = t_last_unex;
  t_last_unex.valid = false;
  bool fresh = false;

  switch (event) {
    case PERUSE_COMM_REQ_ACTIVATE: {
      ReqSlot* r = g.requests.find(uid);
      if (r) drop_request(r);  // a stale entry (a missed NOTIFY): start over
      r = request_slot(uid, ci, s, internal, &fresh);
      if (!r) return;
      r->flags |= kHasActivate;
      r->t_activate = now;
      if (!internal && s->operation == PERUSE_SEND && s->peer >= 0) buffer(kEvSend, now, uid, c, s);
      break;
    }
    case PERUSE_COMM_REQ_MATCH_UNEX: {
      ReqSlot* r = g.requests.find(uid);
      if (r && r->peer == MPI_ANY_SOURCE && last_unex.valid && last_unex.comm == ci) r->peer = last_unex.peer;
      break;
    }
    case PERUSE_COMM_REQ_INSERT_IN_POSTED_Q: {
      ReqSlot* r = request_slot(uid, ci, s, internal, &fresh);
      if (!r) return;
      if (!(r->flags & kInPosted)) queue_in(c, internal, kPostedQ);
      r->flags |= kInPosted;
      r->t_posted = now;
      if (!internal) buffer(kEvPostIn, now, uid, c, s);
      break;
    }
    case PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q: {
      ReqSlot* r = g.requests.find(uid);
      if (!r || !(r->flags & kInPosted)) {
        ++c.unmatched;
        break;
      }
      r->flags &= static_cast<uint8_t>(~kInPosted);
      queue_out(c, internal, kPostedQ);
      Event* e = internal ? nullptr : buffer(kEvPostOut, now, uid, c, s);
      t_pending = Pending{true, ci, uid, now - r->t_posted, internal, e ? static_cast<int64_t>(e - g_buf.ev) : -1};
      break;
    }
    case PERUSE_COMM_MSG_MATCH_POSTED_REQ: {
      if (!t_pending.valid || t_pending.comm != ci) break;
      t_pending.valid = false;
      sample(ci, s->peer, t_pending.internal, kPosted, 0, t_pending.duration);
      if (t_pending.event >= 0) {  // the sender and the envelope, now known
        Event& e = g_buf.ev[t_pending.event];
        e.peer = s->peer;
        e.tag = s->tag;
        e.count = s->count;
        e.datatype = static_cast<int32_t>(MPI_BYTE);
        e.flags |= kMatched;
      }
      ReqSlot* r = g.requests.find(t_pending.request);
      if (r && r->peer == MPI_ANY_SOURCE) r->peer = s->peer;
      break;
    }
    case PERUSE_COMM_REQ_XFER_BEGIN: {
      ReqSlot* r = g.requests.find(uid);
      if (!r || !(r->flags & kHasActivate)) break;
      r->flags &= static_cast<uint8_t>(~kHasActivate);
      sample(ci, r->peer, internal, (r->flags & kIsSend) ? kSendActivateXfer : kRecvActivateXfer, r->t_activate, now);
      break;
    }
    case PERUSE_COMM_REQ_COMPLETE: {
      ReqSlot* r = request_slot(uid, ci, s, internal, &fresh);
      if (!r) return;
      r->flags |= kHasComplete;
      r->t_complete = now;
      break;
    }
    case PERUSE_COMM_REQ_NOTIFY: {
      ReqSlot* r = g.requests.find(uid);
      if (!r) {
        ++c.unmatched;
        break;
      }
      if (r->flags & kHasComplete)
        sample(ci, r->peer, internal, (r->flags & kIsSend) ? kSendCompleteNotify : kRecvCompleteNotify, r->t_complete,
               now);
      drop_request(r);
      break;
    }
    case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q: {
      MsgSlot* m = g.messages.insert(uid, &fresh);
      if (!m) {
        ++g.table_full;
        return;
      }
      if (fresh) {
        ++c.live;
        queue_in(c, internal, kUnexQ);
      }
      m->comm = ci;
      m->peer = s->peer;
      m->internal = static_cast<uint8_t>(internal);
      m->t_insert = now;
      if (!internal) buffer(kEvUnexIn, now, uid, c, s);
      break;
    }
    case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q: {
      t_last_unex = LastUnex{true, ci, s->peer};
      MsgSlot* m = g.messages.find(uid);
      if (!m) {
        ++c.unmatched;
        break;
      }
      sample(ci, m->peer, m->internal, kUnexpected, m->t_insert, now);
      if (!m->internal) buffer(kEvUnexOut, now, uid, c, s);
      queue_out(c, m->internal, kUnexQ);
      --c.live;
      g.messages.erase(m);
      break;
    }
    default: break;
  }
}

// Events that only link others (the sender of a match) need no clock.
bool timed(int event) { return event != PERUSE_COMM_REQ_MATCH_UNEX && event != PERUSE_COMM_MSG_MATCH_POSTED_REQ; }

int callback(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param) {
  int event = static_cast<int>(reinterpret_cast<intptr_t>(param));
  bool filtered = spec->tag <= kInternalTagMax && !g.keep_internal;
  uint64_t now = filtered || !timed(event) ? 0 : now_ns();  // first: the lock may make us wait
  if (g_locking && PERUSE_Lock() != PERUSE_SUCCESS) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return MPI_SUCCESS;
  }
  if (g_collecting.load(std::memory_order_relaxed)) on_event(event, static_cast<uint64_t>(unique_id), spec, now);
  if (g_locking) PERUSE_Unlock();
  return MPI_SUCCESS;
}

}  // namespace

bool watch(MPI_Comm comm, peruse_event_h handles[kNumWatched]) {
  for (int i = 0; i < kNumWatched; ++i) {
    handles[i] = PERUSE_EVENT_HANDLE_NULL;
    int e = kWatched[i];
    if (PERUSE_Event_comm_register(e, comm, callback, reinterpret_cast<void*>(static_cast<intptr_t>(e)), &handles[i]) !=
            PERUSE_SUCCESS ||
        PERUSE_Event_propagate(handles[i], 1) != PERUSE_SUCCESS ||
        PERUSE_Event_activate(handles[i]) != PERUSE_SUCCESS) {
      for (int k = 0; k <= i; ++k)
        if (handles[k] != PERUSE_EVENT_HANDLE_NULL) PERUSE_Event_release(&handles[k]);
      return false;
    }
  }
  return true;
}

void unwatch(peruse_event_h handles[kNumWatched]) {
  for (int i = 0; i < kNumWatched; ++i)
    if (handles[i] != PERUSE_EVENT_HANDLE_NULL) PERUSE_Event_release(&handles[i]);  // frees even after comm free
}

}  // namespace sonde::residence
