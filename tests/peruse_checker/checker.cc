// The PERUSE event-sequence checker's verifier. checker.h has the readable
// tables; rules.h has table 1 as kTransitions and table 2's expectations;
// this file applies them: Verifier::fits and Verifier::start (table 2) and
// the queue model (table 3). The recorder is in recorder.cc.
#include "tests/peruse_checker/checker.h"

#include "tests/peruse_checker/rules.h"

#include <cinttypes>
#include <cstdarg>
#include <deque>
#include <map>
#include <unordered_map>

namespace sonde::peruse_checker {

namespace {

using namespace rules;

// ---------------------------------------------------------------- the verifier

struct Obj {
  State state = kDead;
  size_t begin = 0;
  size_t ended = SIZE_MAX;
  bool began = false;           // spec holds a beginning event
  Event spec{};                 // the beginning event
  std::vector<size_t> history;  // this life's events
};

struct Queues {
  std::vector<uint64_t> posted, unexpected;  // oldest first
  std::deque<uint64_t> claimed;              // taken by matched probes, not yet received
};

class Verifier {
 public:
  Verifier(const Event* ev, size_t n) : ev_(ev), n_(n) {}

  std::vector<Violation> run(size_t lost) {
    if (lost)
      add(Kind::kLostEvents, SIZE_MAX, 0,
          format("%zu events did not fit the recording buffer: the stream is incomplete", lost));
    for (size_t i = 0; i < n_; ++i) step(i);
    finish();
    return std::move(out_);
  }

 private:
  // ---- reporting
  std::string history(uint64_t id) {
    auto it = objs_.find(id);
    if (it == objs_.end() || it->second.history.empty()) return "";
    const auto& h = it->second.history;
    std::string s = "\n      history of this id:";
    size_t from = h.size() > 12 ? h.size() - 12 : 0;
    if (from) s += format(" (%zu earlier)", from);
    for (size_t k = from; k < h.size(); ++k) s += format("\n        #%zu %s", h[k], describe(ev_[h[k]]).c_str());
    return s;
  }

  void add(Kind kind, size_t i, uint64_t id, const std::string& what) {
    std::string text;
    if (i != SIZE_MAX) text = format("#%zu t=%.6f %s: ", i, ev_[i].time, describe(ev_[i]).c_str());
    else text = "at the end of the stream: ";
    text += what;
    if (id) text += history(id);
    out_.push_back(Violation{kind, i, id, std::move(text)});
  }

  Obj& obj(uint64_t id) { return objs_[id]; }
  const Event& spec_of(uint64_t id) { return objs_[id].spec; }
  // Seen before: an id whose beginning is missing has no spec to compare
  // with (its own kBadTransition says so; no cascade of envelope reports).
  bool known(uint64_t id) {
    auto it = objs_.find(id);
    return it != objs_.end() && it->second.began;
  }

  // ---- one event
  void step(size_t i) {
    const Event& e = ev_[i];
    if (e.event <= 0 || e.event >= kNumKnown) {
      add(Kind::kBadEvent, i, 0, format("unknown event number %d", e.event));
      expect_ = {};
      return;
    }
    uint8_t k = id_kind(e.id);
    if (e.id == 0 || !(k & kinds_for(e.event)) || (k == kTr && e.operation != PERUSE_SEND && !one_sided(e.operation)) ||
        (k != kTr && one_sided(e.operation))) {
      add(Kind::kBadId, i, 0,
          e.id == 0 ? std::string("unique_id 0")
                    : format("a %s event with a %s id (low bits %u)%s",
                             is_request_event(e.event)   ? "request"
                             : is_message_event(e.event) ? "message"
                                                         : "search",
                             id_kind_name(e.id), unsigned(e.id & 7),
                             k == kTr                 ? " (transient ids belong to sends and one-sided operations only)"
                             : one_sided(e.operation) ? " (one-sided operations carry transient ids)"
                                                      : ""));
      expect_ = {};
      return;
    }
    Expect x = expect_;
    expect_ = {};
    bool linked = false;
    if (x.what != Want::kNone) {
      linked = fits(i, x);
      if (!linked && x.what != Want::kProbeTail)
        add(Kind::kBrokenSequence, i, e.id,
            format("sequence broken: after #%zu %s the next event must be %s", x.after, describe(ev_[x.after]).c_str(),
                   want_text(x).c_str()));
    }
    if (!linked) {
      if (const char* rule = must_follow(e.event, k, e.operation)) {
        if (x.what == Want::kNone || x.what == Want::kProbeTail) add(Kind::kBrokenSequence, i, e.id, rule);
        unlinked(i);
      } else {
        start(i);
      }
    }
    transition(i, e.event, e.id);
  }

