// Windows: the handle table, creation over a hidden duplicate of the
// user's communicator, the shared segment of MPI_Win_allocate_shared,
// dynamic windows' regions, and MPI_Win_free (window.h).
#include "rma/window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "coll/coll.h"
#include "comm/comm_build.h"
#include "core/alloc_mem.h"
#include "core/engine.h"
#include "core/node_segment.h"
#include "core/p2p.h"
#include "core/remote_copy.h"
#include "rma/am.h"
#include "rma/net.h"

namespace sonde::engine::rma {

HandleTable<Window, SONDE_KIND_WIN>& window_table() {
  static auto* t = new HandleTable<Window, SONDE_KIND_WIN>();
  return *t;
}

std::vector<Window*>& live_windows() {
  static auto* v = new std::vector<Window*>;
  return *v;
}

Window* find_window(MPI_Win h) {
  Window* w = window_table().lookup(h);
  return w && w->live ? w : nullptr;
}

namespace {

Datatype* type_of(MPI_Datatype h) { return find_datatype(h); }

// Maps one segment of `bytes` bytes shared by the ranks of w->comm: rank 0
// creates it, the others open it by name. MPI_ERR_RMA_SHARED when some rank
// cannot (the communicator spans several nodes).
int map_segment(Window* w, size_t bytes) {
  Comm* c = w->comm;
  static unsigned serial = 0;
  char name[64] = {0};
  int fd = -1;
  int failed = 0;
  const size_t len = std::max<size_t>(bytes, 1);
  if (c->rank == 0) {
    std::snprintf(name, sizeof name, "/sonde-win-%d-%u-%u", int(getpid()), c->context, ++serial);
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, off_t(len)) != 0) failed = 1;
  }
  int rc = coll::bcast(name, sizeof name, byte_type(), 0, c);
  if (rc) return rc;
  if (c->rank != 0) {
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) failed = 1;
  }
  void* p = MAP_FAILED;
  if (!failed) {
    p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) failed = 1;
  }
  if (fd >= 0) close(fd);
  int any = 0;
  rc = coll::allreduce(&failed, &any, 1, type_of(MPI_INT), MPI_MAX, c);
  if (c->rank == 0 && name[0]) shm_unlink(name);  // every rank has opened it (or failed)
  if (rc || any) {
    if (p != MAP_FAILED) munmap(p, len);
    return rc ? rc : MPI_ERR_RMA_SHARED;
  }
  w->segment = static_cast<uint8_t*>(p);
  w->segment_bytes = len;
  return MPI_SUCCESS;
}

// What each rank tells the others when a window is made.
struct Record {
  int64_t size = 0;
  int64_t disp_unit = 1;
  uint64_t base = 0;   // its memory's address in its own process (create, allocate)
  uint64_t nonce = 0;  // MPI_Win_allocate in a segment: its name and the nonce at its head
  char name[48] = {0};
  int32_t failed = 0;  // its memory could not be allocated
  int32_t net_ok = 0;  // its memory is registered for network RMA (net.h): key and base below
  uint64_t net_key = 0;
  uint64_t net_base = 0;
};

// The head of an MPI_Win_allocate segment; the memory follows it.
struct SegmentHead {
  uint64_t nonce;
  AccLock acc_lock;
};
constexpr size_t kHeadBytes = 64;
static_assert(sizeof(SegmentHead) <= kHeadBytes);
// Larger windows take MPI_Alloc_mem's memory (a segment's pages are
// reserved when it is made).
constexpr int64_t kMaxSegmentWindow = int64_t(1) << 30;

// A new segment of `bytes` after its head, for the ranks of this node to
// map, its name and nonce in `mine`; the bytes after the head, or null
// (too large, no other rank of the window on this node, no room).
uint8_t* make_segment(Window* w, int64_t bytes, Record* mine) {
  if (bytes > kMaxSegmentWindow) return nullptr;
  bool neighbours = false;  // another rank of the window on this node
  for (int i = 0; i < w->comm->size; ++i)
    if (i != w->comm->rank && on_this_node(w->comm->world[size_t(i)])) neighbours = true;
  if (!neighbours) return nullptr;
  static unsigned serial = 0;
  std::snprintf(mine->name, sizeof mine->name, "/sonde-wa-%d-%u-%u", int(getpid()), w->comm->context, ++serial);
  const size_t len = kHeadBytes + size_t(bytes);
  uint8_t* p = create_node_segment(mine->name, len);
  if (!p) {
    mine->name[0] = 0;
    return nullptr;
  }
  mine->nonce = node_segment_nonce();
  reinterpret_cast<SegmentHead*>(p)->nonce = mine->nonce;
  w->mappings.emplace_back(p, len);
  return p + kHeadBytes;
}

