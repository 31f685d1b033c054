// Per-communicator matching: the posted-receive queue and the
// unexpected-message queue, with exactly MPI's rules.
//
// Both queues are Boost.Intrusive lists whose hooks live inside the engine's
// receive-request and message descriptors, so queue operations never
// allocate. Ordering: entries are searched oldest first, so the first match
// is the earliest posted receive / earliest arrived message. Because each
// transport delivers one sender's packets in order, this gives MPI's
// non-overtaking rule per (sender, communicator), wildcards included.
//
// Tags: user tags are >= 0. Negative tags are reserved for the internal
// traffic of collectives; MPI_ANY_TAG (-1 here, kAnyTag) matches only user
// tags, so a wildcard receive never steals collective traffic.
//
// PERUSE: the comments marked "PERUSE:" are the exact points where the
// matching events fire (see ARCHITECTURE.md's event table). The event sink is
// the engine's: MatchQueues reports searches through an optional observer so
// that this module stays free of the PERUSE registry.
#pragma once

#include <cstddef>
#include <cstdint>

#include <boost/intrusive/list.hpp>

namespace sonde::matching {

inline constexpr int32_t kAnySource = -2;  // MPI_ANY_SOURCE
inline constexpr int32_t kAnyTag = -1;     // MPI_ANY_TAG

// A receive waiting for a message: source/tag may be wildcards.
struct PostedEntry : boost::intrusive::list_base_hook<> {
  int32_t source = 0;
  int32_t tag = 0;
};

// A message that arrived before any receive matched it: concrete envelope.
struct UnexpectedEntry : boost::intrusive::list_base_hook<> {
  int32_t source = 0;
  int32_t tag = 0;
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

  MatchQueues() = default;
  MatchQueues(const MatchQueues&) = delete;
  MatchQueues& operator=(const MatchQueues&) = delete;
  // The engine must drain both queues before destroying them.
  ~MatchQueues();

  // A message with envelope (source, tag) arrived: remove and return the
  // oldest posted receive that accepts it, or null.
  PostedEntry* match_arrival(int32_t source, int32_t tag, SearchObserver* obs = nullptr);
  // No receive matched: the message waits, behind every earlier arrival.
  void push_unexpected(UnexpectedEntry* message);

  // A receive for (source, tag) is activated: remove and return the oldest
  // waiting message it accepts, or null.
  UnexpectedEntry* match_receive(int32_t source, int32_t tag, SearchObserver* obs = nullptr);
  // No message matched: the receive waits, behind every earlier receive.
  void post(PostedEntry* receive);

  // Probe: the oldest waiting message (source, tag) accepts, left in place.
  UnexpectedEntry* find_unexpected(int32_t source, int32_t tag, SearchObserver* obs = nullptr);
  // Remove a message found by find_unexpected (matched probe).
  void remove_unexpected(UnexpectedEntry* message);
  // Cancel: take a receive out of the posted queue. False if it is not there
  // (already matched).
  bool cancel(PostedEntry* receive);

  size_t posted_size() const { return posted_.size(); }
  size_t unexpected_size() const { return unexpected_.size(); }
  PostedList& posted() { return posted_; }
  UnexpectedList& unexpected() { return unexpected_; }

 private:
  PostedList posted_;
  UnexpectedList unexpected_;
};

}  // namespace sonde::matching