  // The sequences an event opens (it was not expected).
  void start(size_t i) {
    const Event& e = ev_[i];
    switch (e.event) {
      case PERUSE_COMM_REQ_ACTIVATE:
        if (id_kind(e.id) == kTr && one_sided(e.operation)) {
          expect_ = {Want::kOneSided, e.id, 0, 0, PERUSE_COMM_REQ_XFER_BEGIN, Owner::kProbe, i};
        } else if (id_kind(e.id) == kTr) {
          expect_ = {Want::kTransient, e.id, 0, 0, PERUSE_COMM_REQ_XFER_BEGIN, Owner::kProbe, i};
        } else if (e.operation == PERUSE_RECV) {
          expect_ = {e.peer == MPI_PROC_NULL ? Want::kRecvProcNull : Want::kRecvStart, e.id, 0, 0, 0, Owner::kRecv, i};
        }
        break;
      case PERUSE_COMM_REQ_XFER_END:  // a one-sided operation's data or answer is in (S10)
        if (id_kind(e.id) == kTr && one_sided(e.operation))
          expect_ = {Want::kOneSided, e.id, 0, 0, PERUSE_COMM_REQ_COMPLETE, Owner::kProbe, i};
        break;
      case PERUSE_COMM_MSG_ARRIVED: expect_ = {Want::kArrival, 0, e.id, 0, 0, Owner::kArrival, i}; break;
      case PERUSE_COMM_SEARCH_UNEX_Q_BEGIN:  // a probe's search (S6)
        expect_ = {Want::kSearchEnd, 0, 0, e.id, PERUSE_COMM_SEARCH_UNEX_Q_END, Owner::kProbe, i};
        break;
      case PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q:  // not inside an arrival: a cancel (S7)
        expect_ = {Want::kCancel, e.id, 0, 0, 0, Owner::kRecv, i};
        break;
      default: break;
    }
  }

