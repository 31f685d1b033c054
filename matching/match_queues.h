// Per-communicator matching: the posted-receive queue and the
// unexpected-message queue, with exactly MPI's rules, at any depth.
//
// Entries are the engine's own receive-request and message descriptors
// (intrusive hooks), so queue operations never allocate while the queues
// are short.
//
// Order. Receives are stamped with a per-communicator sequence number when
// posted; messages keep arrival order. A search returns the oldest posted
// receive / earliest arrived message that accepts the other side. Because
// each transport delivers one sender's packets in order, this gives MPI's
// non-overtaking rule per (sender, communicator), wildcards included.
//
// Tags. User tags are >= 0. Negative tags are reserved for the internal
// traffic of collectives; MPI_ANY_TAG (-1 here, kAnyTag) matches only user
// tags, so a wildcard receive never steals collective traffic. Receives and
// messages therefore live in two disjoint halves ("user": what MPI_ANY_TAG
// can see; "reserved": the rest), and no search crosses from one to the other.
//
// Two regimes. Searches first walk the communicator's lists (no hashing, no
// allocation). While every entry queued since the queues were last empty has
// the envelope or pattern of the one queued before it in its half (a stream
// of one sender's messages with one tag, a window of identical receives, one
// source's collective messages: reserved tags count as one), a search takes
// the first entry it looks at, at any depth, and the lists stay unindexed.
// Once the two queues together hold more than kIndexThreshold entries and
// either they are not uniform in that way, or linear searches have examined
// more than kWalkBudget entries beyond the ones they took, an index is
// built: one open-addressing table
// (match_queues.cc, Index) keyed by receive pattern -- (source, tag),
// (MPI_ANY_SOURCE, tag), (source, MPI_ANY_TAG), (MPI_ANY_SOURCE, MPI_ANY_TAG)
// -- whose slots hold the key's posted receives and a bucket for its messages.
// A posted receive sits in its pattern's slot list; an arriving message looks
// at the front of the (at most four) slots whose patterns accept it and takes
// the lowest sequence number, so it reads a slot and then the receive it
// matches (whose first lines the search prefetches, kPostedPrefetchBytes), and
// no bucket. An arrival looks up only the pattern kinds that some posted
// receive has (a count per kind), so receives that all name source and tag
// cost one lookup per arrival.
//
// An unexpected message with a user tag sits, in arrival order, in the bucket
// of each pattern that accepts it, for the kinds of pattern -- (source, tag),
// (MPI_ANY_SOURCE, tag), (source, MPI_ANY_TAG) -- that this communicator's
// receives have searched with while indexed; a receive finds its oldest
// acceptable message at the front of one bucket (both wildcards: at the front
// of the queue). The kinds are learnt: the first indexed search of a kind not
// yet kept files every waiting message under it (one walk of the queue), and
// arrivals are filed under it from then on, for the communicator's life. So a
// communicator whose receives all name source and tag files each arrival once
// (one lookup, none when it repeats the last key). One with a reserved tag (a
// new tag per collective call) sits only in its source's (source,
// MPI_ANY_TAG) bucket, in a list of its own that a receive walks from the
// front; the message it wants is at or near that front, as one sender's
// collective messages arrive in call order. Every removal is an unlink.
//
// When both queues are empty the index leaves the communicator: it is
// cleared and kept for the thread's next index (one, of at most
// kKeptIndexBytes), so a communicator at rest holds only the list heads and
// counters below (under 150 bytes), and one that fills and drains its queues
// round after round allocates and frees nothing.
//
// Counters. Per communicator: queue lengths, bytes waiting unexpected, and the
// entries examined by searches ("match attempts": each entry compared on the
// linear path, each slot or bucket front considered on the indexed path). Per
// source: posted receives naming it and messages from it waiting, O(1) per
// source while indexed (an array indexed by source rank) and a walk of the
// queues while not.
//
// PERUSE: the comments marked "PERUSE:" are the exact points where the
// matching events fire (see docs/architecture.md's event table). The event
// sink is the engine's: MatchQueues reports searches through an optional
// observer so that this module stays free of the PERUSE registry.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <boost/intrusive/list.hpp>

