// MatchQueues against a plain linear reference over millions of random
// operations: every wildcard combination, reserved (negative) tags, probe,
// matched probe, receive cancel, send cancel at the receiver and
// communicator free, at depths on both sides of the index threshold. A new
// communicator's receives may keep to some kinds of pattern for a while
// (only named sources and tags, say) and take up the others later, at
// depth, as the lists the index keeps per kind are learnt. Every
// operation must pick the same entry in both, so matches happen in the same
// order; queue lengths, bytes and per-source counts must agree throughout.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <random>
#include <vector>

#include "matching/match_queues.h"

using namespace sonde::matching;

namespace {

struct Recv : PostedEntry {
  int id = 0;
};
struct Msg : UnexpectedEntry {
  int id = 0;
  int cookie = 0;  // the sending request's slot: several messages may share one
};

// The reference: two vectors in queue order, searched front to back.
struct Reference {
  std::vector<Recv*> posted;
  std::vector<Msg*> unexpected;

  Recv* match_arrival(int source, int tag) {
    for (auto it = posted.begin(); it != posted.end(); ++it)
      if (matches((*it)->source, (*it)->tag, source, tag)) {
        Recv* r = *it;
        posted.erase(it);
        return r;
      }
    return nullptr;
  }
  Msg* find(int source, int tag) {
    for (Msg* m : unexpected)
      if (matches(source, tag, m->source, m->tag)) return m;
    return nullptr;
  }
  void remove(Msg* m) { unexpected.erase(std::find(unexpected.begin(), unexpected.end(), m)); }
  void remove(Recv* r) { posted.erase(std::find(posted.begin(), posted.end(), r)); }
  // The newest message with this exact envelope and cookie.
  Msg* newest(int source, int tag, int cookie) {
    for (auto it = unexpected.rbegin(); it != unexpected.rend(); ++it)
      if ((*it)->source == source && (*it)->tag == tag && (*it)->cookie == cookie) return *it;
    return nullptr;
  }
};

// Descriptors are reused, as the engine's slots are.
template <class T>
struct Pool {
  std::vector<std::unique_ptr<T>> all;
  std::vector<T*> free;
  T* get() {
    if (free.empty()) {
      all.push_back(std::make_unique<T>());
      return all.back().get();
    }
    T* t = free.back();
    free.pop_back();
    return t;
  }
  void put(T* t) { free.push_back(t); }
};

struct Comm {
  std::unique_ptr<MatchQueues> q = std::make_unique<MatchQueues>();
  Reference ref;
  int target = 0;  // the depth this phase drifts towards
  // The kinds of receive pattern allowed so far (kNamed, kAnySourceKind,
  // kAnyTagKind); widened at random phases.
  unsigned kinds = 7;
};
constexpr unsigned kNamed = 1, kAnySourceKind = 2, kAnyTagKind = 4;

class Driver {
 public:
  explicit Driver(uint32_t seed) : rng_(seed) {}

  void run(long ops) {
    for (auto& c : comms_) {
      c.kinds = first_kinds();
      new_phase(c);
    }
    for (long i = 0; i < ops; ++i) {
      Comm& c = comms_[pick(std::size(comms_))];
      if (pick(4000) == 0) new_phase(c);
      step(c);
      REQUIRE(c.q->posted_size() == c.ref.posted.size());
      REQUIRE(c.q->unexpected_size() == c.ref.unexpected.size());
      if (i % 997 == 0) check_counts(c);
    }
    for (auto& c : comms_) free_comm(c, false);
  }

  long indexed_steps = 0, linear_steps = 0, arrivals_matched = 0, receives_matched = 0;

 private:
  size_t pick(size_t n) { return size_t(rng_() % n); }
  // A new communicator's receives: every kind, or only one or two kinds.
  unsigned first_kinds() { return pick(2) ? 7u : 1u + unsigned(pick(6)); }
  void new_phase(Comm& c) {
    if (pick(3) == 0) c.kinds |= 1u << pick(3);
    static const int kTargets[] = {0, 2, 8, 24, 31, 33, 40, 120, 600};
    c.target = kTargets[pick(std::size(kTargets))];
    sources_ = pick(3) == 0 ? 40 : 4;
    tags_ = pick(3) == 0 ? 50 : 3;
  }
  int message_tag() {
    size_t r = pick(20);
    if (r == 0) return -3 - int(pick(2));  // reserved
    if (r == 1) return kAnyTag;            // never sent by the engine, but matches() defines it
    return int(pick(size_t(tags_)));
  }
  // A receive's pattern, of a kind c allows (reserved tags always).
  void receive_pattern(const Comm& c, int* source, int* tag) {
    for (;;) {
      size_t r = pick(10);
      *tag = r == 0 ? -3 - int(pick(2)) : r <= 3 ? kAnyTag : int(pick(size_t(tags_)));
      *source = pick(3) == 0 ? kAnySource : int(pick(size_t(sources_)));
      if (allowed(c, *source, *tag)) return;
    }
  }
  static bool allowed(const Comm& c, int source, int tag) {
    if (tag < kAnyTag) return true;  // a collective's: not a user pattern
    return c.kinds & (source == kAnySource ? kAnySourceKind : tag == kAnyTag ? kAnyTagKind : kNamed);
  }