  // Does event i continue the sequence x? If so, apply its links.
  bool fits(size_t i, const Expect& x) {
    const Event& e = ev_[i];
    switch (x.what) {
      case Want::kNone: return false;
      case Want::kRecvStart:
        if (e.event == PERUSE_COMM_SEARCH_UNEX_Q_BEGIN) {
          const Event& r = spec_of(x.r);
          if (e.comm != r.comm || e.peer != r.peer || e.tag != r.tag)
            add(Kind::kEnvelope, i, e.id,
                format("the search of receive 0x%" PRIx64 " looks for %s on comm %d, the receive asks %s on comm %d",
                       x.r, pattern(e.peer, e.tag).c_str(), e.comm, pattern(r.peer, r.tag).c_str(), r.comm));
          expect_ = {Want::kSearchEnd, x.r, 0, e.id, PERUSE_COMM_SEARCH_UNEX_Q_END, Owner::kRecv, i};
          return true;
        }
        if (e.event == PERUSE_COMM_REQ_MATCH_UNEX && e.id == x.r) {
          take_claimed(i, x.r);
          return true;
        }
        return false;
      case Want::kRecvProcNull: return e.event == PERUSE_COMM_REQ_COMPLETE && e.id == x.r;
      case Want::kSearchEnd:
        if (e.event != x.next_event || e.id != x.s) return false;
        if (x.owner == Owner::kRecv) expect_ = {Want::kRecvOutcome, x.r, 0, x.s, 0, Owner::kRecv, i};
        else if (x.owner == Owner::kArrival) expect_ = {Want::kArrivalOutcome, 0, x.m, x.s, 0, Owner::kArrival, i};
        else expect_ = {Want::kProbeTail, 0, 0, x.s, 0, Owner::kProbe, i};
        return true;
      case Want::kRecvOutcome:
        if (e.event == PERUSE_COMM_REQ_INSERT_IN_POSTED_Q && e.id == x.r) {
          insert_posted(i);
          return true;
        }
        if (e.event == PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q) {
          const Event& r = spec_of(x.r);
          take_unexpected(i, r.comm, r.peer, r.tag, format("receive 0x%" PRIx64, x.r));
          expect_ = {Want::kMatchUnex, x.r, e.id, 0, 0, Owner::kRecv, i};
          return true;
        }
        return false;
      case Want::kMatchUnex:
        if (e.event == PERUSE_COMM_REQ_MATCH_UNEX && e.id == x.r) {
          pair(i, x.r, x.m);
          return true;
        }
        return false;
      case Want::kArrival:
        if (e.event == PERUSE_COMM_SEARCH_POSTED_Q_BEGIN) {
          const Event& m = spec_of(x.m);
          if (e.comm != m.comm || e.peer != m.peer || e.tag != m.tag)
            add(Kind::kEnvelope, i, e.id,
                format("the posted-queue search for message 0x%" PRIx64 " looks for source %d tag %d on comm %d, the "
                       "message is from %d with tag %d on comm %d",
                       x.m, e.peer, e.tag, e.comm, m.peer, m.tag, m.comm));
          expect_ = {Want::kSearchEnd, 0, x.m, e.id, PERUSE_COMM_SEARCH_POSTED_Q_END, Owner::kArrival, i};
          return true;
        }
        if (e.event == PERUSE_COMM_MSG_INSERT_IN_UNEX_Q && e.id == x.m) {  // S5
          insert_unexpected(i);
          return true;
        }
        return false;
      case Want::kArrivalOutcome:
        if (e.event == PERUSE_COMM_MSG_INSERT_IN_UNEX_Q && e.id == x.m) {
          insert_unexpected(i);
          return true;
        }
        if (e.event == PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q) {
          expect_ = {Want::kMatchPosted, e.id, x.m, 0, 0, Owner::kArrival, i};
          return true;
        }
        return false;
      case Want::kMatchPosted:
        if (e.event == PERUSE_COMM_MSG_MATCH_POSTED_REQ && e.id == x.m) {
          match_posted(i, x.r, x.m);
          return true;
        }
        drop_posted(x.r);
        return false;
      case Want::kCancel: drop_posted(x.r); return e.event == PERUSE_COMM_REQ_COMPLETE && e.id == x.r;
      case Want::kTransient:
        if (e.id != x.r || e.event != x.next_event) return false;
        if (e.event == PERUSE_COMM_REQ_XFER_BEGIN)
          expect_ = {Want::kTransient, x.r, 0, 0, PERUSE_COMM_REQ_XFER_END, Owner::kProbe, i};
        else if (e.event == PERUSE_COMM_REQ_XFER_END)
          expect_ = {Want::kTransient, x.r, 0, 0, PERUSE_COMM_REQ_COMPLETE, Owner::kProbe, i};
        else if (e.event == PERUSE_COMM_REQ_COMPLETE)
          expect_ = {Want::kTransient, x.r, 0, 0, PERUSE_COMM_REQ_NOTIFY, Owner::kProbe, i};
        return true;
      case Want::kOneSided: return e.id == x.r && e.event == x.next_event;
      case Want::kProbeTail:
        if (e.event == PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q) {  // a matched probe claims the message
          const Event& s = spec_of(x.s);
          take_unexpected(i, s.comm, s.peer, s.tag, format("matched probe (search 0x%" PRIx64 ")", x.s));
          queues_[e.comm].claimed.push_back(e.id);
          return true;
        }
        return false;
    }
    return false;
  }

