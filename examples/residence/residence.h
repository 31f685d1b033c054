// The queue-residence profiler's shared declarations (internal: nothing here
// is part of any interface; README.md in this folder describes the tool).
//
// It measures, per communicator and peer, from PERUSE event timestamps:
//   posted_q       REQ_INSERT_IN_POSTED_Q -> REQ_REMOVE_FROM_POSTED_Q (request
//                  id); peer = the sender, from the MSG_MATCH_POSTED_REQ the
//                  engine fires right after the removal on the same thread
//   unexpected_q   MSG_INSERT_IN_UNEX_Q -> MSG_REMOVE_FROM_UNEX_Q (message
//                  id); peer = the sender
//   {send,recv}_activate_to_xfer    REQ_ACTIVATE -> REQ_XFER_BEGIN
//   {send,recv}_complete_to_notify  REQ_COMPLETE -> REQ_NOTIFY
// and per communicator the high-water marks of both queues (lengths tracked
// from the insert/remove events this tool saw).
//
// Callbacks take a CLOCK_MONOTONIC timestamp, then (under
// MPI_THREAD_MULTIPLE) PERUSE_Lock, the tool mutex, and touch only fixed
// tables allocated at MPI_Init: open-addressing tables keyed by unique_id
// whose slots are freed at the ending event, and an arena of
// per-(communicator, peer) statistics. No MPI call, no malloc. When the lock
// cannot be granted (PERUSE_ERR_LOCK_NOT_GRANTABLE: this thread already holds
// it, e.g. the application took it around an MPI call) or a table is full,
// the record is dropped and counted, and the report says how many. Below
// MPI_THREAD_MULTIPLE the application serialises its MPI calls, and with them
// every callback, so no lock is taken.
//
// Internal traffic of collectives and communicator construction (tags <= -16,
// docs/engine.md) is filtered by default and counted per communicator;
// SONDE_RESIDENCE_INTERNAL=1 reports it separately (traffic=internal).
//
// The parts, one translation unit each:
//   residence.cc  the PMPI interceptors: set-up at MPI_Init, communicator
//                 labels, the report at MPI_Finalize
//   events.cc     the PERUSE callback and what each event records
//   stats.cc      the tables: communicator records, per-(communicator, peer)
//                 statistics, snapshots of them for the report
//   report.cc     formatting, and one rank's report as text and CSV
//   summary.cc    the job-wide summary: every rank's figures gathered to
//                 rank 0, merged by communicator label
//
// "Lock held" below means: inside a callback, or under a ToolLock.
#pragma once

#include <mpi.h>
#include <peruse.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "histogram.h"
#include "key_table.h"
#include "trace.h"

