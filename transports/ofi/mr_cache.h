// The registration cache of user memory for rendezvous by RMA read: one
// class, MrCache, used by the sending side (keys lent with a kRts) and by
// the reading side when the provider wants FI_MR_LOCAL.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sonde::transport::ofi {

// Registrations of user memory for RMA, keyed by address range. A message
// whose range lies inside a cached region reuses it; regions nobody uses are
// closed least recently used first beyond `capacity`. Registrations are
// page-rounded so that buffers reused in place hit. Capacity 0: every
// registration is closed when its last user releases it.
//
// Staleness: a cached region outlives free()/munmap() of its memory (there
// is no hook here to notice). With the software providers (tcp, sockets,
// udp, shm: a registration is a key checked against a virtual range, the
// bytes are read through the current mapping at read time) that is
// harmless, so they cache. Providers that pin pages (verbs, efa, cxi) get
// capacity 0 by default and rely on libfabric's own cache, which hooks the
// memory monitor (FI_MR_CACHE_MONITOR); SONDE_OFI_MR_CACHE overrides.
class MrCache {
 public:
  struct Entry {
    uint8_t* start = nullptr;
    size_t len = 0;
    fid_mr* mr = nullptr;
    int refs = 0;
    uint64_t used = 0;
    bool stale = false;  // its memory was freed while in use: never reused, closed at its last release
  };

  void init(fid_domain* domain, bool prov_key, bool virt_addr, size_t capacity) {
    domain_ = domain;
    prov_key_ = prov_key;
    virt_addr_ = virt_addr;
    capacity_ = capacity;
  }

  // A region holding [addr, addr + len) readable by peers and by our reads;
  // null if the provider refuses to register it.
  Entry* acquire(const void* addr, size_t len, uint64_t) {
    auto* a = reinterpret_cast<uint8_t*>(uintptr_t(addr) & ~uintptr_t(4095));
    auto* end = reinterpret_cast<uint8_t*>((uintptr_t(addr) + len + 4095) & ~uintptr_t(4095));
    for (auto& e : entries_) {
      if (!e->stale && e->start <= a && end <= e->start + e->len) {
        ++e->refs;
        e->used = ++tick_;
        ++hits_;
        return e.get();
      }
    }
    auto e = std::make_unique<Entry>();
    e->start = a;
    e->len = size_t(end - a);
    // Without FI_MR_PROV_KEY we choose the keys: unique in the domain.
    // Without FI_MR_VIRT_ADDR, peers address the region by offset. The
    // `offset` argument says so a second time: libfabric 1.17's software
    // providers (the util MR map) sometimes run the map in virtual-address
    // mode though the domain reports no FI_MR_VIRT_ADDR (seen with
    // tcp;ofi_rxm in forked processes) and then add that argument to the
    // remote address instead of the region's base; with both equal to the
    // base, either way lands on the same byte.
    uint64_t offset = virt_addr_ ? 0 : uint64_t(reinterpret_cast<uintptr_t>(a));
    int rc = fi_mr_reg(domain_, a, e->len, FI_READ | FI_REMOTE_READ, offset, prov_key_ ? 0 : ++next_key_, 0, &e->mr,
                       nullptr);
    if (rc) return nullptr;
    ++registrations_;
    e->refs = 1;
    e->used = ++tick_;
    entries_.push_back(std::move(e));
    Entry* got = entries_.back().get();
    trim();
    return got;
  }

  void release(Entry* e) {
    if (--e->refs) return;
    if (e->stale) {
      close(e);
      return;
    }
    trim();
  }

  // The memory [addr, addr + len) is being freed (MPI_Free_mem): no region
  // overlapping it may serve a later buffer that reuses the addresses (a
  // provider that pins pages would read the old pages). Unused regions
  // close now; one still lent to a transfer (the user freed memory of a
  // pending operation, which MPI forbids) closes at its last release.
  // Returns how many regions were dropped.
  size_t forget(const void* addr, size_t len) {
    auto* a = static_cast<const uint8_t*>(addr);
    size_t dropped = 0;
    for (size_t i = entries_.size(); i-- > 0;) {
      Entry* e = entries_[i].get();
      if (e->stale || e->start >= a + len || a >= e->start + e->len) continue;
      ++dropped;
      if (e->refs) {
        e->stale = true;
      } else {
        close(e);
      }
    }
    return dropped;
  }

  void clear() {
    for (auto& e : entries_) fi_close(&e->mr->fid);
    entries_.clear();
  }

  uint64_t registrations() const { return registrations_; }
  uint64_t hits() const { return hits_; }

 private:
  void trim() {
    for (;;) {
      size_t unused = 0;
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if ((*it)->refs) continue;
        ++unused;
        if (victim == entries_.end() || (*it)->used < (*victim)->used) victim = it;
      }
      if (unused <= capacity_) return;
      fi_close(&(*victim)->mr->fid);
      entries_.erase(victim);
    }
  }

  void close(Entry* e) {
    fi_close(&e->mr->fid);
    std::erase_if(entries_, [e](const std::unique_ptr<Entry>& x) { return x.get() == e; });
  }

  fid_domain* domain_ = nullptr;
  bool prov_key_ = false;
  bool virt_addr_ = false;
  size_t capacity_ = 0;
  uint64_t next_key_ = 0;
  uint64_t tick_ = 0;
  uint64_t registrations_ = 0, hits_ = 0;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace sonde::transport::ofi
