// Shared-segment collectives (shared.h): the segment's layout and life,
// the protocol that lets ranks reuse their slots, and the six calls.
//
// The segment: a head line, one control line per rank (its `arrive`), then
// per rank three tiers of slots, each slot a 16-byte header {seq, bytes}
// and room for data: kLines line slots (up to 48 bytes of data, in one
// line), kPhases medium slots (up to `medium` bytes: the segment's slot
// size, at most kMediumMax) and, when the slot size is larger than that,
// kLargePhases large slots (up to `slot` bytes). A call uses the smallest
// tier its one-rank contribution fits in; below, "slot" is any of them,
// and kPhases stands for the tier's slot count. Rank r alone writes its
// control line and its slots. A call with sequence number s (the
// communicator's coll_seq, the same on every member) uses phase
// s % kPhases of its tier:
// - a rank with data for s first waits until every other rank has passed
//   the call that last wrote that phase of its slot (their `arrive` is
//   beyond it: they finished reading it), writes the data and `bytes`,
//   stores the header's seq = s (release), then arrive = s;
// - a rank without data for s (a Bcast's receivers, a Barrier) only stores
//   arrive = s;
// - a rank that needs r's data waits until r's header for the phase says s
//   or r's arrive reached s (acquire): the header is then s, or r refused
//   the call. r cannot overwrite that slot before this rank's arrive moves
//   past s, which it does only in a later call.
// arrive = s also says the rank finished every call before s, which is
// what the slot reuse above relies on; a rank entering call s first
// publishes s - 1 (the calls between that ran point-to-point publish
// nothing). A reader thus touches one line of the writer's for small data
// (header and data share it), and a rooted call's root returns as soon as
// its data is written (a Bcast's root, a Reduce's senders), up to
// kPhases - 1 calls ahead of the slowest reader; a writer reads the
// others' control lines about once per kPhases / 2 calls.
#include "coll/shared.h"

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

namespace sonde::engine::coll::shared {
using namespace detail;

namespace {

// Contributions of at most kLineData bytes go to line slots: a header and
// the data in one 64-byte line, kLines of them per rank, so a root may run
// far ahead (which matters most when ranks outnumber cores and every wait
// may cost a time slice).
constexpr int kLines = 256;
constexpr uint64_t kLineData = 48;
// Up to kMediumMax bytes: kPhases medium slots; larger ones (up to the
// slot size) kLargePhases large slots, fewer since each costs more of the
// segment and a call that large is bound by copying, not by waiting.
constexpr int kPhases = 8;
constexpr uint64_t kMediumMax = 4096;
constexpr int kLargePhases = 4;
enum Tier { kLineTier, kMediumTier, kLargeTier, kTiers };
static_assert((kLines & (kLines - 1)) == 0 && (kPhases & (kPhases - 1)) == 0 &&
                  (kLargePhases & (kLargePhases - 1)) == 0,
              "a call's slot is its sequence number masked");
// Allgather and Alltoall take the segment up to kMediumMax bytes per rank
// only: every rank copies every contribution out of it, which above that
// costs more than point-to-point's single copy. A reduction takes it while
// p times its vector is at most kCombineSpan: the ranks that combine read
// every member's vector, against about two vectors' worth for the
// point-to-point algorithms at large sizes.
constexpr uint64_t kCombineSpan = 256 * 1024;

struct alignas(64) Control {
  // This rank finished every call before this one and, if it has data for
  // this one, wrote it.
  std::atomic<uint64_t> arrive;
};
struct SlotHead {
  std::atomic<uint64_t> seq;  // the call whose data the slot holds
  uint64_t bytes;             // packed bytes the writer put there (per block for Alltoall)
};
constexpr size_t kSlotHead = sizeof(SlotHead);  // data follows, 16-byte aligned
static_assert(sizeof(Control) == 64 && kSlotHead == 16 && std::atomic<uint64_t>::is_always_lock_free);

struct alignas(64) Head {
  uint64_t nonce;  // proves the mapping is the creator's segment
  uint64_t ranks;
  uint64_t slot;
};

// Where one rank's slots lie for a segment with slot size `slot`: its
// line slots, then its medium slots, then its large ones (none when the
// slot size is at most kMediumMax).
struct Layout {
  struct Part {
    size_t offset;                                                    // from the start of the rank's slots
    size_t stride;                                                    // one slot with its header, in whole lines
    uint64_t slots;                                                   // how many: a power of two, or 0
    uint64_t room;                                                    // data bytes one slot holds
    uint64_t index(uint64_t seq) const { return seq & (slots - 1); }  // call seq's slot
  };
  Part tier[kTiers];
  size_t rank_bytes;  // all of one rank's slots