// MPI_Win_allocate: this process's memory in a new segment. False when
// there is none.
bool own_segment(Window* w, int64_t size, Record* mine) {
  uint8_t* memory = make_segment(w, size, mine);
  if (!memory) return false;
  w->base = memory;
  w->acc_lock[size_t(w->comm->rank)] = &reinterpret_cast<SegmentHead*>(memory - kHeadBytes)->acc_lock;
  return true;
}

// MPI_Win_create_dynamic: this process's RegionTable, in a segment the
// node's ranks map where one can be made (mine->name set), else in the
// heap, read by single copy at mine->base.
void own_region_table(Window* w, Record* mine) {
  if (uint8_t* memory = make_segment(w, sizeof(RegionTable), mine)) {
    w->region_table = new (memory) RegionTable();
  } else {
    w->heap_table = std::make_unique<RegionTable>();
    w->region_table = w->heap_table.get();
  }
  mine->base = reinterpret_cast<uintptr_t>(w->region_table);
}

// Maps the segments of node-local ranks (their nonce proves it is theirs,
// not a namesake's on another node) and notes the base addresses of those
// whose memory can only be reached by single copy.
void open_peers(Window* w, const std::vector<Record>& all) {
  const size_t me = size_t(w->comm->rank);
  for (size_t i = 0; i < all.size(); ++i) {
    const Record& r = all[i];
    if (i == me || !on_this_node(w->comm->world[i])) continue;
    if (r.name[0]) {
      const size_t len = kHeadBytes + (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? sizeof(RegionTable) : size_t(r.size));
      if (uint8_t* p = open_node_segment(r.name, len)) {
        auto* head = reinterpret_cast<SegmentHead*>(p);
        if (head->nonce == r.nonce) {
          w->mappings.emplace_back(p, len);
          uint8_t* memory = p + kHeadBytes;
          if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
            w->tables[i] = reinterpret_cast<const RegionTable*>(memory);
          } else {
            w->mapped[i] = memory;
            w->acc_lock[i] = &head->acc_lock;
          }
          continue;
        }
        munmap(p, len);
      }
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
      w->remote_table[i] = r.base;
    } else {
      w->remote_base[i] = r.base;
    }
  }
}

// The window's memory and mappings go (creation failed, or MPI_Win_free).
void release_memory(Window* w) {
  net_close(w);
  if (w->owns_memory) free_mem(w->base);
  if (w->segment) munmap(w->segment, w->segment_bytes);
  for (auto& [p, len] : w->mappings) munmap(p, len);
  w->mappings.clear();
}

void reset(Window* w) {
  Window fresh;
  fresh.handle = w->handle;
  *w = std::move(fresh);
}

}  // namespace

