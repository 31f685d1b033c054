// Setting up the ofi transport: choosing the provider and the interface,
// opening the fabric, domain, completion queue, address vector and
// endpoint, the buffer pools and their registration, the exchange of
// endpoint addresses with the peers, and closing it all again.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

namespace {

// TCP's reliable-datagram endpoint exists twice in libfabric: ofi_rxm
// layered over the tcp provider's connections ("tcp;ofi_rxm", listed first)
// and the native one ("net" in 1.17, a development fork of tcp; the tcp
// provider itself from 1.18). Native first: measured between two network
// namespaces, its ping-pong takes 0.6-0.9 times as long at 0-16 KiB at
// the same bandwidth (per message rxm adds a self-signal through a
// socketpair, a write and a read, and copies through its own bounce
// buffers; docs/ofi.md, Benchmark). Both ends must agree: every rank applies
// this same rule to the same library. The two do not interoperate.
bool tcp_family(const std::string& prov) {
  return prov == "net" || prov == "tcp" || prov.rfind("tcp;", 0) == 0 || prov.rfind("net;", 0) == 0;
}

int native_tcp_rank(const std::string& prov) {
  if (prov == "net") return 0;
  if (prov == "tcp") return 1;  // libfabric >= 1.18: tcp's own RDM endpoint
  return 2;
}

// The provider to use from fi_getinfo's list: libfabric's first choice, or,
// when that is TCP-based (or `want` is "tcp"), the best TCP-based one by
// native_tcp_rank. Empty if `want` is "tcp" and nothing TCP-based is there.
std::string choose_provider(fi_info* list, const std::string& want) {
  std::string first = list->fabric_attr->prov_name;
  if (want != "tcp" && !tcp_family(first)) return first;
  std::string best;
  for (fi_info* i = list; i; i = i->next) {
    std::string prov = i->fabric_attr->prov_name;
    if (!tcp_family(prov)) continue;
    if (best.empty() || native_tcp_rank(prov) < native_tcp_rank(best)) best = prov;
  }
  return best;
}

// Among the entries of provider `prov`: prefer a real IPv4 interface, then
// IPv4 loopback, then whatever comes first (shm's string addresses, IPv6).
// Every rank applies the same rule.
fi_info* pick(fi_info* list, const std::string& prov) {
  fi_info* loopback = nullptr;
  fi_info* first = nullptr;
  for (fi_info* i = list; i; i = i->next) {
    if (prov != i->fabric_attr->prov_name) continue;
    if (!first) first = i;
    if (i->addr_format != FI_SOCKADDR_IN || !i->src_addr) continue;
    auto* sin = static_cast<const sockaddr_in*>(i->src_addr);
    if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) {
      if (!loopback) loopback = i;
      continue;
    }
    return i;
  }
  return loopback ? loopback : first;
}

}  // namespace

