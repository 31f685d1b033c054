// The MPI life cycle (lifecycle.h): wire-up, transports, engine start and
// stop, sessions.
#include "runtime/lifecycle.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "comm/session.h"
#include "core/current_call.h"
#include "core/engine.h"
#include "core/lookup.h"
#include "core/process.h"
#include "peruse/registry.h"
#include "runtime/dynamic.h"
#include "runtime/errors.h"
#include "runtime/host_cpus.h"
#include "runtime/snapshot.h"
#include "transports/exchange.h"
#include "transports/ofi/ofi_transport.h"
#include "transports/self/self_transport.h"
#include "transports/shm/segment.h"
#include "transports/shm/shm_transport.h"

namespace sonde::engine {

namespace {

std::unique_ptr<Wireup>& wireup_slot() {
  static auto* w = new std::unique_ptr<Wireup>;  // never destroyed: end_job may run at exit
  return *w;
}

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Adapts the job's Wireup to what transports need.
class WireupExchange final : public transport::Exchange {
 public:
  explicit WireupExchange(Wireup& w) : w_(w) {}
  void put(std::string_view key, std::string_view value) override { w_.put(key, value); }
  void commit() override { w_.commit(); }
  void fence() override { w_.fence(true); }
  std::optional<std::string> get(int rank, std::string_view key) override { return w_.get(rank, key); }

 private:
  Wireup& w_;
};

// What a transport calls when a peer's data is malformed or the network
// fails: the message on stderr, the job aborted through the launcher.
std::function<void(const std::string&)> transport_fatal(int world_rank) {
  return [world_rank](const std::string& message) {
    std::fprintf(stderr, "sonde: rank %d: %s\n", world_rank, message.c_str());
    std::fflush(stderr);
    if (Wireup* w = job_wireup()) w->abort(1, message);
    std::_Exit(1);
  };
}

// Builds the transports (self for ourselves, shm for the ranks on our node,
// ofi for every rank nothing else reaches) and starts the engine on them.
int start_core(Engine& e, Wireup& wireup) {
  const int world_rank = wireup.rank();
  const int world_size = wireup.size();
  {
    // Names of shared segments made later (collectives' segments) carry
    // the job id, so the launcher removes what a killed rank leaves.
    const std::string& id = wireup.job_id();
    char* out = process().shm_job_id;
    const bool usable = transport::shm::valid_job_id(id) && id.size() < sizeof process().shm_job_id;
    std::memcpy(out, usable ? id.c_str() : "", usable ? id.size() + 1 : 1);
  }
  std::vector<std::unique_ptr<transport::Transport>> transports;
  std::vector<transport::Transport*> route(size_t(world_size), nullptr);
  try {
    WireupExchange exchange(wireup);
    std::vector<int> local;
    int my_node = wireup.node_of(world_rank);
    // The node layout is PMIx's, the same on every rank, so all agree
    // whether the job needs the network transport (wire-up is collective).
    const transport::TransportChoice choice = transport::transport_choice_from_env();
    const bool force_ofi = choice.transport == "ofi";
    bool multi_node = false;
    int on_host = 0;
    for (int r = 0; r < world_size; ++r) {
      if (wireup.node_of(r) != my_node) multi_node = true;
      if (wireup.node_of(r) == my_node) ++on_host;
      if (wireup.node_of(r) == my_node && (!force_ofi || r == world_rank)) local.push_back(r);
    }
    // Ranks outnumbering the host's CPUs yield at once when idle
    // (Settings::spin_before_yield), unless the user chose the spin.
    if (on_host > host_cpus() && !e.settings().spin_chosen) e.settings().spin_before_yield = 1;
    auto self = transport::make_self_transport(world_rank);
    route[size_t(world_rank)] = self.get();
    transports.push_back(std::move(self));
    {
      // Every rank joins the shm wire-up: its fences are job-wide, even for
      // a rank alone on its host (it then creates nothing).
      transport::ShmConfig config;
      config.my_rank = world_rank;
      config.local_ranks = local;
      config.job_id = wireup.job_id();
      config.single_copy = e.settings().single_copy;
      config.fast_boxes = e.settings().fast_boxes;
      config.ring_bytes = e.settings().ring_bytes;  // MPI_T cvar sonde_shm_ring_bytes
      config.fatal = transport_fatal(world_rank);
      auto shm = transport::make_shm_transport(config, exchange);
      for (int r : local)
        if (r != world_rank) route[size_t(r)] = shm.get();
      transports.push_back(std::move(shm));
    }
    // libfabric to every rank nothing else reaches (other hosts, or everyone
    // with SONDE_TRANSPORT=ofi); see transports/ofi/ofi_transport.h.
    if ((multi_node || force_ofi) && choice.transport != "shm") {
      transport::OfiConfig config;
      config.my_rank = world_rank;
      config.world_size = world_size;
      config.provider = choice.provider;
      config.shm_region_name = "sonde-" + wireup.job_id() + "-ofi-" + std::to_string(world_rank);
      for (int r = 0; r < world_size; ++r)
        if (!route[size_t(r)]) config.peers.push_back(r);
      config.fatal = transport_fatal(world_rank);
      auto ofi = transport::make_ofi_transport(config, exchange);
      for (int r : config.peers) route[size_t(r)] = ofi.get();
      transports.push_back(std::move(ofi));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sonde: MPI_Init: transport setup failed: %s\n", e.what());
    return MPI_ERR_OTHER;
  }
  for (int r = 0; r < world_size; ++r) {
    if (!route[size_t(r)]) {
      std::fprintf(stderr,
                   "sonde: MPI_Init: no transport reaches rank %d on another node "
                   "(SONDE_TRANSPORT=shm forbids the network transport)\n",
                   r);
      return MPI_ERR_OTHER;
    }
  }
  // A number unique across jobs: a digest of the PMIx namespace, then the rank.
  const std::string ns = wireup.nspace();
  e.set_process_uid(ns.empty() ? uint64_t(world_rank)
                               : (uint64_t(uint32_t(std::hash<std::string>{}(ns))) << 32) | uint32_t(world_rank));
  e.on_protocol_error(transport_fatal(world_rank));
  // The sessions' bootstrap communicator's context (comm/session.h).
  e.start(world_rank, world_size, std::move(transports), std::move(route), {kSessionBootstrapContext});
  return MPI_SUCCESS;
}

int init_engine(int required) {
  Engine& e = engine();
  e.load_settings();  // MPI_T cvar writes made before MPI_Init are kept
  e.settings().single_copy_at_init = e.settings().single_copy;
  e.set_thread_level(std::max(int(MPI_THREAD_SINGLE), std::min(required, int(MPI_THREAD_MULTIPLE))));
  try {
    wireup_slot() = Wireup::connect();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "sonde: MPI_Init: wire-up failed: %s\n", ex.what());
    return MPI_ERR_OTHER;
  }
  Wireup& w = *wireup_slot();
  e.set_processor_name(w.hostname());
  return start_core(e, w);
}

// Everyone stops sending before anyone tears its transports down: after the
// barrier no new traffic starts, and our own sends have been handed over.
int finalize_engine() {
  Engine& e = engine();
  int rc = coll::barrier(e.world());
  e.drain();
  coll::release_cached_scratch();
  Wireup& w = *wireup_slot();
  try {
    w.fence(false);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "sonde: MPI_Finalize: %s\n", ex.what());
  }
  snapshot_engine_stopping();
  e.shutdown_transports();
  w.finalize();
  return rc;
}

void install_peruse_hooks() {
  peruse::EngineHooks hooks;
  hooks.mpi_state = [] { return init_state(); };
  hooks.find_comm = [](MPI_Comm h) -> peruse::CommEvents* {
    Comm* c = find_comm(h);
    return c ? &c->peruse : nullptr;
  };
  hooks.comm_name = [](MPI_Comm h) -> std::string {
    Comm* c = engine().tables().comms.lookup(h);
    if (c && !c->name.empty()) return c->name;
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(h));
    return buf;
  };
  hooks.fatal = [](const char* message, int code) { end_job(code ? code : 1, message); };
  hooks.lock_engine = [] {
    if (EngineLock::enabled()) EngineLock::lock();
  };
  hooks.unlock_engine = [] {
    if (EngineLock::enabled()) EngineLock::unlock();
  };
  peruse::install_hooks(hooks);
  peruse::set_environment(engine().settings().set_from_environment);
}

