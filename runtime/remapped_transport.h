// A transport wired over a connection's union of processes (runtime/
// dynamic.h), whose ranks are union indices, seen by the engine through
// engine peer ids: every call translates the peer one way, every delivery
// the other. Capabilities are the wrapped transport's.
#pragma once

#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transports/transport.h"

namespace sonde::engine {

class RemappedTransport final : public transport::Transport {
 public:
  // `peer_of_index[i]`: the engine peer id of union index i (-1: none).
  RemappedTransport(std::unique_ptr<transport::Transport> inner, std::vector<int> peer_of_index)
      : inner_(std::move(inner)), peer_of_index_(std::move(peer_of_index)) {
    caps_ = inner_->capabilities();
    for (size_t i = 0; i < peer_of_index_.size(); ++i)
      if (peer_of_index_[i] >= 0) index_of_peer_[peer_of_index_[i]] = int(i);
  }

  const char* name() const override { return inner_->name(); }
  bool reaches(int peer) const override {
    auto it = index_of_peer_.find(peer);
    return it != index_of_peer_.end() && inner_->reaches(it->second);
  }
  bool try_send_now(int peer, const transport::PacketHeader& h, const void* payload) override {
    return inner_->try_send_now(index(peer), h, payload);
  }
  void enqueue(int peer, transport::SendItem* item) override { inner_->enqueue(index(peer), item); }
  bool dequeue(int peer, transport::SendItem* item) override { return inner_->dequeue(index(peer), item); }
  int progress(transport::Delivery& delivery) override {
    Translate t{delivery, peer_of_index_};
    return inner_->progress(t);
  }
  bool read_remote(int peer, uint64_t addr, void* dst, size_t len) override {
    return inner_->read_remote(index(peer), addr, dst, len);
  }
  bool write_remote(int peer, uint64_t addr, const void* src, size_t len) override {
    return inner_->write_remote(index(peer), addr, src, len);
  }
  bool read_remote_iov(int peer, uint64_t addr, const iovec* local, size_t n) override {
    return inner_->read_remote_iov(index(peer), addr, local, n);
  }
  bool write_remote_iov(int peer, uint64_t addr, const iovec* local, size_t n) override {
    return inner_->write_remote_iov(index(peer), addr, local, n);
  }
  void shutdown() override { inner_->shutdown(); }
  bool drained() const override { return inner_->drained(); }
  bool start_read(int peer, const transport::PacketHeader& rts, uint8_t* dst, uint64_t n,
                  transport::PayloadSink* sink) override {
    return inner_->start_read(index(peer), rts, dst, n, sink);
  }
  void forget_memory(const void* addr, size_t len) override { inner_->forget_memory(addr, len); }
  void watch(int peer) override { inner_->watch(index(peer)); }

 private:
  struct Translate final : transport::Delivery {
    Translate(transport::Delivery& d, const std::vector<int>& map) : d(d), map(map) {}
    transport::PayloadSink* on_header(int i, const transport::PacketHeader& h) override {
      return d.on_header(map[size_t(i)], h);
    }
    void on_payload_done(int i, const transport::PacketHeader& h, transport::PayloadSink* sink) override {
      d.on_payload_done(map[size_t(i)], h, sink);
    }
    transport::Delivery& d;
    const std::vector<int>& map;
  };
  int index(int peer) const { return index_of_peer_.at(peer); }

  std::unique_ptr<transport::Transport> inner_;
  std::vector<int> peer_of_index_;
  std::unordered_map<int, int> index_of_peer_;
};

}  // namespace sonde::engine
