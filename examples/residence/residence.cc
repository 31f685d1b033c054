// sonde-residence: a queue-residence profiler built from PMPI and PERUSE.
//
// Link it into a program or inject it into any unmodified MPI program built
// with Sonde's mpicc (LD_PRELOAD=libsonde_residence.so). It intercepts
//   MPI_Init, MPI_Init_thread   PMPI_Init*, PERUSE_Init, then one handle per
//                               watched event on MPI_COMM_WORLD and
//                               MPI_COMM_SELF, each propagating, so every
//                               later MPI_Comm_dup is covered by PERUSE
//   MPI_Comm_dup                names the copy (parent label + "/dupN")
//   MPI_Comm_split              registers handles on the new communicator
//                               (PERUSE propagates only to duplicates)
//   MPI_Comm_free               collects the communicator's figures while its
//                               name can still be read
//   MPI_Finalize                reports, then PMPI_Finalize
// and measures, per communicator and peer, from event timestamps:
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
// Output (README.md in this folder has the formats): without
// SONDE_RESIDENCE_OUT, rank 0 prints every rank's table, then the job-wide
// summary, on stderr. With SONDE_RESIDENCE_OUT=<dir>, every rank writes
// <dir>/rank<R>.txt and <dir>/rank<R>.csv, and rank 0 also writes
// <dir>/summary.txt and <dir>/summary.csv.
#include <errno.h>
#include <mpi.h>
#include <peruse.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "histogram.h"
#include "key_table.h"