namespace sonde::residence {

// ---------------------------------------------------------------- what is measured

enum Metric {
  kPosted,
  kUnexpected,
  kSendActivateXfer,
  kRecvActivateXfer,
  kSendCompleteNotify,
  kRecvCompleteNotify,
  kMetrics
};
inline constexpr const char* kMetricKey[kMetrics] = {"posted_q",
                                                     "unexpected_q",
                                                     "send_activate_to_xfer",
                                                     "recv_activate_to_xfer",
                                                     "send_complete_to_notify",
                                                     "recv_complete_to_notify"};
inline constexpr const char* kMetricText[kMetrics] = {"posted-queue residence",   "unexpected-queue residence",
                                                      "send: activate -> xfer",   "recv: activate -> xfer",
                                                      "send: complete -> notify", "recv: complete -> notify"};

inline constexpr int kWatched[] = {
    PERUSE_COMM_REQ_ACTIVATE,
    PERUSE_COMM_REQ_MATCH_UNEX,
    PERUSE_COMM_REQ_INSERT_IN_POSTED_Q,
    PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
    PERUSE_COMM_REQ_XFER_BEGIN,
    PERUSE_COMM_REQ_COMPLETE,
    PERUSE_COMM_REQ_NOTIFY,
    PERUSE_COMM_MSG_INSERT_IN_UNEX_Q,
    PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q,
    PERUSE_COMM_MSG_MATCH_POSTED_REQ,
};
constexpr int kNumWatched = sizeof kWatched / sizeof kWatched[0];

constexpr int kInternalTagMax = -16;  // docs/engine.md, "Reserved tags"
enum Queue { kPostedQ, kUnexQ };

struct PairStats {
  Histogram h[kMetrics];
};

// ---------------------------------------------------------------- fixed tables

enum ReqFlags : uint8_t {
  kIsSend = 1,
  kIsInternal = 2,
  kHasActivate = 4,  // waiting for XFER_BEGIN
  kInPosted = 8,
  kHasComplete = 16,  // waiting for NOTIFY
};

struct ReqSlot {  // a live request, from REQ_ACTIVATE to REQ_NOTIFY
  uint64_t key;   // unique_id
  int32_t comm;   // CommRec index
  int32_t peer;   // the user's peer; a wildcard receive learns its sender at match
  uint8_t flags;
  uint64_t t_activate, t_posted, t_complete;
};

struct MsgSlot {  // an unexpected message, from insertion to removal
  uint64_t key;
  int32_t comm;
  int32_t peer;
  uint8_t internal;
  uint64_t t_insert;
};

struct IndexSlot {  // communicator handle -> CommRec, (comm, peer, traffic) -> pair block
  uint64_t key;
  int32_t index;
};

struct CommRec {
  bool used;
  bool registered;  // handles of our own on it (WORLD, SELF, split results)
  MPI_Comm handle;
  int size, rank;  // -1 until an interceptor learns them
  int serial;      // creation order, for the report
  int dups, splits;
  char label[200];                         // stable across ranks: MPI_COMM_WORLD/dup1/split2:color0
  int64_t length[2][2], high_water[2][2];  // [traffic][queue]
  uint64_t filtered;                       // internal events not measured
  uint64_t cancelled;                      // receives removed from the posted queue without a match
  uint64_t unmatched;                      // ending events whose start this tool never saw
  uint64_t lost;                           // samples lost for want of a pair block or table slot
  uint32_t live;                           // ReqSlot/MsgSlot entries pointing here
  int32_t pairs;                           // first pair block (list through PairMeta::next)
  peruse_event_h handles[kNumWatched];
};

struct PairMeta {
  int32_t comm, peer;
  uint8_t internal;
  int32_t next;  // next block of the same communicator, or of the free list
};

// What a freed communicator (or, at MPI_Finalize, a live one) leaves behind.
struct CommReport {
  std::string label, name;
  int size = -1, rank = -1, serial = 0;
  bool freed = false;
  int merged = 1;  // communicators folded into this record
  int64_t high_water[2][2] = {};
  uint64_t filtered = 0, cancelled = 0, unmatched = 0, lost = 0;
  struct Pair {
    int peer;
    int internal;
    PairStats stats;
  };
  std::vector<Pair> pairs;
};

// What a rank reports at MPI_Finalize.
struct RankReport {
  std::vector<CommReport> comms;  // in creation order, freed ones included
  uint64_t dropped = 0, table_full = 0, lost_comms = 0;
  uint64_t open_requests = 0, open_messages = 0;  // still in the tables at MPI_Finalize
};

constexpr int kMaxComms = 4096;    // live communicators tracked; events on more are counted in lost_comms
constexpr size_t kMaxClosed = 64;  // freed communicators kept one by one; later ones are merged

struct State {
  bool started = false, finished = false;
  bool keep_internal = false;
  bool supported = true;
  int thread_level = MPI_THREAD_SINGLE;
  int world_rank = 0, world_size = 1;
  MPI_Comm report_comm = MPI_COMM_NULL;  // private, no handles: the report's own traffic
  std::string out_dir;
  TraceWanted trace;    // SONDE_RESIDENCE_TRACE
  std::string problem;  // why nothing was measured, if so

