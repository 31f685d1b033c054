// The catalog: every control variable, performance variable, enumeration,
// event type and category, fixed at build time and valid before MPI_Init
// (indices never change during a run), plus the calls that describe them
// and MPI_T_init_thread / MPI_T_finalize.
#include <time.h>

#include <atomic>
#include <cstddef>

#include "base/weak_alias.h"
#include "core/introspect.h"
#include "core/process.h"
#include "mpit/state.h"
#include "peruse/events.h"

namespace sonde::mpit {

namespace {
std::atomic<int> g_refs{0};
}

std::recursive_mutex& mutex() {
  static auto* m = new std::recursive_mutex();  // never destroyed: callbacks may run at exit
  return *m;
}

bool initialized() { return g_refs.load(std::memory_order_acquire) > 0; }
int mpi_state() { return engine::init_state(); }

Guard::Guard() {
  if (engine::EngineLock::enabled()) {
    engine::EngineLock::lock();
    engine_locked_ = true;
  }
  mutex().lock();
}

Guard::~Guard() {
  mutex().unlock();
  if (engine_locked_) engine::EngineLock::unlock();
}

void copy_string(const std::string& s, char* buf, int* len) {
  if (!len) return;
  int n = *len;
  if (buf && n > 0) {
    size_t k = std::min(s.size(), size_t(n - 1));
    std::memcpy(buf, s.data(), k);
    buf[k] = '\0';
  }
  *len = int(s.size()) + 1;
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* const kTransportNames[kNumTransports] = {"self", "shm"};

// ---------------------------------------------------------------- enumerations
namespace {
struct EnumDef {
  const char* name;
  std::vector<std::pair<int, const char*>> items;
};
const std::vector<EnumDef>& enums() {
  static const std::vector<EnumDef> v = {
      {"sonde_bool", {{0, "false"}, {1, "true"}}},
      {"sonde_thread_level",
       {{MPI_THREAD_SINGLE, "MPI_THREAD_SINGLE"},
        {MPI_THREAD_FUNNELED, "MPI_THREAD_FUNNELED"},
        {MPI_THREAD_SERIALIZED, "MPI_THREAD_SERIALIZED"},
        {MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE"}}},
      {"sonde_shm_ring_bytes", {{4096, "4 KiB"}, {65536, "64 KiB"}}},
      {"peruse_operation", {{PERUSE_SEND, "PERUSE_SEND"}, {PERUSE_RECV, "PERUSE_RECV"}}},
      {"sonde_mpi_state", {{0, "not_initialized"}, {1, "initialized"}, {2, "finalized"}}},
  };
  return v;
}
}  // namespace

// ---------------------------------------------------------------- cvars
// Index order is the ABI of a run: append only. Scopes are documented in
// docs/mpit.md; writes are implemented in cvars.cc.
const std::vector<CvarDef>& cvars() {
  static const std::vector<CvarDef> v = {
      {"sonde_eager_limit",
       "Messages up to this many bytes are sent eagerly, larger ones by rendezvous (SONDE_EAGER_LIMIT). Read by "
       "the sender for every message: a write takes effect at the next send; ranks need not agree.",
       MPI_T_VERBOSITY_TUNER_BASIC, MPI_UNSIGNED_LONG_LONG, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_coop_threshold",
       "Rendezvous messages at least this large are copied by both sides at once (cooperative rendezvous); 0 "
       "turns it off (SONDE_COOP_THRESHOLD). Read by the receiver for every rendezvous it pulls.",
       MPI_T_VERBOSITY_TUNER_DETAIL, MPI_UNSIGNED_LONG_LONG, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_spin_before_yield",
       "Polls of an idle wait before it starts yielding the CPU (SONDE_SPIN; 2000, or 1 when the ranks on the "
       "host outnumber its CPUs). Read at every idle pass; values above 2147483647 act as 2147483647.",
       MPI_T_VERBOSITY_TUNER_DETAIL, MPI_UNSIGNED, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_shm_single_copy",
       "Whether the receiver of a rendezvous may pull the data in one copy (process_vm_readv) "
       "(SONDE_SHM_SINGLE_COPY). Read for every rendezvous: it can be turned off at any time, and back on only "
       "if it was on at MPI_Init (the transport prepares for it there).",
       MPI_T_VERBOSITY_TUNER_BASIC, MPI_INT, kEnumBool, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_shm_fast_boxes",
       "Whether this rank sends small shared-memory packets through the fast boxes (SONDE_SHM_FAST_BOXES). "
       "Fixed at MPI_Init: writable before it, MPI_T_ERR_CVAR_SET_NEVER after. Ranks need not agree.",
       MPI_T_VERBOSITY_TUNER_DETAIL, MPI_INT, kEnumBool, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_shm_ring_bytes",
       "Bytes of each shared-memory ring between two ranks. Fixed at MPI_Init: writable before it (every rank "
       "of the job must write the same value, or MPI_Init fails), MPI_T_ERR_CVAR_SET_NEVER after. Values: the "
       "enumeration sonde_shm_ring_bytes; others answer MPI_T_ERR_INVALID.",
       MPI_T_VERBOSITY_TUNER_ALL, MPI_INT, kEnumRingBytes, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_ALL_EQ, 1},
      {"sonde_transports",
       "The transports this rank uses, comma-separated (empty before MPI_Init). Chosen by the engine at "
       "MPI_Init from where the peers are: self for this rank, shm for ranks on this host.",
       MPI_T_VERBOSITY_USER_BASIC, MPI_CHAR, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_READONLY, 64},
      {"sonde_thread_level", "The thread level MPI_Init_thread provided (MPI_THREAD_SINGLE before MPI_Init).",
       MPI_T_VERBOSITY_USER_BASIC, MPI_INT, kEnumThreadLevel, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_READONLY, 1},
      {"sonde_peruse_compiled_in",
       "Whether this library was built with PERUSE (and so with MPI_T events and the queue statistics).",
       MPI_T_VERBOSITY_USER_DETAIL, MPI_INT, kEnumBool, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_CONSTANT, 1},
      {"sonde_mpit_event_buffer",
       "Event instances kept per MPI_T event registration whose only callback needs MPI_T_CB_REQUIRE_NONE "
       "(delivered at the next MPI_T call); beyond it instances are dropped and the dropped handler is told. "
       "Applies from the next instance buffered.",
       MPI_T_VERBOSITY_TUNER_DETAIL, MPI_UNSIGNED, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
      {"sonde_idle_sleep_ms",
       "Milliseconds an idle wait yields the CPU before it sleeps between polls instead (SONDE_IDLE_SLEEP_MS; "
       "0, the default: never sleeps). Read at every idle pass; values above 2147483647 act as 2147483647.",
       MPI_T_VERBOSITY_TUNER_DETAIL, MPI_UNSIGNED, -1, MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_LOCAL, 1},
  };
  return v;
}

// ---------------------------------------------------------------- events
const std::vector<EventDef>& events() {
  static const std::vector<EventDef> v = [] {
    std::vector<EventDef> e;
    for (int ev = 1; ev < peruse::kNumEvents; ++ev) {
      if (!peruse::event_supported(ev)) continue;
      std::string name = peruse::event_name(ev);
      e.push_back({name,
                   "PERUSE's " + name +
                       " on the bound communicator, raised at the same point (docs/peruse.md). Elements: "
                       "unique_id, peer, tag, count, datatype, operation, timestamp (ns of source 0).",
                   ev});
    }
    return e;
  }();
  return v;
}

// ---------------------------------------------------------------- categories
namespace {
int cvar_index(const char* name) {
  for (size_t i = 0; i < cvars().size(); ++i)
    if (std::strcmp(cvars()[i].name, name) == 0) return int(i);
  return -1;
}

std::vector<CategoryDef> build_categories() {
  enum {
    kRoot,
    kMatching,
    kMatchingComm,
    kMatchingProcess,
    kProtocols,
    kProgress,
    kTransports,
    kSelf,
    kShm,
    kPeruse,
    kRuntime,
    kCompat
  };
  std::vector<CategoryDef> c = {
      {"sonde", "Everything Sonde exposes through MPI_T.", {}, {}, {}, {}},
      {"sonde_matching", "Posted-receive and unexpected-message queues.", {}, {}, {}, {}},
      {"sonde_matching_comm", "Queue variables of one communicator (bound to MPI_T_BIND_MPI_COMM).", {}, {}, {}, {}},
      {"sonde_matching_process", "Queue variables summed over all communicators of the process.", {}, {}, {}, {}},
      {"sonde_protocols", "Eager, rendezvous and cooperative rendezvous; one-sided operations.", {}, {}, {}, {}},
      {"sonde_progress", "How waits poll, yield and sleep.", {}, {}, {}, {}},
      {"sonde_transports", "The transports that move packets.", {}, {}, {}, {}},
      {"sonde_transports_self", "Messages a rank sends to itself.", {}, {}, {}, {}},
      {"sonde_transports_shm", "Shared memory between the ranks of a host.", {}, {}, {}, {}},
      {"sonde_peruse", "PERUSE events as MPI_T events (same instrumentation points).", {}, {}, {}, {}},
      {"sonde_runtime", "The state of the library.", {}, {}, {}, {}},
      {"sonde_compat",
       "Queue variables under the names MPICH and Open MPI give them (each description names the implementation "
       "and the Sonde variable it mirrors).",
       {},
       {},
       {},
       {}},
  };
  c[kRoot].categories = {kMatching, kProtocols, kProgress, kTransports, kPeruse, kRuntime, kCompat};
  c[kMatching].categories = {kMatchingComm, kMatchingProcess};
  c[kTransports].categories = {kSelf, kShm};
  for (size_t i = 0; i < pvars().size(); ++i) {
    const PvarDef& p = pvars()[i];
    int cat = p.bind == MPI_T_BIND_MPI_COMM ? kMatchingComm : kMatchingProcess;
    if (p.transport >= 0) cat = p.transport == 0 ? kSelf : kShm;
    if (p.measure == Measure::kRingSize) cat = kShm;
    if (p.measure == Measure::kMpiState) cat = kRuntime;
    if (p.measure == Measure::kEventsDropped) cat = kPeruse;
    if (is_rma_measure(p.measure)) cat = kProtocols;
    if (p.mirrors) cat = kCompat;
    c[cat].pvars.push_back(int(i));
  }
  c[kProtocols].cvars = {cvar_index("sonde_eager_limit"), cvar_index("sonde_coop_threshold")};
  c[kProgress].cvars = {cvar_index("sonde_spin_before_yield"), cvar_index("sonde_idle_sleep_ms")};
  c[kShm].cvars = {cvar_index("sonde_shm_single_copy"), cvar_index("sonde_shm_fast_boxes"),
                   cvar_index("sonde_shm_ring_bytes")};
  c[kTransports].cvars = {cvar_index("sonde_transports")};
  c[kPeruse].cvars = {cvar_index("sonde_peruse_compiled_in"), cvar_index("sonde_mpit_event_buffer")};
  c[kRuntime].cvars = {cvar_index("sonde_thread_level")};
  for (size_t i = 0; i < events().size(); ++i) c[kPeruse].events.push_back(int(i));
  return c;
}
}  // namespace

const std::vector<CategoryDef>& categories() {
  static const std::vector<CategoryDef> v = build_categories();
  return v;
}

}  // namespace sonde::mpit

// ---------------------------------------------------------------- the C API

using namespace sonde::mpit;

namespace {
// MPI_T_enum values: index + 1.
int enum_of(MPI_T_enum e) {
  uintptr_t v = reinterpret_cast<uintptr_t>(e);
  return v >= 1 && v <= uintptr_t(kNumEnums) ? int(v - 1) : -1;
}
MPI_T_enum enum_handle(int i) { return i < 0 ? MPI_T_ENUM_NULL : reinterpret_cast<MPI_T_enum>(uintptr_t(i + 1)); }

template <class T>
void put(T* out, T value) {
  if (out) *out = value;
}

// category_get_{cvars,pvars,events,categories}: up to len entries.
int copy_indices(int cat_index, int len, int indices[], std::vector<int> CategoryDef::*member) {
  if (cat_index < 0 || cat_index >= int(categories().size())) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
  const std::vector<int>& v = categories()[size_t(cat_index)].*member;
  for (int i = 0; i < len && i < int(v.size()); ++i) indices[i] = v[size_t(i)];
  return MPI_SUCCESS;
}
}  // namespace

extern "C" {

int PMPI_T_init_thread(int required, int* provided) {
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) return MPI_T_ERR_INVALID;
  {
    std::lock_guard<std::recursive_mutex> g(mutex());
    sonde::engine::introspect::load_settings();  // cvars read the environment's values before MPI_Init
    g_refs.fetch_add(1, std::memory_order_acq_rel);
  }
  // The interface's own state is behind one mutex: any thread may call it.
  // Comm-bound reads from a thread other than MPI's need MPI_THREAD_MULTIPLE
  // in MPI_Init_thread (the engine lock is only taken then).
  if (provided) *provided = required;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_init_thread)

int PMPI_T_finalize(void) {
  if (!initialized()) return MPI_T_ERR_NOT_INITIALIZED;
  deliver_deferred_events();
  std::lock_guard<std::recursive_mutex> g(mutex());
  if (g_refs.load() <= 0) return MPI_T_ERR_NOT_INITIALIZED;
  g_refs.fetch_sub(1, std::memory_order_acq_rel);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_finalize)

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  SONDE_T_ENTER();
  int e = enum_of(enumtype);
  if (e < 0) return MPI_T_ERR_INVALID_HANDLE;
  const EnumDef& d = enums()[size_t(e)];
  put(num, int(d.items.size()));
  copy_string(d.name, name, name_len);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
  SONDE_T_ENTER();
  int e = enum_of(enumtype);
  if (e < 0) return MPI_T_ERR_INVALID_HANDLE;
  const EnumDef& d = enums()[size_t(e)];
  if (index < 0 || index >= int(d.items.size())) return MPI_T_ERR_INVALID_ITEM;
  put(value, d.items[size_t(index)].first);
  copy_string(d.items[size_t(index)].second, name, name_len);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_enum_get_item)

int PMPI_T_cvar_get_num(int* num_cvar) {
  SONDE_T_ENTER();
  if (!num_cvar) return MPI_T_ERR_INVALID;
  *num_cvar = int(cvars().size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope) {
  SONDE_T_ENTER();
  if (cvar_index < 0 || cvar_index >= int(cvars().size())) return MPI_T_ERR_INVALID_INDEX;
  const CvarDef& c = cvars()[size_t(cvar_index)];
  copy_string(c.name, name, name_len);
  put(verbosity, c.verbosity);
  put(datatype, c.datatype);
  put(enumtype, enum_handle(c.enumtype));
  copy_string(c.desc, desc, desc_len);
  put(bind, c.bind);
  put(scope, c.scope);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  SONDE_T_ENTER();
  if (!name || !cvar_index) return MPI_T_ERR_INVALID;
  for (size_t i = 0; i < cvars().size(); ++i) {
    if (std::strcmp(cvars()[i].name, name) == 0) {
      *cvar_index = int(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
SONDE_WEAK_ALIAS(T_cvar_get_index)

int PMPI_T_pvar_get_num(int* num_pvar) {
  SONDE_T_ENTER();
  if (!num_pvar) return MPI_T_ERR_INVALID;
  *num_pvar = int(pvars().size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind,
                         int* readonly, int* continuous, int* atomic) {
  SONDE_T_ENTER();
  if (pvar_index < 0 || pvar_index >= int(pvars().size())) return MPI_T_ERR_INVALID_INDEX;
  const PvarDef& p = pvars()[size_t(pvar_index)];
  copy_string(p.name, name, name_len);
  put(verbosity, p.verbosity);
  put(var_class, p.var_class);
  put(datatype, p.datatype);
  put(enumtype, enum_handle(p.enumtype));
  copy_string(p.desc, desc, desc_len);
  put(bind, p.bind);
  put(readonly, int(p.readonly));
  put(continuous, int(p.continuous));
  put(atomic, int(p.atomic));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  SONDE_T_ENTER();
  if (!name || !pvar_index) return MPI_T_ERR_INVALID;
  if (var_class < MPI_T_PVAR_CLASS_STATE || var_class > MPI_T_PVAR_CLASS_GENERIC) return MPI_T_ERR_INVALID;
  for (size_t i = 0; i < pvars().size(); ++i) {
    if (pvars()[i].var_class == var_class && std::strcmp(pvars()[i].name, name) == 0) {
      *pvar_index = int(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
SONDE_WEAK_ALIAS(T_pvar_get_index)

int PMPI_T_category_get_num(int* num_cat) {
  SONDE_T_ENTER();
  if (!num_cat) return MPI_T_ERR_INVALID;
  *num_cat = int(categories().size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
  SONDE_T_ENTER();
  if (cat_index < 0 || cat_index >= int(categories().size())) return MPI_T_ERR_INVALID_INDEX;
  const CategoryDef& c = categories()[size_t(cat_index)];
  copy_string(c.name, name, name_len);
  copy_string(c.desc, desc, desc_len);
  put(num_cvars, int(c.cvars.size()));
  put(num_pvars, int(c.pvars.size()));
  put(num_categories, int(c.categories.size()));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_category_get_info)

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  SONDE_T_ENTER();
  if (!name || !cat_index) return MPI_T_ERR_INVALID;
  for (size_t i = 0; i < categories().size(); ++i) {
    if (std::strcmp(categories()[i].name, name) == 0) {
      *cat_index = int(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
SONDE_WEAK_ALIAS(T_category_get_index)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  SONDE_T_ENTER();
  return copy_indices(cat_index, len, indices, &CategoryDef::cvars);
}
SONDE_WEAK_ALIAS(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  SONDE_T_ENTER();
  return copy_indices(cat_index, len, indices, &CategoryDef::pvars);
}
SONDE_WEAK_ALIAS(T_category_get_pvars)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  SONDE_T_ENTER();
  return copy_indices(cat_index, len, indices, &CategoryDef::categories);
}
SONDE_WEAK_ALIAS(T_category_get_categories)

int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  SONDE_T_ENTER();
  if (cat_index < 0 || cat_index >= int(categories().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = int(categories()[size_t(cat_index)].events.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_category_get_num_events)

int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
  SONDE_T_ENTER();
  return copy_indices(cat_index, len, indices, &CategoryDef::events);
}
SONDE_WEAK_ALIAS(T_category_get_events)

int PMPI_T_category_changed(int* update_number) {
  SONDE_T_ENTER();
  if (!update_number) return MPI_T_ERR_INVALID;
  *update_number = 0;  // the catalog is fixed when the library is built
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_category_changed)

int PMPI_T_event_get_num(int* num_events) {
  SONDE_T_ENTER();
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = int(events().size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_get_num)

int PMPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity, MPI_Datatype array_of_datatypes[],
                          MPI_Aint array_of_displacements[], int* num_elements, MPI_T_enum* enumtype, MPI_Info* info,
                          char* desc, int* desc_len, int* bind) {
  SONDE_T_ENTER();
  if (event_index < 0 || event_index >= int(events().size())) return MPI_T_ERR_INVALID_INDEX;
  const EventDef& e = events()[size_t(event_index)];
  static const MPI_Datatype kTypes[kEventElements] = {
      MPI_UNSIGNED_LONG_LONG, MPI_INT, MPI_INT, MPI_COUNT, MPI_INT, MPI_INT, MPI_COUNT};
  static const MPI_Aint kDispl[kEventElements] = {offsetof(EventRecord, unique_id), offsetof(EventRecord, peer),
                                                  offsetof(EventRecord, tag),       offsetof(EventRecord, count),
                                                  offsetof(EventRecord, datatype),  offsetof(EventRecord, operation),
                                                  offsetof(EventRecord, timestamp)};
  // num_elements is IN/OUT: the arrays' capacity in, the element count out.
  if (num_elements) {
    int cap = *num_elements;
    if ((array_of_datatypes || array_of_displacements) && cap < 0) return MPI_T_ERR_INVALID;
    for (int i = 0; i < kEventElements && i < cap; ++i) {
      if (array_of_datatypes) array_of_datatypes[i] = kTypes[i];
      if (array_of_displacements) array_of_displacements[i] = kDispl[i];
    }
    *num_elements = kEventElements;
  }
  copy_string(e.name, name, name_len);
  put(verbosity, int(MPI_T_VERBOSITY_TUNER_DETAIL));
  put(enumtype, enum_handle(kEnumOperation));  // the operation element
  put(info, int(MPI_INFO_NULL));
  copy_string(e.desc, desc, desc_len);
  put(bind, int(MPI_T_BIND_MPI_COMM));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(T_event_get_info)

int PMPI_T_event_get_index(const char* name, int* event_index) {
  SONDE_T_ENTER();
  if (!name || !event_index) return MPI_T_ERR_INVALID;
  for (size_t i = 0; i < events().size(); ++i) {
    if (events()[i].name == name) {
      *event_index = int(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
SONDE_WEAK_ALIAS(T_event_get_index)

}  // extern "C"
