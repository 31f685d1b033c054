// One-sided transfers into windows in the ofi transport
// (Capabilities::rma_window): the window's memory registered for the
// peers' reads and writes, fi_write / fi_read of the origin's bytes, and
// their completions reported to the engine.
//
// Completion level: writes ask for FI_DELIVERY_COMPLETE, so their
// completion means the data is in the target's memory (what MPI requires
// of a Put once a flush, unlock, fence or complete returns), not only that
// it has left. Reads are complete when the data is here.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "transports/ofi/ofi_internal.h"

namespace sonde::transport::ofi {

bool OfiTransport::window_rma_offered() const {
  if (!rma_ || mr_local_ || !info_) return false;
  if (!(info_->caps & FI_WRITE) || !(info_->caps & FI_REMOTE_WRITE)) return false;
  if (info_->domain_attr->mr_mode & FI_MR_RAW) return false;  // keys wider than 64 bits
  const char* off = std::getenv("SONDE_OFI_RMA_WINDOWS");
  return !(off && std::strcmp(off, "0") == 0);
}

bool OfiTransport::register_window(void* base, size_t len, uint64_t* key, uint64_t* handle) {
  if (!caps_.rma_window || !domain_) return false;
  // Registered with offset = the memory's address when the provider
  // addresses by offset (no FI_MR_VIRT_ADDR), as the registration cache
  // does (mr_cache.h, on libfabric 1.17's software providers).
  const uint64_t offset = virt_addr_ ? 0 : uint64_t(reinterpret_cast<uintptr_t>(base));
  const bool prov_key = info_->domain_attr->mr_mode & FI_MR_PROV_KEY;
  // Our own keys live in a range of their own, far from the cache's and
  // the bounce pool's.
  const uint64_t requested = prov_key ? 0 : (uint64_t(1) << 62) + ++next_window_;
  fid_mr* mr = nullptr;
  int rc = fi_mr_reg(domain_, base, std::max<size_t>(len, 1), FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                     offset, requested, 0, &mr, nullptr);
  if (rc) return false;
  const uint64_t h = ++next_window_;
  windows_[h] = mr;
  *key = fi_mr_key(mr);
  *handle = h;
  return true;
}

void OfiTransport::deregister_window(uint64_t handle) {
  auto it = windows_.find(handle);
  if (it == windows_.end()) return;
  fi_close(&it->second->fid);
  windows_.erase(it);
}

// The remote address the provider expects: the byte's own address where
// it addresses registrations virtually (FI_MR_VIRT_ADDR), else its offset
// from the registration's start, as the rendezvous reads do (rma_read.cc).
void OfiTransport::rma_write(int peer, const void* src, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                             RmaCompletion* done) {
  start_window_transfer(true, peer, const_cast<uint8_t*>(static_cast<const uint8_t*>(src)), len,
                        (virt_addr_ ? base : 0) + offset, key, done);
}

void OfiTransport::rma_read(int peer, void* dst, size_t len, uint64_t base, uint64_t offset, uint64_t key,
                            RmaCompletion* done) {
  start_window_transfer(false, peer, static_cast<uint8_t*>(dst), len, (virt_addr_ ? base : 0) + offset, key, done);
}

void OfiTransport::start_window_transfer(bool write, int peer, uint8_t* local, size_t len, uint64_t remote,
                                         uint64_t key, RmaCompletion* done) {
  if (win_max_ == 0) {
    win_max_ = info_->ep_attr->max_msg_size ? info_->ep_attr->max_msg_size : size_t(1) << 30;
    win_max_ = std::min<size_t>(win_max_, size_t(1) << 30);
  }
  ++win_transfers_;
  auto* x = new WinXfer;
  x->done = done;
  size_t off = 0;
  do {
    const size_t n = std::min(win_max_, len - off);
    auto* op = new WinOp;
    op->kind = Op::kWin;
    op->xfer = x;
    op->write = write;
    op->peer = peer;
    op->local = local + off;
    op->len = n;
    op->remote = remote + off;
    op->key = key;
    ++x->parts;
    win_wait_.push_back(op);
    off += n;
  } while (off < len);
  post_window_ops();
}

void OfiTransport::post_window_ops() {
  while (!win_wait_.empty()) {
    WinOp* op = win_wait_.front();
    const fi_addr_t to = peer_[size_t(op->peer)].addr;
    iovec iov{op->local, op->len};
    fi_rma_iov rma{op->remote, op->len, op->key};
    fi_msg_rma msg{};
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = to;
    msg.rma_iov = &rma;
    msg.rma_iov_count = 1;
    msg.context = &op->ctx;
    const ssize_t rc =
        op->write ? fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE) : fi_readmsg(ep_, &msg, FI_COMPLETION);
    if (rc == -FI_EAGAIN) return;
    if (rc)
      fatal(fi_error(op->write ? "fi_writemsg" : "fi_readmsg", int(rc)) + " with rank " + std::to_string(op->peer));
    win_wait_.pop_front();
    ++win_in_flight_;
  }
}

int OfiTransport::window_done(WinOp* op) {
  --win_in_flight_;
  WinXfer* x = op->xfer;
  delete op;
  if (--x->parts > 0) return 0;
  RmaCompletion* done = x->done;
  delete x;
  done->rma_complete();
  return 1;
}

}  // namespace sonde::transport::ofi
