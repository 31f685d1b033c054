// The shared segment's layout and the protocol by which ranks write and
// read its slots (shared.h says what the collectives' callers see; shared.cc
// has the calls, shared_segment.cc the waits and the segment's life).
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
// (header and data share it), and a rank whose data others read returns as
// soon as it is written when it needs nothing back (a Bcast's or Scatter's
// root, a Reduce's or Gather's other ranks, a Scan's rank 0), up to
// kPhases - 1 calls ahead of the slowest reader; a writer reads the
// others' control lines about once per kPhases / 2 calls.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "coll/coll_internal.h"
#include "coll/shared.h"
#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine::coll::shared {

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

// The segment's first line.
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

class State {
 public:
  State(uint8_t* base, size_t len, int p, int me, uint64_t slot)
      : slot(slot), p(p), me(me), base_(base), len_(len), layout_(slot) {
    for (int t = 1; t < kTiers; ++t) last_first_[t] = last_first_[t - 1] + size_t(layout_.tier[t - 1].slots);
  }
  ~State();  // unmaps the segment
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

inline State* state(Comm* c) { return static_cast<State*>(c->coll_shared.get()); }

// Rank j is done with call seq as a wait needs: its data is there (data),
// or its arrive reached `need`. `refused`: a data wait also takes r's
// arrive at seq without the data (r refused the call), which reads r's
// control line too, a line r's next store must take back.
inline bool got(const State& st, int j, bool data, Tier tier, uint64_t seq, uint64_t need, bool refused) {
  return data ? st.has(j, seq, tier, refused) : st.arrive(j) >= need;
}

// `only`, or every other rank below `below`, is done (got); `from` is the
// first rank not yet seen done, advanced past those that are.
inline bool reached(const State& st, int only, int below, bool data, Tier tier, uint64_t seq, uint64_t need, int& from,
                    bool refused) {
  if (only >= 0) return got(st, only, data, tier, seq, need, refused);
  for (; from < below; ++from)
    if (from != st.me && !got(st, from, data, tier, seq, need, refused)) return false;
  return true;
}

// await's wait, from the first rank not yet done.
void await_slow(State& st, Comm* c, int kind, uint64_t seq, int only, bool data, Tier tier, uint64_t need, int below,
                int from);

// Progresses the engine (other traffic, nonblocking operations) until
// `only`, or every other rank below `below`, has its data of call seq there
// (data) or its arrive at `need` or beyond. While it waits, snapshots show
// it as receives posted from those ranks with tag_of(kind, seq). A data
// wait looks for a refusal (the writer's arrive at seq without its data)
// on every 32nd poll only, never on its first look: a reader that comes
// early would otherwise pull the writer's control line into its cache on
// every call, and the writer's next store to it would have to take it back.
inline void await(State& st, Comm* c, int kind, uint64_t seq, int only, bool data, Tier tier, uint64_t need,
                  int below = kMaxRanks) {
  below = std::min(below, st.p);
  int from = 0;
  if (!reached(st, only, below, data, tier, seq, need, from, false)) {
    await_slow(st, c, kind, seq, only, data, tier, need, below, from);
  } else if (only < 0 && below == st.p && !data && need > st.floor) {
    st.floor = need;
  }
}

// Every other rank's arrive is at least `need`; st.floor becomes their
// least arrive.
void await_floor(State& st, Comm* c, int kind, uint64_t seq, uint64_t need);

inline void publish(State& st, uint64_t seq) { st.ctl(st.me).arrive.store(seq, std::memory_order_release); }

// Takes the call's sequence number and publishes that every earlier call
// is done: calls that ran point-to-point publish nothing, and a writer
// waiting for its slot's phase must not wait for a number nobody would
// publish before entering this call.
inline uint64_t enter(State& st, Comm* c) {
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
inline int data_of(const State& st, int j, uint64_t seq, Tier tier, uint64_t bytes, const uint8_t** out) {
  const SlotHead& h = st.head(j, seq, tier);
  if (h.seq.load(std::memory_order_acquire) != seq) return MPI_ERR_OTHER;
  if (h.bytes != bytes) return MPI_ERR_TRUNCATE;
  *out = st.data(j, seq, tier);
  return MPI_SUCCESS;
}

// Packed bytes into / out of a user buffer: a contiguous type's in one copy.
inline void pack_to(const void* buf, int64_t count, const Datatype* type, uint8_t* out) {
  if (type->contiguous) std::memcpy(out, contiguous_start(*type, buf), size_t(count * type->size));
  else detail::pack_all(buf, count, type, out);
}
inline void unpack_from(const uint8_t* in, void* buf, int64_t count, const Datatype* type) {
  if (type->contiguous) std::memcpy(contiguous_start(*type, buf), in, size_t(count * type->size));
  else detail::unpack_all(in, buf, count, type);
}

// out = data_0 op (data_1 op (... op data_{n-1})) over the first n ranks'
// data for call seq (n >= 1; each contribution `total` elements of `type`),
// elements skip .. skip + count - 1 of each (a Reduce_scatter's block):
// rank order, so a non-commutative operation
// combines as MPI requires, and every rank that combines gets the same
// bits. `mine`: this rank's input in the user's layout (not out; its
// element skip is used), or null to read it from its slot like the
// others'. Error classes as data_of, and the operation's.
int combine(const State& st, uint64_t seq, Tier tier, int n, int64_t skip, int64_t total, void* out, int64_t count,
            Datatype* type, MPI_Op op, const void* mine);

// How the ranks use a call's contributions, which bounds the sizes that
// take the segment: read by some ranks (Bcast), combined from every
// member's (Reduce, Allreduce, Scan, Reduce_scatter: p * n <=
// kCombineSpan) or copied out by every rank or by the root (Gather,
// Scatter, Allgather(v), Alltoall: a medium slot at most).
enum class Use { kRead, kCombined, kCopiedOut };

// The communicator's state when a call with data of n bytes (per rank)
// goes through the segment, else null (deciding on the segment first:
// shared.h's decide()).
inline State* fits(Comm* c, int64_t n, Use use) {
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

}  // namespace sonde::engine::coll::shared
