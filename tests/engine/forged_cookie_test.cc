// Control packets name the peer's request by a cookie (its handle, never an
// address): a forged or stale cookie, or one naming a request of the wrong
// kind, talking to another rank or already complete, is rejected with a
// message naming the peer before anything is dereferenced; a right one is
// taken.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "core/engine_internal.h"
#include "core/p2p.h"
#include "tests/engine/engine_fixture.h"

using namespace sonde::engine;
using namespace sonde::engine::testing;

namespace {

const PacketType kSendSide[] = {PacketType::kCts, PacketType::kFin, PacketType::kSyncAck, PacketType::kCtsWrite};
const PacketType kRecvSide[] = {PacketType::kData, PacketType::kWriteDone};

}  // namespace

TEST_CASE("cookies that name no live request are rejected, naming the peer") {
  started_engine();
  int on_stack = 0;
  const uint64_t forged[] = {0, reinterpret_cast<uint64_t>(&on_stack), 0xdeadbeefcafef00dull, 0xffffffffull,
                             uint64_t(uint32_t(make_handle(SONDE_KIND_REQUEST, 5, 77)))};
  for (uint64_t c : forged) {
    for (PacketType t : kSendSide) {
      std::string why = rejection(control(t, c, 0));
      CHECK_MESSAGE(why.find("from rank 0") != std::string::npos, "type ", int(t), " cookie ", c);
    }
    for (PacketType t : kRecvSide) {
      std::string why = rejection(control(t, 0, c));
      CHECK_MESSAGE(why.find("from rank 0") != std::string::npos, "type ", int(t), " cookie ", c);
    }
  }
}

TEST_CASE("a cookie of the wrong kind, another peer, or a released or completed request is rejected") {
  started_engine();
  static char rbuf[16];
  Request* recv = nullptr;
  REQUIRE(start_recv(rbuf, 16, bytes_type(), 0, 101, engine().world(), &recv) == MPI_SUCCESS);
  // A receive's cookie in a sender's packet, and vice versa.
  for (PacketType t : kSendSide) CHECK(rejection(control(t, cookie_of(recv), 0)) != "");
  // A receive not matched yet talks to no rank.
  for (PacketType t : kRecvSide) CHECK(rejection(control(t, 0, cookie_of(recv))) != "");
  // A synchronous send waiting for its kSyncAck: the right cookie is taken
  // once; the request is then complete and a second one is refused.
  static char sbuf[4] = {1, 2, 3, 4};
  Request* send = nullptr;
  REQUIRE(start_send(sbuf, 4, bytes_type(), 0, 102, engine().world(), SendMode::kSync, &send) == MPI_SUCCESS);
  while (!send->handed) engine().progress();
  const uint64_t c = cookie_of(send);
  CHECK(rejection(control(PacketType::kSyncAck, c, 0)) == "");
  CHECK(send->complete);
  CHECK(rejection(control(PacketType::kSyncAck, c, 0)) != "");
  // Released: the handle's generation no longer resolves.
  CHECK(wait_all(1, &send) == MPI_SUCCESS);
  CHECK(rejection(control(PacketType::kSyncAck, c, 0)) != "");
  CHECK(rejection(control(PacketType::kFin, c, 0)) != "");
  engine().cancel_recv(recv);
}