namespace {

using sonde::residence::Histogram;
using sonde::residence::KeyTable;

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
const char* const kMetricKey[kMetrics] = {"posted_q",
                                          "unexpected_q",
                                          "send_activate_to_xfer",
                                          "recv_activate_to_xfer",
                                          "send_complete_to_notify",
                                          "recv_complete_to_notify"};
const char* const kMetricText[kMetrics] = {"posted-queue residence",   "unexpected-queue residence",
                                           "send: activate -> xfer",   "recv: activate -> xfer",
                                           "send: complete -> notify", "recv: complete -> notify"};

const int kWatched[] = {
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

constexpr int kMaxComms = 4096;    // Sonde itself allows 4096 live communicators
constexpr size_t kMaxClosed = 64;  // freed communicators kept one by one; later ones are merged

struct State {
  bool started = false, finished = false;
  bool keep_internal = false;
  bool supported = true;
  int thread_level = MPI_THREAD_SINGLE;
  int world_rank = 0, world_size = 1;
  MPI_Comm report_comm = MPI_COMM_NULL;  // private, no handles: the report's own traffic
  std::string out_dir;
  std::string problem;  // why nothing was measured, if so

  CommRec* comms = nullptr;
  int32_t free_comm = -1;  // free list through CommRec::pairs while unused
  int next_serial = 0;
  KeyTable<IndexSlot> comm_index;

  PairStats* pair_stats = nullptr;  // mmap'd arena, pages touched as used
  PairMeta* pair_meta = nullptr;
  int32_t max_pairs = 0, fresh_pairs = 0, free_pairs = -1;
  KeyTable<IndexSlot> pair_index;

  KeyTable<ReqSlot> requests;
  KeyTable<MsgSlot> messages;

  uint64_t lost_comms = 0;  // events on communicators beyond kMaxComms
  uint64_t table_full = 0;
  std::vector<CommReport> closed;
  CommReport overflow;  // freed communicators beyond kMaxClosed, merged
};

// Never destroyed: an event may fire while the process exits.
State& g = *new State;
std::atomic<uint64_t> g_dropped{0};  // lock not grantable: counted without the lock
// From MPI_Init until MPI_Finalize takes its snapshot; read by callbacks and
// interceptors on any thread.
std::atomic<bool> g_collecting{false};
// Callbacks and interceptors take PERUSE_Lock: under MPI_THREAD_MULTIPLE only.
bool g_locking = false;

// Per thread: the posted-queue sample between REQ_REMOVE_FROM_POSTED_Q and the
// MSG_MATCH_POSTED_REQ that names its sender, and the sender of the message
// MSG_REMOVE_FROM_UNEX_Q just took (for a wildcard REQ_MATCH_UNEX).
struct Pending {
  bool valid;
  int32_t comm;
  uint64_t request;
  uint64_t duration;
  int internal;
};
struct LastUnex {
  bool valid;
  int32_t comm;
  int peer;
};
__thread Pending t_pending;
__thread LastUnex t_last_unex;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

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

uint64_t comm_key(MPI_Comm c) { return static_cast<uint64_t>(static_cast<uint32_t>(c)) + 1; }
uint64_t pair_key(int32_t comm, int peer, int internal) {
  return (static_cast<uint64_t>(comm + 1) << 33) | (static_cast<uint64_t>(static_cast<uint32_t>(peer)) << 1) |
         static_cast<uint64_t>(internal);
}

// ---------------------------------------------------------------- tables (lock held)

// The record of a communicator, made on first sight (an event on a
// communicator no interceptor announced gets a provisional label).
int32_t comm_index(MPI_Comm handle, bool create) {
  bool fresh = false;
  IndexSlot* s = create ? g.comm_index.insert(comm_key(handle), &fresh) : g.comm_index.find(comm_key(handle));
  if (!s) return -1;
  if (!fresh) return s->index;
  if (g.free_comm < 0) {
    g.comm_index.erase(s);
    return -1;
  }
  int32_t i = g.free_comm;
  CommRec& c = g.comms[i];
  g.free_comm = c.pairs;
  std::memset(&c, 0, sizeof c);
  c.used = true;
  c.handle = handle;
  c.size = c.rank = -1;
  c.serial = g.next_serial++;
  c.pairs = -1;
  std::snprintf(c.label, sizeof c.label, "comm-0x%x", static_cast<unsigned>(handle));
  s->index = i;
  return i;
}

PairStats* pair_stats(int32_t comm, int peer, int internal) {
  bool fresh = false;
  IndexSlot* s = g.pair_index.insert(pair_key(comm, peer, internal), &fresh);
  if (!s) return nullptr;
  if (!fresh) return &g.pair_stats[s->index];
  int32_t p;
  if (g.free_pairs >= 0) {
    p = g.free_pairs;
    g.free_pairs = g.pair_meta[p].next;
  } else if (g.fresh_pairs < g.max_pairs) {
    p = g.fresh_pairs++;
  } else {
    g.pair_index.erase(s);
    return nullptr;
  }
  g.pair_stats[p] = PairStats{};
  g.pair_meta[p] = PairMeta{comm, peer, static_cast<uint8_t>(internal), g.comms[comm].pairs};
  g.comms[comm].pairs = p;
  s->index = p;
  return &g.pair_stats[p];
}

void sample(int32_t comm, int peer, int internal, Metric m, uint64_t t0, uint64_t t1) {
  if (peer < 0 && peer != MPI_ANY_SOURCE) return;  // MPI_PROC_NULL: nothing queued, nothing moved
  PairStats* p = pair_stats(comm, peer, internal);
  if (!p) {
    ++g.comms[comm].lost;
    return;
  }
  p->h[m].add(t1 > t0 ? t1 - t0 : 0);
}

void queue_in(CommRec& c, int internal, Queue q) {
  if (++c.length[internal][q] > c.high_water[internal][q]) c.high_water[internal][q] = c.length[internal][q];
}
void queue_out(CommRec& c, int internal, Queue q) {
  if (c.length[internal][q] > 0) --c.length[internal][q];
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

void flush_pending() {
  if (!t_pending.valid) return;
  t_pending.valid = false;
  // Left the posted queue without a match: MPI_Cancel.
  if (t_pending.comm >= 0 && t_pending.comm < kMaxComms && g.comms[t_pending.comm].used)
    ++g.comms[t_pending.comm].cancelled;
}

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
      t_pending = Pending{true, ci, uid, now - r->t_posted, internal};
      break;
    }
    case PERUSE_COMM_MSG_MATCH_POSTED_REQ: {
      if (!t_pending.valid || t_pending.comm != ci) break;
      t_pending.valid = false;
      sample(ci, s->peer, t_pending.internal, kPosted, 0, t_pending.duration);
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
      queue_out(c, m->internal, kUnexQ);
      --c.live;
      g.messages.erase(m);
      break;
    }
    default:
      break;
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

// ---------------------------------------------------------------- setup

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end;
  unsigned long long n = std::strtoull(v, &end, 10);
  return (*end || n == 0) ? fallback : static_cast<size_t>(n);
}

bool allocate_tables() {
  // 16384 slots: 12288 live requests (and as many unexpected messages) in
  // well under a megabyte each, small enough to stay in cache.
  size_t table = env_size("SONDE_RESIDENCE_TABLE_SIZE", 16384);
  size_t pairs = env_size("SONDE_RESIDENCE_MAX_PAIRS", 4096);
  if (pairs > (1u << 24)) pairs = 1u << 24;
  g.comms = static_cast<CommRec*>(std::calloc(kMaxComms, sizeof(CommRec)));
  g.pair_meta = static_cast<PairMeta*>(std::calloc(pairs, sizeof(PairMeta)));
  // Reserved, not committed: a page costs memory once a pair uses it.
  void* arena = mmap(nullptr, pairs * sizeof(PairStats), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (!g.comms || !g.pair_meta || arena == MAP_FAILED) return false;
  g.pair_stats = static_cast<PairStats*>(arena);
  g.max_pairs = static_cast<int32_t>(pairs);
  for (int i = kMaxComms - 1; i >= 0; --i) {
    g.comms[i].pairs = g.free_comm;
    g.free_comm = i;
  }
  return g.comm_index.init(2 * kMaxComms) && g.pair_index.init(2 * pairs) && g.requests.init(table) &&
         g.messages.init(table);
}

// Registers, propagates and activates our handles on comm (outside the lock:
// the registry has its own). Returns false if PERUSE refused.
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

void set_label(CommRec& c, const char* label) {
  size_t n = std::min(std::strlen(label), sizeof c.label - 1);  // deep nesting truncates
  std::memcpy(c.label, label, n);
  c.label[n] = 0;
}

// A new communicator the application made from `parent`: label it the same
// way on every rank (parent's label + n-th dup/split of that parent), and
// watch it if PERUSE does not propagate there (split).
void announce(MPI_Comm parent, MPI_Comm child, bool split, int color) {
  int size = -1, rank = -1;
  if (child != MPI_COMM_NULL) {
    PMPI_Comm_size(child, &size);
    PMPI_Comm_rank(child, &rank);
  }
  peruse_event_h handles[kNumWatched];
  bool watched = child != MPI_COMM_NULL && split && watch(child, handles);
  ToolLock lock;
  int32_t pi = comm_index(parent, false);
  if (pi < 0) {
    if (watched) unwatch(handles);  // a parent we do not follow (none in practice)
    return;
  }
  int n = split ? ++g.comms[pi].splits : ++g.comms[pi].dups;
  if (child == MPI_COMM_NULL) return;
  int32_t ci = comm_index(child, true);
  if (ci < 0) {
    ++g.lost_comms;
    if (watched) unwatch(handles);
    return;
  }
  CommRec& c = g.comms[ci];
  std::string label = g.comms[pi].label;
  label += split ? "/split" + std::to_string(n) + ":color" + std::to_string(color) : "/dup" + std::to_string(n);
  set_label(c, label.c_str());
  c.size = size;
  c.rank = rank;
  if (watched) {
    c.registered = true;
    std::memcpy(c.handles, handles, sizeof handles);
  }
}

void start(int provided) {
  if (g.started) return;
  g.started = true;
  g.thread_level = provided;
  g_locking = provided == MPI_THREAD_MULTIPLE;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.world_size);
  const char* out = std::getenv("SONDE_RESIDENCE_OUT");
  if (out && *out) g.out_dir = out;
  const char* internal = std::getenv("SONDE_RESIDENCE_INTERNAL");
  g.keep_internal = internal && std::strcmp(internal, "1") == 0;
  // Before any handle exists: the report's traffic stays out of the figures.
  PMPI_Comm_dup(MPI_COMM_WORLD, &g.report_comm);
  if (!allocate_tables()) {
    g.supported = false;
    g.problem = "out of memory for the tables";
    return;
  }
  if (PERUSE_Init() != PERUSE_SUCCESS) {
    g.supported = false;
    g.problem = "PERUSE_Init failed";
    return;
  }
  const MPI_Comm roots[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
  const char* const names[2] = {"MPI_COMM_WORLD", "MPI_COMM_SELF"};
  for (int k = 0; k < 2; ++k) {
    peruse_event_h handles[kNumWatched];
    if (!watch(roots[k], handles)) {
      g.supported = false;
      g.problem = "this library does not support the PERUSE events needed (built without PERUSE?)";
      return;
    }
    ToolLock lock;
    int32_t ci = comm_index(roots[k], true);
    CommRec& c = g.comms[ci];
    set_label(c, names[k]);
    c.registered = true;
    std::memcpy(c.handles, handles, sizeof handles);
    c.size = k == 0 ? g.world_size : 1;
    c.rank = k == 0 ? g.world_rank : 0;
  }
  g_collecting.store(true);
}

// ---------------------------------------------------------------- snapshots (lock held)

CommReport snapshot(const CommRec& c, int32_t ci, const char* name) {
  CommReport r;
  r.label = c.label;
  r.name = name ? name : "";
  r.size = c.size;
  r.rank = c.rank;
  r.serial = c.serial;
  std::memcpy(r.high_water, c.high_water, sizeof r.high_water);
  r.filtered = c.filtered;
  r.cancelled = c.cancelled;
  r.unmatched = c.unmatched;
  r.lost = c.lost;
  for (int32_t p = c.pairs; p >= 0; p = g.pair_meta[p].next) {
    if (g.pair_meta[p].comm != ci) break;  // defensive: lists never cross
    r.pairs.push_back({g.pair_meta[p].peer, g.pair_meta[p].internal, g.pair_stats[p]});
  }
  std::sort(r.pairs.begin(), r.pairs.end(), [](const CommReport::Pair& a, const CommReport::Pair& b) {
    if (a.internal != b.internal) return a.internal < b.internal;
    // Wildcard (unresolved) peers last.
    unsigned pa = static_cast<unsigned>(a.peer), pb = static_cast<unsigned>(b.peer);
    return pa < pb;
  });
  return r;
}

// Forgets communicator ci: its table entries, pair blocks and index.
void retire(int32_t ci) {
  CommRec& c = g.comms[ci];
  if (c.live) {
    for (size_t i = 0; i < g.requests.capacity();) {
      ReqSlot* r = g.requests.at(i);
      if (r->key && r->comm == ci)
        g.requests.erase(r);  // re-examine slot i: erase may shift an entry into it
      else
        ++i;
    }
    for (size_t i = 0; i < g.messages.capacity();) {
      MsgSlot* m = g.messages.at(i);
      if (m->key && m->comm == ci)
        g.messages.erase(m);
      else
        ++i;
    }
  }
  for (int32_t p = c.pairs; p >= 0;) {
    int32_t next = g.pair_meta[p].next;
    if (IndexSlot* s = g.pair_index.find(pair_key(ci, g.pair_meta[p].peer, g.pair_meta[p].internal)))
      g.pair_index.erase(s);
    g.pair_meta[p].next = g.free_pairs;
    g.free_pairs = p;
    p = next;
  }
  if (IndexSlot* s = g.comm_index.find(comm_key(c.handle))) g.comm_index.erase(s);
  if (t_pending.valid && t_pending.comm == ci) t_pending.valid = false;
  c.used = false;
  c.pairs = g.free_comm;
  g.free_comm = ci;
}

void merge_into(CommReport& into, const CommReport& from) {
  into.merged += from.merged;
  for (int t = 0; t < 2; ++t)
    for (int q = 0; q < 2; ++q) into.high_water[t][q] = std::max(into.high_water[t][q], from.high_water[t][q]);
  into.filtered += from.filtered;
  into.cancelled += from.cancelled;
  into.unmatched += from.unmatched;
  into.lost += from.lost;
  for (const CommReport::Pair& p : from.pairs) {
    auto it = std::find_if(into.pairs.begin(), into.pairs.end(),
                           [&](const CommReport::Pair& q) { return q.peer == p.peer && q.internal == p.internal; });
    if (it == into.pairs.end()) {
      into.pairs.push_back(p);
    } else {
      for (int m = 0; m < kMetrics; ++m) it->stats.h[m].merge(p.stats.h[m]);
    }
  }
}

void keep_closed(CommReport r) {
  r.freed = true;
  if (g.closed.size() < kMaxClosed) {
    g.closed.push_back(std::move(r));
    return;
  }
  if (g.overflow.label.empty()) {
    r.label = "(freed communicators beyond the first 64, merged)";
    r.name.clear();
    r.serial = 1 << 30;
    g.overflow = std::move(r);
    return;
  }
  merge_into(g.overflow, r);
}

// ---------------------------------------------------------------- formatting

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// A duration for people: three significant digits, unit chosen to fit.
std::string human(double ns) {
  if (ns < 1e3) return format("%.0f ns", ns);
  if (ns < 1e6) return format("%.3g us", ns / 1e3);
  if (ns < 1e9) return format("%.3g ms", ns / 1e6);
  return format("%.3g s", ns / 1e9);
}

std::string peer_text(int peer) { return peer == MPI_ANY_SOURCE ? std::string("ANY") : std::to_string(peer); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

const char* const kCsvHeader = "rank,comm,name,size,peer,traffic,metric,count,min_ns,mean_ns,p50_ns,p99_ns,max_ns\n";

std::string csv_time_row(const std::string& rank, const CommReport& c, const std::string& peer, int internal,
                         int metric, const Histogram& h) {
  return format("%s,%s,%s,%d,%s,%s,%s,%llu,%llu,%.1f,%llu,%llu,%llu\n", rank.c_str(), csv_field(c.label).c_str(),
                csv_field(c.name).c_str(), c.size, peer.c_str(), internal ? "internal" : "user", kMetricKey[metric],
                static_cast<unsigned long long>(h.count), static_cast<unsigned long long>(h.min), h.mean(),
                static_cast<unsigned long long>(h.percentile(0.5)), static_cast<unsigned long long>(h.percentile(0.99)),
                static_cast<unsigned long long>(h.max));
}

std::string csv_value_row(const std::string& rank, const CommReport* c, const char* traffic, const char* metric,
                          unsigned long long value) {
  return format("%s,%s,%s,%d,*,%s,%s,%llu,,,,,\n", rank.c_str(), c ? csv_field(c->label).c_str() : "*",
                c ? csv_field(c->name).c_str() : "", c ? c->size : -1, traffic, metric, value);
}

// Per-rank tables: "peer  metric  count mean p50 p99 max"; the summary has
// no peer column.
const char* const kRankRow = "    %6s  %-26s";
const char* const kSummaryRow = "    %-34s";
const char* const kCells = " %10s %10s %10s %10s %10s\n";

std::string time_cells(const Histogram& h) {
  return format(" %10llu %10s %10s %10s %10s\n", static_cast<unsigned long long>(h.count), human(h.mean()).c_str(),
                human(static_cast<double>(h.percentile(0.5))).c_str(),
                human(static_cast<double>(h.percentile(0.99))).c_str(), human(static_cast<double>(h.max)).c_str());
}

// The communicators a table leaves out for want of samples.
std::string quiet_line(const std::vector<std::string>& quiet) {
  if (quiet.empty()) return {};
  std::string out = "\n  no measured traffic on:";
  for (const std::string& q : quiet) out += " " + q;
  return out + "\n";
}

std::string comm_title(const CommReport& c) {
  std::string t = c.label;
  if (!c.name.empty() && c.name != c.label) t += " \"" + c.name + "\"";
  t += format(" (size %d", c.size);
  if (c.rank >= 0) t += format(", my rank %d", c.rank);
  if (c.freed) t += c.merged > 1 ? format(", %d communicators freed", c.merged) : ", freed before MPI_Finalize";
  return t + ")";
}

bool has_samples(const CommReport& c) {
  for (const CommReport::Pair& p : c.pairs)
    for (int m = 0; m < kMetrics; ++m)
      if (p.stats.h[m].count) return true;
  return false;
}

struct RankReport {
  std::vector<CommReport> comms;  // in creation order, freed ones included
  uint64_t dropped = 0, table_full = 0, lost_comms = 0;
  uint64_t open_requests = 0, open_messages = 0;  // still in the tables at MPI_Finalize
};

std::string filter_note(uint64_t filtered) {
  return g.keep_internal ? std::string("reported separately (traffic=internal)")
                         : format("filtered (%llu events not measured)", static_cast<unsigned long long>(filtered));
}

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

std::string rank_text(const RankReport& rr) {
  uint64_t filtered = 0;
  for (const CommReport& c : rr.comms) filtered += c.filtered;
  std::string out = format("sonde-residence: rank %d of %d (pid %d, %s)\n", g.world_rank, g.world_size,
                           static_cast<int>(getpid()), level_name(g.thread_level));
  if (!g.supported) return out + "  nothing measured: " + g.problem + "\n";
  out += "  internal collective traffic (tag <= -16): " + filter_note(filtered) + "\n";
  out +=
      format("  dropped records: %llu (PERUSE lock not grantable), %llu (tables full), %llu (too many communicators)\n",
             static_cast<unsigned long long>(rr.dropped), static_cast<unsigned long long>(rr.table_full),
             static_cast<unsigned long long>(rr.lost_comms));
  std::vector<std::string> quiet;
  for (const CommReport& c : rr.comms) {
    if (!has_samples(c)) {
      quiet.push_back(c.label);
      continue;
    }
    out += "\n  " + comm_title(c) + "\n";
    out += format("    queue high-water marks: posted %lld, unexpected %lld",
                  static_cast<long long>(c.high_water[0][0]), static_cast<long long>(c.high_water[0][1]));
    if (g.keep_internal)
      out += format(" (internal: posted %lld, unexpected %lld)", static_cast<long long>(c.high_water[1][0]),
                    static_cast<long long>(c.high_water[1][1]));
    out += format("; cancelled receives %llu", static_cast<unsigned long long>(c.cancelled));
    if (c.unmatched) out += format("; end events without a start %llu", static_cast<unsigned long long>(c.unmatched));
    if (c.lost) out += format("; samples lost (no pair slot) %llu", static_cast<unsigned long long>(c.lost));
    out += "\n";
    out += format(kRankRow, "peer", "metric") + format(kCells, "count", "mean", "p50", "p99", "max");
    for (const CommReport::Pair& p : c.pairs) {
      bool first = true;
      for (int m = 0; m < kMetrics; ++m) {
        if (!p.stats.h[m].count) continue;
        std::string who = first ? peer_text(p.peer) + (p.internal ? "i" : "") : "";
        out += format(kRankRow, who.c_str(), kMetricText[m]) + time_cells(p.stats.h[m]);
        first = false;
      }
    }
  }
  return out + quiet_line(quiet);
}

std::string rank_csv(const RankReport& rr) {
  std::string out = kCsvHeader;
  std::string rank = std::to_string(g.world_rank);
  for (const CommReport& c : rr.comms) {
    for (const CommReport::Pair& p : c.pairs)
      for (int m = 0; m < kMetrics; ++m)
        if (p.stats.h[m].count) out += csv_time_row(rank, c, peer_text(p.peer), p.internal, m, p.stats.h[m]);
    for (int t = 0; t < (g.keep_internal ? 2 : 1); ++t) {
      const char* traffic = t ? "internal" : "user";
      out +=
          csv_value_row(rank, &c, traffic, "posted_q_high_water", static_cast<unsigned long long>(c.high_water[t][0]));
      out += csv_value_row(rank, &c, traffic, "unexpected_q_high_water",
                           static_cast<unsigned long long>(c.high_water[t][1]));
    }
    out += csv_value_row(rank, &c, "user", "cancelled_receives", c.cancelled);
    out += csv_value_row(rank, &c, "internal", "filtered_events", c.filtered);
    out += csv_value_row(rank, &c, "user", "unmatched_events", c.unmatched);
    out += csv_value_row(rank, &c, "user", "lost_samples", c.lost);
  }
  out += csv_value_row(rank, nullptr, "*", "dropped_lock_not_grantable", rr.dropped);
  out += csv_value_row(rank, nullptr, "*", "dropped_table_full", rr.table_full);
  out += csv_value_row(rank, nullptr, "*", "dropped_too_many_comms", rr.lost_comms);
  out += csv_value_row(rank, nullptr, "*", "open_requests_at_finalize", rr.open_requests);
  out += csv_value_row(rank, nullptr, "*", "open_messages_at_finalize", rr.open_messages);
  return out;
}

// ---------------------------------------------------------------- the job-wide summary

// What each rank sends rank 0: per communicator its counters, one histogram
// per (traffic, metric) merged over peers (sparse), and its busiest pairs.
class Writer {
 public:
  void u64(uint64_t v) { s_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& v) {
    u64(v.size());
    s_ += v;
  }
  void hist(const Histogram& h) {
    u64(h.count);
    if (!h.count) return;
    u64(h.sum);
    u64(h.min);
    u64(h.max);
    uint64_t n = 0;
    for (uint64_t b : h.bins) n += b != 0;
    u64(n);
    for (int b = 0; b < Histogram::kBuckets; ++b)
      if (h.bins[b]) {
        u64(static_cast<uint64_t>(b));
        u64(h.bins[b]);
      }
  }
  std::string& bytes() { return s_; }

 private:
  std::string s_;
};

class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), end_(p + n) {}
  bool ok() const { return ok_; }
  uint64_t u64() {
    uint64_t v = 0;
    if (end_ - p_ < static_cast<ptrdiff_t>(sizeof v)) {
      ok_ = false;
      return 0;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok_ || static_cast<uint64_t>(end_ - p_) < n) {
      ok_ = false;
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  void hist(Histogram& into) {
    Histogram h;
    h.count = u64();
    if (!h.count) return;
    h.sum = u64();
    h.min = u64();
    h.max = u64();
    uint64_t n = u64();
    for (uint64_t i = 0; i < n && ok_; ++i) {
      uint64_t b = u64(), c = u64();
      if (b >= static_cast<uint64_t>(Histogram::kBuckets)) {
        ok_ = false;
        return;
      }
      h.bins[b] = c;
    }
    if (ok_) into.merge(h);
  }

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

constexpr size_t kTopPairsPerRank = 16;
constexpr size_t kTopPairsShown = 10;

struct TopPair {
  int world_rank, rank, peer;  // rank and peer: ranks in the communicator
  uint64_t total;              // ns in both queues
  Histogram posted, unexpected;
};

struct CommSummary {
  std::string label, name;
  int size = -1, ranks = 0, serial = 0, merged = 0;
  bool freed = false;
  int64_t high_water[2][2] = {};
  int high_water_rank[2][2] = {};
  uint64_t filtered = 0, cancelled = 0, unmatched = 0, lost = 0;
  Histogram h[2][kMetrics];
  std::vector<TopPair> top;
};

std::string encode(const RankReport& rr, const std::string& text) {
  Writer w;
  w.u64(static_cast<uint64_t>(g.world_rank));
  w.u64(rr.dropped);
  w.u64(rr.table_full);
  w.u64(rr.lost_comms);
  w.str(text);
  w.u64(rr.comms.size());
  for (const CommReport& c : rr.comms) {
    w.str(c.label);
    w.str(c.name);
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(c.size)));
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(c.rank)));
    w.u64(static_cast<uint64_t>(c.serial));
    w.u64(c.freed);
    w.u64(static_cast<uint64_t>(c.merged));
    for (int t = 0; t < 2; ++t)
      for (int q = 0; q < 2; ++q) w.u64(static_cast<uint64_t>(c.high_water[t][q]));
    w.u64(c.filtered);
    w.u64(c.cancelled);
    w.u64(c.unmatched);
    w.u64(c.lost);
    for (int t = 0; t < 2; ++t)
      for (int m = 0; m < kMetrics; ++m) {
        Histogram all;
        for (const CommReport::Pair& p : c.pairs)
          if (p.internal == t) all.merge(p.stats.h[m]);
        w.hist(all);
      }
    std::vector<const CommReport::Pair*> busiest;
    for (const CommReport::Pair& p : c.pairs)
      if (!p.internal && (p.stats.h[kPosted].count || p.stats.h[kUnexpected].count)) busiest.push_back(&p);
    auto total = [](const CommReport::Pair* p) { return p->stats.h[kPosted].sum + p->stats.h[kUnexpected].sum; };
    std::sort(busiest.begin(), busiest.end(), [&](auto* a, auto* b) { return total(a) > total(b); });
    if (busiest.size() > kTopPairsPerRank) busiest.resize(kTopPairsPerRank);
    w.u64(busiest.size());
    for (const CommReport::Pair* p : busiest) {
      w.u64(static_cast<uint64_t>(static_cast<int64_t>(p->peer)));
      w.hist(p->stats.h[kPosted]);
      w.hist(p->stats.h[kUnexpected]);
    }
  }
  return std::move(w.bytes());
}

