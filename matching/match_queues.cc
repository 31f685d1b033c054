#include "matching/match_queues.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace sonde::matching {

namespace bi = boost::intrusive;

namespace {
template <class Entry, BucketHook Entry::*kHook>
using BucketList = bi::list<Entry, bi::member_hook<Entry, BucketHook, kHook>, bi::constant_time_size<false>>;

uint64_t key(int32_t source, int32_t tag) { return uint64_t(uint32_t(source)) << 32 | uint32_t(tag); }

// 0: (source, tag), 1: (source, ANY_TAG), 2: (ANY_SOURCE, tag), 3: both wildcards.
int pattern_kind(int32_t source, int32_t tag) { return (source == kAnySource) * 2 + (tag == kAnyTag); }

// The kinds of bucket list a user-tag message can be filed in
// (MatchQueues::kept_lists_): Bucket::pair, Bucket::tag, Bucket::src.
constexpr unsigned kPairList = 1, kTagList = 2, kSourceList = 4;

struct KeyHash {
  size_t operator()(uint64_t k) const {
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    return size_t(k ^ (k >> 32));
  }
};
}  // namespace

// The messages whose pattern is this bucket's key, each list in arrival
// order (the receives with that pattern are listed in its slot: PatternSlot).
struct Bucket {
  BucketList<UnexpectedEntry, &UnexpectedEntry::in_pair> pair;            // key (s, t): messages from s with tag t
  BucketList<UnexpectedEntry, &UnexpectedEntry::in_tag> tag;              // key (ANY, t): messages with tag t
  BucketList<UnexpectedEntry, &UnexpectedEntry::in_source> src;           // key (s, ANY): user-tag messages from s
  BucketList<UnexpectedEntry, &UnexpectedEntry::in_source> reserved_src;  // key (s, ANY): reserved-tag ones
  bool unused() const { return pair.empty() && tag.empty() && src.empty() && reserved_src.empty(); }
  // The oldest message of the user-tag list of `kind` (kPairList, ...), or null.
  UnexpectedEntry* front(unsigned kind) {
    auto first = [](auto& list) { return list.empty() ? nullptr : &list.front(); };
    return kind == kPairList ? first(pair) : kind == kTagList ? first(tag) : first(src);
  }
};

// A slot of the index's table (MatchQueues::Index): a key, its bucket, and
// the posted receives whose pattern is the key, oldest first. They are
// listed here rather than in the bucket, so an arrival reads the slot and
// then the receive, and the bucket not at all; the list's ends move with
// the slot when the table is rehashed (the receives point only at each
// other).
struct PatternSlot {
  uint64_t key = 0;
  PostedEntry* front = nullptr;  // oldest receive with this pattern, or null
  PostedEntry* back = nullptr;   // newest
  uint32_t bucket = 0;           // bucket number (Index::bucket_at)
  uint32_t epoch = 0;            // in use when equal to Index::epoch (never 0)
};

