// Performance variables: sessions and handles over the bridge's statistics.
//
// Each handle owns its value: a counter or timer keeps an accumulator plus
// the monotone statistic's value when it was last started (or reset or
// written); a watermark keeps its own maximum. So start/stop/reset/write in
// one session never changes what another session reads. Levels, sizes and
// states are continuous and read-only: they are the current value, read
// straight from the engine.
#include <algorithm>
#include <climits>

#include "base/weak_alias.h"
#include "core/introspect.h"
#include "core/process.h"
#include "mpit/bridge.h"
#include "mpit/state.h"

namespace sonde::mpit {

namespace {

struct PvarHandle {
  int index = -1;
  uint32_t session = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // bound object, MPI_COMM_NULL for MPI_T_BIND_NO_OBJECT
  int count = 1;
  bool running = false;
  uint64_t accum = 0;  // counters: events; timers: ns
  uint64_t base = 0;   // the monotone statistic when last (re)started
  bridge::Watermark watermark;
};

struct Session {
  std::vector<uint32_t> handles;
};

Slots<PvarHandle>& handles() {
  static auto* s = new Slots<PvarHandle>();
  return *s;
}
Slots<Session>& sessions() {
  static auto* s = new Slots<Session>();
  return *s;
}

const PvarDef& def(const PvarHandle& h) { return pvars()[size_t(h.index)]; }

bool is_watermark(const PvarDef& d) { return d.var_class == MPI_T_PVAR_CLASS_HIGHWATERMARK; }
// Fed by the bridge's subscriptions while running.
bool is_rma(const PvarDef& d) { return is_rma_measure(d.measure); }
bool needs_bridge(const PvarDef& d) {
  return !d.continuous && !is_rma(d) && d.measure != Measure::kEventsDropped &&
         d.measure != Measure::kPostedMatchAttempts && d.measure != Measure::kUnexpectedMatchAttempts;
}
// A continuous counter or timer (the compatibility aliases): runs, and keeps
// the bridge collecting, from allocation to free.
bool runs_while_allocated(const PvarDef& d) {
  return d.continuous && (d.var_class == MPI_T_PVAR_CLASS_COUNTER || d.var_class == MPI_T_PVAR_CLASS_TIMER);
}

// The monotone statistic behind an accumulating variable; false if its
// communicator is gone.
bool monotone(const PvarHandle& h, uint64_t* out) {
  const PvarDef& d = def(h);
  if (d.transport >= 0) {
    const bridge::TransportStats& t = bridge::transport(d.transport);
    switch (d.measure) {
      case Measure::kMessagesSent: *out = t.messages_sent; return true;
      case Measure::kBytesSent: *out = t.bytes_sent; return true;
      case Measure::kMessagesReceived: *out = t.messages_received; return true;
      case Measure::kBytesReceived: *out = t.bytes_received; return true;
      default: return false;
    }
  }
  if (d.measure == Measure::kEventsDropped) {
    *out = events_dropped_total();
    return true;
  }
  if (is_rma(d)) {
    const engine::introspect::RmaCounters& c = engine::introspect::rma_counters();
    switch (d.measure) {
      case Measure::kRmaOperations: *out = c.operations; break;
      case Measure::kRmaBytes: *out = c.bytes; break;
      case Measure::kRmaEpochs: *out = c.epochs; break;
      case Measure::kRmaNetwork: *out = c.network; break;
      default: *out = c.window_visits; break;
    }
    return true;
  }
  if (d.measure == Measure::kPostedMatchAttempts || d.measure == Measure::kUnexpectedMatchAttempts) {
    const bool posted = d.measure == Measure::kPostedMatchAttempts;
    if (d.bind != MPI_T_BIND_MPI_COMM) return bridge::total_match_attempts(posted, out);
    return posted ? bridge::posted_match_attempts(h.comm, out) : bridge::unexpected_match_attempts(h.comm, out);
  }
  const bridge::Stats* s = d.bind == MPI_T_BIND_MPI_COMM ? bridge::comm_stats(h.comm) : &bridge::total();
  if (!s) return false;
  switch (d.measure) {
    case Measure::kPostedMatches: *out = s->posted_matches; return true;
    case Measure::kUnexpectedMatches: *out = s->unexpected_matches; return true;
    case Measure::kPostedSearchTime: *out = s->posted_search_ns; return true;
    case Measure::kUnexpectedSearchTime: *out = s->unexpected_search_ns; return true;
    case Measure::kPostedFailedSearchTime: *out = s->posted_failed_search_ns; return true;
    case Measure::kPostedResidence: *out = s->posted_residence_ns; return true;
    case Measure::kUnexpectedResidence: *out = s->unexpected_residence_ns; return true;
    default: return false;
  }
}

// Current queue level for a watermark (from the queues themselves).
bool current_level(const PvarHandle& h, uint64_t* out) {
  return h.watermark.posted ? bridge::posted_length(h.comm, out) : bridge::unexpected_length(h.comm, out);
}

// Reads handle h into buf as unsigned long long (integers) or double
// (timers). MPI_T_ERR_INVALID_HANDLE when its communicator is gone.
int read_wide(PvarHandle& h, void* buf) {
  const PvarDef& d = def(h);
  if (d.bind == MPI_T_BIND_MPI_COMM && mpi_state() != 1) return MPI_T_ERR_NOT_ACCESSIBLE;
  auto* u = static_cast<unsigned long long*>(buf);
  uint64_t v = 0;
  bool ok = true;
  switch (d.measure) {
    case Measure::kPostedLength:
      ok = bridge::posted_length(h.comm, &v);
      *u = v;
      break;
    case Measure::kUnexpectedLength:
      ok = bridge::unexpected_length(h.comm, &v);
      *u = v;
      break;
    case Measure::kUnexpectedBytes:
      ok = bridge::unexpected_bytes(h.comm, &v);
      *u = v;
      break;
    case Measure::kUnexpectedBufferBytes:
      ok = bridge::unexpected_buffer_bytes(h.comm, &v);
      *u = v;
      break;
    case Measure::kPostedPerPeer: {
      if (bridge::comm_size(h.comm) != h.count) return MPI_T_ERR_INVALID_HANDLE;
      std::vector<uint64_t> tmp(size_t(h.count));
      ok = bridge::posted_per_peer(h.comm, tmp.data());
      std::copy(tmp.begin(), tmp.end(), u);
      break;
    }
    case Measure::kUnexpectedPerPeer: {
      if (bridge::comm_size(h.comm) != h.count) return MPI_T_ERR_INVALID_HANDLE;
      std::vector<uint64_t> tmp(size_t(h.count));
      ok = bridge::unexpected_per_peer(h.comm, tmp.data());
      std::copy(tmp.begin(), tmp.end(), u);
      break;
    }
    case Measure::kRingSize: *u = mpi_state() == 0 ? 0 : engine::introspect::settings().ring_bytes; break;
    case Measure::kMpiState: *static_cast<int*>(buf) = mpi_state(); break;
    case Measure::kPostedHwm:
    case Measure::kUnexpectedHwm: {
      v = h.watermark.value;
      uint64_t now = 0;
      if (h.running && current_level(h, &now)) v = std::max(v, now);
      if (d.bind == MPI_T_BIND_MPI_COMM && bridge::comm_size(h.comm) < 0) return MPI_T_ERR_INVALID_HANDLE;
      *u = v;
      break;
    }
    default: {  // counters, aggregates, timers
      uint64_t m = 0;
      if (!monotone(h, &m)) return MPI_T_ERR_INVALID_HANDLE;
      v = h.accum + (h.running ? m - h.base : 0);
      if (d.var_class == MPI_T_PVAR_CLASS_TIMER) *static_cast<double*>(buf) = double(v) * 1e-9;
      else *u = v;
      break;
    }
  }
  return ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

// Reads handle h into buf in the variable's datatype (MPI_UNSIGNED values
// saturate at UINT_MAX).
int read_value(PvarHandle& h, void* buf) {
  if (def(h).datatype != MPI_UNSIGNED) return read_wide(h, buf);
  std::vector<unsigned long long> wide(size_t(h.count));
  if (int rc = read_wide(h, wide.data())) return rc;
  auto* out = static_cast<unsigned*>(buf);
  for (size_t i = 0; i < wide.size(); ++i) out[i] = unsigned(std::min<unsigned long long>(wide[i], UINT_MAX));
  return MPI_SUCCESS;
}

// Sets the handle's value to v (its starting value for reset).
int set_value(PvarHandle& h, uint64_t v) {
  const PvarDef& d = def(h);
  if (d.readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  if (is_watermark(d)) {
    h.watermark.value = v;
    return MPI_SUCCESS;
  }
  uint64_t m = 0;
  if (!monotone(h, &m)) return MPI_T_ERR_INVALID_HANDLE;
  h.accum = v;
  h.base = m;
  return MPI_SUCCESS;
}

int reset(PvarHandle& h) {
  const PvarDef& d = def(h);
  if (d.readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  uint64_t start = 0;
  if (is_watermark(d) && !current_level(h, &start)) return MPI_T_ERR_INVALID_HANDLE;  // starts at the current level
  return set_value(h, start);
}

int start(PvarHandle& h) {
  const PvarDef& d = def(h);
  if (d.continuous) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  if (h.running) return MPI_SUCCESS;
  uint64_t m = 0;
  if (is_watermark(d)) {
    if (!current_level(h, &m)) return MPI_T_ERR_INVALID_HANDLE;
  } else if (!monotone(h, &m)) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  if (needs_bridge(d)) bridge::acquire();
  if (is_watermark(d)) {
    h.watermark.value = std::max(h.watermark.value, m);
    bridge::add_watermark(&h.watermark);
  } else {
    h.base = m;
  }
  h.running = true;
  return MPI_SUCCESS;
}

int stop(PvarHandle& h) {
  const PvarDef& d = def(h);
  if (d.continuous) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  if (!h.running) return MPI_SUCCESS;
  if (is_watermark(d)) {
    uint64_t now = 0;
    if (current_level(h, &now)) h.watermark.value = std::max(h.watermark.value, now);
    bridge::remove_watermark(&h.watermark);
  } else {
    uint64_t m = 0;
    if (monotone(h, &m)) h.accum += m - h.base;
  }
  if (needs_bridge(d)) bridge::release();
  h.running = false;
  return MPI_SUCCESS;
}

void free_handle(uint32_t i) {
  PvarHandle& h = handles().at(i).value;
  if (runs_while_allocated(def(h))) bridge::release();
  else if (h.running) stop(h);
  handles().release(i);
}

// The session and the handle a call names; MPI_T_PVAR_ALL_HANDLES gives a
// null *h where the call accepts it (`all_ok`), else MPI_T_ERR_INVALID_HANDLE.
int resolve(MPI_T_pvar_session session, MPI_T_pvar_handle handle, Slots<Session>::Slot** s, Slots<PvarHandle>::Slot** h,
            bool all_ok) {
  *s = sessions().find(session);
  if (!*s) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    *h = nullptr;
    return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
  }
  *h = handles().find(handle);
  if (!*h || (*h)->value.session != index_of(session)) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_SUCCESS;
}

// start/stop/reset of MPI_T_PVAR_ALL_HANDLES: `op` on every handle of the
// session that `skip` does not exclude; `failure` if any of them fails.
template <class Skip, class Op>
int for_all(Slots<Session>::Slot* s, Skip skip, Op op, int failure) {
  int rc = MPI_SUCCESS;
  for (uint32_t i : s->value.handles) {
    PvarHandle& one = handles().at(i).value;
    if (skip(one)) continue;
    if (op(one) != MPI_SUCCESS) rc = failure;
  }
  return rc;
}

}  // namespace
}  // namespace sonde::mpit

using namespace sonde::mpit;

extern "C" {

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  SONDE_T_ENTER();
  if (!session) return MPI_T_ERR_INVALID;
  if (sessions().size() >= 0x7fffffffu) return MPI_T_ERR_OUT_OF_SESSIONS;
  uint32_t i = sessions().allocate();
  *session = make<MPI_T_pvar_session>(sessions().at(i).generation, i);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  SONDE_T_ENTER();
  if (!session) return MPI_T_ERR_INVALID;
  auto* s = sessions().find(*session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  for (uint32_t h : s->value.handles) free_handle(h);
  sessions().release(index_of(*session));
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle, MPI_T_pvar_handle* handle,
                             int* count) {
  SONDE_T_ENTER();
  auto* s = sessions().find(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 || pvar_index >= int(pvars().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  const PvarDef& d = pvars()[size_t(pvar_index)];
  MPI_Comm comm = MPI_COMM_NULL;
  int n = 1;
  if (d.bind == MPI_T_BIND_MPI_COMM) {
    if (mpi_state() != 1) return MPI_T_ERR_NOT_ACCESSIBLE;  // no communicator exists outside MPI
    if (!obj_handle) return MPI_T_ERR_INVALID_HANDLE;
    comm = *static_cast<const MPI_Comm*>(obj_handle);
    int size = bridge::comm_size(comm);
    if (size < 0) return MPI_T_ERR_INVALID_HANDLE;
    if (d.measure == Measure::kPostedPerPeer || d.measure == Measure::kUnexpectedPerPeer) n = size;
  }
  uint32_t i = handles().allocate();
  PvarHandle& h = handles().at(i).value;
  h.index = pvar_index;
  h.session = index_of(session);
  h.comm = comm;
  h.count = n;
  h.watermark.comm = comm;
  h.watermark.posted = d.measure == Measure::kPostedHwm;
  h.running = d.continuous;                                   // continuous variables run from allocation on
  if (is_watermark(d)) current_level(h, &h.watermark.value);  // starting value: the current level
  if (runs_while_allocated(d)) {
    bridge::acquire();
    monotone(h, &h.base);  // counts from now
  }
  s->value.handles.push_back(i);
  *handle = make<MPI_T_pvar_handle>(handles().at(i).generation, i);
  *count = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  SONDE_T_ENTER();
  if (!handle) return MPI_T_ERR_INVALID;
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, *handle, &s, &h, false)) return rc;
  uint32_t i = index_of(*handle);
  auto& v = s->value.handles;
  v.erase(std::remove(v.begin(), v.end(), i), v.end());
  free_handle(i);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_handle_free)

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, true)) return rc;
  if (h) return start(h->value);
  // Continuous and already running variables are skipped.
  return for_all(
      s, [](PvarHandle& one) { return def(one).continuous || one.running; }, start, MPI_T_ERR_PVAR_NO_STARTSTOP);
}
SONDE_WEAK_ALIAS(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, true)) return rc;
  if (h) return stop(h->value);
  return for_all(
      s, [](PvarHandle& one) { return def(one).continuous || !one.running; }, stop, MPI_T_ERR_PVAR_NO_STARTSTOP);
}
SONDE_WEAK_ALIAS(T_pvar_stop)

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, false)) return rc;
  if (!buf) return MPI_T_ERR_INVALID;
  return read_value(h->value, buf);
}
SONDE_WEAK_ALIAS(T_pvar_read)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, false)) return rc;
  const PvarDef& d = def(h->value);
  if (d.readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_T_ERR_INVALID;
  uint64_t v;
  if (d.datatype == MPI_DOUBLE) {
    double x = *static_cast<const double*>(buf);
    if (!(x >= 0)) return MPI_T_ERR_INVALID;  // timers are non-negative (NaN too)
    v = uint64_t(x * 1e9);
  } else {
    v = *static_cast<const unsigned long long*>(buf);
  }
  return set_value(h->value, v);
}
SONDE_WEAK_ALIAS(T_pvar_write)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, true)) return rc;
  if (h) return reset(h->value);
  // Read-only variables are skipped.
  return for_all(
      s, [](PvarHandle& one) { return def(one).readonly; }, reset, MPI_T_ERR_PVAR_NO_WRITE);
}
SONDE_WEAK_ALIAS(T_pvar_reset)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  SONDE_T_ENTER();
  Slots<Session>::Slot* s;
  Slots<PvarHandle>::Slot* h;
  if (int rc = resolve(session, handle, &s, &h, false)) return rc;
  if (!def(h->value).atomic) return MPI_T_ERR_PVAR_NO_ATOMIC;
  if (!buf) return MPI_T_ERR_INVALID;
  // Atomic: the engine lock and mpit::mutex() are held, no event moves in between.
  if (int rc = read_value(h->value, buf)) return rc;
  return reset(h->value);
}
SONDE_WEAK_ALIAS(T_pvar_readreset)

}  // extern "C"