struct Merged {
  std::vector<CommSummary> comms;
  std::vector<std::string> texts;  // per rank, in rank order
  uint64_t dropped = 0, table_full = 0, lost_comms = 0;
  int ranks = 0, unreadable = 0;
};

void decode_into(Merged& out, const std::string& blob) {
  Reader r(blob.data(), blob.size());
  int rank = static_cast<int>(r.u64());
  out.dropped += r.u64();
  out.table_full += r.u64();
  out.lost_comms += r.u64();
  out.texts.push_back(r.str());
  uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::string label = r.str(), name = r.str();
    auto it = std::find_if(out.comms.begin(), out.comms.end(), [&](const CommSummary& c) { return c.label == label; });
    if (it == out.comms.end()) {
      out.comms.emplace_back();
      it = out.comms.end() - 1;
      it->label = label;
      it->name = name;
    }
    CommSummary& c = *it;
    c.size = static_cast<int>(static_cast<int64_t>(r.u64()));
    int comm_rank = static_cast<int>(static_cast<int64_t>(r.u64()));
    int serial = static_cast<int>(r.u64());
    if (c.ranks == 0 || serial < c.serial) c.serial = serial;
    c.freed = r.u64() != 0;
    c.merged = std::max(c.merged, static_cast<int>(r.u64()));
    ++c.ranks;
    for (int t = 0; t < 2; ++t)
      for (int q = 0; q < 2; ++q) {
        int64_t v = static_cast<int64_t>(r.u64());
        if (c.ranks == 1 || v > c.high_water[t][q]) {
          c.high_water[t][q] = v;
          c.high_water_rank[t][q] = comm_rank;
        }
      }
    c.filtered += r.u64();
    c.cancelled += r.u64();
    c.unmatched += r.u64();
    c.lost += r.u64();
    for (int t = 0; t < 2; ++t)
      for (int m = 0; m < kMetrics; ++m) r.hist(c.h[t][m]);
    uint64_t pairs = r.u64();
    for (uint64_t k = 0; k < pairs && r.ok(); ++k) {
      TopPair tp{};
      tp.world_rank = rank;
      tp.rank = comm_rank;
      tp.peer = static_cast<int>(static_cast<int64_t>(r.u64()));
      r.hist(tp.posted);
      r.hist(tp.unexpected);
      tp.total = tp.posted.sum + tp.unexpected.sum;
      c.top.push_back(tp);
    }
  }
  if (!r.ok()) ++out.unreadable;
  ++out.ranks;
}

