// A started engine of one rank over the self transport, for tests and fuzz
// harnesses that hand it packets directly (Engine::on_header): the packet
// "from rank 0" is this process's own. A forged packet's rejection reaches
// the caller as a thrown Rejected instead of ending the process.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine.h"
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

}  // namespace sonde::engine::testing