void OfiTransport::open() {
  // ofi_rxm sends a message of at most FI_OFI_RXM_BUFFER_SIZE (16 KiB, its
  // header included) eagerly and anything larger by its own rendezvous:
  // a round trip more. Our frames are up to frame_bytes, so unless the
  // user chose, make rxm's buffers hold a whole frame (measured: 16 KiB
  // ping-pong 36 -> 13 us, 64 KiB 36 -> 16 us; docs/ofi.md). libfabric
  // reads it when the providers load, at the first fi_getinfo below.
  setenv("FI_OFI_RXM_BUFFER_SIZE", std::to_string(cfg_.frame_bytes + 256).c_str(), /*overwrite=*/0);
  // rxm posts FI_OFI_RXM_MSG_RX_SIZE of those buffers (4096 by default with
  // its shared receive context): 4096 x 64 KiB = +250 MB per process
  // (measured peak RSS 98 -> 345 MB). Our credits bound what can arrive
  // at once to peers x (credits + 3) frames (open() below), so post that
  // and some room for rxm's own messages: RSS back to ~100 MB for two
  // ranks, no measurable loss at 128 (64: 10-20 % slower).
  size_t rx = std::max<size_t>(128, cfg_.peers.size() * size_t(cfg_.credits + 3) + 64);
  setenv("FI_OFI_RXM_MSG_RX_SIZE", std::to_string(rx).c_str(), /*overwrite=*/0);
  // net (TCP's native endpoint, choose_provider) reads a message's first
  // bytes through a prefetch buffer of FI_NET_PREFETCH_RBUF_SIZE (9000)
  // and the rest straight into our buffer. With 9000, a 16 KiB ping-pong
  // after a phase of >= 4 KiB messages settled at 10-13 us in most rounds
  // (Open MPI and MPICH: 7-9); 2304 (a message of up to 2 KiB still
  // arrives in one recvfrom) took it to 0.58-0.89 of that, small sizes
  // unchanged (0.99-1.01); 0 costs small messages a second recvfrom
  // (1.05-1.24). docs/ofi.md, Benchmark.
  setenv("FI_NET_PREFETCH_RBUF_SIZE", "2304", /*overwrite=*/0);
  const FabricApi& api = fabric_api();
  fi_info* hints = api.dupinfo(nullptr);
  if (!hints) throw std::runtime_error("sonde ofi: fi_allocinfo failed");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ | FI_WRITE | FI_REMOTE_WRITE;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->tx_attr->msg_order = FI_ORDER_NONE;  // we reorder ourselves
  // "tcp" asks for the TCP family (choose_provider): libfabric's filter
  // by name would leave out the native endpoint ("net" in 1.17). Ask for
  // "tcp;ofi_rxm" by that name to get the layered one.
  if (!cfg_.provider.empty() && cfg_.provider != "tcp") hints->fabric_attr->prov_name = strdup(cfg_.provider.c_str());
  int rc = -FI_ENODATA;
  if (!std::getenv("SONDE_OFI_NO_RMA")) rc = api.getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list_);
  rma_ = rc == 0;
  if (rc) {
    // The provider lacks RMA: rendezvous data goes as pipelined sends.
    hints->caps = FI_MSG;
    rc = api.getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list_);
  }
  api.freeinfo(hints);
  std::string prov;
  if (rc == 0) {
    prov = choose_provider(list_, cfg_.provider);
    if (prov.empty()) rc = -FI_ENODATA;
  }
  if (rc) {
    throw std::runtime_error(fi_error("fi_getinfo", rc) + " (no libfabric provider offers FI_EP_RDM with FI_MSG" +
                             (cfg_.provider.empty() ? std::string() : " named \"" + cfg_.provider + "\"") +
                             "; see fi_info -l, SONDE_OFI_PROVIDER, FI_PROVIDER)");
  }
  info_ = pick(list_, prov);
  prefer_manual_progress();
  selected_ =
      std::string(info_->fabric_attr->prov_name) + ";" + info_->fabric_attr->name + ";" + info_->domain_attr->name;
  rc = api.fabric(info_->fabric_attr, &fabric_, nullptr);
  if (rc) throw std::runtime_error(fi_error("fi_fabric", rc));
  rc = fi_domain(fabric_, info_, &domain_, nullptr);
  if (rc) throw std::runtime_error(fi_error("fi_domain", rc));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = 0;
  rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (rc) throw std::runtime_error(fi_error("fi_cq_open", rc));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
  if (rc) throw std::runtime_error(fi_error("fi_av_open", rc));
  rc = fi_endpoint(domain_, info_, &ep_, nullptr);
  if (rc) throw std::runtime_error(fi_error("fi_endpoint", rc));
  rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV);
  if (rc) throw std::runtime_error(fi_error("fi_ep_bind(cq)", rc));
  rc = fi_ep_bind(ep_, &av_->fid, 0);
  if (rc) throw std::runtime_error(fi_error("fi_ep_bind(av)", rc));
  if (!cfg_.shm_region_name.empty() && std::strcmp(info_->fabric_attr->prov_name, "shm") == 0) {
    std::string name = cfg_.shm_region_name;  // fi_setname takes a mutable buffer
    rc = fi_setname(&ep_->fid, name.data(), name.size() + 1);
    if (rc) throw std::runtime_error(fi_error("fi_setname", rc) + " (" + cfg_.shm_region_name + ")");
  }
  rc = fi_enable(ep_);
  if (rc) throw std::runtime_error(fi_error("fi_enable", rc));

  size_t max_msg = info_->ep_attr->max_msg_size;
  if (max_msg && cfg_.frame_bytes > max_msg) cfg_.frame_bytes = max_msg;
  // credits + 2 credit-only frames + 1 keepalive per peer (see check_idle).
  size_t rx_count = cfg_.peers.size() * size_t(cfg_.credits + 3);
  size_t tx_count = size_t(cfg_.tx_buffers);
  pool_bytes_ = (rx_count + tx_count) * cfg_.frame_bytes;
  pool_ = static_cast<uint8_t*>(std::aligned_alloc(4096, (pool_bytes_ + 4095) & ~size_t(4095)));
  if (!pool_) throw std::runtime_error("sonde ofi: cannot allocate buffer pool");
  const int mr_mode = info_->domain_attr->mr_mode;
  mr_local_ = mr_mode & FI_MR_LOCAL;
  virt_addr_ = mr_mode & FI_MR_VIRT_ADDR;
  {
    std::string prov = info_->fabric_attr->prov_name;
    bool software = false;
    for (const char* s : {"tcp", "net", "sockets", "udp", "shm"}) software |= prov.find(s) != std::string::npos;
    size_t capacity = software ? 64 : 0;
    if (const char* c = std::getenv("SONDE_OFI_MR_CACHE"); c && *c) capacity = size_t(std::atol(c));
    mr_cache_.init(domain_, mr_mode & FI_MR_PROV_KEY, virt_addr_, capacity);
  }
  if (mr_local_) {
    // Our own keys for the pool too (FI_MR_PROV_KEY unset): far from the cache's.
    rc = fi_mr_reg(domain_, pool_, pool_bytes_, FI_SEND | FI_RECV, 0, (mr_mode & FI_MR_PROV_KEY) ? 0 : ~0ull >> 1, 0,
                   &mr_, nullptr);
    if (rc) throw std::runtime_error(fi_error("fi_mr_reg", rc));
    desc_ = fi_mr_desc(mr_);
  }
  rx_.resize(rx_count);
  tx_.resize(tx_count);
  uint8_t* at = pool_;
  for (Buffer& b : rx_) {
    b.data = at;
    b.is_rx = true;
    at += cfg_.frame_bytes;
  }
  for (Buffer& b : tx_) {
    b.data = at;
    at += cfg_.frame_bytes;
    free_tx_.push_back(&b);
  }
}

