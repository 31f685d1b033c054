// The checker's rules as code: the id kinds, table 1 of checker.h as
// kTransitions, the conditions and expectations of table 2 (Expect), and the
// small predicates the verifier (checker.cc) applies. Internal to the
// checker library.
#pragma once

#include <peruse.h>

#include <cstdint>
#include <string>

namespace sonde::peruse_checker::rules {

constexpr int kNumKnown = PERUSE_COMM_REQ_XFER_CONTINUE + 1;
extern const char* const kNames[kNumKnown];  // event names without the PERUSE_COMM_ prefix

// ---------------------------------------------------------------- id kinds

enum : uint8_t { kReq = 1, kSearch = 2, kTr = 4, kMsg = 8 };

// The kind of an id (its low 3 bits, checker.h), 0 for an invalid one.
uint8_t id_kind(uint64_t id);
const char* id_kind_name(uint64_t id);

// REQ_* events (XFER_CONTINUE included) / MSG_* events.
bool is_request_event(int e);
bool is_message_event(int e);

// The id kinds an event may carry.
uint8_t kinds_for(int e);

// ---------------------------------------------------------------- table 1

enum State : uint8_t {
  kDead,  // "-": not live
  kActive,
  kPosted,
  kRemoved,
  kMatched,
  kXfer,
  kXferDone,
  kComplete,
  kPostedSearch,
  kUnexSearch,
  kArrived,
  kUnexpected,
};
extern const char* const kStateNames[12];  // by State

// Pseudo-event: the MSG_MATCH_POSTED_REQ(M) that follows REQ_REMOVE_FROM_POSTED_Q(R)
// moves R on (S4).
constexpr int kMatchedByArrival = -1;

enum Cond : uint8_t {
  kAlways,
  kRecv,          // the request is a receive
  kSend,          // the request is a send
  kRecvProcNull,  // a receive from MPI_PROC_NULL
  kSendAtOnce,    // a send, and the previous event of the stream is its ACTIVATE (S9)
  kOneSided,      // a one-sided operation (PERUSE_PUT, PERUSE_GET, PERUSE_ACC; S10)
};
extern const char* const kCondText[6];  // by Cond

struct Transition {
  uint8_t ids;  // id kinds the row applies to
  State from;
  int event;
  State to;
  Cond cond;
};

// Table 1 of checker.h, row by row.
constexpr Transition kTransitions[] = {
    // ids        state          event                                   next           only if
    {kReq | kTr, kDead, PERUSE_COMM_REQ_ACTIVATE, kActive, kAlways},
    {kReq, kActive, PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, kPosted, kRecv},     // S1: nothing matched
    {kReq, kActive, PERUSE_COMM_REQ_MATCH_UNEX, kMatched, kRecv},            // S1, S2
    {kReq, kActive, PERUSE_COMM_REQ_COMPLETE, kComplete, kRecvProcNull},     // S3
    {kReq, kActive, PERUSE_COMM_REQ_COMPLETE, kComplete, kSendAtOnce},       // S9
    {kReq, kPosted, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, kRemoved, kRecv},  // S4 or S7
    {kReq, kRemoved, kMatchedByArrival, kMatched, kRecv},                    // S4
    {kReq, kRemoved, PERUSE_COMM_REQ_COMPLETE, kComplete, kRecv},            // S7: cancelled
    {kReq, kMatched, PERUSE_COMM_REQ_XFER_BEGIN, kXfer, kRecv},
    {kReq | kTr, kActive, PERUSE_COMM_REQ_XFER_BEGIN, kXfer, kSend},
    {kTr, kActive, PERUSE_COMM_REQ_XFER_BEGIN, kXfer, kOneSided},  // S10
    {kReq, kXfer, PERUSE_COMM_REQ_XFER_CONTINUE, kXfer, kAlways},  // one per fragment
    {kReq | kTr, kXfer, PERUSE_COMM_REQ_XFER_END, kXferDone, kAlways},
    {kTr, kXferDone, PERUSE_COMM_REQ_COMPLETE, kDead, kOneSided},  // S10: no NOTIFY
    {kReq | kTr, kXferDone, PERUSE_COMM_REQ_COMPLETE, kComplete, kAlways},
    {kReq | kTr, kComplete, PERUSE_COMM_REQ_NOTIFY, kDead, kAlways},
    {kSearch, kDead, PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, kPostedSearch, kAlways},
    {kSearch, kPostedSearch, PERUSE_COMM_SEARCH_POSTED_Q_END, kDead, kAlways},
    {kSearch, kDead, PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, kUnexSearch, kAlways},
    {kSearch, kUnexSearch, PERUSE_COMM_SEARCH_UNEX_Q_END, kDead, kAlways},
    {kMsg, kDead, PERUSE_COMM_MSG_ARRIVED, kArrived, kAlways},
    {kMsg, kArrived, PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, kUnexpected, kAlways},
    {kMsg, kArrived, PERUSE_COMM_MSG_MATCH_POSTED_REQ, kDead, kAlways},       // S4
    {kMsg, kUnexpected, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, kDead, kAlways},  // S1 or S6
};

// ACTIVATE, MSG_ARRIVED and the two search BEGINs: the events that start an id's life.
bool is_beginning(int e);

// PERUSE_PUT, PERUSE_GET or PERUSE_ACC.
bool one_sided(int operation);

// Events that occur only linked into a sequence of table 2: where event e on
// an id of this kind (and operation) belongs, or nullptr if it may stand alone.
const char* must_follow(int e, uint8_t kind, int operation);

// Whether a receive's (peer, tag) accepts a message's (source, tag); MPI_ANY_TAG
// never accepts a negative (reserved) tag.
bool accepts(int peer, int tag, int source, int msg_tag);

// printf into a std::string (up to 1023 characters).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// "(peer P, tag T)" with ANY_SOURCE / PROC_NULL / ANY_TAG spelled out.
std::string pattern(int peer, int tag);

// ---------------------------------------------------------------- table 2

// What the next event must be, while inside a sequence.
enum class Want {
  kNone,
  kRecvStart,       // after ACTIVATE(R), a receive: SEARCH_UNEX_Q_BEGIN of R's pattern (S1) or MATCH_UNEX(R) (S2)
  kRecvProcNull,    // after ACTIVATE(R) from MPI_PROC_NULL: COMPLETE(R) (S3)
  kSearchEnd,       // after a search's BEGIN: its END
  kRecvOutcome,     // after R's search: INSERT_IN_POSTED_Q(R) or MSG_REMOVE_FROM_UNEX_Q (S1)
  kMatchUnex,       // after MSG_REMOVE_FROM_UNEX_Q(M) for R: REQ_MATCH_UNEX(R) (S1)
  kArrival,         // after MSG_ARRIVED(M): SEARCH_POSTED_Q_BEGIN of M's envelope (S4) or INSERT_IN_UNEX_Q(M) (S5)
  kArrivalOutcome,  // after M's search: INSERT_IN_UNEX_Q(M) or REQ_REMOVE_FROM_POSTED_Q (S4)
  kMatchPosted,     // after REQ_REMOVE_FROM_POSTED_Q(R) for M: MSG_MATCH_POSTED_REQ(M) (S4)
  kCancel,          // after REQ_REMOVE_FROM_POSTED_Q(R) outside an arrival: COMPLETE(R) (S7)
  kTransient,       // the next of a transient request's five events (S8)
  kOneSided,        // XFER_BEGIN after a one-sided ACTIVATE, COMPLETE after its XFER_END (S10)
  kProbeTail,       // after a probe's search, optionally: MSG_REMOVE_FROM_UNEX_Q (S6)
};

enum class Owner { kProbe, kRecv, kArrival };

struct Expect {
  Want what = Want::kNone;
  uint64_t r = 0, m = 0, s = 0;
  int next_event = 0;  // kSearchEnd, kTransient
  Owner owner = Owner::kProbe;
  size_t after = 0;  // the event that set this expectation
};

// What an expectation waits for, in words, for a violation's text.
std::string want_text(const Expect& x);

}  // namespace sonde::peruse_checker::rules
