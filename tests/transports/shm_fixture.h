// Helpers shared by the shm transport tests.
#pragma once

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tests/transports/rank_harness.h"
#include "tests/transports/test_packets.h"
#include "transports/shm/fast_box.h"
#include "transports/shm/shm_transport.h"

namespace sonde::test {

inline std::vector<int> ranks_upto(int n) {
  std::vector<int> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

inline std::unique_ptr<transport::Transport> make_shm(FakeExchange& exchange, const std::string& job,
                                                      size_t ring_bytes = transport::shm::kRingBytes,
                                                      std::vector<int> local = {}, bool fast_boxes = true) {
  transport::ShmConfig config;
  config.my_rank = exchange.rank();
  config.local_ranks = local.empty() ? ranks_upto(exchange.size()) : std::move(local);
  config.job_id = job;
  config.ring_bytes = ring_bytes;
  config.fast_boxes = fast_boxes;
  return transport::make_shm_transport(config, exchange);
}

// One rank's transport and the packets it has queued. Queued items must
// outlive the transport (its destructor unlinks them), so it goes first.
class Endpoint {
 public:
  explicit Endpoint(std::unique_ptr<transport::Transport> transport) : transport_(std::move(transport)) {}

  transport::Transport* operator->() { return transport_.get(); }
  transport::Transport& operator*() { return *transport_; }

  // Sends pattern packet `seq` of `bytes` to `peer`: through try_send_now()
  // when `fast` and it accepts, otherwise as a queued item.
  void send(int me, int peer, uint32_t seq, uint64_t bytes, bool fast, bool contiguous = true) {
    if (fast) {
      std::vector<uint8_t> data = pattern(me, seq, bytes);
      if (transport_->try_send_now(peer, make_header(me, seq, bytes), data.data())) {
        ++sent_now_;
        return;
      }
    }
    enqueue(me, peer, seq, bytes, contiguous);
  }

  TestItem& enqueue(int me, int peer, uint32_t seq, uint64_t bytes, bool contiguous = true) {
    items_.push_back(std::make_unique<TestItem>(me, seq, bytes, contiguous));
    transport_->enqueue(peer, items_.back().get());
    return *items_.back();
  }

  // Every queued item was handed over or dequeued.
  bool all_handed() const {
    for (const auto& item : items_) {
      if (item->is_linked()) return false;
    }
    return true;
  }
  int sent_now() const { return sent_now_; }

 private:
  std::vector<std::unique_ptr<TestItem>> items_;
  std::unique_ptr<transport::Transport> transport_;
  int sent_now_ = 0;
};

}  // namespace sonde::test
