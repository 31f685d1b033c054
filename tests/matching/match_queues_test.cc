#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <deque>
#include <random>
#include <vector>

#include "matching/match_queues.h"

using namespace sonde::matching;

namespace {
struct Recv : PostedEntry {
  int id;
};
struct Msg : UnexpectedEntry {
  int id;
};

Recv recv(int id, int src, int tag) {
  Recv r;
  r.id = id;
  r.source = src;
  r.tag = tag;
  return r;
}
Msg msg(int id, int src, int tag) {
  Msg m;
  m.id = id;
  m.source = src;
  m.tag = tag;
  return m;
}

struct CountingObserver : SearchObserver {
  int posted_begin = 0, posted_end = 0, unex_begin = 0, unex_end = 0;
  void search_posted_begin() override { ++posted_begin; }
  void search_posted_end() override { ++posted_end; }
  void search_unexpected_begin() override { ++unex_begin; }
  void search_unexpected_end() override { ++unex_end; }
};
}  // namespace

TEST_CASE("an arriving message matches the oldest posted receive that accepts it") {
  MatchQueues q;
  Recv a = recv(1, 3, 7), b = recv(2, kAnySource, 7), c = recv(3, 3, 7);
  q.post(&a);
  q.post(&b);
  q.post(&c);
  CHECK(static_cast<Recv*>(q.match_arrival(5, 7)) == &b);  // a wants source 3
  CHECK(static_cast<Recv*>(q.match_arrival(3, 7)) == &a);
  CHECK(static_cast<Recv*>(q.match_arrival(3, 7)) == &c);
  CHECK(q.match_arrival(3, 7) == nullptr);
  CHECK(q.posted_size() == 0);
}

TEST_CASE("a receive takes the earliest unexpected message it accepts, wildcards included") {
  MatchQueues q;
  Msg m1 = msg(1, 0, 5), m2 = msg(2, 1, 6), m3 = msg(3, 0, 6);
  q.push_unexpected(&m1);
  q.push_unexpected(&m2);
  q.push_unexpected(&m3);
  CHECK(static_cast<Msg*>(q.match_receive(kAnySource, 6)) == &m2);
  CHECK(static_cast<Msg*>(q.match_receive(0, kAnyTag)) == &m1);
  CHECK(static_cast<Msg*>(q.match_receive(kAnySource, kAnyTag)) == &m3);
  CHECK(q.unexpected_size() == 0);
}

TEST_CASE("MPI_ANY_TAG never matches reserved collective tags") {
  MatchQueues q;
  Msg coll = msg(1, 0, -10), user = msg(2, 0, 0);
  q.push_unexpected(&coll);
  q.push_unexpected(&user);
  CHECK(static_cast<Msg*>(q.match_receive(kAnySource, kAnyTag)) == &user);
  CHECK(static_cast<Msg*>(q.match_receive(0, -10)) == &coll);
  Recv any = recv(1, kAnySource, kAnyTag);
  q.post(&any);
  CHECK(q.match_arrival(0, -10) == nullptr);
  CHECK(q.match_arrival(0, 4) == &any);
}

TEST_CASE("probe leaves the message in place; a matched probe removes it") {
  MatchQueues q;
  Msg m = msg(1, 2, 3);
  q.push_unexpected(&m);
  CHECK(q.find_unexpected(2, 3) == &m);
  CHECK(q.unexpected_size() == 1);
  q.remove_unexpected(&m);
  CHECK(q.unexpected_size() == 0);
  CHECK(q.find_unexpected(kAnySource, kAnyTag) == nullptr);
}

TEST_CASE("cancel removes a posted receive once and reports a matched one") {
  MatchQueues q;
  Recv a = recv(1, 0, 0), b = recv(2, 0, 0);
  q.post(&a);
  q.post(&b);
  CHECK(q.cancel(&a));
  CHECK_FALSE(q.cancel(&a));
  CHECK(q.match_arrival(0, 0) == &b);
  CHECK_FALSE(q.cancel(&b));
}

TEST_CASE("every search reports its begin and end to the observer") {
  MatchQueues q;
  CountingObserver obs;
  Recv r = recv(1, 0, 0);
  q.post(&r);
  q.match_arrival(1, 1, &obs);
  q.match_receive(0, 0, &obs);
  q.find_unexpected(0, 0, &obs);
  CHECK(obs.posted_begin == 1);
  CHECK(obs.posted_end == 1);
  CHECK(obs.unex_begin == 2);
  CHECK(obs.unex_end == 2);
  CHECK(q.cancel(&r));  // nothing may stay linked when the entries go away
}

// Model check: random posts and arrivals against a reference matcher built on
// plain vectors; each message must go to the same receive in both.
TEST_CASE("an index drained and reused for other keys finds none of the old ones") {
  // Both queues empty: the index leaves the communicator, and the next one
  // built (here, by another communicator on this thread) reuses its table;
  // none of the first round's buckets may be found in the second.
  constexpr int kDepth = 4 * int(kIndexThreshold);
  std::vector<Recv> first, second;
  for (int i = 0; i < kDepth; ++i) first.push_back(recv(i, 0, i));
  for (int i = 0; i < kDepth; ++i) second.push_back(recv(i, 1, kDepth + i));
  {
    MatchQueues q;
    for (auto& r : first) q.post(&r);
    REQUIRE(q.indexed());
    for (int i = kDepth - 1; i >= 0; --i) CHECK(static_cast<Recv*>(q.match_arrival(0, i))->id == i);
    CHECK(!q.indexed());
  }
  for (int round = 0; round < 3; ++round) {
    MatchQueues q;
    for (auto& r : second) q.post(&r);
    REQUIRE(q.indexed());
    for (int i = 0; i < kDepth; ++i) CHECK(q.match_arrival(0, i) == nullptr);  // the first round's keys
    Msg m = msg(0, 0, 0);
    q.push_unexpected(&m);
    CHECK(static_cast<Msg*>(q.match_receive(kAnySource, 0)) == &m);
    for (int i = 0; i < kDepth; ++i) CHECK(static_cast<Recv*>(q.match_arrival(1, kDepth + i))->id == i);
    CHECK(q.posted_size() == 0);
    CHECK(!q.indexed());
  }
}