std::string OfiTransport::name() {
  char buf[512];
  size_t len = sizeof buf;
  int rc = fi_getname(&ep_->fid, buf, &len);
  if (rc) throw std::runtime_error(fi_error("fi_getname", rc));
  return std::string(buf, len);
}

// Progress model. sockets reports automatic progress by default and then
// runs a progress thread that spins (FI_SOCKETS_PE_WAITTIME) and competes
// with the rank's own polling for the cores: on a two-core machine 3.7
// ms per half round trip, 19 us with manual progress (docs/ofi.md). The
// engine reads the completion queue whenever the rank is in MPI, which is
// all manual progress asks, so for sockets, and for every provider with
// SONDE_OFI_PROGRESS=manual, ask the same provider on the same interface
// again for manual progress and take that where it is offered.
// SONDE_OFI_PROGRESS=auto keeps the provider's default for sockets too.
// net keeps its default (automatic) unless asked: manual measured no
// better in latency and 0.90-0.94 of it in bandwidth.
void OfiTransport::prefer_manual_progress() {
  const char* mode = std::getenv("SONDE_OFI_PROGRESS");
  bool want_manual = mode && std::strcmp(mode, "manual") == 0;
  bool want_auto = mode && std::strcmp(mode, "auto") == 0;
  if (mode && *mode && !want_manual && !want_auto) {
    throw std::runtime_error(std::string("sonde ofi: SONDE_OFI_PROGRESS is \"") + mode + "\"; use auto or manual");
  }
  if (want_auto || (!want_manual && std::strcmp(info_->fabric_attr->prov_name, "sockets") != 0)) return;
  const fi_domain_attr* d = info_->domain_attr;
  if (d->data_progress != FI_PROGRESS_AUTO && d->control_progress != FI_PROGRESS_AUTO) return;
  const FabricApi& api = fabric_api();
  fi_info* hints = api.dupinfo(info_);
  if (!hints) return;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  fi_info* manual = nullptr;
  int rc = api.getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &manual);
  api.freeinfo(hints);
  if (rc != 0 || !manual) return;
  if (std::strcmp(manual->fabric_attr->prov_name, info_->fabric_attr->prov_name) != 0 ||
      manual->domain_attr->data_progress != FI_PROGRESS_MANUAL) {
    api.freeinfo(manual);
    return;
  }
  api.freeinfo(list_);
  list_ = manual;
  info_ = manual;
}

void OfiTransport::connect(Exchange& exchange) {
  // Every rank's address has the format of the one provider all chose, so
  // the length of ours: the provider reads that many bytes of each.
  const size_t addr_len = name().size();
  for (int peer : cfg_.peers) {
    std::optional<std::string> a = exchange.get(peer, kAddrKey);
    if (!a || a->empty()) {
      throw std::runtime_error("sonde ofi: rank " + std::to_string(peer) +
                               " could not open a libfabric endpoint (see its error)");
    }
    if (a->size() != addr_len) {
      throw std::runtime_error("sonde ofi: rank " + std::to_string(peer) + " published a malformed address (" +
                               std::to_string(a->size()) + " bytes, expected " + std::to_string(addr_len) + ")");
    }
    fi_addr_t fa = FI_ADDR_UNSPEC;
    int rc = fi_av_insert(av_, a->data(), 1, &fa, 0, nullptr);
    if (rc != 1) throw std::runtime_error(fi_error("fi_av_insert", rc < 0 ? rc : -FI_EINVAL));
    Peer& p = peer_[size_t(peer)];
    p.addr = fa;
    p.credits = cfg_.credits;
    p.last_heard = p.last_sent = now_s();
    if (live_) p.live_addr = exchange.get(peer, kLiveKey).value_or("");
  }
}

void OfiTransport::close_all() {
  if (ep_) fi_close(&ep_->fid);
  if (mr_) fi_close(&mr_->fid);
  for (auto& [handle, mr] : windows_) fi_close(&mr->fid);
  windows_.clear();
  if (av_) fi_close(&av_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  ep_ = nullptr;
  mr_ = nullptr;
  av_ = nullptr;
  cq_ = nullptr;
  domain_ = nullptr;
  fabric_ = nullptr;
  if (list_) fabric_api().freeinfo(list_);
  list_ = nullptr;
  std::free(pool_);
  pool_ = nullptr;
}

}  // namespace sonde::transport::ofi