std::string summary_text(Merged& m) {
  uint64_t filtered = 0;
  for (const CommSummary& c : m.comms) filtered += c.filtered;
  std::string out = format("sonde-residence summary: %d ranks, every communicator merged over its ranks\n", m.ranks);
  out += "  times: count, mean and max exact; p50 and p99 from log-scaled histograms (within 6.25%)\n";
  out += "  internal collective traffic (tag <= -16): " + filter_note(filtered) + "\n";
  out += format(
      "  dropped records: %llu (PERUSE lock not grantable), %llu (tables full), %llu (too many "
      "communicators)\n",
      static_cast<unsigned long long>(m.dropped), static_cast<unsigned long long>(m.table_full),
      static_cast<unsigned long long>(m.lost_comms));
  if (m.unreadable) out += format("  %d rank reports could not be read\n", m.unreadable);
  if (!g.supported) out += "  nothing measured: " + g.problem + "\n";
  std::vector<std::string> quiet;
  for (CommSummary& c : m.comms) {
    bool any = false;
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k) any = any || c.h[t][k].count;
    if (!any) {
      quiet.push_back(c.label);
      continue;
    }
    out += "\n  " + c.label;
    if (!c.name.empty() && c.name != c.label) out += " \"" + c.name + "\"";
    out += format(" (size %d, seen on %d ranks%s)\n", c.size, c.ranks, c.freed ? ", freed before MPI_Finalize" : "");
    out += format("    queue high-water marks: posted %lld (rank %d), unexpected %lld (rank %d)",
                  static_cast<long long>(c.high_water[0][0]), c.high_water_rank[0][0],
                  static_cast<long long>(c.high_water[0][1]), c.high_water_rank[0][1]);
    if (g.keep_internal)
      out += format(" (internal: posted %lld, unexpected %lld)", static_cast<long long>(c.high_water[1][0]),
                    static_cast<long long>(c.high_water[1][1]));
    out += format("; cancelled receives %llu\n", static_cast<unsigned long long>(c.cancelled));
    out += format(kSummaryRow, "metric (all ranks and peers)") + format(kCells, "count", "mean", "p50", "p99", "max");
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k)
        if (c.h[t][k].count)
          out +=
              format(kSummaryRow, (std::string(t ? "internal " : "") + kMetricText[k]).c_str()) + time_cells(c.h[t][k]);
    if (!c.top.empty()) {
      std::sort(c.top.begin(), c.top.end(), [](const TopPair& a, const TopPair& b) { return a.total > b.total; });
      out += "    where receives and messages waited longest (receiver <- sender, ranks in this communicator):\n";
      out += format("    %-13s %9s %10s %10s %14s %10s %10s\n", "rank <- peer", "posted n", "mean", "max",
                    "unexpected n", "mean", "max");
      for (size_t i = 0; i < c.top.size() && i < kTopPairsShown; ++i) {
        const TopPair& p = c.top[i];
        std::string who = format("%d <- %s", p.rank, peer_text(p.peer).c_str());
        auto mean = [](const Histogram& h) { return h.count ? human(h.mean()) : std::string("-"); };
        auto max = [](const Histogram& h) { return h.count ? human(static_cast<double>(h.max)) : std::string("-"); };
        out += format("    %-13s %9llu %10s %10s %14llu %10s %10s\n", who.c_str(),
                      static_cast<unsigned long long>(p.posted.count), mean(p.posted).c_str(), max(p.posted).c_str(),
                      static_cast<unsigned long long>(p.unexpected.count), mean(p.unexpected).c_str(),
                      max(p.unexpected).c_str());
      }
    }
  }
  return out + quiet_line(quiet);
}

