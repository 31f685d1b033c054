// PERUSE event-sequence checker: records every PERUSE event a rank fires and
// verifies the stream against the state machine below (the contract of
// ARCHITECTURE.md "Instrumentation: where each event fires").
//
// The tables here are the readable form of kTransitions (rules.h) and the
// sequence rules in checker.cc; docs/peruse.md copies them. Change all
// together.
//
// unique_id kinds (low 3 bits; an id is never 0):
//   0 request (descriptor address)     1 search
//   2 transient request (a request-less blocking send)     3 message
// A request event carries a request or transient id, a message event a
// message id, a search event a search id; anything else is kBadId.
//
// ---------------------------------------------------------------------------
// 1. The life of one id (kTransitions).  "-" = not live (never seen or ended).
//
//   ids     state         event                     next          only if
//   req,tr  -             REQ_ACTIVATE              active        (each MPI_Start again; tr: a send)
//   req     active        REQ_INSERT_IN_POSTED_Q    posted        receive (S1)
//   req     active        REQ_MATCH_UNEX            matched       receive (S1, S2)
//   req     active        REQ_COMPLETE              complete      receive from MPI_PROC_NULL (S3)
//   req     active        REQ_COMPLETE              complete      send, right after its ACTIVATE (S9)
//   req     posted        REQ_REMOVE_FROM_POSTED_Q  removed       receive (S4 or S7)
//   req     removed       <MSG_MATCH_POSTED_REQ>    matched       receive: the message event that follows (S4)
//   req     removed       REQ_COMPLETE              complete      receive: cancelled (S7)
//   req     matched       REQ_XFER_BEGIN            xfer          receive
//   req,tr  active        REQ_XFER_BEGIN            xfer          send
//   req     xfer          REQ_XFER_CONTINUE         xfer          (one per fragment)
//   req,tr  xfer          REQ_XFER_END              xfer-done
//   req,tr  xfer-done     REQ_COMPLETE              complete
//   tr      active        REQ_XFER_BEGIN            xfer          one-sided (S10)
//   tr      xfer-done     REQ_COMPLETE              -             one-sided: no NOTIFY (S10)
//   req,tr  complete      REQ_NOTIFY                -
//   search  -             SEARCH_POSTED_Q_BEGIN     posted-search
//   search  posted-search SEARCH_POSTED_Q_END       -
//   search  -             SEARCH_UNEX_Q_BEGIN       unex-search
//   search  unex-search   SEARCH_UNEX_Q_END         -
//   msg     -             MSG_ARRIVED               arrived
//   msg     arrived       MSG_INSERT_IN_UNEX_Q      unexpected
//   msg     arrived       MSG_MATCH_POSTED_REQ      -             (matched on arrival, S4)
//   msg     unexpected    MSG_REMOVE_FROM_UNEX_Q    -             (taken by a receive S1 or a matched probe S6)
//
// Anything else is kBadTransition (an ACTIVATE on a live id: kIdReused). At
// the end of the run every id must be "-" (kNotEnded). Every event of an id
// carries the spec of its first event (kSpecChanged): requests comm, buf,
// count, datatype, peer, tag, operation; messages comm, source, tag, bytes
// (buf NULL, MPI_BYTE, PERUSE_RECV); searches comm, source, tag.
//
// ---------------------------------------------------------------------------
// 2. Sequences the engine fires with nothing in between (one critical
//    section each; kBrokenSequence otherwise). Their links tie requests,
//    messages and searches together.
//
//   S1 post a receive R   ACTIVATE(R) SEARCH_UNEX_Q_BEGIN(S) SEARCH_UNEX_Q_END(S), then
//                         REQ_INSERT_IN_POSTED_Q(R)  or  MSG_REMOVE_FROM_UNEX_Q(M) REQ_MATCH_UNEX(R).
//                         S searches R's (peer, tag) on R's communicator.
//   S2 MPI_[I]mrecv R     ACTIVATE(R) REQ_MATCH_UNEX(R): R takes the oldest message its
//                         communicator's matched probes claimed (S6) from R's peer.
//   S3 receive from MPI_PROC_NULL   ACTIVATE(R) REQ_COMPLETE(R)   (then NOTIFY)
//   S4 arrival of M       MSG_ARRIVED(M) SEARCH_POSTED_Q_BEGIN(S) SEARCH_POSTED_Q_END(S), then
//                         MSG_INSERT_IN_UNEX_Q(M)  or  REQ_REMOVE_FROM_POSTED_Q(R) MSG_MATCH_POSTED_REQ(M).
//                         S searches M's (source, tag) on M's communicator.
//   S5 arrival adopted by a communicator created after it:  MSG_ARRIVED(M) MSG_INSERT_IN_UNEX_Q(M)
//   S6 probe              SEARCH_UNEX_Q_BEGIN(S) SEARCH_UNEX_Q_END(S) [MSG_REMOVE_FROM_UNEX_Q(M)]
//                         (the last one: a matched probe claims M for a later S2)
//   S7 cancel             REQ_REMOVE_FROM_POSTED_Q(R) REQ_COMPLETE(R)
//   S8 transient send T   ACTIVATE(T) XFER_BEGIN(T) XFER_END(T) COMPLETE(T) NOTIFY(T)
//   S9 send done at once  ACTIVATE(R) REQ_COMPLETE(R)  (MPI_PROC_NULL; the user's request of
//                         MPI_Ibsend or of a started MPI_Bsend_init; MPI_ERR_BUFFER)
//   S10 one-sided T       ACTIVATE(T) XFER_BEGIN(T), and later (at once for Put and
//                         Accumulate) XFER_END(T) COMPLETE(T); operation PERUSE_PUT,
//                         PERUSE_GET or PERUSE_ACC, only on transient ids.
//   A search is always BEGIN immediately followed by its END. MATCH_UNEX,
//   INSERT_IN_POSTED_Q, MATCH_POSTED_REQ, INSERT_IN_UNEX_Q,
//   REMOVE_FROM_UNEX_Q and SEARCH_POSTED_Q_BEGIN occur only inside these.
//
// ---------------------------------------------------------------------------
// 3. Matching, against a model of each communicator's posted and unexpected
//    queues fed by the events. "R accepts M": same communicator, R's peer is
//    MPI_ANY_SOURCE or M's source, R's tag is M's tag or MPI_ANY_TAG (which
//    never accepts the negative tags of internal traffic).
//
//   M1 kEnvelope     every pair (R, M) linked by S1, S2, S4 has R accepting M; a
//                    search's (source, tag) is its owner's; a probe accepts what it claims.
//   M2 kOvertaking   a message leaving the unexpected queue is the oldest one there
//                    from its sender that the taker (receive or probe) accepts.
//   M3 kPostedOrder  an arrival goes to the oldest posted receive that accepts it.
//   M4 kMissedMatch  no message enters the unexpected queue while a posted receive
//                    accepts it; no receive enters the posted queue while an
//                    unexpected message is accepted by it.
//   M5 kNotEnded     every message claimed by a matched probe is received (S2).
//
// The checker assumes every event is watched on every communicator it sees
// (searches included) and that recording started before any traffic on them.
#pragma once

