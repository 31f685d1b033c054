// A started engine of one rank over the self transport, for tests that
// hand it packets directly (Engine::on_header), and helpers to forge and
// hand them: the packet "from rank 0" is this process's own. A forged
// packet's rejection reaches the caller as a thrown Rejected instead of
// ending the process.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine.h"
#include "core/engine_internal.h"
#include "transports/self/self_transport.h"

namespace sonde::engine::testing {

struct Rejected {
  std::string what;
};

inline Engine& started_engine() {
  static bool started = false;
  if (!started) {
    started = true;
    std::vector<std::unique_ptr<transport::Transport>> transports;
    transports.push_back(transport::make_self_transport(0));
    std::vector<transport::Transport*> route{transports[0].get()};
    engine().on_protocol_error([](const std::string& what) { throw Rejected{what}; });
    engine().start(0, 1, std::move(transports), std::move(route), {});
  }
  return engine();
}

// A control packet naming the requests `send_cookie` and `recv_cookie`
// (a kCtsWrite with its 8-byte payload).
inline transport::PacketHeader control(transport::PacketType type, uint64_t send_cookie, uint64_t recv_cookie,
                                       uint64_t total = 0, uint64_t payload = 0) {
  transport::PacketHeader h{};
  h.type = type;
  h.send_cookie = send_cookie;
  h.recv_cookie = recv_cookie;
  h.total = total;
  h.payload = type == transport::PacketType::kCtsWrite ? 8 : payload;
  return h;
}

// The rejection message for `h` from rank 0, or "" when it was taken.
inline std::string rejection(const transport::PacketHeader& h) {
  try {
    engine().on_header(0, h);
  } catch (const Rejected& r) {
    return r.what;
  }
  return "";
}

// MPI_CHAR.
inline Datatype* bytes_type() { return &engine().tables().datatypes.predefined(1); }

}  // namespace sonde::engine::testing