std::string summary_csv(const Merged& m) {
  std::string out = kCsvHeader;
  for (const CommSummary& s : m.comms) {
    CommReport c;  // the columns csv_*_row print
    c.label = s.label;
    c.name = s.name;
    c.size = s.size;
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k)
        if (s.h[t][k].count) out += csv_time_row("all", c, "*", t, k, s.h[t][k]);
    for (int t = 0; t < (g.keep_internal ? 2 : 1); ++t) {
      const char* traffic = t ? "internal" : "user";
      out +=
          csv_value_row("all", &c, traffic, "posted_q_high_water", static_cast<unsigned long long>(s.high_water[t][0]));
      out += csv_value_row("all", &c, traffic, "unexpected_q_high_water",
                           static_cast<unsigned long long>(s.high_water[t][1]));
    }
    out += csv_value_row("all", &c, "user", "cancelled_receives", s.cancelled);
    out += csv_value_row("all", &c, "internal", "filtered_events", s.filtered);
    out += csv_value_row("all", &c, "user", "unmatched_events", s.unmatched);
    out += csv_value_row("all", &c, "user", "lost_samples", s.lost);
    out += csv_value_row("all", &c, "*", "ranks", static_cast<unsigned long long>(s.ranks));
    // The busiest pairs, per rank (rank = receiver, peer = sender).
    for (const TopPair& p : s.top) {
      if (p.posted.count) out += csv_time_row(std::to_string(p.world_rank), c, peer_text(p.peer), 0, kPosted, p.posted);
      if (p.unexpected.count)
        out += csv_time_row(std::to_string(p.world_rank), c, peer_text(p.peer), 0, kUnexpected, p.unexpected);
    }
  }
  out += csv_value_row("all", nullptr, "*", "dropped_lock_not_grantable", m.dropped);
  out += csv_value_row("all", nullptr, "*", "dropped_table_full", m.table_full);
  out += csv_value_row("all", nullptr, "*", "dropped_too_many_comms", m.lost_comms);
  return out;
}