  CommRec* comms = nullptr;
  int32_t free_comm = -1;  // free list through CommRec::pairs while unused
  int next_serial = 0;
  KeyTable<IndexSlot> comm_index;

  PairStats* pair_stats = nullptr;  // mmap'd arena, pages touched ahead of use (warm_pairs)
  PairMeta* pair_meta = nullptr;
  int32_t max_pairs = 0, fresh_pairs = 0, free_pairs = -1;
  int32_t warm_pairs = 0;  // blocks [0, warm_pairs) of the arena have been touched
  KeyTable<IndexSlot> pair_index;

  KeyTable<ReqSlot> requests;
  KeyTable<MsgSlot> messages;

  uint64_t lost_comms = 0;  // events on communicators beyond kMaxComms
  uint64_t table_full = 0;
  std::vector<CommReport> closed;
  CommReport overflow;  // freed communicators beyond kMaxClosed, merged
};

// Never destroyed: an event may fire while the process exits.
extern State& g;
extern std::atomic<uint64_t> g_dropped;  // lock not grantable: counted without the lock
// From MPI_Init until MPI_Finalize takes its snapshot; read by callbacks and
// interceptors on any thread.
extern std::atomic<bool> g_collecting;
// Callbacks and interceptors take PERUSE_Lock: under MPI_THREAD_MULTIPLE only.
extern bool g_locking;

// The tool mutex around any touch of the tables outside a callback (under
// MPI_THREAD_MULTIPLE; below it the application already serialises every MPI
// call, and with them every callback and interceptor). If this thread
// already holds it (the application took PERUSE_Lock), nobody else can be
// inside, so going ahead is safe; only a lock we took is released.
class ToolLock {
 public:
  ToolLock() : owned_(g_locking && PERUSE_Lock() == PERUSE_SUCCESS) {}
  ~ToolLock() {
    if (owned_) PERUSE_Unlock();
  }
  ToolLock(const ToolLock&) = delete;
  ToolLock& operator=(const ToolLock&) = delete;

