#include "matching/match_queues.h"

namespace sonde::matching {

MatchQueues::~MatchQueues() {
  // Unlink without touching the descriptors' owners: they belong to the engine.
  posted_.clear();
  unexpected_.clear();
}

PostedEntry* MatchQueues::match_arrival(int32_t source, int32_t tag, SearchObserver* obs) {
  // PERUSE: SEARCH_POSTED_Q_BEGIN
  if (obs) obs->search_posted_begin();
  PostedEntry* found = nullptr;
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    if (matches(it->source, it->tag, source, tag)) {
      found = &*it;
      posted_.erase(it);
      break;
    }
  }
  // PERUSE: SEARCH_POSTED_Q_END
  if (obs) obs->search_posted_end();
  // PERUSE (engine, when found): REQ_REMOVE_FROM_POSTED_Q, MSG_MATCH_POSTED_REQ
  return found;
}

void MatchQueues::push_unexpected(UnexpectedEntry* message) {
  // PERUSE (engine): MSG_INSERT_IN_UNEX_Q
  unexpected_.push_back(*message);
}

UnexpectedEntry* MatchQueues::match_receive(int32_t source, int32_t tag, SearchObserver* obs) {
  UnexpectedEntry* found = find_unexpected(source, tag, obs);
  // PERUSE (engine, when found): MSG_REMOVE_FROM_UNEX_Q, REQ_MATCH_UNEX
  if (found) unexpected_.erase(unexpected_.iterator_to(*found));
  return found;
}

void MatchQueues::post(PostedEntry* receive) {
  // PERUSE (engine): REQ_INSERT_IN_POSTED_Q
  posted_.push_back(*receive);
}

UnexpectedEntry* MatchQueues::find_unexpected(int32_t source, int32_t tag, SearchObserver* obs) {
  // PERUSE: SEARCH_UNEX_Q_BEGIN
  if (obs) obs->search_unexpected_begin();
  UnexpectedEntry* found = nullptr;
  for (auto& m : unexpected_) {
    if (matches(source, tag, m.source, m.tag)) {
      found = &m;
      break;
    }
  }
  // PERUSE: SEARCH_UNEX_Q_END
  if (obs) obs->search_unexpected_end();
  return found;
}

void MatchQueues::remove_unexpected(UnexpectedEntry* message) {
  // PERUSE (engine): MSG_REMOVE_FROM_UNEX_Q
  unexpected_.erase(unexpected_.iterator_to(*message));
}

bool MatchQueues::cancel(PostedEntry* receive) {
  if (!receive->is_linked()) return false;
  // PERUSE (engine): REQ_REMOVE_FROM_POSTED_Q
  posted_.erase(posted_.iterator_to(*receive));
  return true;
}

}  // namespace sonde::matching
