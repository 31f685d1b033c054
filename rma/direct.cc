// Direct access to node-local targets' memory (direct.h).
#include "rma/direct.h"

#include <sched.h>

#include <atomic>
#include <cstring>

#include "core/remote_copy.h"
#include "datatype/datatype.h"
#include "datatype/op.h"

namespace sonde::engine::rma {

namespace {

// Single copy pays a system call per target segment: layouts of many small
// runs go as one message instead.
constexpr size_t kSingleCopyMaxSegments = 64;

}  // namespace

void gather_from(uintptr_t mem, const Segment* segs, uint64_t n, uint8_t* out) {
  for (uint64_t i = 0; i < n; ++i) {
    if (segs[i].length) std::memmove(out, reinterpret_cast<const void*>(mem + segs[i].offset), segs[i].length);
    out += segs[i].length;
  }
}

void scatter_to(uintptr_t mem, const Segment* segs, uint64_t n, const uint8_t* in) {
  for (uint64_t i = 0; i < n; ++i) {
    if (segs[i].length) std::memmove(reinterpret_cast<void*>(mem + segs[i].offset), in, segs[i].length);
    in += segs[i].length;
  }
}

void acc_lock(AccLock* l) {
  for (int spins = 0; l->held.exchange(1, std::memory_order_acquire) != 0;) {
    while (l->held.load(std::memory_order_relaxed) != 0) {
      // The holder may be descheduled on a busy node: yield after a while.
      if (++spins > 256) {
        sched_yield();
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
}

void acc_unlock(AccLock* l) { l->held.store(0, std::memory_order_release); }

int apply_accumulate(uintptr_t mem, const Segment* segs, uint64_t nsegs, Kind kind, int op, int basic,
                     const uint8_t* data, Bytes& old, AccLock* lock) {
  uint64_t total = 0;
  for (uint64_t i = 0; i < nsegs; ++i) total += segs[i].length;
  old.resize(total);
  int rc = MPI_SUCCESS;
  if (lock) acc_lock(lock);
  gather_from(mem, segs, nsegs, old.data());
  if (kind == Kind::kCas) {
    if (std::memcmp(old.data(), data + total, total) == 0) scatter_to(mem, segs, nsegs, data);
  } else if (op == MPI_REPLACE) {
    scatter_to(mem, segs, nsegs, data);
  } else if (op != MPI_NO_OP && total) {
    // Combined in a copy, so an error leaves the memory as it was.
    Bytes combined(old);
    const size_t esize = packed_basic_size(Basic(basic));
    rc = esize ? reduce_packed(data, combined.data(), int64_t(total / esize), Basic(basic), op) : MPI_ERR_TYPE;
    if (!rc) scatter_to(mem, segs, nsegs, combined.data());
  }
  if (lock) acc_unlock(lock);
  return rc;
}

namespace {

// How an access reaches target t's memory, if it can: by copies in this
// process (`local`: mapped memory, this process's own, or absolute
// addresses of this process's dynamic window) or by single copy to or from
// its process, at `base` plus each segment's offset.
struct Reach {
  enum { kNone, kLocal, kRemote } how = kNone;
  uintptr_t base = 0;
};

// A dynamic window's target: its regions (this process's list, the
// target's table mapped here, or a single copy of it) must hold every
// segment; otherwise the access goes as a message and the target judges it.
Reach reach_dynamic(Window& w, size_t t, const std::vector<Segment>& segs) {
  auto inside = [&](const Region* regions, size_t n) {
    for (const Segment& s : segs)
      if (!in_regions(regions, n, s.offset, s.length)) return false;
    return true;
  };
  if (int(t) == w.comm->rank) {
    if (inside(w.regions.data(), w.regions.size())) return {Reach::kLocal, 0};
    return {};
  }
  Region regions[RegionTable::kSlots];
  if (const RegionTable* mapped = w.tables[t]) {
    mapped->read(regions);
  } else if (w.remote_table[t] != 0) {
    RegionTable copy;
    iovec v{&copy, sizeof copy};
    if (!read_peer(w.comm->world[t], w.remote_table[t], &v, 1)) {
      w.remote_table[t] = 0;  // refused: messages from now on
      return {};
    }
    copy.read(regions);
  } else {
    return {};
  }
  if (!inside(regions, RegionTable::kSlots)) return {};
  return {Reach::kRemote, 0};
}

Reach reach(Window& w, size_t t, const std::vector<Segment>& segs) {
  if (segs.size() > kSingleCopyMaxSegments && (w.mapped.empty() || !w.mapped[t])) return {};
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) return reach_dynamic(w, t, segs);
  if (!w.mapped.empty() && w.mapped[t]) return {Reach::kLocal, reinterpret_cast<uintptr_t>(w.mapped[t])};
  if (!w.remote_base.empty() && w.remote_base[t]) return {Reach::kRemote, w.remote_base[t]};
  return {};
}

// A single copy to target t was refused: its accesses go as messages.
void refuse_single_copy(Window& w, size_t t) {
  w.remote_base[t] = 0;
  w.remote_table[t] = 0;
  w.tables[t] = nullptr;
}

}  // namespace

bool direct_put(Window* w, int target, const std::vector<Segment>& segs, const void* buf, int64_t count, Datatype* type,
                uint64_t n) {
  const size_t t = size_t(target);
  const Reach to = reach(*w, t, segs);
  if (to.how == Reach::kNone) return false;
  if (n == 0) return true;
  Bytes packed;
  const uint8_t* src = nullptr;
  if (type->contiguous) {
    src = contiguous_start(*type, buf);
  } else {
    packed.resize(n);
    pack(*type, buf, count, 0, packed.data(), n);
    src = packed.data();
  }
  if (to.how == Reach::kLocal) {
    scatter_to(to.base, segs.data(), segs.size(), src);
    std::atomic_thread_fence(std::memory_order_release);
    return true;
  }
  const int peer = w->comm->world[t];
  for (const Segment& s : segs) {
    iovec v{const_cast<uint8_t*>(src), s.length};
    if (s.length && !write_peer(peer, to.base + s.offset, &v, 1)) {
      refuse_single_copy(*w, t);  // messages from now on (they rewrite what was written)
      return false;
    }
    src += s.length;
  }
  return true;
}

bool direct_get(Window* w, int target, const std::vector<Segment>& segs, void* buf, int64_t count, Datatype* type,
                uint64_t n) {
  const size_t t = size_t(target);
  const Reach from = reach(*w, t, segs);
  if (from.how == Reach::kNone) return false;
  if (n == 0) return true;
  Bytes packed;
  uint8_t* dst = nullptr;
  if (type->contiguous) {
    dst = contiguous_start(*type, buf);
  } else {
    packed.resize(n);
    dst = packed.data();
  }
  if (from.how == Reach::kLocal) {
    std::atomic_thread_fence(std::memory_order_acquire);
    gather_from(from.base, segs.data(), segs.size(), dst);
  } else {
    const int peer = w->comm->world[t];
    uint8_t* out = dst;
    for (const Segment& s : segs) {
      iovec v{out, s.length};
      if (s.length && !read_peer(peer, from.base + s.offset, &v, 1)) {
        refuse_single_copy(*w, t);
        return false;
      }
      out += s.length;
    }
  }
  if (!type->contiguous) unpack(*type, buf, count, 0, packed.data(), n);
  return true;
}

bool direct_accumulate(Window* w, int target, const std::vector<Segment>& segs, Kind kind, int op, int basic,
                       const uint8_t* data, Bytes* old, int* rc) {
  const size_t t = size_t(target);
  uint8_t* mem = w->mapped.empty() ? nullptr : w->mapped[t];
  if (!mem) return false;
  Bytes scratch;
  *rc = apply_accumulate(reinterpret_cast<uintptr_t>(mem), segs.data(), segs.size(), kind, op, basic, data,
                         old ? *old : scratch, w->acc_lock[t]);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}

}  // namespace sonde::engine::rma