// Buckets by key in an open-addressing table (linear probing, at most half
// full) of bucket numbers into fixed-size chunks that never move, so
// entries may point at their bucket. Creating a bucket allocates only when
// every chunk is full. When both queues empty, the index is cleared and
// kept for this thread's next index (MatchQueues::recycle), so a
// communicator that fills and drains its queues again and again (a loop of
// many receives waited for together) neither frees nor allocates nor faults
// in pages per round, and a communicator at rest holds no index. Clearing
// writes no slot: a slot is in use only when it carries the table's current
// epoch, and clearing moves to the next epoch (a deep round's table is
// 32 bytes a slot, and writing its lines again would only evict what the
// next round reads).
struct MatchQueues::Index {
  using Slot = PatternSlot;
  static constexpr size_t kMinSlots = 64;
  static constexpr uint32_t kChunkBits = 7;                // buckets per chunk: 2^kChunkBits
  std::vector<Slot> slots = std::vector<Slot>(kMinSlots);  // a power of two
  uint32_t epoch = 1;
  size_t used = 0, peak = 0;                      // buckets in the table; most since the last clear()
  std::vector<std::unique_ptr<Bucket[]>> chunks;  // bucket n is chunks[n >> kChunkBits][n & mask]
  uint32_t handed = 0;                            // buckets handed out since the last clear(), in order
  std::vector<uint32_t> spare;                    // swept out of the table, empty, for reuse
  // Posted receives by pattern kind (pattern_kind): an arrival looks up
  // only the kinds some receive has, so a queue of receives that name
  // source and tag costs one lookup per arrival, not four.
  uint32_t posted_kinds[4] = {};
  // By source rank: posted receives naming it, messages from it waiting.
  // All zero whenever both queues are empty, so clear() leaves them be.
  std::vector<uint32_t> posted_from, unexpected_from;
  static uint32_t& from(std::vector<uint32_t>& counts, int32_t source) {
    if (size_t(source) >= counts.size()) counts.resize(size_t(source) + 1);
    return counts[size_t(source)];
  }
  // The slot found last and its key (kNone: none). Consecutive lookups
  // often name the same key (a collective's messages from one source, each
  // one filed and then received; an arrival's search and the unlink of the
  // receive it found), and a comparison is cheaper than a hash and a probe.
  // A rehash moves slots and forgets it.
  static constexpr size_t kNone = SIZE_MAX;
  size_t last = kNone;
  uint64_t last_key = 0;

  bool live(const Slot& s) const { return s.epoch == epoch; }
  Bucket* bucket_at(uint32_t n) const { return &chunks[n >> kChunkBits][n & ((1u << kChunkBits) - 1)]; }
  Slot* find_slot(int32_t source, int32_t tag) {
    const uint64_t k = key(source, tag);
    if (last != kNone && last_key == k) return &slots[last];
    const size_t mask = slots.size() - 1;
    for (size_t i = KeyHash{}(k)&mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (!live(s)) return nullptr;
      if (s.key == k) return remember(k, i);
    }
  }
  Bucket* find(int32_t source, int32_t tag) {
    const Slot* s = find_slot(source, tag);
    return s ? bucket_at(s->bucket) : nullptr;
  }
  // Starts loading the slot where find(source, tag) begins.
  void prefetch(int32_t source, int32_t tag) const {
    const uint64_t k = key(source, tag);
    if (!(last != kNone && last_key == k)) __builtin_prefetch(&slots[KeyHash{}(k) & (slots.size() - 1)]);
  }
  Slot* remember(uint64_t k, size_t i) {
    last_key = k;
    last = i;
    return &slots[i];
  }
  // The slot of (source, tag), with a new bucket when there was none. Valid
  // until the next at_slot or at (which may rehash).
  [[gnu::always_inline]] Slot& at_slot(int32_t source, int32_t tag) {
    const uint64_t k = key(source, tag);
    if (last != kNone && last_key == k) return slots[last];
    const size_t mask = slots.size() - 1;
    size_t i = KeyHash{}(k)&mask;
    for (; live(slots[i]); i = (i + 1) & mask)
      if (slots[i].key == k) return *remember(k, i);
    return insert(k, i);
  }
  Bucket& at(int32_t source, int32_t tag) { return *bucket_at(at_slot(source, tag).bucket); }
  // A new bucket for key k, whose probe ended at the free slot i.
  [[gnu::noinline]] Slot& insert(uint64_t k, size_t i) {
    if (2 * (used + 1) > slots.size()) {
      rehash(2 * slots.size(), false);
      const size_t mask = slots.size() - 1;
      for (i = KeyHash{}(k)&mask; live(slots[i]); i = (i + 1) & mask) {
      }
    }
    slots[i] = {k, nullptr, nullptr, new_bucket(), epoch};
    peak = std::max(peak, ++used);
    return *remember(k, i);
  }
  uint32_t new_bucket() {
    if (!spare.empty()) {
      const uint32_t n = spare.back();
      spare.pop_back();
      return n;
    }
    const uint32_t n = handed++;
    if (n >> kChunkBits == chunks.size()) chunks.emplace_back(new Bucket[size_t(1) << kChunkBits]);
    return n;
  }
  // Every bucket is unused (both queues are empty): forget them all, keeping
  // the chunks for the next round and a table sized for the last one (a
  // table much larger than the last round needed is replaced by a small one,
  // so a shallow round after a deep one does not probe the deep one's table).
  void clear() {
    size_t want = kMinSlots;
    while (want < 2 * peak) want *= 2;
    if (slots.size() > 4 * want) {
      std::vector<Slot>(want).swap(slots);
    } else if (++epoch == 0) {
      std::fill(slots.begin(), slots.end(), Slot{});
      epoch = 1;
    }
    used = peak = 0;
    handed = 0;
    spare.clear();
    std::fill(std::begin(posted_kinds), std::end(posted_kinds), 0);
    last = kNone;
  }
  // Slots and buckets it holds: a cleared index larger than this is freed
  // rather than kept (MatchQueues::recycle).
  size_t footprint() const {
    return slots.size() * sizeof(Slot) + (chunks.size() << kChunkBits) * sizeof(Bucket) +
           (posted_from.size() + unexpected_from.size()) * sizeof(uint32_t);
  }
  // Moves every bucket into a table of `capacity` slots; with `drop_unused`
  // the unused ones go to the spares instead.
  void rehash(size_t capacity, bool drop_unused) {
    std::vector<Slot> old(capacity);
    old.swap(slots);
    used = 0;
    last = kNone;
    const size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (!live(s)) continue;
      if (drop_unused && !s.front && bucket_at(s.bucket)->unused()) {
        spare.push_back(s.bucket);
        continue;
      }
      size_t i = KeyHash{}(s.key) & mask;
      while (live(slots[i])) i = (i + 1) & mask;
      slots[i] = s;
      ++used;
    }
  }
  // Buckets left empty stay until there are clearly more of them than the
  // entries can occupy (at most three each); then one sweep moves them to
  // the spares, so the sweep's cost is spread over the insertions that
  // created them.
  void sweep(size_t entries) {
    if (used <= 4 * entries + 64) return;
    rehash(slots.size(), true);
  }
};

