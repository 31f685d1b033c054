// The shared segment's waits, its making and mapping, and what the calls
// share for reading and combining slots (shared_segment.h).
#include "coll/shared_segment.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "core/introspect.h"
#include "core/node_segment.h"
#include "core/p2p.h"
#include "core/process.h"
#include "core/remote_copy.h"
#include "core/stamp.h"
#include "datatype/op.h"

namespace sonde::engine::coll::shared {
using namespace detail;

namespace {

size_t segment_bytes(int p, uint64_t slot) {
  return sizeof(Head) + sizeof(Control) * size_t(p) + size_t(p) * Layout(slot).rank_bytes;
}

// Bytes of the segments this process made that are still mapped (rank 0 of
// each communicator makes its segment). Past kMaxMadeBytes it makes no more
// and those communicators stay on point-to-point, so an application with
// many communicators does not fill /dev/shm, which the shm transport and
// windows need too.
constexpr size_t kMaxMadeBytes = size_t(64) << 20;
size_t g_made_bytes = 0;

}  // namespace

State::~State() {
  munmap(base_, len_);
  if (me == 0) g_made_bytes -= len_;
}

namespace {

// ---- waits, and what snapshots see of them ---------------------------------------

// One rank's wait in a call, on one rank (`only`) or every other rank
// below `below` (only < 0): for its data of call `seq` (data), else for its
// arrive to reach `need`. Linked while it spins, for snapshots.
struct Wait {
  Comm* comm;
  const State* st;
  int kind;
  uint64_t seq;
  int only;
  int below;
  bool data;
  Tier tier;
  uint64_t need;
  uint64_t since;
  Wait* next;
};
Wait* g_waits = nullptr;

void visit_waits(void (*f)(const introspect::RequestView&, void*), void* arg) {
  for (const Wait* w = g_waits; w; w = w->next) {
    for (int j = 0; j < w->st->p; ++j) {
      if (j == w->st->me || j >= w->below || (w->only >= 0 && j != w->only) ||
          got(*w->st, j, w->data, w->tier, w->seq, w->need, true))
        continue;
      introspect::RequestView v;
      v.id = reinterpret_cast<const char*>(w) + j;
      v.context = w->comm->context;
      v.peer = j;
      v.tag = tag_of(w->kind, w->seq);
      v.type = "MPI_BYTE";
      v.stage = introspect::Stage::kPosted;
      v.since = w->since;
      f(v, arg);
    }
  }
}

struct RegisterWaits {
  RegisterWaits() { introspect::set_requestless_waits(visit_waits); }
} g_register_waits;

}  // namespace

void await_slow(State& st, Comm* c, int kind, uint64_t seq, int only, bool data, Tier tier, uint64_t need, int below,
                int from) {
  if (c->coll_since == 0) c->coll_since = stamp_now();
  Wait w{c, &st, kind, seq, only, below, data, tier, need, c->coll_since, g_waits};
  g_waits = &w;
  int idle = 0;
  // A refusal is rare: looked for on every 32nd poll only.
  for (unsigned polls = 1; !reached(st, only, below, data, tier, seq, need, from, polls % 32 == 0); ++polls) {
    if (progress() == 0) engine().idle(idle);
    else idle = 0;
  }
  Wait** link = &g_waits;  // other threads' waits may have been linked meanwhile
  while (*link != &w) link = &(*link)->next;
  *link = w.next;
  if (only < 0 && below == st.p && !data && need > st.floor) st.floor = need;
}

void await_floor(State& st, Comm* c, int kind, uint64_t seq, uint64_t need) {
  await(st, c, kind, seq, -1, false, kLineTier, need);
  uint64_t least = UINT64_MAX;
  for (int j = 0; j < st.p; ++j)
    if (j != st.me) least = std::min(least, st.arrive(j));
  st.floor = least;
}

// ---- reading and combining slots ---------------------------------------------------

// A contiguous type combines in pieces of about kCombinePiece bytes, each
// finished while it is still in this core's cache (MPI operations work
// element by element, so the pieces give the same bits).
constexpr int64_t kCombinePiece = 8192;

int combine(const State& st, uint64_t seq, Tier tier, int n, int64_t skip, int64_t total, void* out, int64_t count,
            Datatype* type, MPI_Op op, const void* mine) {
  const uint64_t bytes = uint64_t(total * type->size);
  const uint8_t* d[kMaxRanks];
  for (int j = 0; j < n; ++j)
    if (j != st.me || !mine) {
      if (const int rc = data_of(st, j, seq, tier, bytes, &d[j]); rc != MPI_SUCCESS) return rc;
      d[j] += skip * type->size;
    }
  if (mine) mine = at(mine, skip, type);
  if (n == 1) {
    if (st.me == 0 && mine) return copy(mine, count, type, out, count, type);
    unpack_from(d[0], out, count, type);
    return MPI_SUCCESS;
  }
  if (type->contiguous) {
    const int64_t size = type->size, step = std::max<int64_t>(1, kCombinePiece / size);
    for (int64_t k0 = 0; k0 < count; k0 += step) {
      const int64_t k = std::min(step, count - k0);
      uint8_t* o = at(out, k0, type);
      auto in = [&](int j) {
        return j == st.me && mine ? static_cast<const void*>(at(mine, k0, type)) : d[j] + k0 * size - type->true_lb;
      };
      // The last two contributions combine straight into `out`, the rest
      // fold into it in place.
      if (const int rc = reduce_local_into(in(n - 2), in(n - 1), o, k, *type, op); rc != MPI_SUCCESS) return rc;
      for (int j = n - 3; j >= 0; --j)
        if (const int rc = reduce_local(in(j), o, k, *type, op); rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
  }
  if (n - 1 == st.me && mine) {
    if (const int rc = copy(mine, count, type, out, count, type); rc != MPI_SUCCESS) return rc;
  } else {
    unpack_all(d[n - 1], out, count, type);
  }
  TypedScratch scratch;
  void* tmp = nullptr;
  for (int j = n - 2; j >= 0; --j) {
    const void* in;
    if (j == st.me && mine) {
      in = mine;
    } else {
      if (!tmp) tmp = scratch.allocate(count, type);
      unpack_all(d[j], tmp, count, type);
      in = tmp;
    }
    if (const int rc = reduce_local(in, out, count, *type, op); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// ---- making and mapping the segment ------------------------------------------------

namespace {

struct Record {
  char name[96];
  uint64_t nonce;
  uint64_t slot;
  uint64_t ok;
};

// Rank 0: a new segment for c, named after the job so the launcher removes
// it if a rank dies before it is unlinked. Null when it cannot be made.
uint8_t* create(Comm* c, Record* rec) {
  const char* job = process().shm_job_id;
  if (!job[0]) return nullptr;
  static unsigned serial = 0;
  std::snprintf(rec->name, sizeof rec->name, "/sonde-%s-coll-%d-%u", job, int(getpid()), ++serial);
  rec->slot = (engine().settings().coll_shared_bytes + 63) / 64 * 64;
  const size_t len = segment_bytes(c->size, rec->slot);
  if (g_made_bytes + len > kMaxMadeBytes) return nullptr;
  uint8_t* p = create_node_segment(rec->name, len);
  if (!p) return nullptr;
  rec->nonce = node_segment_nonce();
  new (p) Head{rec->nonce, uint64_t(c->size), rec->slot};
  rec->ok = 1;
  return p;
}

// The other ranks: rank 0's segment, if it is exactly what the record says.
uint8_t* open_segment(Comm* c, const Record& rec) {
  const size_t len = segment_bytes(c->size, rec.slot);
  uint8_t* p = open_node_segment(rec.name, len);
  if (!p) return nullptr;
  const auto* head = reinterpret_cast<const Head*>(p);
  if (head->nonce != rec.nonce || head->ranks != uint64_t(c->size) || head->slot != rec.slot) {
    munmap(p, len);
    return nullptr;
  }
  return p;
}

bool eligible(const Comm* c) {
  if (c->inter || c->size < 2 || c->size > kMaxRanks) return false;
  for (int w : c->world)
    if (!on_this_node(w)) return false;
  return true;
}

}  // namespace

void decide_now(Comm* c) {
  c->coll_shared_decided = true;  // the nested calls below run point-to-point
  if (!eligible(c)) return;
  // The nested calls' sequence numbers are given back afterwards, so the
  // numbers tools and hang reports show count the user's calls only. Their
  // tags come back with the next two calls, which is safe: every rank has
  // received all it was sent in the nested Bcast before any rank finishes
  // the Allreduce, and a call reusing the Allreduce's tag is matched after
  // it, in order.
  const uint64_t seq = c->coll_seq;
  Record rec{};
  uint8_t* base = nullptr;
  const bool wanted = engine().settings().coll_shared;
  if (c->rank == 0 && wanted) base = create(c, &rec);
  int rc = coll::bcast(&rec, int64_t(sizeof rec), byte_type(), 0, c);
  if (rc == MPI_SUCCESS && c->rank != 0 && rec.ok && wanted) base = open_segment(c, rec);
  std::shared_ptr<State> st;
  if (base) {
    const size_t len = segment_bytes(c->size, rec.slot);
    try {
      st = std::make_shared<State>(base, len, c->size, c->rank, rec.slot);
      if (c->rank == 0) g_made_bytes += len;  // given back by ~State
    } catch (const std::bad_alloc&) {
      munmap(base, len);
    }
  }
  uint8_t mapped = st != nullptr, all = 0;
  if (rc == MPI_SUCCESS) rc = coll::allreduce(&mapped, &all, 1, byte_type(), MPI_BAND, c);
  if (c->rank == 0 && rec.ok) shm_unlink(rec.name);  // every rank has mapped it or given up
  c->coll_seq = seq;
  if (rc == MPI_SUCCESS && all) c->coll_shared = std::move(st);  // else st unmaps it
}

void skipped(Comm* c) {
  if (State* st = state(c)) publish(*st, c->coll_seq);
}

}  // namespace sonde::engine::coll::shared