#include <mpi.h>
#include <peruse.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace sonde::peruse_checker {

// One event as a callback saw it.
struct Event {
  double time;  // MPI_Wtime
  uint64_t id;
  int event;  // PERUSE_COMM_*
  MPI_Comm comm;
  const void* buf;
  int count;
  MPI_Datatype datatype;
  int peer;
  int tag;
  int operation;
};

enum class Kind {
  kBadEvent,          // an event number the checker does not know
  kBadId,             // 0, or the wrong kind of id for the event
  kBadTransition,     // table 1
  kIdReused,          // a beginning event on a live id
  kSpecChanged,       // table 1, last paragraph
  kBrokenSequence,    // table 2
  kEnvelope,          // M1
  kOvertaking,        // M2
  kPostedOrder,       // M3
  kMissedMatch,       // M4
  kNoClaimedMessage,  // S2 without a claimed message
  kNotEnded,          // live at the end of the run (M5 too)
  kLostEvents,        // the recording buffer overflowed
};
const char* kind_name(Kind k);

struct Violation {
  Kind kind;
  size_t index;  // of the offending event; SIZE_MAX: found at the end of the stream
  uint64_t id;
  std::string what;  // the full report: event, id, state, what was expected, history
};

// Verifies one rank's stream, in firing order. `lost`: events the recording
// could not keep (any makes the stream unverifiable: kLostEvents).
std::vector<Violation> verify(const Event* events, size_t n, size_t lost = 0);

// "REQ_XFER_END id=0x...(request) comm=.. peer=.. tag=.. count=.. op=recv"
std::string describe(const Event& e);
const char* event_name(int event);  // without the PERUSE_COMM_ prefix

// Prints every violation, each prefixed by `prefix`; the first
// `max_detailed` with the history of their id.
void print(FILE* out, const char* prefix, const std::vector<Violation>& violations, size_t max_detailed = 50);

// Records the events of a live MPI job through PERUSE into a preallocated
// buffer (a callback only claims a slot and copies the spec: no allocation,
// no lock).
class Recorder {
 public:
  explicit Recorder(size_t capacity = size_t(1) << 20);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Registers and activates a handle for every supported event on `comm`.
  // propagate: set PERUSE_Event_propagate first, so every later duplicate of
  // comm (and of its duplicates) is recorded too. Returns a PERUSE_* code.
  int watch(MPI_Comm comm, bool propagate = true);
  // Releases the handles watch() made on `comm` (call before MPI_Comm_free).
  int unwatch(MPI_Comm comm);
  // Deactivates and releases every handle; recording stops.
  int stop();

  const Event* events() const { return buf_.get(); }
  size_t size() const;
  size_t lost() const;
  // Events recorded per event number (index PERUSE_COMM_*).
  std::vector<size_t> counts() const;

  std::vector<Violation> verify() const { return sonde::peruse_checker::verify(events(), size(), lost()); }
  // verify(), prints every violation with "[rank <rank>] " and returns how many.
  int check(FILE* out, int rank) const;
  // For small test programs: stop(), check() to stderr, then the sum of
  // violations and `failures` over `quiet`, a communicator never watched (so
  // no peer's traffic after its own stop() is half recorded here).
  long finish(MPI_Comm quiet, int rank, long failures);

 private:
  struct Slot {
    Recorder* self;
    int event;
  };
  struct Handle {
    MPI_Comm comm;
    peruse_event_h h;
  };
  static int on_event(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param);

  std::unique_ptr<Event[]> buf_;
  size_t capacity_;
  std::atomic<size_t> next_{0};
  Slot slots_[64];
  std::vector<Handle> handles_;
};

}  // namespace sonde::peruse_checker
