// The checker's own logic, without MPI: hand-made event streams, good ones
// that must pass and broken ones whose every defect must be reported.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/peruse_checker/checker.h"

using namespace sonde::peruse_checker;

namespace {

constexpr MPI_Comm kComm = 3;

// Ids of each kind (low bits: 0 request, 1 search, 2 transient, 3 message).
uint64_t R(int n) { return uint64_t(0x1000 + n) << 3; }
uint64_t S(int n) { return uint64_t(n) << 3 | 1; }
uint64_t T(int n) { return uint64_t(n) << 3 | 2; }
uint64_t M(int n) { return uint64_t(n) << 3 | 3; }

// Builds a stream. Requests keep the spec given at activate().
struct Stream {
  std::vector<Event> ev;
  std::map<uint64_t, Event> reqs, msgs;
  std::map<uint64_t, Event> searches;

  Stream& raw(Event e) {
    e.time = double(ev.size());
    ev.push_back(e);
    return *this;
  }
  Stream& activate(uint64_t id, int op, int peer, int tag, MPI_Comm comm = kComm) {
    Event e{0, id, PERUSE_COMM_REQ_ACTIVATE, comm, reinterpret_cast<void*>(id), 4, 1, peer, tag, op};
    reqs[id] = e;
    return raw(e);
  }
  Stream& req(int event, uint64_t id) {
    Event e = reqs.at(id);
    e.event = event;
    return raw(e);
  }
  Stream& arrived(uint64_t id, int source, int tag, MPI_Comm comm = kComm) {
    Event e{0, id, PERUSE_COMM_MSG_ARRIVED, comm, nullptr, 4, MPI_BYTE, source, tag, PERUSE_RECV};
    msgs[id] = e;
    return raw(e);
  }
  Stream& msg(int event, uint64_t id) {
    Event e = msgs.at(id);
    e.event = event;
    return raw(e);
  }
  Stream& search(int begin, uint64_t id, int peer, int tag, MPI_Comm comm = kComm) {
    raw(Event{0, id, begin, comm, nullptr, 0, MPI_DATATYPE_NULL, peer, tag, PERUSE_RECV});
    return raw(Event{0, id, begin + 1, comm, nullptr, 0, MPI_DATATYPE_NULL, peer, tag, PERUSE_RECV});
  }

  // S1, nothing found: the receive is posted.
  Stream& post(uint64_t r, int peer, int tag, uint64_t s, MPI_Comm comm = kComm) {
    activate(r, PERUSE_RECV, peer, tag, comm);
    search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, s, peer, tag, comm);
    return req(PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, r);
  }
  // S4, nothing matched: the message is unexpected.
  Stream& unexpected(uint64_t m, int source, int tag, uint64_t s, MPI_Comm comm = kComm) {
    arrived(m, source, tag, comm);
    search(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, s, source, tag, comm);
    return msg(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, m);
  }
  // S4, matching posted receive r.
  Stream& arrive_for(uint64_t m, int source, int tag, uint64_t s, uint64_t r, MPI_Comm comm = kComm) {
    arrived(m, source, tag, comm);
    search(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, s, source, tag, comm);
    req(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, r);
    return msg(PERUSE_COMM_MSG_MATCH_POSTED_REQ, m);
  }
  // S1, taking unexpected message m.
  Stream& take(uint64_t r, int peer, int tag, uint64_t s, uint64_t m, MPI_Comm comm = kComm) {
    activate(r, PERUSE_RECV, peer, tag, comm);
    search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, s, peer, tag, comm);
    msg(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, m);
    return req(PERUSE_COMM_REQ_MATCH_UNEX, r);
  }
  // Transfer and completion of a matched receive or an active send.
  Stream& finish(uint64_t r, int continues = 0) {
    req(PERUSE_COMM_REQ_XFER_BEGIN, r);
    for (int k = 0; k < continues; ++k) req(PERUSE_COMM_REQ_XFER_CONTINUE, r);
    req(PERUSE_COMM_REQ_XFER_END, r);
    req(PERUSE_COMM_REQ_COMPLETE, r);
    return req(PERUSE_COMM_REQ_NOTIFY, r);
  }
  Stream& transient(uint64_t t, int peer, int tag) {
    activate(t, PERUSE_SEND, peer, tag);
    req(PERUSE_COMM_REQ_XFER_BEGIN, t);
    req(PERUSE_COMM_REQ_XFER_END, t);
    req(PERUSE_COMM_REQ_COMPLETE, t);
    return req(PERUSE_COMM_REQ_NOTIFY, t);
  }

  std::vector<Violation> check() const { return verify(ev.data(), ev.size()); }
};