// Starts the engine unless a session (or MPI_Init) already did.
void start_engine(int required, const char* fn) {
  ProcessState& p = process();
  if (p.engine_up) return;
  p.time_origin = now();
  p.main_thread = pthread_self();
  if (init_engine(required) != MPI_SUCCESS) {
    std::fprintf(stderr, "sonde: %s failed\n", fn);
    std::_Exit(1);
  }
  p.lock_enabled = engine().thread_level() == MPI_THREAD_MULTIPLE;
  install_peruse_hooks();
  p.engine_up = true;
  install_snapshot_handler(engine().world_rank());
}

void stop_engine_at_exit() {
  // Sessions only (or sessions outliving MPI_Finalize): the engine's own
  // finalize, so the job ends as cleanly as after MPI_Finalize.
  ProcessState& p = process();
  if (p.engine_up && p.world_model != 1) {
    CurrentCall::enter(g_current_call, "MPI_Finalize");  // for snapshots: inside MPI from here on
    finalize_engine();
    p.engine_up = false;
  }
}

}  // namespace

Wireup* job_wireup() { return wireup_slot().get(); }

double wtime() { return now() - process().time_origin; }

int init_world(int required, int* provided) {
  ProcessState& p = process();
  if (p.world_model != 0) return raise(nullptr, MPI_ERR_OTHER, "MPI_Init");
  start_engine(required, "MPI_Init");
  if (provided) *provided = engine().thread_level();
  p.world_model = 1;
  // A spawned process meets its parents before MPI_Init returns.
  if (connect_to_parents() != MPI_SUCCESS) end_job(1, "MPI_Init: cannot connect to the parent processes");
  return MPI_SUCCESS;
}

int finalize_world() {
  ProcessState& p = process();
  // With sessions open the engine stays up for them: the last
  // MPI_Session_finalize tears it down.
  int rc = MPI_SUCCESS;
  if (p.sessions == 0) {
    rc = finalize_engine();
    p.engine_up = false;
  }
  p.world_model = 2;
  return rc;
}

int session_engine_acquire(int required, int* provided) {
  ProcessState& p = process();
  // Once torn down (MPI_Finalize with no session open) the engine does not
  // start again.
  if (!p.engine_up && p.world_model == 2) return MPI_ERR_OTHER;
  if (!p.engine_up) {
    start_engine(required, "MPI_Session_init");
    static bool registered = false;
    if (!registered) std::atexit(stop_engine_at_exit);
    registered = true;
  }
  ++p.sessions;
  *provided = engine().thread_level();
  return MPI_SUCCESS;
}

int session_engine_release() {
  ProcessState& p = process();
  --p.sessions;
  // MPI_Finalize ran while this session was open and left the engine to it.
  if (p.sessions == 0 && p.world_model == 2 && p.engine_up) {
    p.engine_up = false;
    return finalize_engine();
  }
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