  // A must-follow event out of place: keep the queue model close to the truth.
  void unlinked(size_t i) {
    const Event& e = ev_[i];
    if (e.event == PERUSE_COMM_REQ_INSERT_IN_POSTED_Q) insert_posted(i);
    else if (e.event == PERUSE_COMM_MSG_INSERT_IN_UNEX_Q) insert_unexpected(i);
    else if (e.event == PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q) erase(queues_[e.comm].unexpected, e.id);
  }

  // ---- table 1
  bool holds(Cond c, const Event& spec, size_t i, uint64_t id) {
    switch (c) {
      case kAlways: return true;
      case kRecv: return spec.operation == PERUSE_RECV;
      case kSend: return spec.operation == PERUSE_SEND;
      case kRecvProcNull: return spec.operation == PERUSE_RECV && spec.peer == MPI_PROC_NULL;
      case kSendAtOnce:
        return spec.operation == PERUSE_SEND && i > 0 && ev_[i - 1].id == id &&
               ev_[i - 1].event == PERUSE_COMM_REQ_ACTIVATE;
      case kOneSided: return one_sided(spec.operation);
    }
    return false;
  }

  std::string allowed_from(uint8_t k, State s) {
    std::string out;
    for (const Transition& t : kTransitions) {
      if (!(t.ids & k) || t.from != s) continue;
      if (!out.empty()) out += ", ";
      out += t.event == kMatchedByArrival ? "<MSG_MATCH_POSTED_REQ>" : kNames[t.event];
      if (t.cond != kAlways) out += std::string(" [") + kCondText[t.cond] + "]";
    }
    return out.empty() ? "nothing" : out;
  }

  std::string states_for(uint8_t k, int event) {
    std::string out;
    for (const Transition& t : kTransitions) {
      if (!(t.ids & k) || t.event != event) continue;
      if (!out.empty()) out += ", ";
      out += kStateNames[t.from];
      if (t.cond != kAlways) out += std::string(" [") + kCondText[t.cond] + "]";
    }
    return out.empty() ? "none" : out;
  }

  void check_spec(size_t i, const Obj& o) {
    const Event& e = ev_[i];
    const Event& s = o.spec;
    std::string diff;
    auto field = [&](const char* name, long a, long b) {
      if (a != b) diff += format(" %s %ld (was %ld)", name, a, b);
    };
    field("comm", e.comm, s.comm);
    field("peer", e.peer, s.peer);
    field("tag", e.tag, s.tag);
    uint8_t k = id_kind(e.id);
    if (k == kReq || k == kTr) {
      field("count", e.count, s.count);
      field("datatype", e.datatype, s.datatype);
      field("operation", e.operation, s.operation);
      if (e.buf != s.buf) diff += format(" buf %p (was %p)", e.buf, s.buf);
    } else if (k == kMsg) {
      field("count", e.count, s.count);
    }
    if (!diff.empty())
      add(Kind::kSpecChanged, i, e.id,
          "the spec differs from the id's first event (#" + std::to_string(o.begin) + "):" + diff);
  }

  // The spec of a beginning event (or any message event) on its own.
  void check_own_spec(size_t i) {
    const Event& e = ev_[i];
    if (is_request_event(e.event) && e.operation != PERUSE_SEND && e.operation != PERUSE_RECV &&
        !one_sided(e.operation))
      add(Kind::kSpecChanged, i, e.id, format("operation %d is none of PERUSE_SEND, RECV, PUT, GET, ACC", e.operation));
    if (is_message_event(e.event) && (e.buf != nullptr || e.datatype != MPI_BYTE || e.operation != PERUSE_RECV))
      add(Kind::kSpecChanged, i, e.id, "a message event's spec has buf NULL, datatype MPI_BYTE, operation PERUSE_RECV");
  }

