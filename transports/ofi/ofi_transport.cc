// The ofi transport's construction, drain check and shutdown, its fatal-error
// path, and the functions ofi_transport.h declares. ofi_transport.h describes
// the wire format and the flow-control argument; ofi_internal.h says which
// file holds what.
#include "transports/ofi/ofi_transport.h"

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport {

TransportChoice transport_choice_from_env() {
  TransportChoice c;
  if (const char* t = std::getenv("SONDE_TRANSPORT"); t && *t) c.transport = t;
  if (const char* p = std::getenv("SONDE_OFI_PROVIDER"); p && *p) c.provider = p;
  return c;
}

namespace ofi {

OfiTransport::OfiTransport(const OfiConfig& config, Exchange& exchange) : cfg_(config) {
  if (cfg_.credits < 2 || cfg_.credits % 2) throw std::invalid_argument("sonde ofi: credits must be even, >= 2");
  if (const char* s = std::getenv("SONDE_OFI_FRAME_BYTES"); s && *s) cfg_.frame_bytes = std::atol(s);
  if (cfg_.frame_bytes < 1024) throw std::invalid_argument("sonde ofi: frame_bytes too small");
  if (const char* s = std::getenv("SONDE_OFI_STALL_TIMEOUT"); s && *s) cfg_.stall_timeout_s = std::atof(s);
  if (const char* s = std::getenv("SONDE_OFI_LIVENESS_TIMEOUT"); s && *s) cfg_.liveness_timeout_s = std::atof(s);
  if (const char* s = std::getenv("SONDE_OFI_READ_BYTES"); s && *s)
    cfg_.read_bytes = std::max<size_t>(4096, std::atol(s));
  if (const char* s = std::getenv("SONDE_OFI_READS_PER_MESSAGE"); s && *s)
    cfg_.reads_per_message = std::max(1, std::atoi(s));
  if (const char* s = std::getenv("SONDE_OFI_READS_IN_FLIGHT"); s && *s)
    cfg_.reads_in_flight = std::max(1, std::atoi(s));
  // Eager limit for network peers: SONDE_OFI_EAGER_LIMIT; else an explicit
  // SONDE_EAGER_LIMIT (the user's choice for every transport at start-up;
  // later MPI_T writes of sonde_eager_limit affect shm and self only);
  // else the config's (64 KiB: a rendezvous costs 1.5 round trips here,
  // more than copying 64 KiB; docs/ofi.md, Benchmark).
  caps_.kind = TransportKind::kOfi;
  caps_.eager_limit = cfg_.eager_limit;
  if (const char* s = std::getenv("SONDE_EAGER_LIMIT"); s && *s) caps_.eager_limit = std::strtoull(s, nullptr, 0);
  if (const char* s = std::getenv("SONDE_OFI_EAGER_LIMIT"); s && *s) caps_.eager_limit = std::strtoull(s, nullptr, 0);
  caps_.rma_read = true;  // refused per message when the sender attached no key
  caps_.needs_draining = true;
  caps_.liveness = true;
  caps_.registration_cache = true;
  peer_.resize(size_t(cfg_.world_size));
  for (int p : cfg_.peers) peer_[size_t(p)].reached = true;

  std::string error;
  std::string addr;
  try {
    open();
    addr = name();
    caps_.rma_window = window_rma_offered();
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Collective whatever happened here: an empty address tells the peers.
  exchange.put(kAddrKey, addr);
  exchange.put(kLiveKey, error.empty() ? start_liveness() : std::string());
  exchange.commit();
  exchange.fence();
  if (!error.empty()) {
    close_all();
    throw std::runtime_error(error);
  }
  try {
    connect(exchange);
    post_receives();
  } catch (...) {
    close_all();
    throw;
  }
}

OfiTransport::~OfiTransport() {
  live_.reset();
  for (auto& p : peer_) {
    while (!p.queue.empty()) p.queue.pop_front();
  }
  if (ep_) fi_close(&ep_->fid);
  ep_ = nullptr;
  mr_cache_.clear();
  close_all();
}

bool OfiTransport::drained() const {
  if (!cq_) return true;
  if (free_tx_.size() != tx_.size() || !reads_.empty() || win_in_flight_ || !win_wait_.empty()) return false;
  for (int peer : cfg_.peers) {
    if (!peer_[size_t(peer)].queue.empty() || !peer_[size_t(peer)].control.empty()) return false;
  }
  return true;
}

void OfiTransport::shutdown() {
  // Let frames already posted leave before the endpoint closes (bounded:
  // everyone has passed MPI_Finalize's barrier, nobody needs them).
  double until = now_s() + 2;
  while (free_tx_.size() < tx_.size() && now_s() < until) {
    fi_cq_msg_entry e[16];
    ssize_t got = fi_cq_read(cq_, e, 16);
    if (got > 0) {
      for (ssize_t i = 0; i < got; ++i) {
        auto* op = static_cast<Op*>(e[i].op_context);
        if (op->kind == Op::kTx) tx_done(static_cast<Buffer*>(op));
      }
    } else if (got == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq_, &err, 0);
      auto* op = static_cast<Op*>(err.op_context);
      if (op && op->kind == Op::kTx) tx_done(static_cast<Buffer*>(op));
    }
  }
  shut_down_ = true;
  live_.reset();  // our watchers see this process end (closed, not lost)
  // The engine is never destroyed, so this is where providers get to
  // remove what they own outside the process (the shm provider's
  // regions in /dev/shm).
  for (auto& p : peer_) {
    while (!p.queue.empty()) p.queue.pop_front();
    p.early.clear();
  }
  mr_cache_.clear();
  close_all();
}

void OfiTransport::fatal(const std::string& message) {
  if (cfg_.fatal) cfg_.fatal(message);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  _exit(1);
}

}  // namespace ofi

using ofi::OfiTransport;

std::unique_ptr<Transport> make_ofi_transport(const OfiConfig& config, Exchange& exchange) {
  return std::make_unique<OfiTransport>(config, exchange);
}

std::string ofi_selected_provider(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->selected() : std::string();
}

bool ofi_has_rma(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o && o->rma();
}

uint64_t ofi_registrations(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->registrations() : 0;
}

bool ofi_manual_progress(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o && o->manual_progress();
}

std::string ofi_liveness_address(const Transport& t) {
  auto* o = dynamic_cast<const OfiTransport*>(&t);
  return o ? o->liveness_address() : std::string();
}

}  // namespace sonde::transport