int count(const std::vector<Violation>& v, Kind k) {
  int n = 0;
  for (const Violation& x : v) n += x.kind == k;
  return n;
}

bool has(const std::vector<Violation>& v, Kind k, uint64_t id) {
  for (const Violation& x : v)
    if (x.kind == k && x.id == id) return true;
  return false;
}

std::string dump(const std::vector<Violation>& v) {
  std::string s;
  for (const Violation& x : v) s += std::string("[") + kind_name(x.kind) + "] " + x.what + "\n";
  return s;
}

#define CHECK_CLEAN(stream)     \
  do {                          \
    auto v_ = (stream).check(); \
    INFO(dump(v_));             \
    CHECK(v_.empty());          \
  } while (0)

}  // namespace

// ------------------------------------------------------------ good streams

TEST_CASE("receive posted first, then matched by an arrival") {
  Stream s;
  s.post(R(1), 1, 5, S(1)).arrive_for(M(1), 1, 5, S(2), R(1)).finish(R(1));
  CHECK_CLEAN(s);
}

TEST_CASE("message unexpected first, then taken by a wildcard receive") {
  Stream s;
  s.unexpected(M(1), 2, 7, S(1)).take(R(1), MPI_ANY_SOURCE, MPI_ANY_TAG, S(2), M(1)).finish(R(1));
  CHECK_CLEAN(s);
}

TEST_CASE("sends: transient, fragments, at once, MPI_PROC_NULL, persistent restarts reuse the id") {
  Stream s;
  s.transient(T(1), 1, 3);
  s.activate(R(1), PERUSE_SEND, 1, 3).finish(R(1), 3);
  s.activate(R(2), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_COMPLETE, R(2));  // MPI_Ibsend's own request
  s.activate(R(3), PERUSE_SEND, MPI_PROC_NULL, 3).req(PERUSE_COMM_REQ_COMPLETE, R(3)).req(PERUSE_COMM_REQ_NOTIFY, R(3));
  s.req(PERUSE_COMM_REQ_NOTIFY, R(2));
  s.activate(R(1), PERUSE_SEND, 1, 3).finish(R(1));  // MPI_Start again
  CHECK_CLEAN(s);
}

TEST_CASE("cancel, MPI_PROC_NULL receive, probes, matched probe and Mrecv, adoption by a new communicator") {
  Stream s;
  s.post(R(1), 0, 99, S(1)).req(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, R(1)).req(PERUSE_COMM_REQ_COMPLETE, R(1));
  s.req(PERUSE_COMM_REQ_NOTIFY, R(1));
  s.activate(R(2), PERUSE_RECV, MPI_PROC_NULL, 1).req(PERUSE_COMM_REQ_COMPLETE, R(2)).req(PERUSE_COMM_REQ_NOTIFY, R(2));
  s.search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, S(2), MPI_ANY_SOURCE, 4);  // Iprobe, nothing
  s.unexpected(M(1), 1, 4, S(3));
  s.search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, S(4), MPI_ANY_SOURCE, 4);  // Probe finds it
  s.search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, S(5), 1, MPI_ANY_TAG).msg(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, M(1));
  s.activate(R(3), PERUSE_RECV, 1, MPI_ANY_TAG).req(PERUSE_COMM_REQ_MATCH_UNEX, R(3)).finish(R(3));
  s.arrived(M(2), 0, 8, 9).msg(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, M(2));  // S5 on comm 9
  s.take(R(4), 0, 8, S(6), M(2), 9).finish(R(4));
  CHECK_CLEAN(s);
}

TEST_CASE("internal traffic with negative tags is not matched by MPI_ANY_TAG") {
  Stream s;
  s.post(R(1), 1, MPI_ANY_TAG, S(1));
  s.unexpected(M(1), 1, -16, S(2));  // the posted ANY_TAG receive must not take it
  s.take(R(2), 1, -16, S(3), M(1)).finish(R(2));
  s.arrive_for(M(2), 1, 0, S(4), R(1)).finish(R(1));
  CHECK_CLEAN(s);
}

// ------------------------------------------------------------ broken streams