  // Advances id by event (kMatchedByArrival: the pseudo-event of S4).
  void transition(size_t i, int event, uint64_t id) {
    const Event& e = ev_[i];
    uint8_t k = id_kind(id);
    Obj& o = obj(id);
    if (event != kMatchedByArrival && (event == e.event) &&
        (is_message_event(event) || event == PERUSE_COMM_REQ_ACTIVATE))
      check_own_spec(i);
    if (event != kMatchedByArrival && is_beginning(event) && o.state != kDead) {
      add(Kind::kIdReused, i, id,
          format("%s begins while the id is live: its object began at #%zu and is in state %s", kNames[event], o.begin,
                 kStateNames[o.state]));
      o.state = kDead;
    }
    const Event& spec = is_beginning(event) && event != kMatchedByArrival ? e : o.spec;
    const Transition* row = nullptr;
    for (const Transition& t : kTransitions)
      if ((t.ids & k) && t.from == o.state && t.event == event && holds(t.cond, spec, i, id)) {
        row = &t;
        break;
      }
    if (row && row->from == kDead) {  // a new life
      o.begin = i;
      o.began = true;
      o.spec = e;
      o.history.clear();
      o.ended = SIZE_MAX;
    } else if (o.state != kDead && event != kMatchedByArrival) {
      check_spec(i, o);
    }
    o.history.push_back(i);
    if (row) {
      o.state = row->to;
      if (o.state == kDead) o.ended = i;
      return;
    }
    // Not in the table.
    const char* ename =
        event == kMatchedByArrival ? "MSG_MATCH_POSTED_REQ (of the message it was removed for)" : kNames[event];
    std::string where;
    if (o.state == kDead)
      where = o.ended != SIZE_MAX    ? format("the %s is not live (it ended at #%zu)", id_kind_name(id), o.ended)
              : o.history.size() > 1 ? format("the %s is not live", id_kind_name(id))
                                     : format("the %s never began", id_kind_name(id));
    else where = format("the %s is in state %s", id_kind_name(id), kStateNames[o.state]);
    add(Kind::kBadTransition, i, id,
        format("%s here: %s; allowed from there: %s; %s is allowed only from: %s", ename, where.c_str(),
               allowed_from(k, o.state).c_str(), ename, states_for(k, event).c_str()));
    // Recover: follow the event's only row, if it has one, to avoid cascades.
    const Transition* only = nullptr;
    int rows = 0;
    for (const Transition& t : kTransitions)
      if ((t.ids & k) && t.event == event) {
        only = &t;
        ++rows;
      }
    if (rows == 1 && only->from != kDead) {
      o.state = only->to;
      if (o.state == kDead) o.ended = i;
    } else if (rows >= 1 && event == PERUSE_COMM_REQ_COMPLETE) {
      o.state = kComplete;
    }
  }

  // ---- table 3: the queue model
  static void erase(std::vector<uint64_t>& v, uint64_t id) {
    for (size_t k = 0; k < v.size(); ++k)
      if (v[k] == id) {
        v.erase(v.begin() + long(k));
        return;
      }
  }

  void insert_posted(size_t i) {
    const Event& r = ev_[i];
    Queues& q = queues_[r.comm];
    for (uint64_t m : q.unexpected) {
      const Event& ms = spec_of(m);
      if (accepts(r.peer, r.tag, ms.peer, ms.tag))
        add(Kind::kMissedMatch, i, r.id,
            format("receive %s enters the posted queue although unexpected message 0x%" PRIx64
                   " (source %d, tag %d, arrived #%zu) matches it",
                   pattern(r.peer, r.tag).c_str(), m, ms.peer, ms.tag, objs_[m].begin));
    }
    q.posted.push_back(r.id);
  }

  void insert_unexpected(size_t i) {
    const Event& m = ev_[i];
    Queues& q = queues_[m.comm];
    for (uint64_t r : q.posted) {
      const Event& rs = spec_of(r);
      if (accepts(rs.peer, rs.tag, m.peer, m.tag))
        add(Kind::kMissedMatch, i, m.id,
            format("message (source %d, tag %d) enters the unexpected queue although posted receive 0x%" PRIx64
                   " %s (posted at #%zu) accepts it",
                   m.peer, m.tag, r, pattern(rs.peer, rs.tag).c_str(), objs_[r].begin));
    }
    q.unexpected.push_back(m.id);
  }

