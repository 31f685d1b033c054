// Control packets that name a live request of the right kind, talking to
// the sending rank, but answer a protocol step that request is not in (a
// synchronous-send ack to a rendezvous send, a kFin to an eager send, a
// second kCts, a cooperative write longer than the send, more streamed data
// than the receive announced) are rejected naming the peer before anything
// is touched: taken, they would complete a send early, queue a send twice,
// read past a send buffer or write past a receive buffer.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/engine_internal.h"
#include "core/p2p.h"
#include "tests/engine/engine_fixture.h"

using namespace sonde::engine;
using namespace sonde::engine::testing;

namespace {

constexpr int64_t kLarge = 64 * 1024;  // above the eager limit: a rendezvous

}  // namespace

TEST_CASE("a synchronous send waiting for its match takes no rendezvous answer") {
  started_engine();
  static char sbuf[8];
  Request* send = nullptr;
  REQUIRE(start_send(sbuf, 8, bytes_type(), 0, 201, engine().world(), SendMode::kSync, &send) == MPI_SUCCESS);
  while (!send->handed) engine().progress();
  const uint64_t c = cookie_of(send);
  for (PacketType t : {PacketType::kFin, PacketType::kCts, PacketType::kCtsWrite}) {
    std::string why = rejection(control(t, c, 0, 8));
    CHECK_MESSAGE(why.find("from rank 0") != std::string::npos, "type ", int(t));
    CHECK_FALSE(send->complete);
  }
  CHECK(rejection(control(PacketType::kSyncAck, c, 0)) == "");
  CHECK(send->complete);
  CHECK(wait_all(1, &send) == MPI_SUCCESS);
}

TEST_CASE("streamed data beyond what the receive announced is rejected") {
  Engine& e = started_engine();
  const bool single_copy = e.settings().single_copy;
  e.settings().single_copy = false;  // the receive asks for a stream (kCts)
  std::vector<char> rbuf(kLarge), sbuf(kLarge / 2, 'x');
  Request *recv = nullptr, *send = nullptr;
  REQUIRE(start_recv(rbuf.data(), kLarge, bytes_type(), 0, 202, e.world(), &recv) == MPI_SUCCESS);
  REQUIRE(start_send(sbuf.data(), kLarge / 2, bytes_type(), 0, 202, e.world(), SendMode::kStandard, &send) ==
          MPI_SUCCESS);
  // The RTS arrives, matches, and the receive asks for the data.
  while (!recv->stream_asked) e.progress();
  const uint64_t c = cookie_of(recv);
  // Into the user's buffer, which holds the whole message: not one byte more.
  CHECK(rejection(control(PacketType::kData, cookie_of(send), c, kLarge, kLarge)) != "");
  CHECK(rejection(control(PacketType::kData, cookie_of(send), c, kLarge + 1, kLarge + 1)) != "");
  // The real stream completes both.
  while (!recv->complete || !send->complete) e.progress();
  CHECK(rbuf[0] == 'x');
  CHECK(rbuf[kLarge / 2 - 1] == 'x');
  Request* both[] = {recv, send};
  CHECK(wait_all(2, both) == MPI_SUCCESS);
  e.settings().single_copy = single_copy;
}

TEST_CASE("a receive that asked for no stream takes no data") {
  Engine& e = started_engine();
  static char rbuf[16];
  Request* recv = nullptr;
  REQUIRE(start_recv(rbuf, 16, bytes_type(), 0, 203, e.world(), &recv) == MPI_SUCCESS);
  // Posted, and with the peer of an earlier activation (as a persistent
  // receive restarted keeps it): still no stream was asked for.
  recv->world_peer = 0;
  CHECK(rejection(control(PacketType::kData, 0, cookie_of(recv), 16, 16)) != "");
  CHECK(rejection(control(PacketType::kWriteDone, 0, cookie_of(recv), 16)) != "");
  recv->world_peer = -1;
  CHECK(e.cancel_recv(recv));
  CHECK(wait_all(1, &recv) == MPI_SUCCESS);
}

// Last: the kCts taken here queues data for a receive that does not exist,
// which this one-rank engine would deliver to itself if it progressed.
TEST_CASE("a rendezvous send takes one kCts, no synchronous ack and no longer write") {
  Engine& e = started_engine();
  std::vector<char> sbuf(kLarge, 'y');
  Request* send = nullptr;
  REQUIRE(start_send(sbuf.data(), kLarge, bytes_type(), 0, 204, e.world(), SendMode::kStandard, &send) == MPI_SUCCESS);
  const uint64_t c = cookie_of(send);
  CHECK(rejection(control(PacketType::kSyncAck, c, 0)) != "");
  CHECK_FALSE(send->matched);
  // The receiver's share of a cooperative copy is its own business, but the
  // sender never writes more than it has.
  CHECK(rejection(control(PacketType::kCtsWrite, c, 0, kLarge + 4096)) != "");
  CHECK(rejection(control(PacketType::kCts, c, 0)) == "");
  // Streaming now: a second kCts would queue the same data twice.
  CHECK(rejection(control(PacketType::kCts, c, 0)) != "");
  CHECK(rejection(control(PacketType::kFin, c, 0)) != "");
  CHECK(rejection(control(PacketType::kCtsWrite, c, 0, 8)) != "");
}