TEST_CASE("NOTIFY before COMPLETE") {
  Stream s;
  s.activate(R(1), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_XFER_BEGIN, R(1)).req(PERUSE_COMM_REQ_XFER_END, R(1));
  s.req(PERUSE_COMM_REQ_NOTIFY, R(1)).req(PERUSE_COMM_REQ_COMPLETE, R(1));
  auto v = s.check();
  INFO(dump(v));
  CHECK(has(v, Kind::kBadTransition, R(1)));
  REQUIRE(!v.empty());
  CHECK(v[0].index == 3);  // the NOTIFY itself
  CHECK(v[0].what.find("REQ_NOTIFY") != std::string::npos);
  CHECK(v[0].what.find("xfer-done") != std::string::npos);  // the state it was in
}

TEST_CASE("a message matched twice") {
  Stream s;
  s.post(R(1), 1, 5, S(1)).arrive_for(M(1), 1, 5, S(2), R(1)).finish(R(1));
  s.take(R(2), 1, 5, S(3), M(1)).finish(R(2));  // M(1) again, from the unexpected queue
  auto v = s.check();
  INFO(dump(v));
  CHECK(has(v, Kind::kBadTransition, M(1)));
  bool names_end = false;
  for (const Violation& x : v) names_end |= x.id == M(1) && x.what.find("not live (it ended at #") != std::string::npos;
  CHECK(names_end);
}

TEST_CASE("an id reused while live") {
  Stream s;
  s.activate(R(1), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_XFER_BEGIN, R(1));
  s.activate(R(1), PERUSE_SEND, 2, 4).finish(R(1));
  auto v = s.check();
  INFO(dump(v));
  CHECK(count(v, Kind::kIdReused) == 1);
  CHECK(has(v, Kind::kIdReused, R(1)));
}

TEST_CASE("a request never notified, a message never removed, a probe's claim never received") {
  Stream s;
  s.activate(R(1), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_XFER_BEGIN, R(1)).req(PERUSE_COMM_REQ_XFER_END, R(1));
  s.req(PERUSE_COMM_REQ_COMPLETE, R(1));
  s.unexpected(M(1), 1, 2, S(1));
  s.unexpected(M(2), 1, 3, S(2));
  s.search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, S(3), 1, 3).msg(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, M(2));
  auto v = s.check();
  INFO(dump(v));
  CHECK(has(v, Kind::kNotEnded, R(1)));
  CHECK(has(v, Kind::kNotEnded, M(1)));
  CHECK(has(v, Kind::kNotEnded, M(2)));
  CHECK(count(v, Kind::kNotEnded) == 3);
}

TEST_CASE("broken sequences") {
  SUBCASE("MSG_MATCH_POSTED_REQ without REQ_REMOVE_FROM_POSTED_Q") {
    Stream s;
    s.post(R(1), 1, 5, S(1)).arrived(M(1), 1, 5).search(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN, S(2), 1, 5);
    s.msg(PERUSE_COMM_MSG_MATCH_POSTED_REQ, M(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBrokenSequence, M(1)));
  }
  SUBCASE("a receive posted without its search") {
    Stream s;
    s.activate(R(1), PERUSE_RECV, 1, 5).req(PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBrokenSequence, R(1)));
  }
  SUBCASE("a search END without its BEGIN, and a BEGIN ended by the other kind") {
    Stream s;
    s.raw(Event{0, S(1), PERUSE_COMM_SEARCH_UNEX_Q_END, kComm, nullptr, 0, 0, 1, 1, PERUSE_RECV});
    s.raw(Event{0, S(2), PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, kComm, nullptr, 0, 0, 1, 1, PERUSE_RECV});
    s.raw(Event{0, S(2), PERUSE_COMM_SEARCH_POSTED_Q_END, kComm, nullptr, 0, 0, 1, 1, PERUSE_RECV});
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBadTransition, S(1)));
    CHECK(has(v, Kind::kBadTransition, S(2)));
    CHECK(has(v, Kind::kBrokenSequence, S(2)));
  }
  SUBCASE("a transient request interrupted") {
    Stream s;
    s.activate(T(1), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_XFER_BEGIN, T(1));
    s.unexpected(M(1), 1, 3, S(1));
    s.req(PERUSE_COMM_REQ_XFER_END, T(1)).req(PERUSE_COMM_REQ_COMPLETE, T(1)).req(PERUSE_COMM_REQ_NOTIFY, T(1));
    s.take(R(1), 1, 3, S(2), M(1)).finish(R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kBrokenSequence) >= 1);
    CHECK(has(v, Kind::kBrokenSequence, M(1)));  // the ARRIVED that cut in
  }
  SUBCASE("a send completed without transfer long after its ACTIVATE") {
    Stream s;
    s.activate(R(1), PERUSE_SEND, 1, 3).transient(T(1), 1, 4).req(PERUSE_COMM_REQ_COMPLETE, R(1));
    s.req(PERUSE_COMM_REQ_NOTIFY, R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBadTransition, R(1)));
  }
  SUBCASE("a receive transferring before it matched") {
    Stream s;
    s.post(R(1), 1, 5, S(1)).req(PERUSE_COMM_REQ_XFER_BEGIN, R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBadTransition, R(1)));
  }
}