MatchQueues::MatchQueues() = default;

MatchQueues::~MatchQueues() {
  // Unlink without touching the descriptors' owners: they belong to the engine.
  index_.reset();
  posted_user_.clear();
  posted_reserved_.clear();
  unex_user_.clear();
  unex_reserved_.clear();
}

// ---------------------------------------------------------------- the index

void MatchQueues::index_posted(PostedEntry* r) {
  PatternSlot& own = index_->at_slot(r->source, r->tag);
  r->pattern_next = nullptr;
  r->pattern_prev = own.back;
  (own.back ? own.back->pattern_next : own.front) = r;
  own.back = r;
  ++index_->posted_kinds[pattern_kind(r->source, r->tag)];
  if (r->source != kAnySource) ++Index::from(index_->posted_from, r->source);
}

void MatchQueues::index_unexpected(UnexpectedEntry* m) {
  if (user_tag(m->tag)) {
    file_user(m, kept_lists_);
  } else {
    // Reserved tags change with every collective call, so a bucket per tag
    // would be made and swept per message: their messages are kept per
    // source only, in arrival order (find_reserved).
    index_->at(m->source, kAnyTag).reserved_src.push_back(*m);
  }
  ++Index::from(index_->unexpected_from, m->source);
}

void MatchQueues::file_user(UnexpectedEntry* m, unsigned kinds) {
  if (kinds & kPairList) index_->at(m->source, m->tag).pair.push_back(*m);
  if (kinds & kTagList) index_->at(kAnySource, m->tag).tag.push_back(*m);
  if (kinds & kSourceList) index_->at(m->source, kAnyTag).src.push_back(*m);
}

