// The MPI tool information interface (MPI 4.1 section 15.3): what the files
// of mpit/ share. docs/mpit.md is the user's page; this is the map.
//
//   catalog.cc  the control variables, enumerations, categories, event types
//               (static tables, valid before MPI_Init) and the metadata calls
//   pvar_catalog.cc the performance variables' table, with the queue
//               variables under MPICH's and Open MPI's names
//   cvars.cc    control variables: handles, read, write (engine Settings)
//   bridge.cc   the PERUSE bridge: per-communicator statistics fed by
//               internal subscribers on the PERUSE dispatch tables, switched
//               on only while a pvar handle needs them
//   pvars.cc    sessions and performance-variable handles
//   events.cc   MPI_T events: registrations, callbacks, buffers, sources
//
// Locking: every MPI_T call takes the engine lock (when MPI runs with
// MPI_THREAD_MULTIPLE) and then `mutex()`; the bridge's callbacks run inside
// the engine with the engine lock held and take `mutex()` too, so the order
// is always engine -> mpit -> PERUSE registry. User callbacks of MPI_T events
// are never invoked with `mutex()` held.
//
// Handles: MPI_T handle types are opaque pointers whose value encodes a slot
// index (low 32 bits, from 1) and a generation (high 32 bits); a table lookup
// validates them, so stale and forged handles are errors, never dereferenced.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/mpi.h"

namespace sonde::mpit {

std::recursive_mutex& mutex();

// Reference count of MPI_T_init_thread minus MPI_T_finalize.
bool initialized();

// 0 before MPI_Init, 1 while initialized, 2 after MPI_Finalize.
int mpi_state();

// Holds the engine lock (if MPI uses it) and mutex() for one MPI_T call.
class Guard {
 public:
  Guard();
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  bool engine_locked_ = false;
};

// Section 15.3.3: at most len-1 characters and a terminator; *len becomes
// the string's length + 1; a null buffer or zero length only reports it; a
// null len ignores the buffer.
void copy_string(const std::string& s, char* buf, int* len);

// Monotonic nanoseconds (the event source and the timers' clock).
int64_t now_ns();

// ---- handle values -----------------------------------------------------------
inline uint64_t encode(uint32_t generation, uint32_t index) { return (uint64_t(generation) << 32) | index; }
inline uint32_t index_of(const void* h) { return uint32_t(reinterpret_cast<uintptr_t>(h) & 0xffffffffu); }
inline uint32_t generation_of(const void* h) { return uint32_t(uint64_t(reinterpret_cast<uintptr_t>(h)) >> 32); }
template <class H>
H make(uint32_t generation, uint32_t index) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(encode(generation, index)));
}

// A table of slots addressed by generation-checked handles. Slots live in a
// vector of unique_ptrs so their addresses stay put (callbacks keep them).
template <class T>
class Slots {
 public:
  struct Slot {
    uint32_t generation = 0;
    bool live = false;
    T value{};
  };
  // Index of a fresh live slot with value reset.
  uint32_t allocate() {
    uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      slots_.push_back(std::make_unique<Slot>());
      i = uint32_t(slots_.size());  // from 1
    }
    Slot& s = *slots_[i - 1];
    ++s.generation;
    s.live = true;
    s.value = T{};
    return i;
  }
  Slot* find(const void* h) {
    uint32_t i = index_of(h);
    if (i == 0 || i > slots_.size()) return nullptr;
    Slot& s = *slots_[i - 1];
    return s.live && s.generation == generation_of(h) ? &s : nullptr;
  }
  Slot& at(uint32_t i) { return *slots_[i - 1]; }
  void release(uint32_t i) {
    slots_[i - 1]->live = false;
    slots_[i - 1]->value = T{};
    free_.push_back(i);
  }
  uint32_t size() const { return uint32_t(slots_.size()); }
  template <class F>
  void for_each_live(F f) {
    for (uint32_t i = 1; i <= slots_.size(); ++i)
      if (slots_[i - 1]->live) f(i, *slots_[i - 1]);
  }

 private:
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<uint32_t> free_;
};