namespace sonde::matching {

inline constexpr int32_t kAnySource = -2;  // MPI_ANY_SOURCE
inline constexpr int32_t kAnyTag = -1;     // MPI_ANY_TAG

// A communicator is indexed once both queues together hold more than
// kIndexThreshold entries and either some entry differs in envelope or
// pattern from the one queued before it in its half (note_queued), or linear
// searches have examined more than kWalkBudget entries past the ones they
// took (since it was last indexed).
inline constexpr size_t kIndexThreshold = 32;
inline constexpr size_t kWalkBudget = 32;

struct Bucket;       // match_queues.cc
struct PatternSlot;  // match_queues.cc
using BucketHook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

// An arrival goes on to use the receive it matched: an indexed search
// prefetches this many bytes from the entry's address as soon as it reads
// that address from a bucket, so the entry's line and the owner's next ones
// arrive together rather than one after another (the engine's request keeps
// what an arrival reads and writes within them: core/objects.h).
inline constexpr size_t kPostedPrefetchBytes = 192;

// A receive waiting for a message: source/tag may be wildcards. The engine
// sets source and tag; the rest belongs to MatchQueues.
struct PostedEntry : boost::intrusive::list_base_hook<> {
  int32_t source = 0;
  int32_t tag = 0;
  uint64_t seq = 0;  // posting order within the communicator
  // Indexed: the neighbours in the list of receives with its own pattern.
  PostedEntry* pattern_next = nullptr;
  PostedEntry* pattern_prev = nullptr;
};

// A message that arrived before any receive matched it: concrete envelope.
// The engine sets source, tag and bytes (the message's full size, for the
// byte count); the rest belongs to MatchQueues.
struct UnexpectedEntry : boost::intrusive::list_base_hook<> {
  int32_t source = 0;
  int32_t tag = 0;
  uint64_t bytes = 0;
  BucketHook in_pair;    // indexed, user tags: bucket (source, tag)
  BucketHook in_tag;     // indexed, user tags: bucket (MPI_ANY_SOURCE, tag)
  BucketHook in_source;  // indexed: bucket (source, MPI_ANY_TAG)
};

// True when a receive for (want_source, want_tag) accepts a message from
// (source, tag).
inline bool matches(int32_t want_source, int32_t want_tag, int32_t source, int32_t tag) {
  return (want_source == source || want_source == kAnySource) && (want_tag == tag || (want_tag == kAnyTag && tag >= 0));
}

// Observes searches so the engine can fire SEARCH_*_BEGIN/END and time them.
class SearchObserver {
 public:
  virtual void search_posted_begin() {}
  virtual void search_posted_end() {}
  virtual void search_unexpected_begin() {}
  virtual void search_unexpected_end() {}
  virtual ~SearchObserver() = default;
};

class MatchQueues {
 public:
  using PostedList = boost::intrusive::list<PostedEntry, boost::intrusive::constant_time_size<true>>;
  using UnexpectedList = boost::intrusive::list<UnexpectedEntry, boost::intrusive::constant_time_size<true>>;

  MatchQueues();
  MatchQueues(const MatchQueues&) = delete;
  MatchQueues& operator=(const MatchQueues&) = delete;
  // Unlinks whatever is still queued without touching it (the entries belong
  // to the engine, which drains both queues first).
  ~MatchQueues();

  // A message with envelope (source, tag) arrived: remove and return the
  // oldest posted receive that accepts it, or null. Inline when nothing is
  // posted in the message's half and nobody observes the search (a stream
  // of unexpected messages: no call, no attempt counted).
  PostedEntry* match_arrival(int32_t source, int32_t tag, SearchObserver* obs = nullptr) {
    if (!obs && posted_half(tag).empty()) return nullptr;
    return search_posted(source, tag, obs);
  }
  // No receive matched: the message waits, behind every earlier arrival.
  void push_unexpected(UnexpectedEntry* message);

  // A receive for (source, tag) is activated: remove and return the oldest
  // waiting message it accepts, or null. Inline when nothing waits in the
  // receive's half and nobody observes the search.
  UnexpectedEntry* match_receive(int32_t source, int32_t tag, SearchObserver* obs = nullptr) {
    if (!obs && unex_half(tag).empty()) return nullptr;
    return search_unexpected(source, tag, obs);
  }
  // No message matched: the receive waits, behind every earlier receive.
  void post(PostedEntry* receive);

  // A collective's receive (named source, reserved tag): the message its
  // search would find when that is the first one the search looks at (the
  // front of the reserved half, or of the source's reserved list while
  // indexed), else null. Left in place; no observer calls; one attempt
  // counted when it finds one.
  UnexpectedEntry* reserved_front(int32_t source, int32_t tag);
  // Probe: the oldest waiting message (source, tag) accepts, left in place.
  UnexpectedEntry* find_unexpected(int32_t source, int32_t tag, SearchObserver* obs = nullptr);
  // Remove a waiting message (a matched probe's, a cancelled send's).
  void remove_unexpected(UnexpectedEntry* message);
  // Cancel: take a receive out of the posted queue. False if it is not there
  // (already matched).
  bool cancel(PostedEntry* receive);

  // A cancelled send at the receiver: the waiting messages whose envelope is
  // exactly (source, tag), newest first: the newest one when `newer` is
  // null, else the next older than `newer` (one of them); null past the
  // oldest. Left in place; not a match (no search events or attempts).
  UnexpectedEntry* older_exact(int32_t source, int32_t tag, UnexpectedEntry* newer);
  // Communicator free: remove and return any waiting message, or null when
  // none is left.
  UnexpectedEntry* pop_unexpected();