void MatchQueues::keep_lists(unsigned kind) {
  kept_lists_ |= kind;
  // No message is in a list of this kind yet: filing them in queue order
  // keeps every list in arrival order.
  for (auto& m : unex_user_) file_user(&m, kind);
}

thread_local std::unique_ptr<MatchQueues::Index> MatchQueues::kept_index_;

void MatchQueues::recycle(std::unique_ptr<Index> index) {
  if (index->footprint() > kKeptIndexBytes) return;  // freed
  index->clear();
  kept_index_ = std::move(index);
}

void MatchQueues::build_index() {
  walked_ = 0;
  index_ = kept_index_ ? std::move(kept_index_) : std::make_unique<Index>();
  // Each bucket holds entries of one half only, so indexing each half in
  // queue order keeps every bucket in queue order.
  for (auto* half : {&posted_user_, &posted_reserved_})
    for (auto& r : *half) index_posted(&r);
  for (auto* half : {&unex_user_, &unex_reserved_})
    for (auto& m : *half) index_unexpected(&m);
}

void MatchQueues::drop_index_if_empty() {
  if (posted_user_.empty() && posted_reserved_.empty() && unex_user_.empty() && unex_reserved_.empty())
    recycle(std::move(index_));
}

// Without an index no entry is in a bucket or counted in one (the index is
// dropped only when both queues are empty), so only the queue is touched.
void MatchQueues::unlink_posted(PostedEntry* r, PatternSlot* own) {
  PostedList& half = posted_half(r->tag);
  half.erase(half.iterator_to(*r));
  if (!index_) return;
  // Indexed: every posted receive is in its pattern's slot list.
  if (!own) own = index_->find_slot(r->source, r->tag);
  (r->pattern_prev ? r->pattern_prev->pattern_next : own->front) = r->pattern_next;
  (r->pattern_next ? r->pattern_next->pattern_prev : own->back) = r->pattern_prev;
  r->pattern_next = r->pattern_prev = nullptr;
  --index_->posted_kinds[pattern_kind(r->source, r->tag)];
  if (r->source != kAnySource) --index_->posted_from[size_t(r->source)];
  drop_index_if_empty();
}

void MatchQueues::unlink_unexpected(UnexpectedEntry* m) {
  UnexpectedList& half = unex_half(m->tag);
  half.erase(half.iterator_to(*m));
  unexpected_bytes_ -= m->bytes;
  if (!index_) return;
  if (m->in_pair.is_linked()) m->in_pair.unlink();
  if (m->in_tag.is_linked()) m->in_tag.unlink();
  if (m->in_source.is_linked()) m->in_source.unlink();
  --index_->unexpected_from[size_t(m->source)];  // every entry is counted while indexed
  drop_index_if_empty();
}

// ---------------------------------------------------------------- arrivals