  explicit Layout(uint64_t slot) {
    const uint64_t medium = std::min(slot, kMediumMax);
    tier[kLineTier] = {0, 64, kLines, kLineData};
    tier[kMediumTier] = {kLines * 64, stride(medium), kPhases, medium};
    tier[kLargeTier] = {tier[kMediumTier].offset + kPhases * tier[kMediumTier].stride, stride(slot),
                        slot > kMediumMax ? uint64_t(kLargePhases) : 0, slot};
    rank_bytes = tier[kLargeTier].offset + tier[kLargeTier].slots * tier[kLargeTier].stride;
  }
  static size_t stride(uint64_t room) { return (kSlotHead + size_t(room) + 63) / 64 * 64; }
};
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

class State {
 public:
  State(uint8_t* base, size_t len, int p, int me, uint64_t slot)
      : slot(slot), p(p), me(me), base_(base), len_(len), layout_(slot) {
    for (int t = 1; t < kTiers; ++t) last_first_[t] = last_first_[t - 1] + size_t(layout_.tier[t - 1].slots);
  }
  ~State() {
    munmap(base_, len_);
    if (me == 0) g_made_bytes -= len_;
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  Control& ctl(int r) const { return reinterpret_cast<Control*>(base_ + sizeof(Head))[r]; }
  // The tier a one-rank contribution of n bytes uses (n <= slot).
  Tier tier(uint64_t n) const { return n <= kLineData ? kLineTier : n <= medium() ? kMediumTier : kLargeTier; }
  // The largest one-rank contribution that uses a medium slot.
  uint64_t medium() const { return layout_.tier[kMediumTier].room; }
  uint64_t slots(Tier t) const { return layout_.tier[t].slots; }
  uint64_t room(Tier t) const { return layout_.tier[t].room; }
  // r's slot of the tier for call seq.
  SlotHead& head(int r, uint64_t seq, Tier t) const {
    const Layout::Part& part = layout_.tier[t];
    uint8_t* mine = base_ + sizeof(Head) + sizeof(Control) * size_t(p) + size_t(r) * layout_.rank_bytes;
    return *reinterpret_cast<SlotHead*>(mine + part.offset + part.index(seq) * part.stride);
  }
  uint8_t* data(int r, uint64_t seq, Tier t) const { return reinterpret_cast<uint8_t*>(&head(r, seq, t)) + kSlotHead; }
  uint64_t arrive(int r) const { return ctl(r).arrive.load(std::memory_order_acquire); }
  // r's data for call seq is there, or (refused: also reading r's
  // control line) r is past the call without it.
  bool has(int r, uint64_t seq, Tier t, bool refused) const {
    return head(r, seq, t).seq.load(std::memory_order_acquire) == seq || (refused && arrive(r) >= seq);
  }
  // The call that last wrote this rank's slot of the tier for call seq.
  uint64_t& last_write(uint64_t seq, Tier t) { return last_[last_first_[t] + layout_.tier[t].index(seq)]; }

  const uint64_t slot;  // the largest one-rank contribution
  const int p, me;
  uint64_t floor = 0;  // every other rank's arrive was at least this when last read

 private:
  uint8_t* const base_;
  const size_t len_;
  const Layout layout_;
  // The call that last wrote each of this rank's slots, tier after tier
  // (tier t's first at last_first_[t]).
  uint64_t last_[kLines + kPhases + kLargePhases] = {};
  size_t last_first_[kTiers] = {};
};

State* state(Comm* c) { return static_cast<State*>(c->coll_shared.get()); }

// ---- waits, and what snapshots see of them ---------------------------------------

// One rank's wait in a call, on one rank (`only`) or every other rank
// (only < 0): for its data of call `seq` (data), else for its arrive to
// reach `need`. Linked while it spins, for snapshots.
struct Wait {
  Comm* comm;
  const State* st;
  int kind;
  uint64_t seq;
  int only;
  bool data;
  Tier tier;
  uint64_t need;
  uint64_t since;
  Wait* next;
};
Wait* g_waits = nullptr;

bool got(const State& st, int j, bool data, Tier tier, uint64_t seq, uint64_t need, bool refused = true) {
  return data ? st.has(j, seq, tier, refused) : st.arrive(j) >= need;
}

void visit_waits(void (*f)(const introspect::RequestView&, void*), void* arg) {
  for (const Wait* w = g_waits; w; w = w->next) {
    for (int j = 0; j < w->st->p; ++j) {
      if (j == w->st->me || (w->only >= 0 && j != w->only) || got(*w->st, j, w->data, w->tier, w->seq, w->need))
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

// `from` is the first rank not yet seen done; advanced past those that are.
// `refused`: also notice ranks that refused the call (a data wait then
// reads their control lines too, which their next store must take back).
bool reached(const State& st, int only, bool data, Tier tier, uint64_t seq, uint64_t need, int& from, bool refused) {
  if (only >= 0) return got(st, only, data, tier, seq, need, refused);
  for (; from < st.p; ++from)
    if (from != st.me && !got(st, from, data, tier, seq, need, refused)) return false;
  return true;
}

// Progresses the engine (other traffic, nonblocking operations) until
// `only`, or every other rank, has its data of call seq there (data) or
// its arrive at `need` or beyond.
void await(State& st, Comm* c, int kind, uint64_t seq, int only, bool data, Tier tier, uint64_t need) {
  int from = 0;
  if (!reached(st, only, data, tier, seq, need, from, true)) {
    if (c->coll_since == 0) c->coll_since = stamp_now();
    Wait w{c, &st, kind, seq, only, data, tier, need, c->coll_since, g_waits};
    g_waits = &w;
    int idle = 0;
    // A refusal is rare: looked for on every 32nd poll only.
    for (unsigned polls = 1; !reached(st, only, data, tier, seq, need, from, polls % 32 == 0); ++polls) {
      if (progress() == 0) engine().idle(idle);
      else idle = 0;
    }
    Wait** link = &g_waits;  // other threads' waits may have been linked meanwhile
    while (*link != &w) link = &(*link)->next;
    *link = w.next;
  }
  if (only < 0 && !data && need > st.floor) st.floor = need;
}

// Every other rank's arrive is at least `need`; st.floor becomes their
// least arrive.
void await_floor(State& st, Comm* c, int kind, uint64_t seq, uint64_t need) {
  await(st, c, kind, seq, -1, false, kLineTier, need);
  uint64_t least = UINT64_MAX;
  for (int j = 0; j < st.p; ++j)
    if (j != st.me) least = std::min(least, st.arrive(j));
  st.floor = least;
}

void publish(State& st, uint64_t seq) { st.ctl(st.me).arrive.store(seq, std::memory_order_release); }

// Takes the call's sequence number and publishes that every earlier call
// is done: calls that ran point-to-point publish nothing, and a writer
// waiting for its slot's phase must not wait for a number nobody would
// publish before entering this call.
uint64_t enter(State& st, Comm* c) {
  c->coll_since = 0;  // stamped if the call waits (await)
  const uint64_t seq = ++c->coll_seq;
  if (st.ctl(st.me).arrive.load(std::memory_order_relaxed) != seq - 1) publish(st, seq - 1);
  return seq;
}

// Writes this rank's data for call seq into its slot of the tier:
// `fill(slot)` puts `bytes` (per block: `blocks` of them) there once the
// slot is free. More than the slot holds is recorded but not written;
// readers then report the mismatch.
template <class Fill>
void write(State& st, Comm* c, int kind, uint64_t seq, Tier tier, uint64_t bytes, uint64_t blocks, Fill fill) {
  const uint64_t phases = st.slots(tier);
  uint64_t& last = st.last_write(seq, tier);
  // When it must wait, it waits until the others are at most half the
  // phases behind: that many calls then need no look at their lines.
  if (last != 0 && st.floor <= last) await_floor(st, c, kind, seq, std::max(last + 1, seq - phases / 2));
  if (bytes * blocks <= st.room(tier)) fill(st.data(st.me, seq, tier));
  SlotHead& h = st.head(st.me, seq, tier);
  h.bytes = bytes;
  h.seq.store(seq, std::memory_order_release);
  last = seq;
}

// Rank j's data for call seq (its arrive already reached seq), or an error
// class: j refused the call (MPI_ERR_OTHER), or its data is not `bytes`
// long (their type signatures differ: MPI_ERR_TRUNCATE).
int data_of(const State& st, int j, uint64_t seq, Tier tier, uint64_t bytes, const uint8_t** out) {
  const SlotHead& h = st.head(j, seq, tier);
  if (h.seq.load(std::memory_order_acquire) != seq) return MPI_ERR_OTHER;
  if (h.bytes != bytes) return MPI_ERR_TRUNCATE;
  *out = st.data(j, seq, tier);
  return MPI_SUCCESS;
}

// Packed bytes into / out of a user buffer: a contiguous type's in one copy.
void pack_to(const void* buf, int64_t count, const Datatype* type, uint8_t* out) {
  if (type->contiguous) std::memcpy(out, contiguous_start(*type, buf), size_t(count * type->size));
  else pack_all(buf, count, type, out);
}
void unpack_from(const uint8_t* in, void* buf, int64_t count, const Datatype* type) {
  if (type->contiguous) std::memcpy(contiguous_start(*type, buf), in, size_t(count * type->size));
  else unpack_all(in, buf, count, type);
}

// out = data_0 op (data_1 op (... op data_{p-1})): rank order, so a
// non-commutative operation combines as MPI requires, and every rank that
// combines gets the same bits. `mine`: this rank's input in the user's
// layout (not out), or null to read it from its slot like the others'.
// A contiguous type combines in pieces of about kCombinePiece bytes, each
// finished while it is still in this core's cache (MPI operations work
// element by element, so the pieces give the same bits).
constexpr int64_t kCombinePiece = 8192;
int combine(const State& st, uint64_t seq, Tier tier, void* out, int64_t count, Datatype* type, MPI_Op op,
            const void* mine) {
  const uint64_t n = uint64_t(count * type->size);
  const uint8_t* d[kMaxRanks];
  for (int j = 0; j < st.p; ++j)
    if (j != st.me || !mine)
      if (const int rc = data_of(st, j, seq, tier, n, &d[j]); rc != MPI_SUCCESS) return rc;
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
      if (const int rc = reduce_local_into(in(st.p - 2), in(st.p - 1), o, k, *type, op); rc != MPI_SUCCESS) return rc;
      for (int j = st.p - 3; j >= 0; --j)
        if (const int rc = reduce_local(in(j), o, k, *type, op); rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
  }
  if (st.me == st.p - 1 && mine) {
    if (const int rc = copy(mine, count, type, out, count, type); rc != MPI_SUCCESS) return rc;
  } else {
    unpack_all(d[st.p - 1], out, count, type);
  }
  TypedScratch scratch;
  void* tmp = nullptr;
  for (int j = st.p - 2; j >= 0; --j) {
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

// How the ranks use a call's contributions, which bounds the sizes that
// take the segment: read by some ranks (Bcast), combined from every
// member's (Reduce, Allreduce: p * n <= kCombineSpan) or copied out by
// every rank (Allgather, Alltoall: a medium slot at most).
enum class Use { kRead, kCombined, kCopiedOut };

// A call with data of n bytes (per rank) goes through the segment.
State* fits(Comm* c, int64_t n, Use use) {
  decide(c);
  State* st = state(c);
  if (!st || n <= 0) return nullptr;
  const uint64_t u = uint64_t(n);
  switch (use) {
    case Use::kRead: return u <= st->slot ? st : nullptr;
    case Use::kCombined: return u <= st->slot && u * uint64_t(st->p) <= kCombineSpan ? st : nullptr;
    case Use::kCopiedOut: return u <= st->medium() ? st : nullptr;
  }
  return nullptr;
}

// ---- making and mapping the segment ------------------------------------------------

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

// ---- the calls ---------------------------------------------------------------------------

bool barrier(Comm* c, int* rc) {
  decide(c);
  State* st = state(c);
  if (!st) return false;
  const uint64_t seq = enter(*st, c);
  publish(*st, seq);
  await(*st, c, kBarrier, seq, -1, false, kLineTier, seq);
  *rc = MPI_SUCCESS;
  return true;
}

bool bcast(void* buf, int64_t count, Datatype* type, int root, Comm* c, int* rc) {
  const int64_t n = count * type->size;
  State* st = fits(c, n, Use::kRead);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  if (c->rank == root) {
    write(*st, c, kBcast, seq, tier, uint64_t(n), 1, [&](uint8_t* slot) { pack_to(buf, count, type, slot); });
    publish(*st, seq);
    *rc = MPI_SUCCESS;
    return true;
  }
  publish(*st, seq);
  await(*st, c, kBcast, seq, root, true, tier, seq);
  const uint8_t* d = nullptr;
  *rc = data_of(*st, root, seq, tier, uint64_t(n), &d);
  if (*rc == MPI_SUCCESS) unpack_from(d, buf, count, type);
  return true;
}

namespace {
// Reduce (root >= 0: only the root combines) and Allreduce (root < 0).
bool reduction(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c, int* rc) {
  const int64_t n = count * type->size;
  State* st = fits(c, n, Use::kCombined);
  if (!st) return false;
  const int kind = root < 0 ? kAllreduce : kReduce;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  // A Reduce's root reads its own input where it is, unless that is rbuf,
  // which the result overwrites.
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (root < 0 || c->rank != root || in_place) {
    const void* in = in_place ? rbuf : sbuf;
    write(*st, c, kind, seq, tier, uint64_t(n), 1, [&](uint8_t* slot) { pack_to(in, count, type, slot); });
  }
  publish(*st, seq);
  *rc = MPI_SUCCESS;
  if (root >= 0 && c->rank != root) return true;
  await(*st, c, kind, seq, -1, true, tier, seq);
  try {
    *rc = combine(*st, seq, tier, rbuf, count, type, op, in_place ? nullptr : sbuf);
  } catch (const std::bad_alloc&) {
    *rc = MPI_ERR_NO_MEM;
  }
  return true;
}
}  // namespace

bool reduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, int root, Comm* c, int* rc) {
  return reduction(sbuf, rbuf, count, type, op, root, c, rc);
}

bool allreduce(const void* sbuf, void* rbuf, int64_t count, Datatype* type, MPI_Op op, Comm* c, int* rc) {
  return reduction(sbuf, rbuf, count, type, op, -1, c, rc);
}

bool allgather(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
               int* rc) {
  const int64_t n = rcount * rtype->size;  // every rank's block, as every rank receives it
  State* st = fits(c, n, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n));
  const uint64_t seq = enter(*st, c);
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* src = in_place ? at(rbuf, int64_t(c->rank) * rcount, rtype) : sbuf;
  const int64_t cnt = in_place ? rcount : scount;
  const Datatype* t = in_place ? rtype : stype;
  write(*st, c, kAllgather, seq, tier, uint64_t(cnt * t->size), 1, [&](uint8_t* slot) { pack_to(src, cnt, t, slot); });
  publish(*st, seq);
  await(*st, c, kAllgather, seq, -1, true, tier, seq);
  *rc = MPI_SUCCESS;
  for (int j = 0; j < c->size; ++j) {
    if (in_place && j == c->rank) continue;
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
    if (r == MPI_SUCCESS) unpack_from(d, at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

bool alltoall(const void* sbuf, int64_t scount, Datatype* stype, void* rbuf, int64_t rcount, Datatype* rtype, Comm* c,
              int* rc) {
  const int64_t n = rcount * rtype->size;  // one block
  State* st = fits(c, n * c->size, Use::kCopiedOut);
  if (!st) return false;
  const Tier tier = st->tier(uint64_t(n * c->size));
  const uint64_t seq = enter(*st, c);
  const int p = c->size, me = c->rank;
  const bool in_place = sbuf == MPI_IN_PLACE;
  const void* src = in_place ? rbuf : sbuf;
  const int64_t cnt = in_place ? rcount : scount;
  const Datatype* t = in_place ? rtype : stype;
  const int64_t sb = cnt * t->size;
  write(*st, c, kAlltoall, seq, tier, uint64_t(sb), uint64_t(p), [&](uint8_t* slot) {
    for (int j = 0; j < p; ++j) pack_to(at(src, int64_t(j) * cnt, t), cnt, t, slot + j * sb);
  });
  publish(*st, seq);
  await(*st, c, kAlltoall, seq, -1, true, tier, seq);
  *rc = MPI_SUCCESS;
  for (int j = 0; j < p; ++j) {
    const uint8_t* d = nullptr;
    const int r = data_of(*st, j, seq, tier, uint64_t(n), &d);
    if (r == MPI_SUCCESS) unpack_from(d + me * n, at(rbuf, int64_t(j) * rcount, rtype), rcount, rtype);
    else if (*rc == MPI_SUCCESS) *rc = r;
  }
  return true;
}

}  // namespace sonde::engine::coll::shared