int create(Comm* comm, int flavor, void** base, int64_t size, int64_t disp_unit, const InfoPairs* info, Window** out) {
  Engine& e = engine();
  uint32_t context = 0;
  int rc = allocate_context(comm, &context);
  if (rc) return rc;
  Comm* hidden = nullptr;
  rc = e.create_comm(comm, comm->world, comm->rank, context, &hidden, /*duplicate=*/true);
  if (rc) return rc;
  hidden->name = "sonde-window";
  Window* w = nullptr;
  int h = window_table().allocate(&w);
  if (!h) {
    e.free_comm(hidden);
    return MPI_ERR_INTERN;
  }
  w->handle = h;
  reset(w);
  w->comm = hidden;
  w->flavor = flavor;
  w->size = size;
  w->disp_unit = disp_unit;
  // The hints MPI 4.1 section 12.2.1 defines, at their defaults unless
  // given (MPI_Win_get_info reports them); none changes what Sonde does.
  w->info = {{"no_locks", "false"},
             {"accumulate_ordering", "rar,raw,war,waw"},
             {"accumulate_ops", "same_op_no_op"},
             {"same_size", "false"},
             {"same_disp_unit", "false"}};
  if (flavor == MPI_WIN_FLAVOR_SHARED) w->info.emplace_back("alloc_shared_noncontig", "false");
  if (info)
    for (const auto& [k, v] : *info) info_set(w->info, k, v);
  const size_t n = size_t(hidden->size);
  w->acks.assign(n, 0);
  w->grants.assign(n, 0);
  w->posts.assign(n, 0);
  w->ack_error.assign(n, MPI_SUCCESS);
  w->locks.assign(n, 0);
  w->nocheck.assign(n, 0);
  w->dirty.assign(n, 0);

  w->mapped.assign(n, nullptr);
  w->acc_lock.assign(n, nullptr);
  w->remote_base.assign(n, 0);
  w->remote_table.assign(n, 0);
  w->tables.assign(n, nullptr);

  // MPI_Win_allocate's memory: a segment node-local ranks can map, else
  // MPI_Alloc_mem's.
  Record mine;
  mine.size = size;
  mine.disp_unit = disp_unit;
  if (flavor == MPI_WIN_FLAVOR_ALLOCATE && !own_segment(w, size, &mine)) {
    void* p = nullptr;
    if (alloc_mem(size, &p) == MPI_SUCCESS) {
      w->base = p;
      w->owns_memory = true;
    } else {
      mine.failed = 1;
    }
  } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
    w->base = *base;
  } else if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    own_region_table(w, &mine);
  }
  if (flavor != MPI_WIN_FLAVOR_DYNAMIC && flavor != MPI_WIN_FLAVOR_SHARED && w->base) {
    mine.base = reinterpret_cast<uintptr_t>(w->base);
    w->mapped[size_t(hidden->rank)] = static_cast<uint8_t*>(w->base);
  }
  if (!mine.failed) net_open(w, &mine.net_key, &mine.net_base, &mine.net_ok);
  // Everyone's record, so origins check ranges and find node-local memory.
  std::vector<Record> all(n);
  rc = coll::allgather(&mine, sizeof mine, byte_type(), all.data(), sizeof mine, byte_type(), hidden);
  if (!rc) {
    w->sizes.resize(n);
    w->disp_units.resize(n);
    for (size_t i = 0; i < n; ++i) {
      w->sizes[i] = all[i].size;
      w->disp_units[i] = all[i].disp_unit;
      if (all[i].failed) rc = MPI_ERR_NO_MEM;
    }
    if (!rc && flavor != MPI_WIN_FLAVOR_SHARED) open_peers(w, all);
    if (!rc) {
      std::vector<uint8_t> ok(n);
      std::vector<uint64_t> keys(n), bases(n);
      for (size_t i = 0; i < n; ++i) {
        ok[i] = uint8_t(all[i].net_ok != 0);
        keys[i] = all[i].net_key;
        bases[i] = all[i].net_base;
      }
      net_peers(w, ok, keys, bases);
    }
    // Every rank has opened the segments it could: their names can go.
    const int rc2 = coll::barrier(hidden);
    if (!rc) rc = rc2;
  }
  if (mine.name[0]) shm_unlink(mine.name);
  if (!rc && flavor == MPI_WIN_FLAVOR_ALLOCATE) *base = w->base;
  if (!rc && flavor == MPI_WIN_FLAVOR_SHARED) {
    w->offsets.resize(n);
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      w->offsets[i] = total;
      total += w->sizes[i];
    }
    // The ranks' accumulate locks follow the parts, one cache line each
    // (zero, unheld, as the segment starts).
    const size_t locks_at = (size_t(total) + 63) & ~size_t(63);
    rc = map_segment(w, locks_at + n * 64);
    if (!rc) {
      w->base = w->segment + w->offsets[size_t(hidden->rank)];
      *base = size ? w->base : nullptr;
      if (!size) w->base = nullptr;
      for (size_t i = 0; i < n; ++i) {
        w->mapped[i] = w->segment + w->offsets[i];
        w->acc_lock[i] = reinterpret_cast<AccLock*>(w->segment + locks_at + 64 * i);
      }
    }
  }
  if (!rc) rc = open_channel(w);
  if (rc) {
    release_memory(w);
    e.free_comm(hidden);
    window_table().release(h);
    return rc;
  }
  w->live = true;
  live_windows().push_back(w);
  *out = w;
  return MPI_SUCCESS;
}

