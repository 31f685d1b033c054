#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/transports/test_packets.h"
#include "transports/self/self_transport.h"

namespace sonde::test {
namespace {

using transport::Delivery;
using transport::make_self_transport;
using transport::Transport;

constexpr int kMe = 3;

// Records what arrives, in order, as "h<seq>" and "d<seq>" events, and lets a
// test react to a header by sending from inside the callback.
class Log final : public Delivery {
 public:
  PayloadSink* on_header(int peer, const PacketHeader& h) override {
    CHECK(peer == kMe);
    events.push_back("h" + std::to_string(h.tag));
    if (on_header_hook) on_header_hook(h);
    return checker.on_header(peer, h);
  }
  void on_payload_done(int peer, const PacketHeader& h, PayloadSink* sink) override {
    events.push_back("d" + std::to_string(h.tag));
    checker.on_payload_done(peer, h, sink);
  }
  std::vector<std::string> events;
  std::function<void(const PacketHeader&)> on_header_hook;
  CheckingDelivery checker{kMe + 1};
};

bool send_now(Transport& t, uint32_t seq, uint64_t bytes) {
  auto data = pattern(kMe, seq, bytes);
  PacketHeader h = make_header(kMe, seq, bytes);
  return t.try_send_now(kMe, h, data.data());  // data dies right after: the transport must have copied it
}

TEST_CASE("self reaches only its own rank") {
  auto t = make_self_transport(kMe);
  CHECK(std::string(t->name()) == "self");
  CHECK(t->reaches(kMe));
  CHECK_FALSE(t->reaches(kMe - 1));
  CHECK_FALSE(t->reaches(kMe + 1));
}

TEST_CASE("self read_remote copies from its own address space and refuses other ranks") {
  auto t = make_self_transport(kMe);
  std::vector<uint8_t> source = pattern(kMe, 1, 100000);
  std::vector<uint8_t> dst(source.size());
  CHECK(t->read_remote(kMe, reinterpret_cast<uint64_t>(source.data()), dst.data(), dst.size()));
  CHECK(dst == source);
  CHECK_FALSE(t->read_remote(kMe + 1, reinterpret_cast<uint64_t>(source.data()), dst.data(), 8));
}

TEST_CASE("self write_remote copies into its own address space and refuses other ranks") {
  auto t = make_self_transport(kMe);
  std::vector<uint8_t> source = pattern(kMe, 2, 100000);
  std::vector<uint8_t> dst(source.size());
  CHECK(t->write_remote(kMe, reinterpret_cast<uint64_t>(dst.data()), source.data(), source.size()));
  CHECK(dst == source);
  CHECK(t->write_remote(kMe, reinterpret_cast<uint64_t>(dst.data()), nullptr, 0));
  std::vector<uint8_t> untouched(8, 0xAB);
  CHECK_FALSE(t->write_remote(kMe + 1, reinterpret_cast<uint64_t>(untouched.data()), source.data(), 8));
  CHECK(untouched == std::vector<uint8_t>(8, 0xAB));
}

TEST_CASE("self delivers nothing outside progress and keeps FIFO across try_send_now and enqueue") {
  auto t = make_self_transport(kMe);
  Log log;
  TestItem big(kMe, 1, 300000, /*contiguous=*/true);
  TestItem packed(kMe, 3, 70000, /*contiguous=*/false);

  REQUIRE(send_now(*t, 0, 10));
  t->enqueue(kMe, &big);
  CHECK_FALSE(send_now(*t, 2, 10));  // an item is queued: the fast path must yield
  TestItem small(kMe, 2, 10, true);
  t->enqueue(kMe, &small);
  t->enqueue(kMe, &packed);
  CHECK(log.events.empty());
  CHECK_FALSE(big.handed_over);

  int delivered = 0;
  for (int i = 0; i < 10; ++i) delivered += t->progress(log);
  CHECK(delivered == 4);
  CHECK(log.events == std::vector<std::string>{"h0", "d0", "h1", "d1", "h2", "d2", "h3", "d3"});
  CHECK(big.handed_over);
  CHECK(small.handed_over);
  CHECK(packed.handed_over);
  // The fast path works again once nothing is queued.
  CHECK(send_now(*t, 4, 0));
  CHECK(t->progress(log) == 1);
  CHECK(log.checker.received_from(kMe) == 5);
  CHECK(t->progress(log) == 0);
}

TEST_CASE("self streams a pack()-only item into an unpack() sink in chunks, callbacks in order") {
  auto t = make_self_transport(kMe);
  Log log;
  log.checker = CheckingDelivery(kMe + 1, CheckingDelivery::Sinks::kUnpack);
  TestItem item(kMe, 0, 1 << 20, /*contiguous=*/false);
  t->enqueue(kMe, &item);
  CHECK(t->progress(log) == 1);
  CHECK(item.handed_over);
  CHECK(item.first_bytes == 1);
  CHECK(item.progresses > 0);  // more than one chunk went through
  CHECK(log.checker.bytes() == (1u << 20));
}

TEST_CASE("self calls on_first_byte and on_handed for an empty item") {
  auto t = make_self_transport(kMe);
  Log log;
  TestItem empty(kMe, 0, 0, true);
  t->enqueue(kMe, &empty);
  CHECK(t->progress(log) == 1);
  CHECK(empty.first_bytes == 1);
  CHECK(empty.handed_over);
  CHECK(log.events == std::vector<std::string>{"h0", "d0"});
}

TEST_CASE("self delivers packets sent from inside a callback after the current one, in order") {
  auto t = make_self_transport(kMe);
  Log log;
  TestItem queued(kMe, 2, 5000, true);
  log.on_header_hook = [&](const PacketHeader& h) {
    if (h.tag == 0) {
      CHECK(send_now(*t, 1, 100));  // nothing queued yet: fast path
      t->enqueue(kMe, &queued);
      CHECK(t->progress(log) == 0);  // re-entrant progress does nothing
    }
  };
  REQUIRE(send_now(*t, 0, 100));
  int delivered = 0;
  for (int i = 0; i < 5; ++i) delivered += t->progress(log);
  CHECK(delivered == 3);
  CHECK(log.events == std::vector<std::string>{"h0", "d0", "h1", "d1", "h2", "d2"});
}

TEST_CASE("self dequeue removes an item that has not started, and only such an item") {
  auto t = make_self_transport(kMe);
  Log log;
  TestItem first(kMe, 0, 100, true);
  TestItem dropped(kMe, 99, 100, true);
  TestItem last(kMe, 1, 100, true);
  t->enqueue(kMe, &first);
  t->enqueue(kMe, &dropped);
  t->enqueue(kMe, &last);
  CHECK(t->dequeue(kMe, &dropped));
  CHECK_FALSE(dropped.is_linked());
  CHECK_FALSE(t->dequeue(kMe, &dropped));  // already gone
  bool tried = false;
  log.on_header_hook = [&](const PacketHeader& h) {
    if (h.tag == 0) {
      CHECK_FALSE(t->dequeue(kMe, &first));  // being delivered
      tried = true;
    }
  };
  while (t->progress(log) != 0) {
  }
  CHECK(tried);
  CHECK(log.events == std::vector<std::string>{"h0", "d0", "h1", "d1"});
  CHECK_FALSE(dropped.handed_over);
}

TEST_CASE("self keeps delivering when callbacks keep sending to self, a bounded amount per call") {
  auto t = make_self_transport(kMe);
  Log log;
  uint32_t next = 1;
  log.on_header_hook = [&](const PacketHeader& h) {
    if (next < 1000) REQUIRE(send_now(*t, next++, 8));
  };
  REQUIRE(send_now(*t, 0, 8));
  int calls = 0;
  while (log.checker.received_from(kMe) < 1000 && calls < 10000) {
    int n = t->progress(log);
    CHECK(n <= 64);
    ++calls;
  }
  CHECK(log.checker.received_from(kMe) == 1000);
  CHECK(calls > 1);  // the endless stream did not trap a single progress() call
}

}  // namespace
}  // namespace sonde::test
