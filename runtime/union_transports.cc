// A connection's transports (union_transports.h).
#include "runtime/union_transports.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "core/engine.h"
#include "pmi/dynamic.h"
#include "runtime/errors.h"
#include "runtime/lifecycle.h"
#include "runtime/remapped_transport.h"
#include "transports/exchange.h"
#include "transports/ofi/ofi_transport.h"
#include "transports/shm/shm_transport.h"

namespace sonde::engine {
namespace {

using dynamic::Proc;

// The exchange both transports wire up through, over the union (indices as
// ranks), under the connection's key prefix.
class UnionExchange final : public transport::Exchange {
 public:
  UnionExchange(std::string prefix, const std::vector<Proc>& procs) : prefix_(std::move(prefix)), procs_(procs) {}
  void put(std::string_view key, std::string_view value) override {
    if (auto e = dynamic::put(prefix_ + std::string(key), value)) throw std::runtime_error(e.text);
  }
  void commit() override {}
  void fence() override {
    if (auto e = dynamic::fence(procs_)) throw std::runtime_error(e.text);
  }
  std::optional<std::string> get(int rank, std::string_view key) override {
    return dynamic::get(procs_[size_t(rank)], prefix_ + std::string(key));
  }

 private:
  std::string prefix_;
  const std::vector<Proc>& procs_;
};

std::function<void(const std::string&)> fatal() {
  return [](const std::string& m) { end_job(1, m.c_str()); };
}

// Routes the peers of `inner` (union indices) this process has no route to
// through it, wrapped so that the engine sees peer ids.
void adopt(Engine& e, std::unique_ptr<transport::Transport> inner, const UnionPlan& plan,
           const std::vector<int>& indices) {
  const std::vector<int>& ids = *plan.ids;
  std::vector<int> peer_of(ids.size(), -1);
  for (int i : indices)
    if (i != plan.me) peer_of[size_t(i)] = ids[size_t(i)];
  auto wrapped = std::make_unique<RemappedTransport>(std::move(inner), peer_of);
  for (int i : indices) {
    const int id = ids[size_t(i)];
    if (i != plan.me && (id >= e.peer_count() || !e.router().to(id))) e.add_route(id, wrapped.get());
  }
  e.add_transport(std::move(wrapped));
}

}  // namespace

std::string format_member(const UnionMember& m) {
  return m.host + (m.lacking ? " 1" : " 0") + (m.all_ofi ? " 1" : " 0");
}

bool parse_member(const std::string& text, UnionMember* m) {
  if (text.size() < 5) return false;
  const size_t n = text.size();
  const char lacking = text[n - 3], ofi = text[n - 1];
  if (text[n - 4] != ' ' || text[n - 2] != ' ' || (lacking != '0' && lacking != '1') || (ofi != '0' && ofi != '1'))
    return false;
  m->host = text.substr(0, n - 4);
  m->lacking = lacking == '1';
  m->all_ofi = ofi == '1';
  return !m->host.empty();
}

std::string host_identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string id = host;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string b;
  if (boot >> b) id += "/" + b;
  return id;
}

std::string wire_union(const UnionPlan& plan) {
  Engine& e = engine();
  const std::vector<UnionMember>& members = *plan.members;
  const std::string& my_host = members[size_t(plan.me)].host;
  bool wire = false, all_ofi = false;
  std::vector<int> on_host, off_host;
  for (size_t i = 0; i < members.size(); ++i) {
    wire = wire || members[i].lacking;
    all_ofi = all_ofi || members[i].all_ofi;
    (members[i].host == my_host ? on_host : off_host).push_back(int(i));
  }
  // Every member reads the same values: all wire or none (when every member
  // already reaches every other), all take part in the same fences.
  if (!wire) return {};
  const transport::TransportChoice choice = transport::transport_choice_from_env();
  // Members on two hosts: every member has some on another host.
  const bool use_ofi = !off_host.empty() || all_ofi;
  if (use_ofi && choice.transport == "shm")
    return "members on other hosts need the network transport, which SONDE_TRANSPORT=shm forbids";
  try {
    UnionExchange exchange(plan.prefix, *plan.all);
    transport::ShmConfig config;
    config.my_rank = plan.me;
    if (all_ofi) config.local_ranks = {plan.me};
    else config.local_ranks = on_host;
    config.job_id = job_wireup() ? job_wireup()->job_id() : "dyn";
    config.single_copy = e.settings().single_copy;
    config.fast_boxes = e.settings().fast_boxes;
    config.ring_bytes = e.settings().ring_bytes;
    config.fatal = fatal();
    auto shm = transport::make_shm_transport(config, exchange);
    if (config.local_ranks.size() > 1) adopt(e, std::move(shm), plan, config.local_ranks);
    if (use_ofi) {
      // Every member joins the ofi wire-up (its fence spans the union), each
      // with the members it reaches through it: those on other hosts (every
      // other member under SONDE_TRANSPORT=ofi) it has no route to yet.
      // Routes are symmetric, so two members list each other or neither.
      transport::OfiConfig ofi;
      ofi.my_rank = plan.me;
      ofi.world_size = int(plan.all->size());
      ofi.provider = choice.provider;
      ofi.shm_region_name = "sonde-" + config.job_id + "-ofi-" + plan.prefix + std::to_string(plan.me);
      for (size_t i = 0; i < members.size(); ++i) {
        const int id = (*plan.ids)[i];
        const bool reached = id < e.peer_count() && e.router().to(id);
        if (int(i) != plan.me && (all_ofi || members[i].host != my_host) && !reached) ofi.peers.push_back(int(i));
      }
      ofi.fatal = fatal();
      auto transport = transport::make_ofi_transport(ofi, exchange);
      if (!ofi.peers.empty()) adopt(e, std::move(transport), plan, ofi.peers);
    }
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return {};
}

}  // namespace sonde::engine