  size_t posted_size() const { return posted_user_.size() + posted_reserved_.size(); }
  size_t unexpected_size() const { return unex_user_.size() + unex_reserved_.size(); }
  uint64_t unexpected_bytes() const { return unexpected_bytes_; }
  uint64_t posted_match_attempts() const { return posted_attempts_; }
  uint64_t unexpected_match_attempts() const { return unexpected_attempts_; }
  // out[s] for s in [0, n): posted receives naming source s (MPI_ANY_SOURCE
  // receives are in none), messages from s waiting.
  void posted_per_source(uint64_t* out, size_t n) const;
  void unexpected_per_source(uint64_t* out, size_t n) const;
  bool indexed() const { return index_ != nullptr; }
  // Every queued entry, in queue order within each half (user tags, then
  // the reserved negative ones): for snapshots and tools' totals, not a
  // search (no events, no attempts counted). `f` must not change the queues.
  template <class F>
  void visit_posted(F&& f) const {
    for (const PostedEntry& e : posted_user_) f(e);
    for (const PostedEntry& e : posted_reserved_) f(e);
  }
  template <class F>
  void visit_unexpected(F&& f) const {
    for (const UnexpectedEntry& e : unex_user_) f(e);
    for (const UnexpectedEntry& e : unex_reserved_) f(e);
  }

 private:
  struct Index;
  // Whether MPI_ANY_TAG can see a message with this tag (the "user" half);
  // a receive for want_tag searches the half its messages live in.
  static bool user_tag(int32_t tag) { return tag >= 0 || tag == kAnyTag; }
  PostedList& posted_half(int32_t want_tag) { return user_tag(want_tag) ? posted_user_ : posted_reserved_; }
  UnexpectedList& unex_half(int32_t tag) { return user_tag(tag) ? unex_user_ : unex_reserved_; }
  // The oldest acceptable message in a walk of tag's half (not indexed).
  UnexpectedEntry* find_linear(int32_t source, int32_t tag) {
    size_t examined = 0;
    UnexpectedEntry* found = nullptr;
    for (auto& m : unex_half(tag)) {
      ++examined;
      if (matches(source, tag, m.source, m.tag)) {
        found = &m;
        break;
      }
    }
    unexpected_attempts_ += examined;
    note_walk(examined - (found != nullptr));
    return found;
  }
  // Not indexed, `e` was queued behind `before` in its half (null: the half
  // was empty): builds the index when the queues are deep and not uniform,
  // that is, some entry queued since they were last empty differs in
  // envelope or pattern from the one before it. Reserved tags count as one:
  // each collective call has its own, and one source's collective messages
  // are received in the order they come.
  template <class Entry>
  void note_queued(const Entry& e, const Entry* before) {
    const size_t depth = posted_size() + unexpected_size();
    if (depth == 1) mixed_ = false;
    if (before && (before->source != e.source || (before->tag != e.tag && (user_tag(before->tag) || user_tag(e.tag)))))
      mixed_ = true;
    if (mixed_ && depth > kIndexThreshold) [[unlikely]]
      build_index();
  }
  // A linear search examined `past` entries beyond the one it took (if any):
  // builds the index once they add up (kWalkBudget) in deep queues.
  void note_walk(size_t past) {
    if (past == 0 || index_) return;
    walked_ = static_cast<uint32_t>(std::min<size_t>(walked_ + past, kWalkBudget + 1));
    if (walked_ > kWalkBudget && posted_size() + unexpected_size() > kIndexThreshold) [[unlikely]]
      build_index();
  }
  PostedEntry* search_posted(int32_t source, int32_t tag, SearchObserver* obs);
  UnexpectedEntry* search_unexpected(int32_t source, int32_t tag, SearchObserver* obs);
  UnexpectedEntry* find_indexed(int32_t source, int32_t tag);
  UnexpectedEntry* find_reserved(int32_t source, int32_t tag);
  void unlink_unexpected(UnexpectedEntry* message);
  // `own`: the index's slot listing the receive, when the caller has it.
  void unlink_posted(PostedEntry* receive, PatternSlot* own = nullptr);
  void index_posted(PostedEntry* receive);
  void index_unexpected(UnexpectedEntry* message);
  // The kinds of bucket list a user-tag message is filed in while indexed
  // (bits kPairList, kTagList, kSourceList in match_queues.cc).
  void file_user(UnexpectedEntry* message, unsigned kinds);
  // A search of a kind whose lists are not kept: keep them from now on, and
  // file every waiting user-tag message in them.
  void keep_lists(unsigned kind);
  // Indexes every queued entry (note_queued and note_walk decide when).
  void build_index();
  // When both queues are empty (checked on unlinks while indexed): the
  // index is cleared and kept for this thread's next build_index (one at a
  // time, at most kKeptIndexBytes; a larger one is freed).
  void drop_index_if_empty();
  static void recycle(std::unique_ptr<Index> index);
  static constexpr size_t kKeptIndexBytes = 8u << 20;
  static thread_local std::unique_ptr<Index> kept_index_;

  PostedList posted_user_, posted_reserved_;
  UnexpectedList unex_user_, unex_reserved_;
  uint64_t next_seq_ = 0;
  uint32_t walked_ = 0;     // note_walk's sum since the last build_index (capped)
  uint8_t kept_lists_ = 0;  // the kinds of list kept while indexed (file_user)
  bool mixed_ = false;      // note_queued's verdict since the queues were last empty
  uint64_t unexpected_bytes_ = 0;
  uint64_t posted_attempts_ = 0, unexpected_attempts_ = 0;
  std::unique_ptr<Index> index_;
};

}  // namespace sonde::matching