TEST_CASE("matching: envelopes, non-overtaking, posted order, missed matches") {
  SUBCASE("a receive for tag 5 paired with a message of tag 6") {
    Stream s;
    s.post(R(1), 1, 5, S(1)).arrive_for(M(1), 1, 6, S(2), R(1)).finish(R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kEnvelope, R(1)));
  }
  SUBCASE("MPI_ANY_TAG paired with internal traffic") {
    Stream s;
    s.unexpected(M(1), 1, -17, S(1)).take(R(1), 1, MPI_ANY_TAG, S(2), M(1)).finish(R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kEnvelope) >= 1);
  }
  SUBCASE("a receive's search for another pattern") {
    Stream s;
    s.activate(R(1), PERUSE_RECV, 1, 5).search(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, S(1), 2, 5);
    s.req(PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, R(1)).req(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q, R(1));
    s.req(PERUSE_COMM_REQ_COMPLETE, R(1)).req(PERUSE_COMM_REQ_NOTIFY, R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kEnvelope, S(1)));
  }
  SUBCASE("overtaking: the younger of two messages from one sender taken first") {
    Stream s;
    s.unexpected(M(1), 1, 5, S(1)).unexpected(M(2), 1, 6, S(2));
    s.take(R(1), 1, MPI_ANY_TAG, S(3), M(2)).finish(R(1));
    s.take(R(2), 1, MPI_ANY_TAG, S(4), M(1)).finish(R(2));
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kOvertaking) == 1);
    CHECK(has(v, Kind::kOvertaking, M(2)));
  }
  SUBCASE("different senders or a tag the receive skips are not overtaking") {
    Stream s;
    s.unexpected(M(1), 1, 5, S(1)).unexpected(M(2), 2, 5, S(2)).unexpected(M(3), 2, 6, S(3));
    s.take(R(1), MPI_ANY_SOURCE, 5, S(4), M(2)).finish(R(1));
    s.take(R(2), 2, 6, S(5), M(3)).finish(R(2));
    s.take(R(3), 1, 5, S(6), M(1)).finish(R(3));
    CHECK_CLEAN(s);
  }
  SUBCASE("posted order: an arrival skips the older matching receive") {
    Stream s;
    s.post(R(1), MPI_ANY_SOURCE, 5, S(1)).post(R(2), 1, 5, S(2));
    s.arrive_for(M(1), 1, 5, S(3), R(2)).finish(R(2));
    s.arrive_for(M(2), 1, 5, S(4), R(1)).finish(R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kPostedOrder) == 1);
    CHECK(has(v, Kind::kPostedOrder, M(1)));
  }
  SUBCASE("missed matches in both directions") {
    Stream s;
    s.post(R(1), 1, 5, S(1)).unexpected(M(1), 1, 5, S(2));               // M(1) should have matched R(1)
    s.unexpected(M(2), 2, 7, S(3)).post(R(2), MPI_ANY_SOURCE, 7, S(4));  // R(2) should have taken M(2)
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kMissedMatch, M(1)));
    CHECK(has(v, Kind::kMissedMatch, R(2)));
  }
  SUBCASE("MPI_Mrecv with no message claimed") {
    Stream s;
    s.activate(R(1), PERUSE_RECV, 1, MPI_ANY_TAG).req(PERUSE_COMM_REQ_MATCH_UNEX, R(1)).finish(R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kNoClaimedMessage, R(1)));
  }
}