// ---- the catalog (catalog.cc) ---------------------------------------------------
enum EnumId : int { kEnumBool, kEnumThreadLevel, kEnumRingBytes, kEnumOperation, kEnumMpiState, kNumEnums };

// What a performance variable measures; pvars.cc and bridge.cc implement it.
enum class Measure : uint8_t {
  kPostedLength,
  kUnexpectedLength,
  kUnexpectedBytes,
  kUnexpectedBufferBytes,
  kPostedPerPeer,
  kUnexpectedPerPeer,
  kPostedMatchAttempts,
  kUnexpectedMatchAttempts,
  kPostedHwm,
  kUnexpectedHwm,
  kPostedMatches,
  kUnexpectedMatches,
  kPostedSearchTime,
  kUnexpectedSearchTime,
  kPostedFailedSearchTime,
  kPostedResidence,
  kUnexpectedResidence,
  kMessagesSent,
  kBytesSent,
  kMessagesReceived,
  kBytesReceived,  // per transport
  kRingSize,
  kMpiState,
  kEventsDropped,
  kRmaOperations,  // one-sided operations issued (core/introspect.h, rma_counters)
  kRmaBytes,
  kRmaEpochs,
  kRmaNetwork,       // of those, through the network transport's RMA
  kRmaWindowVisits,  // windows the progress hook ran
};
inline bool is_rma_measure(Measure m) {
  return m == Measure::kRmaOperations || m == Measure::kRmaBytes || m == Measure::kRmaEpochs ||
         m == Measure::kRmaNetwork || m == Measure::kRmaWindowVisits;
}

struct PvarDef {
  const char* name;
  const char* desc;
  int verbosity;
  int var_class;
  MPI_Datatype datatype;
  int enumtype;  // EnumId or -1
  int bind;
  bool readonly, continuous, atomic;
  Measure measure;
  int transport;  // kMessagesSent..kBytesReceived: index into kTransportNames
  // Compatibility aliases: the Sonde variable whose value this one gives
  // under another implementation's name (null for Sonde's own).
  const char* mirrors = nullptr;
};

struct CvarDef {
  const char* name;
  const char* desc;
  int verbosity;
  MPI_Datatype datatype;
  int enumtype;
  int bind;
  int scope;
  int count;
};

struct EventDef {
  std::string name;  // the PERUSE constant's name
  std::string desc;
  int peruse_event;
};

struct CategoryDef {
  const char* name;
  const char* desc;
  std::vector<int> cvars, pvars, events, categories;
};

inline constexpr int kNumTransports = 2;
extern const char* const kTransportNames[kNumTransports];  // "self", "shm": as Transport::name()

const std::vector<CvarDef>& cvars();
const std::vector<PvarDef>& pvars();
const std::vector<EventDef>& events();  // empty when PERUSE is compiled out
const std::vector<CategoryDef>& categories();

// cvars.cc
int cvar_read_value(int index, void* buf);
int cvar_write_value(int index, const void* buf);
uint32_t event_buffer_capacity();

// events.cc: deliver instances buffered for MPI_T_CB_REQUIRE_NONE callbacks:
// every thread's (at the entry of every MPI_T call, outside any lock), or
// those raised by the calling thread (when an MPI call returns, through
// core/process.h; installed at library load).
void deliver_deferred_events();
void deliver_at_call_return();
uint64_t events_dropped_total();

// The element record of every event type (events.cc, catalog.cc).
struct EventRecord {
  uint64_t unique_id;
  int32_t peer;
  int32_t tag;
  int64_t count;
  int32_t datatype;
  int32_t operation;
  int64_t timestamp;
};
inline constexpr int kEventElements = 7;

}  // namespace sonde::mpit

// Entry of every MPI_T function but init_thread and finalize.
#define SONDE_T_ENTER()                                                \
  if (!::sonde::mpit::initialized()) return MPI_T_ERR_NOT_INITIALIZED; \
  ::sonde::mpit::deliver_deferred_events();                            \
  ::sonde::mpit::Guard sonde_t_guard_