// ---------------------------------------------------------------- output

bool make_dirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) std::remove(tmp.c_str());
  return ok;
}

void say(const std::string& text) {
  std::fflush(stdout);  // the program's own output first
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

// Everyone's blob to rank 0 over the private communicator.
std::vector<std::string> gather_blobs(const std::string& mine) {
  std::vector<std::string> all;
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(g.world_rank == 0 ? static_cast<size_t>(g.world_size) : 1);
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, g.report_comm);
  if (g.world_rank != 0) {
    PMPI_Send(mine.data(), len, MPI_BYTE, 0, 1, g.report_comm);
    return all;
  }
  all.push_back(mine);
  for (int r = 1; r < g.world_size; ++r) {
    std::string blob(static_cast<size_t>(lens[static_cast<size_t>(r)]), '\0');
    PMPI_Recv(blob.data(), lens[static_cast<size_t>(r)], MPI_BYTE, r, 1, g.report_comm, MPI_STATUS_IGNORE);
    all.push_back(std::move(blob));
  }
  return all;
}

void finish() {
  if (!g.started || g.finished) return;
  g.finished = true;
  RankReport rr;
  if (g.supported) {
    // Names first (an MPI call each, so outside the lock).
    std::vector<std::pair<int32_t, MPI_Comm>> live;
    {
      ToolLock lock;
      for (int32_t i = 0; i < kMaxComms; ++i)
        if (g.comms[i].used) live.emplace_back(i, g.comms[i].handle);
    }
    std::vector<std::string> names;
    for (auto& [i, h] : live) {
      char name[MPI_MAX_OBJECT_NAME] = "";
      int len = 0;
      if (PMPI_Comm_get_name(h, name, &len) != MPI_SUCCESS) name[0] = 0;
      names.emplace_back(name);
    }
    std::vector<peruse_event_h> to_release;
    {
      ToolLock lock;
      flush_pending();
      g_collecting.store(false);
      for (size_t k = 0; k < live.size(); ++k) {
        const CommRec& c = g.comms[live[k].first];
        if (!c.used || c.handle != live[k].second) continue;
        rr.comms.push_back(snapshot(c, live[k].first, names[k].c_str()));
        if (c.registered) to_release.insert(to_release.end(), c.handles, c.handles + kNumWatched);
      }
      for (CommReport& c : g.closed) rr.comms.push_back(std::move(c));
      if (!g.overflow.label.empty()) rr.comms.push_back(std::move(g.overflow));
      rr.dropped = g_dropped.load();
      rr.table_full = g.table_full;
      rr.lost_comms = g.lost_comms;
      rr.open_requests = g.requests.size();
      rr.open_messages = g.messages.size();
    }
    for (peruse_event_h& h : to_release)
      if (h != PERUSE_EVENT_HANDLE_NULL) PERUSE_Event_release(&h);
    std::stable_sort(rr.comms.begin(), rr.comms.end(),
                     [](const CommReport& a, const CommReport& b) { return a.serial < b.serial; });
  }

  std::string text = rank_text(rr);
  bool to_files = !g.out_dir.empty();
  if (to_files && !make_dirs(g.out_dir)) {
    say(format("sonde-residence: cannot create %s (%s); reporting on stderr\n", g.out_dir.c_str(),
               std::strerror(errno)));
    to_files = false;
  }
  // Every rank must make the same choice for the gather below; a rank that
  // could not write its files still sends its text to rank 0.
  std::string prefix = g.out_dir + "/rank" + std::to_string(g.world_rank);
  bool wrote = to_files && write_file(prefix + ".txt", text) && write_file(prefix + ".csv", rank_csv(rr));
  if (to_files && !wrote) say(format("sonde-residence: rank %d could not write %s.*\n", g.world_rank, prefix.c_str()));

  std::vector<std::string> blobs = gather_blobs(encode(rr, wrote ? std::string() : text));
  if (g.world_rank != 0) return;
  Merged m;
  for (const std::string& b : blobs) decode_into(m, b);
  std::stable_sort(m.comms.begin(), m.comms.end(),
                   [](const CommSummary& a, const CommSummary& b) { return a.serial < b.serial; });
  std::string summary = summary_text(m);
  std::string out;
  for (const std::string& t : m.texts) out += t.empty() ? "" : t + "\n";
  if (!to_files || !write_file(g.out_dir + "/summary.txt", summary) ||
      !write_file(g.out_dir + "/summary.csv", summary_csv(m))) {
    out += summary;
  } else {
    out += format("sonde-residence: reports of %d ranks in %s/rank<R>.{txt,csv}, job summary in %s/summary.{txt,csv}\n",
                  m.ranks, g.out_dir.c_str(), g.out_dir.c_str());
  }
  say(out);
}

}  // namespace