  // Message ev_[i].id leaves the unexpected queue for a taker looking for (peer, tag) on comm.
  void take_unexpected(size_t i, MPI_Comm comm, int peer, int tag, const std::string& taker) {
    const Event& e = ev_[i];
    if (!known(e.id)) return;
    const Event& m = spec_of(e.id);
    if (comm != e.comm || !accepts(peer, tag, m.peer, m.tag))
      add(Kind::kEnvelope, i, e.id,
          format("%s looks for %s on comm %d but takes a message from %d with tag %d on comm %d", taker.c_str(),
                 pattern(peer, tag).c_str(), comm, m.peer, m.tag, e.comm));
    Queues& q = queues_[e.comm];
    for (uint64_t older : q.unexpected) {
      if (older == e.id) break;
      const Event& o = spec_of(older);
      if (o.peer == m.peer && accepts(peer, tag, o.peer, o.tag))
        add(Kind::kOvertaking, i, e.id,
            format("%s %s takes message (tag %d, arrived #%zu) while an older message 0x%" PRIx64
                   " from the same sender %d (tag %d, arrived #%zu), also accepted, waits in the unexpected queue",
                   taker.c_str(), pattern(peer, tag).c_str(), m.tag, objs_[e.id].begin, older, o.peer, o.tag,
                   objs_[older].begin));
    }
    erase(q.unexpected, e.id);
  }

  void pair(size_t i, uint64_t r, uint64_t m) {
    if (!known(r) || !known(m)) return;
    const Event& rs = spec_of(r);
    const Event& ms = spec_of(m);
    if (rs.comm != ms.comm || !accepts(rs.peer, rs.tag, ms.peer, ms.tag))
      add(Kind::kEnvelope, i, r,
          format("receive 0x%" PRIx64 " %s on comm %d is paired with message 0x%" PRIx64
                 " (source %d, tag %d) on comm %d, which it does not accept",
                 r, pattern(rs.peer, rs.tag).c_str(), rs.comm, m, ms.peer, ms.tag, ms.comm));
    ++pairs_;
  }

  void match_posted(size_t i, uint64_t r, uint64_t m) {
    const Event& ms = spec_of(m);
    Queues& q = queues_[spec_of(r).comm];
    bool found = false;
    for (uint64_t older : q.posted) {
      if (older == r) {
        found = true;
        break;
      }
      const Event& os = spec_of(older);
      if (accepts(os.peer, os.tag, ms.peer, ms.tag))
        add(Kind::kPostedOrder, i, m,
            format("message (source %d, tag %d) goes to receive 0x%" PRIx64
                   " although the older posted receive 0x%" PRIx64 " %s (posted at #%zu) accepts it",
                   ms.peer, ms.tag, r, older, pattern(os.peer, os.tag).c_str(), objs_[older].begin));
    }
    if (!found)
      add(Kind::kBadTransition, i, r,
          format("receive 0x%" PRIx64 " is not in the posted queue of comm %d", r, spec_of(r).comm));
    drop_posted(r);
    pair(i, r, m);
    transition(i, kMatchedByArrival, r);
  }

  void drop_posted(uint64_t r) { erase(queues_[spec_of(r).comm].posted, r); }

  // S2: R (MPI_Mrecv / MPI_Imrecv) takes the oldest claimed message from its peer.
  void take_claimed(size_t i, uint64_t r) {
    const Event& rs = spec_of(r);
    auto& claimed = queues_[rs.comm].claimed;
    for (auto it = claimed.begin(); it != claimed.end(); ++it) {
      if (spec_of(*it).peer != rs.peer) continue;
      uint64_t m = *it;
      claimed.erase(it);
      pair(i, r, m);
      return;
    }
    add(Kind::kNoClaimedMessage, i, r,
        format("a matched receive from %d on comm %d, but no matched probe claimed a message from that peer there (%zu "
               "claimed on that comm)",
               rs.peer, rs.comm, claimed.size()));
  }