PostedEntry* MatchQueues::search_posted(int32_t source, int32_t tag, SearchObserver* obs) {
  // PERUSE: SEARCH_POSTED_Q_BEGIN
  if (obs) obs->search_posted_begin();
  PostedEntry* found = nullptr;
  PatternSlot* found_in = nullptr;  // indexed: the slot listing it
  if (!index_) {
    size_t examined = 0;
    for (auto& r : posted_half(tag)) {
      ++examined;
      if (matches(r.source, r.tag, source, tag)) {
        found = &r;
        break;
      }
    }
    posted_attempts_ += examined;
    note_walk(examined - (found != nullptr));
  } else if (!posted_half(tag).empty()) {
    // The patterns that accept (source, tag); the oldest front wins. (An
    // empty half has nothing to find: a stream of unexpected messages
    // costs no lookups here.)
    const uint32_t* kinds = index_->posted_kinds;
    auto consider = [&](int32_t want_source, int32_t want_tag) {
      if (kinds[pattern_kind(want_source, want_tag)] == 0) return;
      PatternSlot* s = index_->find_slot(want_source, want_tag);
      if (!s || !s->front) return;
      ++posted_attempts_;
      PostedEntry& r = *s->front;
      for (size_t at = 0; at < kPostedPrefetchBytes; at += 64) __builtin_prefetch(reinterpret_cast<char*>(&r) + at, 1);
      if (!found || r.seq < found->seq) {
        found = &r;
        found_in = s;
      }
    };
    // The wildcard patterns' slots are fetched together with the first
    // one's rather than after it.
    if (kinds[2]) index_->prefetch(kAnySource, tag);
    if (tag >= 0 && kinds[1]) index_->prefetch(source, kAnyTag);
    consider(source, tag);
    consider(kAnySource, tag);
    if (tag >= 0) {
      consider(source, kAnyTag);
      consider(kAnySource, kAnyTag);
    }
  }
  // PERUSE: SEARCH_POSTED_Q_END
  if (obs) obs->search_posted_end();
  // PERUSE (engine, when found): REQ_REMOVE_FROM_POSTED_Q, MSG_MATCH_POSTED_REQ
  if (found) unlink_posted(found, found_in);
  return found;
}

void MatchQueues::push_unexpected(UnexpectedEntry* message) {
  // PERUSE (engine): MSG_INSERT_IN_UNEX_Q
  UnexpectedList& half = unex_half(message->tag);
  const UnexpectedEntry* before = half.empty() ? nullptr : &half.back();
  half.push_back(*message);
  unexpected_bytes_ += message->bytes;
  if (index_) {
    index_->sweep(posted_size() + unexpected_size());
    index_unexpected(message);
  } else {
    note_queued(*message, before);
  }
}

// ---------------------------------------------------------------- receives

UnexpectedEntry* MatchQueues::find_reserved(int32_t source, int32_t tag) {
  // A collective's receive names its source, and one sender's messages
  // arrive in the order of its collective calls, so the wanted message is
  // at or near the front of its source's list.
  if (source == kAnySource) return find_linear(source, tag);
  if (!unex_reserved_.empty() && unex_reserved_.front().source == source && unex_reserved_.front().tag == tag) {
    ++unexpected_attempts_;
    return &unex_reserved_.front();  // the oldest reserved message: no lookup
  }
  Bucket* b = index_->find(source, kAnyTag);
  if (!b) return nullptr;
  for (auto& m : b->reserved_src) {
    ++unexpected_attempts_;
    if (m.tag == tag) return &m;
  }
  return nullptr;
}

UnexpectedEntry* MatchQueues::find_indexed(int32_t source, int32_t tag) {
  if (!user_tag(tag)) return find_reserved(source, tag);
  if (unex_user_.empty()) return nullptr;
  // The half's oldest message, when the receive accepts it, is the one it
  // wants (a stream from one sender read in order, the usual case; both
  // wildcards accept it always): no lookup. Otherwise one list of the
  // pattern's kind holds, in arrival order, every message it accepts.
  UnexpectedEntry* found = &unex_user_.front();
  if (!matches(source, tag, found->source, found->tag)) {
    const unsigned kind = tag == kAnyTag ? kSourceList : source == kAnySource ? kTagList : kPairList;
    if (!(kept_lists_ & kind)) [[unlikely]]
      keep_lists(kind);
    Bucket* b = index_->find(source, tag);
    found = b ? b->front(kind) : nullptr;
  }
  if (found) ++unexpected_attempts_;
  return found;
}

UnexpectedEntry* MatchQueues::reserved_front(int32_t source, int32_t tag) {
  if (user_tag(tag) || source == kAnySource) return nullptr;
  UnexpectedEntry* front = nullptr;
  if (!index_) {
    if (!unex_reserved_.empty()) front = &unex_reserved_.front();
  } else if (Bucket* b = index_->find(source, kAnyTag); b && !b->reserved_src.empty()) {
    front = &b->reserved_src.front();
  }
  if (!front || front->source != source || front->tag != tag) return nullptr;
  ++unexpected_attempts_;
  return front;
}

