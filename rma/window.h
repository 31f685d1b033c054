// One-sided communication (MPI 4.1 chapter 12): windows and the state of
// their epochs. Windows live in their own handle table (kind
// SONDE_KIND_WIN).
//
// Every window owns a hidden duplicate of the communicator it was made on
// (`comm`, with the parent's propagating PERUSE handles): all of the
// window's traffic, its operations' active messages (am.h) and its
// collectives (creation, fence, free), runs there, so it never matches a
// user's receive. Callers hold the engine lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/handles.h"
#include "coll/scratch_pool.h"
#include "comm/attributes.h"
#include "comm/info.h"
#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine::rma {

// Operation data (packed origin data, target values, messages): large
// buffers come warm from the scratch pool and are not zero-filled.
using Bytes = std::vector<uint8_t, coll::detail::ScratchAllocator<uint8_t>>;

// A region of a dynamic window (MPI_Win_attach), in absolute addresses.
struct Region {
  uint64_t base = 0;
  uint64_t size = 0;
};

// Does [offset, offset + length) lie in the `n` regions? A range may span
// several regions that follow one another without a gap (two arrays
// attached separately that are adjacent in memory). Regions of size 0
// cover nothing.
bool in_regions(const Region* regions, size_t n, uint64_t offset, uint64_t length);

// A dynamic window's attached regions where the node-local origins read
// them (direct.h): in a shared-memory segment those ranks map, or, where no
// segment could be made, in this process's memory, which they read by
// single copy. MPI_Win_attach fills a free slot (base, then size) and
// MPI_Win_detach empties its slot (size, then base); slots never move. An
// origin may only access a region after synchronization that follows its
// attachment and before its detachment (MPI 4.1 section 12.2.4), so the
// slots it relies on are not being written while it reads them. Size 0: a
// free slot. Regions attached while every slot is taken are reached by
// messages only.
struct RegionTable {
  static constexpr size_t kSlots = 64;
  struct Slot {
    std::atomic<uint64_t> base{0};
    std::atomic<uint64_t> size{0};
  };
  Slot slot[kSlots];
  // The regions as plain values (a copy taken while nothing the caller may
  // access changes).
  void read(Region (&out)[kSlots]) const {
    for (size_t i = 0; i < kSlots; ++i) {
      out[i].size = slot[i].size.load(std::memory_order_acquire);
      out[i].base = slot[i].base.load(std::memory_order_relaxed);
    }
  }
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "region slots are read from other processes");

// A message that arrived on the window's header channel and waits, in
// arrival order, to be applied (am.cc).
struct Incoming {
  int source = 0;              // rank in the window's communicator
  Bytes message;               // header, segments, data
  Request* payload = nullptr;  // the separate payload still arriving, or null
  bool landed = false;         // the data went where it belongs (a put's window range, an answer's result)
};

// An operation of this process waiting for its target's answer (a get's
// data, a fetch's old value).
struct Pending {
  int target = 0;
  void* result = nullptr;  // where the answer goes, through `type`
  int64_t count = 0;
  Datatype* type = nullptr;
  Request* request = nullptr;  // the user's request (MPI_Rget and friends), or null
};

// The word at the head of a rank's segment (or in the shared segment's
// tail) that accumulates to its memory hold while they read, combine and
// write, from whichever process applies them (direct.h).
struct AccLock {
  std::atomic<uint32_t> held{0};
};

struct Window {
  int handle = MPI_WIN_NULL;
  bool live = false;
  Comm* comm = nullptr;  // hidden duplicate of the user's communicator
  int flavor = MPI_WIN_FLAVOR_CREATE;
  void* base = nullptr;
  int64_t size = 0;
  int64_t disp_unit = 1;
  std::vector<int64_t> sizes;       // per rank (not for dynamic windows)
  std::vector<int64_t> disp_units;  // per rank
  std::vector<Region> regions;      // dynamic windows: attached memory
  // Dynamic windows: this process's RegionTable (in its segment, else in
  // heap_table); per rank, its table mapped here, or else the table's
  // address in its process for single copy (0: neither, or this process).
  RegionTable* region_table = nullptr;
  std::unique_ptr<RegionTable> heap_table;
  std::vector<const RegionTable*> tables;
  std::vector<uint64_t> remote_table;
  bool owns_memory = false;         // MPI_Win_allocate: base is ours to free
  // MPI_Win_allocate_shared: the mapping of the node's segment and where
  // each rank's part starts in it.
  uint8_t* segment = nullptr;
  size_t segment_bytes = 0;
  std::vector<int64_t> offsets;