  void step(Comm& c) {
    if (c.q->indexed()) ++indexed_steps;
    else ++linear_steps;
    size_t depth = c.ref.posted.size() + c.ref.unexpected.size();
    bool grow = depth < size_t(c.target);
    size_t r = pick(100);
    if (r < 35) arrive(c, grow);
    else if (r < 70) receive(c, grow);
    else if (r < 78) probe(c, false);
    else if (r < 82) probe(c, true);
    else if (r < 88) cancel_receive(c);
    else if (r < 94) cancel_send(c);
    else if (r < 99) arrive(c, false);
    else if (pick(200) == 0) free_comm(c, pick(2) == 0);
  }

  // A message arrives. `fresh`: from a source/tag likely unmatched, so the
  // unexpected queue grows.
  void arrive(Comm& c, bool fresh) {
    int source = int(pick(size_t(sources_))), tag = message_tag();
    if (fresh && pick(2)) tag = int(tags_ + pick(5));  // no receive names it but wildcards
    if (!fresh && !c.ref.posted.empty() && pick(2)) {  // draining: one a posted receive accepts
      Recv* r = c.ref.posted[pick(c.ref.posted.size())];
      if (r->source != kAnySource) source = r->source;
      tag = r->tag == kAnyTag ? int(pick(size_t(tags_))) : r->tag;
    }
    uint64_t before = c.q->posted_match_attempts();
    bool indexed = c.q->indexed();
    size_t depth = c.ref.posted.size();
    Recv* want = c.ref.match_arrival(source, tag);
    auto* got = static_cast<Recv*>(c.q->match_arrival(source, tag));
    REQUIRE(got == want);
    uint64_t examined = c.q->posted_match_attempts() - before;
    REQUIRE(examined <= (indexed ? 4 : depth));
    if (got) {
      ++arrivals_matched;
      REQUIRE_FALSE(c.q->cancel(got));  // matched: no longer cancellable
      recvs_.put(got);
      return;
    }
    Msg* m = msgs_.get();
    m->id = next_id_++;
    m->source = source;
    m->tag = tag;
    m->cookie = int(pick(4));
    m->bytes = pick(1000);
    c.q->push_unexpected(m);
    c.ref.unexpected.push_back(m);
  }

  void receive(Comm& c, bool fresh) {
    int source, tag;
    receive_pattern(c, &source, &tag);
    const int unsent = int(tags_ + 5 + pick(5));  // no message carries it
    if (fresh && pick(2) && allowed(c, source, unsent)) tag = unsent;
    if (!fresh && !c.ref.unexpected.empty() && pick(2)) {  // draining: one that accepts a waiting message
      Msg* m = c.ref.unexpected[pick(c.ref.unexpected.size())];
      int s = pick(3) ? m->source : kAnySource;
      int t = pick(3) || m->tag < kAnyTag ? m->tag : kAnyTag;
      if (allowed(c, s, t)) source = s, tag = t;
    }
    uint64_t before = c.q->unexpected_match_attempts();
    bool indexed = c.q->indexed();
    size_t depth = c.ref.unexpected.size();
    Msg* want = c.ref.find(source, tag);
    if (want) c.ref.remove(want);
    auto* got = static_cast<Msg*>(c.q->match_receive(source, tag));
    REQUIRE(got == want);
    // Indexed, a user-tag search looks at one bucket front; a reserved-tag
    // one walks its source's reserved messages (match_queues.h).
    REQUIRE(c.q->unexpected_match_attempts() - before <= (indexed && tag >= kAnyTag ? 1 : depth));
    if (got) {
      ++receives_matched;
      msgs_.put(got);
      return;
    }
    Recv* r = recvs_.get();
    r->id = next_id_++;
    r->source = source;
    r->tag = tag;
    c.q->post(r);
    c.ref.posted.push_back(r);
  }

