// The profiler's timeline (internal; README.md in this folder describes the
// outputs): a bounded per-rank buffer of queue events, sends and blocking
// MPI calls, the clock offsets that put every rank on rank 0's clock, and
// what rank 0 makes of them at MPI_Finalize: the job's timeline, its wait
// states, trace.json (Perfetto), otf2/traces.otf2 and report.html.
//
// The parts:
//   buffer.cc    the event buffer, the clock offsets (measured at MPI_Init
//                and MPI_Finalize) and the communicator descriptions
//   calls.cc     the PMPI interceptors of the blocking calls
//   timeline.cc  gathering every rank's buffer to rank 0 and building the
//                Timeline: queue slices, depth series, flows, wait states
//   perfetto.cc  trace.json;  otf2.cc  the OTF2 archive
//   html.cc, svg.cc  report.html
//
// Memory: the buffer holds at most SONDE_RESIDENCE_EVENTS events (default
// 262144, 40 bytes each; 0 turns the timeline off). It keeps the first events
// of the run; later ones are counted (overflow) and every output says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "histogram.h"

namespace sonde::residence {

// ---------------------------------------------------------------- what a rank buffers

enum EventKind : uint8_t {
  kEvPostIn,   // REQ_INSERT_IN_POSTED_Q: uid = request
  kEvPostOut,  // REQ_REMOVE_FROM_POSTED_Q: peer/tag completed by the MSG_MATCH_POSTED_REQ
  kEvUnexIn,   // MSG_INSERT_IN_UNEX_Q: uid = message, peer = sender, count = bytes
  kEvUnexOut,  // MSG_REMOVE_FROM_UNEX_Q
  kEvSend,     // REQ_ACTIVATE of a send: peer = destination
  kEvCall,     // a blocking MPI call: t = enter, uid = exit, count = CallKind
};

enum CallKind : int32_t {
  kCallSend,
  kCallSsend,
  kCallRecv,
  kCallSendrecv,
  kCallWait,
  kCallWaitany,
  kCallWaitall,
  kCallProbe,
  kCalls
};
inline constexpr const char* kCallName[kCalls] = {"MPI_Send", "MPI_Ssend",   "MPI_Recv",    "MPI_Sendrecv",
                                                  "MPI_Wait", "MPI_Waitany", "MPI_Waitall", "MPI_Probe"};
// Calls a rank blocks in until a message arrives (late sender) / until the
// receiver posts the receive for its message (late receiver).
inline bool receives(int call) { return call >= kCallRecv && call != kCallSsend && call != kCallSend; }
inline bool blocking_send(int call) { return call == kCallSend || call == kCallSsend || call == kCallSendrecv; }

enum EventFlags : uint8_t { kMatched = 1 };  // kEvPostOut: a MSG_MATCH_POSTED_REQ followed (else: cancelled)

struct Event {
  uint64_t t;    // this rank's CLOCK_MONOTONIC, ns
  uint64_t uid;  // PERUSE unique id; kEvCall: the exit time
  int32_t comm;  // the communicator's serial on this rank (CommRec::serial)
  int32_t peer;  // rank in comm; MPI_ANY_SOURCE when never learnt
  int32_t tag;
  int32_t count;     // requests: the user's count; messages: bytes; calls: CallKind
  int32_t datatype;  // requests: the user's datatype; messages: MPI_BYTE
  uint8_t kind, flags;
};

static_assert(sizeof(Event) == 40, "the buffer's memory per event (README.md, bench/residence_overhead.sh)");

struct EventBuffer {
  Event* ev = nullptr;
  size_t cap = 0, used = 0;
  uint64_t overflow = 0;  // events that did not fit
};
extern EventBuffer& g_buf;

// A slot for one more event (zeroed but for kind and t), or null when the
// buffer is off or full (then counted). Lock held.
inline Event* record(uint8_t kind, uint64_t t) {
  if (g_buf.used >= g_buf.cap) {
    if (g_buf.cap) ++g_buf.overflow;
    return nullptr;
  }
  Event* e = &g_buf.ev[g_buf.used++];
  *e = Event{};
  e->kind = kind;
  e->t = t;
  return e;
}

// Datatypes freed while the buffer held events naming them: their size, and
// the buffer length at the free (events before it used this type; the
// handle may name another type later). At most 65536 are kept. Lock held.
struct FreedType {
  int32_t type;
  int64_t size;
  size_t before;
};
extern std::vector<FreedType>& g_freed_types;

// CLOCK_MONOTONIC in ns.
uint64_t now_ns();

// Which traces were asked for (SONDE_RESIDENCE_TRACE=perfetto,otf2).
struct TraceWanted {
  bool perfetto = false, otf2 = false;
  std::string unknown;  // words that named no format
};
TraceWanted parse_trace_list(const char* list);

// Allocates the buffer (SONDE_RESIDENCE_EVENTS). At MPI_Init.
void allocate_buffer();

// Collective over the report communicator: rank 0 measures every rank's
// clock offset against its own (best of several ping-pongs; a rank on the
// same host and boot reads the same clock: offset 0, error 0). `final`
// selects which of the two measurements (MPI_Init, MPI_Finalize) this is.
void measure_clocks(bool final);

// What rank 0 knows of a rank's clock: offsets (rank 0's clock minus this
// one's) at two local times, and the error bound (half the best round trip).
struct ClockFit {
  uint64_t t_init = 0, t_final = 0;  // the rank's local times of the two measurements
  int64_t off_init = 0, off_final = 0;
  uint64_t err_init = 0, err_final = 0;
  // Rank 0's time for local time t: linear drift between the measurements.
  int64_t map(uint64_t t) const {
    double slope =
        t_final > t_init ? static_cast<double>(off_final - off_init) / static_cast<double>(t_final - t_init) : 0;
    return static_cast<int64_t>(t) + off_init +
           static_cast<int64_t>(slope * (static_cast<double>(t) - static_cast<double>(t_init)));
  }
  uint64_t error() const { return err_init > err_final ? err_init : err_final; }
};
extern std::vector<ClockFit>& g_clocks;  // rank 0: one per rank

// A communicator as the outputs name it: the label shared by all ranks, the
// user's name, and the world rank of each of its ranks (empty if unknown).
struct CommInfo {
  std::string label, name;
  int size = -1, rank = -1;
  std::vector<int> world;
};
// Communicators this rank has seen, by serial. Filled outside callbacks.
extern std::map<int, CommInfo>& g_comm_infos;
// The world ranks of comm's members (an MPI call: outside callbacks).
std::vector<int> world_ranks_of(int comm_handle);

// ---------------------------------------------------------------- the job's timeline (rank 0)

// Times below are ns on rank 0's clock since the job's origin (rank 0 at its
// first clock measurement).
struct Slice {      // one receive in the posted queue, or one message in the unexpected queue
  int rank, queue;  // world rank; 0 posted, 1 unexpected
  int comm;         // index into Timeline::comms
  int peer, tag;    // peer: rank in comm (-1: never learnt)
  int64_t bytes;
  uint64_t uid;
  int64_t begin, end;
  bool open;  // still queued at MPI_Finalize (end = the rank's last time)
};
struct Call {
  int rank, kind;
  int64_t begin, end;
  int64_t late_sender = 0, late_receiver = 0;  // ns of this call lost to each
  int peer_world = -1;                         // whom it waited for
};
struct SendRec {
  int rank, comm, dest, tag;
  int64_t bytes, t;
  uint64_t uid;
  int me;  // the sender's rank in comm
};
struct MatchRec {
  int rank, comm, src, tag;
  int64_t t;
  uint64_t uid;  // the request (posted) or message (unexpected) id
  int slice;     // its Slice (its end is the match)
  int me;        // the receiver's rank in comm
};
struct Flow {
  int send, match;  // indexes into sends and matches
};
struct DepthPoint {
  int64_t t;
  int32_t posted, unexpected;
};
struct PairWait {  // one (comm, rank, peer world rank) pair
  uint64_t late_sender = 0, late_receiver = 0;
  Histogram ls, lr;  // per call
};
struct TimelineComm {
  std::string label, name;
  int size = -1;
  std::vector<int> world;                        // comm rank -> world rank, when known
  std::map<int, std::vector<DepthPoint>> depth;  // per world rank
  std::map<int, int32_t> hwm_posted, hwm_unexpected;
  std::map<std::pair<int, int>, PairWait> waits;  // (world rank, peer world rank)
};
struct RankInfo {
  int rank = 0, pid = 0;
  uint64_t buffered = 0, overflow = 0;
  int64_t begin = 0, end = 0;  // the rank's span on the common clock
  uint64_t clock_error = 0;
  uint64_t late_sender = 0, late_receiver = 0;
};
struct Timeline {
  std::vector<RankInfo> ranks;
  std::vector<TimelineComm> comms;
  std::vector<Slice> slices;
  std::vector<Call> calls;
  std::vector<SendRec> sends;
  std::vector<MatchRec> matches;
  std::vector<Flow> flows;
  uint64_t overflow = 0, backward_flows = 0, unjoined_sends = 0, unjoined_matches = 0;
  uint64_t clock_error = 0;  // the largest of the ranks'
  int64_t end = 0;
  bool enabled = true;  // false: the buffer was off (SONDE_RESIDENCE_EVENTS=0)
  int world_size = 0;
  std::vector<ClockFit> clocks;  // per rank; times are map(t) - origin
  int64_t origin = 0;
  int world_of(int comm, int rank) const;  // -1 if unknown
};

// Collective over the report communicator: every rank's buffer to rank 0,
// which builds the timeline (other ranks get an empty one).
Timeline gather_timeline();

// The writers (rank 0). Each returns an empty string on success, else why not.
std::string write_perfetto(const Timeline& tl, const std::string& path);
std::string write_otf2(const Timeline& tl, const std::string& dir);  // dir/traces.otf2
std::string write_html(const Timeline& tl, const std::string& summary_text, const std::string& path);

// The job's wait-state and overflow rows for summary.csv / summary.txt.
std::string timeline_csv(const Timeline& tl);
std::string timeline_text(const Timeline& tl);

// Escaping for the writers.
std::string json_string(const std::string& s);
std::string html_escape(const std::string& s);

}  // namespace sonde::residence