  // Direct access to node-local targets (direct.h), per rank of the window:
  // its memory mapped into this process (a part of the shared segment, or
  // the segment of its MPI_Win_allocate memory), or null; the word in that
  // segment that serializes accumulates to its memory, or null; its base
  // address in its own process (MPI_Win_create, MPI_Win_allocate) for
  // single copy, 0 when there is none or the path was refused.
  std::vector<uint8_t*> mapped;
  std::vector<AccLock*> acc_lock;
  std::vector<uint64_t> remote_base;
  // MPI_Win_allocate memory in a segment: this process's own mapping, and
  // the mappings of other ranks' segments, to unmap at MPI_Win_free.
  std::vector<std::pair<uint8_t*, size_t>> mappings;

  // What MPI_Win_get_attr's predefined keys point to.
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 1;
  int attr_flavor = MPI_WIN_FLAVOR_CREATE;
  int attr_model = MPI_WIN_UNIFIED;

  std::string name;
  int errhandler = MPI_ERRORS_ARE_FATAL;
  InfoPairs info;
  attr::AttrList attrs;

  // ---- target side (am.cc) ----
  Request* header_recv = nullptr;  // the posted receive of the header channel
  std::vector<uint8_t> header_buf;
  std::deque<Incoming> incoming;
  int exclusive_holder = -1;  // rank holding the exclusive lock, or -1
  int shared_holders = 0;
  std::deque<std::pair<int, int>> lock_waiters;  // (origin, lock type), in arrival order
  std::map<int, int> origin_error;               // first error of an origin's operations since its last flush
  int completes = 0;                             // MPI_Win_complete notices received (post/wait)
  std::vector<int> exposure;                     // ranks of the current post group
  bool exposed = false;

  // ---- progress (am.cc) ----
  // In the list of windows with work (the progress hook visits only
  // those): its channel received something, or sends or arrivals are
  // still being taken care of.
  bool queued = false;
  Window* work_prev = nullptr;
  Window* work_next = nullptr;

  // ---- network RMA (net.h) ----
  // This process's window memory registered with the network transport
  // (net_handle valid while net_registered); per rank: whether its memory
  // is reachable through network RMA, its key and base address there, and
  // this process's transfers to it not yet complete.
  bool net_registered = false;
  uint64_t net_handle = 0;
  std::vector<uint8_t> net_ok;
  std::vector<uint64_t> net_key;
  std::vector<uint64_t> net_base;
  std::vector<int> net_in_flight;

  // ---- origin side ----
  uint64_t next_id = 1;
  std::map<uint64_t, Pending> pending;  // by operation id
  std::vector<std::pair<Request*, Bytes*>> sends;
  std::vector<int> acks;       // flush/unlock answers received, per rank
  std::vector<int> grants;     // lock grants received, per rank
  std::vector<int> posts;      // post notices received, per rank
  std::vector<int> ack_error;  // error carried by the last answer, per rank
  // Access epochs: fence (after a fence without MPI_MODE_NOSUCCEED),
  // start (the ranks of the start group), locks (per rank: 0 none,
  // MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE), lock_all.
  bool fence_epoch = false;
  std::vector<int> access;
  bool started = false;
  std::vector<int> locks;
  std::vector<uint8_t> nocheck;  // lock taken with MPI_MODE_NOCHECK, per rank
  bool lock_all = false;
  std::vector<uint8_t> dirty;  // operations sent since the last flush, per rank
};

HandleTable<Window, SONDE_KIND_WIN>& window_table();
// A live window, or null for null/freed/forged handles.
Window* find_window(MPI_Win h);
// Windows alive now (the progress hook runs while there are any).
std::vector<Window*>& live_windows();

// Creation: collective over `comm` (an intracommunicator). `flavor` is
// MPI_WIN_FLAVOR_CREATE (base/size given), _ALLOCATE (memory allocated
// here, *base set), _DYNAMIC (no memory) or _SHARED (one segment per node,
// *base set to this rank's part). Results are MPI error classes.
int create(Comm* comm, int flavor, void** base, int64_t size, int64_t disp_unit, const InfoPairs* info, Window** out);
// MPI_Win_free: ends the window collectively once every process's
// operations have completed.
int free(Window* w);
// MPI_Win_attach / MPI_Win_detach on a dynamic window.
int attach(Window* w, void* base, int64_t size);
int detach(Window* w, const void* base);
// MPI_Win_shared_query: rank's part of a shared window (MPI_PROC_NULL: the
// first rank whose part is not empty).
int shared_query(Window* w, int rank, int64_t* size, int64_t* disp_unit, void** base);

}  // namespace sonde::engine::rma