TEST_CASE("ids and specs") {
  SUBCASE("id 0, a message event with a request id, a receive with a transient id") {
    Stream s;
    s.raw(Event{0, 0, PERUSE_COMM_REQ_ACTIVATE, kComm, nullptr, 0, 1, 1, 1, PERUSE_SEND});
    s.raw(Event{0, R(1), PERUSE_COMM_MSG_ARRIVED, kComm, nullptr, 0, MPI_BYTE, 1, 1, PERUSE_RECV});
    s.raw(Event{0, T(1), PERUSE_COMM_REQ_ACTIVATE, kComm, nullptr, 0, 1, 1, 1, PERUSE_RECV});
    s.raw(Event{0, uint64_t(0x45), PERUSE_COMM_REQ_ACTIVATE, kComm, nullptr, 0, 1, 1, 1, PERUSE_SEND});
    s.raw(Event{0, R(2), 77, kComm, nullptr, 0, 1, 1, 1, PERUSE_SEND});
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kBadId) == 4);
    CHECK(count(v, Kind::kBadEvent) == 1);
  }
  SUBCASE("a request's spec changing in mid-life") {
    Stream s;
    s.activate(R(1), PERUSE_SEND, 1, 3).req(PERUSE_COMM_REQ_XFER_BEGIN, R(1));
    Event e = s.reqs[R(1)];
    e.event = PERUSE_COMM_REQ_XFER_END;
    e.tag = 4;
    s.raw(e).req(PERUSE_COMM_REQ_COMPLETE, R(1)).req(PERUSE_COMM_REQ_NOTIFY, R(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kSpecChanged) == 1);
    CHECK(v[0].what.find("tag 4 (was 3)") != std::string::npos);
  }
  SUBCASE("lost events make the stream unverifiable") {
    Stream s;
    s.transient(T(1), 1, 2);
    auto v = verify(s.ev.data(), s.ev.size(), 5);
    CHECK(count(v, Kind::kLostEvents) == 1);
  }
}

// ------------------------------------------------------------ one-sided (S10)

TEST_CASE("one-sided operations: put at once, get answered later, interleaved with other traffic") {
  Stream s;
  s.activate(T(1), PERUSE_PUT, 1, MPI_ANY_TAG)
      .req(PERUSE_COMM_REQ_XFER_BEGIN, T(1))
      .req(PERUSE_COMM_REQ_XFER_END, T(1))
      .req(PERUSE_COMM_REQ_COMPLETE, T(1));
  s.activate(T(2), PERUSE_GET, 2, MPI_ANY_TAG).req(PERUSE_COMM_REQ_XFER_BEGIN, T(2));
  s.activate(T(3), PERUSE_ACC, 1, MPI_ANY_TAG).req(PERUSE_COMM_REQ_XFER_BEGIN, T(3));
  s.post(R(1), 1, 5, S(1)).arrive_for(M(1), 1, 5, S(2), R(1)).finish(R(1));
  s.req(PERUSE_COMM_REQ_XFER_END, T(3)).req(PERUSE_COMM_REQ_COMPLETE, T(3));
  s.req(PERUSE_COMM_REQ_XFER_END, T(2)).req(PERUSE_COMM_REQ_COMPLETE, T(2));
  CHECK_CLEAN(s);
}

TEST_CASE("one-sided operations: broken sequences, NOTIFY, a request id, an unfinished get") {
  SUBCASE("XFER_BEGIN not right after ACTIVATE") {
    Stream s;
    s.activate(T(1), PERUSE_PUT, 1, MPI_ANY_TAG).activate(T(2), PERUSE_GET, 1, MPI_ANY_TAG);
    s.req(PERUSE_COMM_REQ_XFER_BEGIN, T(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBrokenSequence, T(2)));
  }
  SUBCASE("COMPLETE not right after XFER_END, then a NOTIFY") {
    Stream s;
    s.activate(T(1), PERUSE_GET, 1, MPI_ANY_TAG).req(PERUSE_COMM_REQ_XFER_BEGIN, T(1));
    s.req(PERUSE_COMM_REQ_XFER_END, T(1)).activate(T(2), PERUSE_PUT, 1, MPI_ANY_TAG);
    s.req(PERUSE_COMM_REQ_XFER_BEGIN, T(2)).req(PERUSE_COMM_REQ_XFER_END, T(2)).req(PERUSE_COMM_REQ_COMPLETE, T(2));
    s.req(PERUSE_COMM_REQ_COMPLETE, T(1)).req(PERUSE_COMM_REQ_NOTIFY, T(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kBrokenSequence, T(2)));
    CHECK(has(v, Kind::kBadTransition, T(1)));  // one-sided operations end at COMPLETE
  }
  SUBCASE("a one-sided operation with a request id") {
    Stream s;
    s.activate(R(1), PERUSE_ACC, 1, MPI_ANY_TAG);
    auto v = s.check();
    INFO(dump(v));
    CHECK(count(v, Kind::kBadId) == 1);
  }
  SUBCASE("a get whose answer never came") {
    Stream s;
    s.activate(T(1), PERUSE_GET, 1, MPI_ANY_TAG).req(PERUSE_COMM_REQ_XFER_BEGIN, T(1));
    auto v = s.check();
    INFO(dump(v));
    CHECK(has(v, Kind::kNotEnded, T(1)));
  }
}