// ---------------------------------------------------------------- the interceptors

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start(MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int level = MPI_THREAD_SINGLE;
  int rc = PMPI_Init_thread(argc, argv, required, &level);
  if (provided) *provided = level;
  if (rc == MPI_SUCCESS) start(level);
  return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && g_collecting.load() && newcomm) announce(comm, *newcomm, false, 0);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS && g_collecting.load() && newcomm) announce(comm, *newcomm, true, color);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (!g_collecting.load() || !comm) return PMPI_Comm_free(comm);
  MPI_Comm handle = *comm;
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  if (PMPI_Comm_get_name(handle, name, &len) != MPI_SUCCESS) name[0] = 0;
  int rc = PMPI_Comm_free(comm);
  if (rc != MPI_SUCCESS) return rc;
  peruse_event_h handles[kNumWatched];
  bool registered = false;
  {
    ToolLock lock;
    int32_t ci = comm_index(handle, false);
    if (ci >= 0) {
      CommRec& c = g.comms[ci];
      registered = c.registered;
      if (registered) std::memcpy(handles, c.handles, sizeof handles);
      keep_closed(snapshot(c, ci, name));
      retire(ci);
    }
  }
  // Our own handles on it (split results); PERUSE released propagated ones.
  if (registered) unwatch(handles);
  return rc;
}

int MPI_Finalize(void) {
  finish();
  return PMPI_Finalize();
}

}  // extern "C"