TEST_CASE("uniform deep queues stay linear; mixed ones, or searches that walk, build the index") {
  constexpr int kDeep = 1000;
  std::vector<Recv> rs;
  std::vector<Msg> ms;
  for (int i = 0; i < kDeep; ++i) rs.push_back(recv(i, 3, 5));
  for (int i = 0; i < kDeep; ++i) ms.push_back(msg(i, 3, 7));
  MatchQueues q;
  // A window of identical receives, then the messages they wait for.
  for (auto& r : rs) q.post(&r);
  for (int i = 0; i < kDeep; ++i) CHECK(static_cast<Recv*>(q.match_arrival(3, 5))->id == i);
  CHECK(!q.indexed());
  CHECK(q.posted_match_attempts() == kDeep);
  // One sender's stream with one tag, read in order, wildcards included.
  for (auto& m : ms) q.push_unexpected(&m);
  for (int i = 0; i < kDeep / 2; ++i) CHECK(static_cast<Msg*>(q.match_receive(3, 7))->id == i);
  for (int i = kDeep / 2; i < kDeep - 100; ++i) CHECK(static_cast<Msg*>(q.match_receive(kAnySource, kAnyTag))->id == i);
  CHECK(!q.indexed());
  CHECK(q.unexpected_match_attempts() == kDeep - 100);
  // A receive for another sender walks the 100 left, past the budget: the
  // index is built, and the receive waits.
  Recv other = recv(-1, 4, 7);
  CHECK(q.match_receive(4, 7) == nullptr);
  CHECK(q.indexed());
  q.post(&other);
  for (int i = kDeep - 100; i < kDeep; ++i) CHECK(static_cast<Msg*>(q.match_receive(3, 7))->id == i);
  CHECK(q.cancel(&other));
  CHECK(!q.indexed());  // drained: the index left
  // Mixed tags: indexed once deep.
  std::vector<Msg> mixed;
  for (int i = 0; i < 2 * int(kIndexThreshold); ++i) mixed.push_back(msg(i, 3, i % 2));
  for (size_t i = 0; i < mixed.size(); ++i) {
    q.push_unexpected(&mixed[i]);
    CHECK(q.indexed() == (i + 1 > kIndexThreshold));
  }
  for (size_t i = 0; i < mixed.size(); ++i) CHECK(q.match_receive(3, int(i % 2)) == &mixed[i]);
}

TEST_CASE("randomized matching agrees with a reference model and keeps per-sender order") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 50; ++round) {
    MatchQueues q;
    std::deque<Recv> recvs;
    std::deque<Msg> msgs;
    std::vector<Recv*> ref_posted;
    std::vector<Msg*> ref_unex;
    std::vector<int> last_seq_from(4, -1);
    int seq = 0;
    for (int step = 0; step < 400; ++step) {
      if (rng() % 2) {
        int src = int(rng() % 5) - 1;
        if (src < 0) src = kAnySource;
        int tag = int(rng() % 4) - 1;  // -1 = any
        recvs.push_back(recv(int(recvs.size()), src, tag));
        Recv* r = &recvs.back();
        Msg* expect = nullptr;
        for (auto it = ref_unex.begin(); it != ref_unex.end(); ++it)
          if (matches(src, tag, (*it)->source, (*it)->tag)) {
            expect = *it;
            ref_unex.erase(it);
            break;
          }
        auto* got = static_cast<Msg*>(q.match_receive(src, tag));
        REQUIRE(got == expect);
        if (!got) {
          q.post(r);
          ref_posted.push_back(r);
        }
      } else {
        int src = int(rng() % 4), tag = int(rng() % 3);
        msgs.push_back(msg(seq++, src, tag));
        Msg* m = &msgs.back();
        Recv* expect = nullptr;
        for (auto it = ref_posted.begin(); it != ref_posted.end(); ++it)
          if (matches((*it)->source, (*it)->tag, src, tag)) {
            expect = *it;
            ref_posted.erase(it);
            break;
          }
        auto* got = static_cast<Recv*>(q.match_arrival(src, tag));
        REQUIRE(got == expect);
        if (!got) {
          q.push_unexpected(m);
          ref_unex.push_back(m);
        }
      }
      REQUIRE(q.posted_size() == ref_posted.size());
      REQUIRE(q.unexpected_size() == ref_unex.size());
    }
    // Drain: a wildcard receive takes each sender's messages in send order.
    for (;;) {
      auto* m = static_cast<Msg*>(q.match_receive(kAnySource, kAnyTag));
      if (!m) break;
      REQUIRE(m->id > last_seq_from[m->source]);
      last_seq_from[m->source] = m->id;
    }
    for (auto* r : ref_posted) REQUIRE(q.cancel(r));
  }
}