  void probe(Comm& c, bool matched) {
    int source, tag;
    receive_pattern(c, &source, &tag);
    Msg* want = c.ref.find(source, tag);
    auto* got = static_cast<Msg*>(c.q->find_unexpected(source, tag));
    REQUIRE(got == want);
    if (matched && got) {
      c.q->remove_unexpected(got);
      c.ref.remove(got);
      msgs_.put(got);
    }
  }

  void cancel_receive(Comm& c) {
    if (c.ref.posted.empty()) return;
    Recv* r = c.ref.posted[pick(c.ref.posted.size())];
    REQUIRE(c.q->cancel(r));
    REQUIRE_FALSE(c.q->cancel(r));
    c.ref.remove(r);
    recvs_.put(r);
  }

  // As the engine drops a cancelled send: the newest waiting message with
  // the send's envelope and cookie.
  void cancel_send(Comm& c) {
    if (c.ref.unexpected.empty()) return;
    Msg* sent = c.ref.unexpected[pick(c.ref.unexpected.size())];
    int source = sent->source, tag = sent->tag, cookie = pick(4) ? sent->cookie : int(pick(4));
    Msg* want = c.ref.newest(source, tag, cookie);
    Msg* got = nullptr;
    for (auto* e = c.q->older_exact(source, tag, nullptr); e; e = c.q->older_exact(source, tag, e)) {
      REQUIRE(e->source == source);
      REQUIRE(e->tag == tag);
      if (static_cast<Msg*>(e)->cookie == cookie) {
        got = static_cast<Msg*>(e);
        break;
      }
    }
    REQUIRE(got == want);
    if (got) {
      c.q->remove_unexpected(got);
      c.ref.remove(got);
      msgs_.put(got);
    }
  }

  // Free: every waiting message leaves through pop_unexpected; receives are
  // cancelled. `replace`: a new MatchQueues, else the same one reused.
  void free_comm(Comm& c, bool replace) {
    std::vector<Msg*> popped;
    while (auto* m = static_cast<Msg*>(c.q->pop_unexpected())) popped.push_back(m);
    REQUIRE(popped.size() == c.ref.unexpected.size());
    auto expected = c.ref.unexpected;
    std::sort(popped.begin(), popped.end());
    std::sort(expected.begin(), expected.end());
    REQUIRE(popped == expected);
    for (Msg* m : popped) msgs_.put(m);
    for (Recv* r : c.ref.posted) {
      REQUIRE(c.q->cancel(r));
      recvs_.put(r);
    }
    c.ref = Reference{};
    REQUIRE(c.q->posted_size() == 0);
    REQUIRE(c.q->unexpected_size() == 0);
    REQUIRE(c.q->unexpected_bytes() == 0);
    REQUIRE_FALSE(c.q->indexed());  // nothing queued: the index is gone
    if (replace) {
      c.q = std::make_unique<MatchQueues>();
      c.kinds = first_kinds();
    }
  }

  void check_counts(Comm& c) {
    const size_t n = 64;
    std::vector<uint64_t> posted(n), unexpected(n), want_posted(n), want_unexpected(n);
    c.q->posted_per_source(posted.data(), n);
    c.q->unexpected_per_source(unexpected.data(), n);
    uint64_t bytes = 0;
    for (Recv* r : c.ref.posted)
      if (r->source >= 0) ++want_posted[size_t(r->source)];
    for (Msg* m : c.ref.unexpected) {
      ++want_unexpected[size_t(m->source)];
      bytes += m->bytes;
    }
    REQUIRE(posted == want_posted);
    REQUIRE(unexpected == want_unexpected);
    REQUIRE(c.q->unexpected_bytes() == bytes);
  }

  std::mt19937 rng_;
  Pool<Recv> recvs_;  // outlive the queues that may still link them
  Pool<Msg> msgs_;
  Comm comms_[3];
  int sources_ = 4, tags_ = 3;
  int next_id_ = 0;
};

}  // namespace

TEST_CASE("the indexed queues pick exactly what a linear search picks, in the same order") {
  long linear = 0, indexed = 0, arrivals = 0, receives = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    Driver d(seed);
    d.run(500000);
    linear += d.linear_steps;
    indexed += d.indexed_steps;
    arrivals += d.arrivals_matched;
    receives += d.receives_matched;
  }
  // Both regimes and both kinds of match were exercised at length.
  CHECK(linear > 200000);
  CHECK(indexed > 200000);
  CHECK(arrivals > 100000);
  CHECK(receives > 100000);
}
