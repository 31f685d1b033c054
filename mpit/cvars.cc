// Control variables: the engine's Settings behind MPI_T cvar handles.
//
// When a write takes effect is the variable's honest answer (catalog.cc
// describes each): knobs the engine reads per message change behaviour at
// the next message (MPI_T_SCOPE_LOCAL, writable any time MPI is not
// finalized); knobs consumed by MPI_Init are writable before it and answer
// MPI_T_ERR_CVAR_SET_NEVER afterwards; read-only and constant variables
// always answer MPI_T_ERR_CVAR_SET_NEVER.
#include <climits>

#include "base/weak_alias.h"
#include "core/introspect.h"
#include "core/process.h"
#include "mpit/state.h"

namespace sonde::mpit {

namespace {

uint32_t g_event_buffer = 256;

enum : int {
  kEagerLimit,
  kCoopThreshold,
  kSpin,
  kSingleCopy,
  kFastBoxes,
  kRingBytes,
  kTransports,
  kThreadLevel,
  kPeruse,
  kEventBuffer,
  kIdleSleep
};

struct CvarHandle {
  int index = -1;
};
Slots<CvarHandle>& handles() {
  static auto* s = new Slots<CvarHandle>();
  return *s;
}

std::string transports_in_use() { return mpi_state() == 1 ? engine::introspect::transports_in_use() : ""; }

}  // namespace

uint32_t event_buffer_capacity() { return g_event_buffer; }

int cvar_read_value(int index, void* buf) {
  engine::Settings& s = engine::introspect::settings();
  switch (index) {
    case kEagerLimit: *static_cast<unsigned long long*>(buf) = s.eager_limit; break;
    case kCoopThreshold: *static_cast<unsigned long long*>(buf) = s.coop_threshold; break;
    case kSpin: *static_cast<unsigned*>(buf) = unsigned(std::max(0, s.spin_before_yield)); break;
    case kSingleCopy: *static_cast<int*>(buf) = s.single_copy; break;
    case kFastBoxes: *static_cast<int*>(buf) = s.fast_boxes; break;
    case kRingBytes: *static_cast<int*>(buf) = int(s.ring_bytes); break;
    case kTransports: {
      std::string t = transports_in_use();
      int len = cvars()[kTransports].count;
      copy_string(t, static_cast<char*>(buf), &len);
      break;
    }
    case kThreadLevel:
      *static_cast<int*>(buf) = mpi_state() == 0 ? MPI_THREAD_SINGLE : engine::introspect::thread_level();
      break;
#ifndef SONDE_PERUSE_OFF
    case kPeruse: *static_cast<int*>(buf) = 1; break;
#else
    case kPeruse: *static_cast<int*>(buf) = 0; break;
#endif
    case kEventBuffer: *static_cast<unsigned*>(buf) = g_event_buffer; break;
    case kIdleSleep: *static_cast<unsigned*>(buf) = unsigned(std::max(0, s.idle_sleep_after_ms)); break;
    default: return MPI_T_ERR_INVALID_INDEX;
  }
  return MPI_SUCCESS;
}

int cvar_write_value(int index, const void* buf) {
  engine::Settings& s = engine::introspect::settings();
  const int state = mpi_state();
  const CvarDef& d = cvars()[size_t(index)];
  if (d.scope == MPI_T_SCOPE_CONSTANT || d.scope == MPI_T_SCOPE_READONLY) return MPI_T_ERR_CVAR_SET_NEVER;
  if (state == 2) return MPI_T_ERR_CVAR_SET_NEVER;  // nothing reads them after MPI_Finalize
  switch (index) {
    case kEagerLimit: s.eager_limit = *static_cast<const unsigned long long*>(buf); break;
    case kCoopThreshold: s.coop_threshold = *static_cast<const unsigned long long*>(buf); break;
    case kSpin:
      s.spin_before_yield = int(std::min<unsigned>(*static_cast<const unsigned*>(buf), INT_MAX));
      s.spin_chosen = true;
      break;
    case kSingleCopy: {
      int v = *static_cast<const int*>(buf);
      if (v != 0 && v != 1) return MPI_T_ERR_INVALID;
      // The transport only prepares single copy (ptrace permission, per-peer
      // probe) at MPI_Init if it was on then.
      if (state == 1 && v == 1 && !s.single_copy_at_init) return MPI_T_ERR_CVAR_SET_NEVER;
      s.single_copy = v;
      break;
    }
    case kFastBoxes: {
      int v = *static_cast<const int*>(buf);
      if (v != 0 && v != 1) return MPI_T_ERR_INVALID;
      if (state != 0) return MPI_T_ERR_CVAR_SET_NEVER;
      s.fast_boxes = v;
      break;
    }
    case kRingBytes: {
      int v = *static_cast<const int*>(buf);
      if (v != 4096 && v != 65536) return MPI_T_ERR_INVALID;
      if (state != 0) return MPI_T_ERR_CVAR_SET_NEVER;
      s.ring_bytes = size_t(v);
      break;
    }
    case kEventBuffer: g_event_buffer = *static_cast<const unsigned*>(buf); break;
    case kIdleSleep:
      s.idle_sleep_after_ms = int(std::min<unsigned>(*static_cast<const unsigned*>(buf), INT_MAX));
      break;
    default: return MPI_T_ERR_CVAR_SET_NEVER;
  }
  return MPI_SUCCESS;
}

}  // namespace sonde::mpit

using namespace sonde::mpit;

extern "C" {

int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle, int* count) {
  SONDE_T_ENTER();
  if (cvar_index < 0 || cvar_index >= int(cvars().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  // Every Sonde cvar is MPI_T_BIND_NO_OBJECT: obj_handle is ignored.
  uint32_t i = handles().allocate();
  handles().at(i).value.index = cvar_index;
  *handle = make<MPI_T_cvar_handle>(handles().at(i).generation, i);
  *count = cvars()[size_t(cvar_index)].count;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_cvar_handle_alloc)

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  SONDE_T_ENTER();
  if (!handle) return MPI_T_ERR_INVALID;
  auto* s = handles().find(*handle);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  handles().release(index_of(*handle));
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  SONDE_T_ENTER();
  auto* s = handles().find(handle);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  return cvar_read_value(s->value.index, buf);
}
SONDE_WEAK_ALIAS(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  SONDE_T_ENTER();
  auto* s = handles().find(handle);
  if (!s) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  return cvar_write_value(s->value.index, buf);
}
SONDE_WEAK_ALIAS(T_cvar_write)

}  // extern "C"