  void finish() {
    if (expect_.what != Want::kNone && expect_.what != Want::kProbeTail)
      add(Kind::kBrokenSequence, SIZE_MAX, 0,
          format("the stream ends inside a sequence: after #%zu %s the next event must be %s", expect_.after,
                 describe(ev_[expect_.after]).c_str(), want_text(expect_).c_str()));
    // Report in order of first appearance, for a stable output.
    std::map<size_t, uint64_t> live;
    for (auto& [id, o] : objs_)
      if (o.state != kDead) live[o.begin] = id;
    for (auto& [begin, id] : live) {
      const Obj& o = objs_[id];
      add(Kind::kNotEnded, SIZE_MAX, id,
          format("%s 0x%" PRIx64 " began at #%zu (%s) and is still in state %s: expected %s", id_kind_name(id), id,
                 begin, describe(ev_[begin]).c_str(), kStateNames[o.state],
                 allowed_from(id_kind(id), o.state).c_str()));
    }
    for (auto& [comm, q] : queues_)
      for (uint64_t m : q.claimed)
        add(Kind::kNotEnded, SIZE_MAX, m,
            format("message 0x%" PRIx64 " on comm %d was claimed by a matched probe (#%zu) but never received (S2)", m,
                   comm, objs_[m].ended));
  }

  const Event* ev_;
  size_t n_;
  std::unordered_map<uint64_t, Obj> objs_;
  std::map<MPI_Comm, Queues> queues_;
  Expect expect_;
  size_t pairs_ = 0;
  std::vector<Violation> out_;
};

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kBadEvent: return "bad-event";
    case Kind::kBadId: return "bad-id";
    case Kind::kBadTransition: return "bad-transition";
    case Kind::kIdReused: return "id-reused-while-live";
    case Kind::kSpecChanged: return "spec-changed";
    case Kind::kBrokenSequence: return "broken-sequence";
    case Kind::kEnvelope: return "envelope";
    case Kind::kOvertaking: return "overtaking";
    case Kind::kPostedOrder: return "posted-order";
    case Kind::kMissedMatch: return "missed-match";
    case Kind::kNoClaimedMessage: return "no-claimed-message";
    case Kind::kNotEnded: return "not-ended";
    case Kind::kLostEvents: return "lost-events";
  }
  return "?";
}

const char* event_name(int event) { return event > 0 && event < kNumKnown ? kNames[event] : "UNKNOWN_EVENT"; }

std::string describe(const Event& e) {
  const char* op = e.operation == PERUSE_SEND   ? "send"
                   : e.operation == PERUSE_RECV ? "recv"
                   : e.operation == PERUSE_PUT  ? "put"
                   : e.operation == PERUSE_GET  ? "get"
                   : e.operation == PERUSE_ACC  ? "acc"
                                                : "?";
  if (e.event > 0 && e.event < kNumKnown && is_message_event(e.event))
    return format("%s(0x%" PRIx64 " %s) comm=%d source=%d tag=%d bytes=%d", event_name(e.event), e.id,
                  id_kind_name(e.id), e.comm, e.peer, e.tag, e.count);
  if (e.event > 0 && e.event < kNumKnown && !is_request_event(e.event))
    return format("%s(0x%" PRIx64 " %s) comm=%d source=%d tag=%d", event_name(e.event), e.id, id_kind_name(e.id),
                  e.comm, e.peer, e.tag);
  return format("%s(0x%" PRIx64 " %s) comm=%d peer=%d tag=%d count=%d datatype=%d buf=%p op=%s", event_name(e.event),
                e.id, id_kind_name(e.id), e.comm, e.peer, e.tag, e.count, e.datatype, e.buf, op);
}

std::vector<Violation> verify(const Event* events, size_t n, size_t lost) { return Verifier(events, n).run(lost); }

void print(FILE* out, const char* prefix, const std::vector<Violation>& violations, size_t max_detailed) {
  size_t k = 0;
  for (const Violation& v : violations) {
    ++k;
    // Past max_detailed, only the first line (the history is left out).
    size_t end = k <= max_detailed ? std::string::npos : v.what.find('\n');
    std::fprintf(out, "%sVIOLATION %zu/%zu [%s] %s\n", prefix, k, violations.size(), kind_name(v.kind),
                 v.what.substr(0, end).c_str());
  }
  std::fflush(out);
}

}  // namespace sonde::peruse_checker
