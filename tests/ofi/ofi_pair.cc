// Helpers shared by the ofi transport tests (ofi_pair.h).
#include "tests/ofi/ofi_pair.h"

#include <rdma/fabric.h>

#include <chrono>
#include <cstring>

namespace sonde::test {

std::unique_ptr<transport::Transport> make_ofi(FakeExchange& ex, const std::string& provider, int credits,
                                               int tx_buffers, size_t frame) {
  transport::OfiConfig config;
  config.my_rank = ex.rank();
  config.world_size = ex.size();
  for (int r = 0; r < ex.size(); ++r)
    if (r != ex.rank()) config.peers.push_back(r);
  config.provider = provider;
  config.credits = credits;
  config.tx_buffers = tx_buffers;
  config.frame_bytes = frame;
  config.fatal = [](const std::string& m) { throw RankFailure(m); };
  return transport::make_ofi_transport(config, ex);
}

bool libfabric_has_rdm(const char* name) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup(name);
  fi_info* list = nullptr;
  bool found = false;
  if (fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list) == 0) {
    for (fi_info* i = list; i; i = i->next) found |= std::string(i->fabric_attr->prov_name) == name;
    fi_freeinfo(list);
  }
  fi_freeinfo(hints);
  return found;
}

std::string expected_provider(const std::string& asked) {
  if (asked != "tcp") return asked;
  if (libfabric_has_rdm("net")) return "net";
  if (libfabric_has_rdm("tcp")) return "tcp";
  return "tcp;ofi_rxm";
}

void settle(transport::Transport& ofi, transport::Delivery& in) {
  auto quiet = std::chrono::steady_clock::now();
  while (!ofi.drained()) {
    auto now = std::chrono::steady_clock::now();
    if (ofi.progress(in) > 0) {
      quiet = now;
    } else if (now - quiet > std::chrono::seconds(2)) {
      break;
    }
  }
}

void greet(FakeExchange& ex, Endpoint& ofi, CheckingDelivery& in) {
  if (ex.rank() == 0) ofi.send(0, 1, 0, 10, true);
  wait_until(
      ex,
      [&] {
        ofi->progress(in);
        return in.received_from(1 - ex.rank()) == 1;
      },
      "the first packet");
  if (ex.rank() == 1) ofi.send(1, 0, 0, 10, true);
  if (ex.rank() == 0)
    wait_until(
        ex,
        [&] {
          ofi->progress(in);
          return in.received_from(1) == 1;
        },
        "the answer");
}

}  // namespace sonde::test