UnexpectedEntry* MatchQueues::search_unexpected(int32_t source, int32_t tag, SearchObserver* obs) {
  UnexpectedEntry* found = find_unexpected(source, tag, obs);
  // PERUSE (engine, when found): MSG_REMOVE_FROM_UNEX_Q, REQ_MATCH_UNEX
  if (found) unlink_unexpected(found);
  return found;
}

void MatchQueues::post(PostedEntry* receive) {
  // PERUSE (engine): REQ_INSERT_IN_POSTED_Q
  receive->seq = next_seq_++;
  PostedList& half = posted_half(receive->tag);
  const PostedEntry* before = half.empty() ? nullptr : &half.back();
  half.push_back(*receive);
  if (index_) {
    index_->sweep(posted_size() + unexpected_size());
    index_posted(receive);
  } else {
    note_queued(*receive, before);
  }
}

UnexpectedEntry* MatchQueues::find_unexpected(int32_t source, int32_t tag, SearchObserver* obs) {
  // PERUSE: SEARCH_UNEX_Q_BEGIN
  if (obs) obs->search_unexpected_begin();
  UnexpectedEntry* found = index_ ? find_indexed(source, tag) : find_linear(source, tag);
  // PERUSE: SEARCH_UNEX_Q_END
  if (obs) obs->search_unexpected_end();
  return found;
}

void MatchQueues::remove_unexpected(UnexpectedEntry* message) {
  // PERUSE (engine): MSG_REMOVE_FROM_UNEX_Q
  unlink_unexpected(message);
}

bool MatchQueues::cancel(PostedEntry* receive) {
  if (!receive->is_linked()) return false;
  // PERUSE (engine): REQ_REMOVE_FROM_POSTED_Q
  unlink_posted(receive);
  return true;
}

UnexpectedEntry* MatchQueues::older_exact(int32_t source, int32_t tag, UnexpectedEntry* newer) {
  if (index_ && user_tag(tag) && (kept_lists_ & kPairList)) {
    Bucket* b = index_->find(source, tag);
    if (!b || b->pair.empty()) return nullptr;
    if (!newer) return &b->pair.back();
    auto it = b->pair.iterator_to(*newer);
    return it == b->pair.begin() ? nullptr : &*--it;
  }
  UnexpectedList& half = unex_half(tag);
  auto it = newer ? half.iterator_to(*newer) : half.end();
  while (it != half.begin())
    if (--it; it->source == source && it->tag == tag) return &*it;
  return nullptr;
}

UnexpectedEntry* MatchQueues::pop_unexpected() {
  UnexpectedList& half = unex_user_.empty() ? unex_reserved_ : unex_user_;
  if (half.empty()) return nullptr;
  UnexpectedEntry* m = &half.front();
  unlink_unexpected(m);
  return m;
}

// ---------------------------------------------------------------- counts

namespace {
// out[s] = entries naming source s: the index's counts while indexed
// (`counts`), else a walk of both halves.
template <class List>
void per_source(const std::vector<uint32_t>* counts, const List& user, const List& reserved, uint64_t* out, size_t n) {
  std::fill(out, out + n, 0);
  if (counts) {
    std::copy_n(counts->begin(), std::min(n, counts->size()), out);
    return;
  }
  for (auto* half : {&user, &reserved})
    for (auto& e : *half)
      if (e.source >= 0 && size_t(e.source) < n) ++out[e.source];
}
}  // namespace

void MatchQueues::posted_per_source(uint64_t* out, size_t n) const {
  per_source(index_ ? &index_->posted_from : nullptr, posted_user_, posted_reserved_, out, n);
}

void MatchQueues::unexpected_per_source(uint64_t* out, size_t n) const {
  per_source(index_ ? &index_->unexpected_from : nullptr, unex_user_, unex_reserved_, out, n);
}

}  // namespace sonde::matching