 private:
  bool owned_;
};

// Queue lengths and high-water marks of a communicator (lock held).
inline void queue_in(CommRec& c, int internal, Queue q) {
  if (++c.length[internal][q] > c.high_water[internal][q]) c.high_water[internal][q] = c.length[internal][q];
}
inline void queue_out(CommRec& c, int internal, Queue q) {
  if (c.length[internal][q] > 0) --c.length[internal][q];
}

// ---------------------------------------------------------------- stats.cc

// Allocates every table once, sized from SONDE_RESIDENCE_TABLE_SIZE and
// SONDE_RESIDENCE_MAX_PAIRS; false when memory is short (then nothing is
// measured). Called once, from MPI_Init, before any handle exists.
bool allocate_tables();

// Touches the arena's never-used pair blocks until kWarmPairs, plus one per
// peer of `members` (up to kWarmPairsPerComm; two with internal traffic
// kept), are ready past the last one handed out, so the callback that
// first samples a (communicator, peer) pays no page fault (a first touch
// costs tens of microseconds on a virtual machine). Called outside
// callbacks: at MPI_Init, when an interceptor learns of a new communicator
// of `members` ranks, and after blocking calls (members 0). Lock held.
void warm_pairs(int members);
constexpr int32_t kWarmPairs = 16, kWarmPairsPerComm = 64;

// The record of a communicator (an index into g.comms), made on first sight
// if `create` (an event on a communicator no interceptor announced gets a
// provisional label); -1 when unknown, or when there is no room (the caller
// counts that in g.lost_comms). Lock held.
int32_t comm_index(MPI_Comm handle, bool create);

// Adds the duration t1 - t0 (0 if negative) to metric m of (comm, peer,
// traffic); MPI_PROC_NULL is ignored, and a sample with no pair block left
// counts in the communicator's `lost`. Lock held.
void sample(int32_t comm, int peer, int internal, Metric m, uint64_t t0, uint64_t t1);

// The figures of communicator ci under its user-given `name` (may be null),
// pairs sorted by traffic, then peer, wildcard peers last. Lock held.
CommReport snapshot(const CommRec& c, int32_t ci, const char* name);

// Forgets communicator ci: its table entries, pair blocks, index and the
// calling thread's pending posted-queue sample; its record is free for
// reuse. Lock held.
void retire(int32_t ci);

// Keeps the report of a freed communicator for MPI_Finalize: the first
// kMaxClosed one by one, later ones merged into g.overflow. Lock held.
void keep_closed(CommReport r);

// ---------------------------------------------------------------- events.cc

// Registers, propagates and activates a handle for every kWatched event on
// comm (outside the lock: the registry has its own). Returns false if PERUSE
// refused, with every handle it got released.
bool watch(MPI_Comm comm, peruse_event_h handles[kNumWatched]);

// Releases the handles watch() made (valid even after comm was freed).
void unwatch(peruse_event_h handles[kNumWatched]);

// Settles the calling thread's posted-queue sample still waiting for its
// MSG_MATCH_POSTED_REQ: none came, so the receive was cancelled. Lock held.
void flush_pending();

// Drops the calling thread's pending sample if it belongs to communicator
// ci (which is being retired). Lock held.
void forget_pending(int32_t ci);

// ---------------------------------------------------------------- report.cc

// printf into a string (cut at 1023 characters).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// A duration for people: three significant digits, unit chosen to fit.
std::string human(double ns);
// A peer rank, or "ANY" for a wildcard whose sender was never learnt.
std::string peer_text(int peer);

// The CSV (README.md, "Reading the report"): its header line, a row of the
// times of one metric, and a counter row (c null: a rank- or job-wide one).
extern const char* const kCsvHeader;
std::string csv_time_row(const std::string& rank, const CommReport& c, const std::string& peer, int internal,
                         int metric, const Histogram& h);
std::string csv_time_row(const std::string& rank, const CommReport& c, const std::string& peer, int internal,
                         const char* metric, const Histogram& h);
std::string csv_value_row(const std::string& rank, const CommReport* c, const char* traffic, const char* metric,
                          unsigned long long value);

// Text tables: kSummaryRow is the summary's first column, kCells the header
// of the five time columns, time_cells their values.
extern const char* const kSummaryRow;
extern const char* const kCells;
std::string time_cells(const Histogram& h);
// The line naming the communicators a table leaves out for want of samples.
std::string quiet_line(const std::vector<std::string>& quiet);
// How internal traffic is treated, for a report's heading.
std::string filter_note(uint64_t filtered);

// One rank's report: text (rank<R>.txt) and CSV (rank<R>.csv).
std::string rank_text(const RankReport& rr);
std::string rank_csv(const RankReport& rr);

// Creates a directory and its parents; true if it exists afterwards.
bool make_dirs(const std::string& path);
// Writes a file whole, through a temporary renamed into place.
bool write_file(const std::string& path, const std::string& text);
// Prints on stderr, after flushing the program's own stdout.
void say(const std::string& text);

// ---------------------------------------------------------------- summary.cc

// Collective over g.report_comm: every rank's bytes to rank 0, which gets
// them all in rank order (the others get nothing).
std::vector<std::string> gather_blobs(const std::string& mine);

// Collective over g.report_comm (every rank calls it): sends this rank's
// figures, and `text` (its report when it could not be written to a file,
// else empty), to rank 0. Rank 0 merges them and prints on stderr the texts
// it received, then the job-wide summary; with to_files it writes the
// summary to g.out_dir/summary.{txt,csv} instead and prints where the
// reports are (or, if it cannot write them, the summary).
// Rank 0 adds the timeline's figures (tl) to the summary and, with
// to_files, writes report.html and the traces asked for beside it, then
// prints the path of every file written.
void summarise_job(const RankReport& rr, const std::string& text, bool to_files, const Timeline& tl);

}  // namespace sonde::residence