int free(Window* w) {
  // Epochs must be closed; the window's own answers must have left before
  // the others can be told it is going.
  if (w->started || w->exposed || w->lock_all ||
      std::any_of(w->locks.begin(), w->locks.end(), [](int l) { return l != 0; }))
    return MPI_ERR_RMA_SYNC;
  // A correct program has nothing in flight once its epochs are closed:
  // every operation was answered or acknowledged. Only this process's own
  // sends of answers may still be leaving; they finish before the barrier,
  // which every process enters only after its own did.
  net_wait(w, -1);
  wait_until([&] { return w->pending.empty() && w->sends.empty(); });
  int rc = coll::barrier(w->comm);
  run_window(w);
  close_channel(w);
  forget_work(w);
  auto& live = live_windows();
  live.erase(std::find(live.begin(), live.end(), w));
  release_memory(w);
  engine().free_comm(w->comm);
  int h = w->handle;
  reset(w);
  window_table().release(h);
  return rc;
}

int attach(Window* w, void* base, int64_t size) {
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return MPI_ERR_RMA_FLAVOR;
  if (size < 0) return MPI_ERR_SIZE;
  const uint64_t b = reinterpret_cast<uintptr_t>(base);
  for (const Region& r : w->regions)
    if (b < r.base + r.size && r.base < b + uint64_t(size)) return MPI_ERR_RMA_ATTACH;  // overlaps
  w->regions.push_back(Region{b, uint64_t(size)});
  if (size == 0) return MPI_SUCCESS;
  for (RegionTable::Slot& slot : w->region_table->slot)
    if (slot.size.load(std::memory_order_relaxed) == 0) {
      slot.base.store(b, std::memory_order_relaxed);
      slot.size.store(uint64_t(size), std::memory_order_release);  // after the base
      break;
    }
  return MPI_SUCCESS;
}

int detach(Window* w, const void* base) {
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return MPI_ERR_RMA_FLAVOR;
  const uint64_t b = reinterpret_cast<uintptr_t>(base);
  for (size_t i = 0; i < w->regions.size(); ++i)
    if (w->regions[i].base == b) {
      const uint64_t size = w->regions[i].size;
      w->regions.erase(w->regions.begin() + long(i));
      for (RegionTable::Slot& slot : w->region_table->slot)
        if (size != 0 && slot.size.load(std::memory_order_relaxed) == size &&
            slot.base.load(std::memory_order_relaxed) == b) {
          slot.size.store(0, std::memory_order_release);  // before the base
          slot.base.store(0, std::memory_order_relaxed);
          break;
        }
      return MPI_SUCCESS;
    }
  return MPI_ERR_RMA_ATTACH;
}

bool in_regions(const Region* regions, size_t n, uint64_t offset, uint64_t length) {
  if (length == 0) return true;
  if (offset > ~uint64_t(0) - length) return false;
  const uint64_t end = offset + length;
  uint64_t covered = offset;  // [offset, covered) lies in the regions
  bool grew = true;
  while (covered < end && grew) {
    grew = false;
    for (size_t i = 0; i < n; ++i)
      if (regions[i].base <= covered && covered - regions[i].base < regions[i].size) {
        covered = regions[i].base + regions[i].size;
        grew = true;
      }
  }
  return covered >= end;
}

int shared_query(Window* w, int rank, int64_t* size, int64_t* disp_unit, void** base) {
  if (w->flavor != MPI_WIN_FLAVOR_SHARED) return MPI_ERR_RMA_FLAVOR;
  if (rank == MPI_PROC_NULL) {
    rank = -1;
    for (size_t i = 0; i < w->sizes.size(); ++i)
      if (w->sizes[i] > 0) {
        rank = int(i);
        break;
      }
    if (rank < 0) {
      *size = 0;
      *disp_unit = w->disp_units.empty() ? 1 : w->disp_units[0];
      *base = nullptr;
      return MPI_SUCCESS;
    }
  }
  if (rank < 0 || rank >= w->comm->size) return MPI_ERR_RANK;
  *size = w->sizes[size_t(rank)];
  *disp_unit = w->disp_units[size_t(rank)];
  *base = *size ? w->segment + w->offsets[size_t(rank)] : nullptr;
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::rma
