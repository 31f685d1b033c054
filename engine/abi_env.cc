// C ABI: environment, errors, handle lookup, the engine lock.
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "engine/abi.h"
#include "engine/attributes.h"
#include "engine/engine.h"
#include "engine/errors.h"
#include "engine/p2p.h"
#include "engine/session.h"
#include "peruse/registry.h"

namespace sonde::engine {

namespace {
std::recursive_mutex g_lock;
bool g_lock_enabled = false;
int g_state = 0;
double g_time_origin = 0;
pthread_t g_main_thread;

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

const char* const kErrorStrings[] = {
    "MPI_SUCCESS: no error",
    "MPI_ERR_BUFFER: invalid buffer pointer",
    "MPI_ERR_COUNT: invalid count argument",
    "MPI_ERR_TYPE: invalid datatype",
    "MPI_ERR_TAG: invalid tag",
    "MPI_ERR_COMM: invalid communicator",
    "MPI_ERR_RANK: invalid rank",
    "MPI_ERR_ROOT: invalid root",
    "MPI_ERR_GROUP: invalid group",
    "MPI_ERR_OP: invalid reduce operation",
    "MPI_ERR_TOPOLOGY: invalid topology",
    "MPI_ERR_DIMS: invalid dimension argument",
    "MPI_ERR_ARG: invalid argument of some other kind",
    "MPI_ERR_UNKNOWN: unknown error",
    "MPI_ERR_TRUNCATE: message truncated",
    "MPI_ERR_OTHER: known error not in this list",
    "MPI_ERR_INTERN: internal error",
    "MPI_ERR_IN_STATUS: error code is in status",
    "MPI_ERR_PENDING: pending request",
    "MPI_ERR_REQUEST: invalid request",
    "MPI_ERR_ACCESS: permission denied",
    "MPI_ERR_AMODE: invalid amode",
    "MPI_ERR_BAD_FILE: invalid file name",
    "MPI_ERR_CONVERSION: data conversion error",
    "MPI_ERR_DUP_DATAREP: data representation already defined",
    "MPI_ERR_FILE_EXISTS: file exists",
    "MPI_ERR_FILE_IN_USE: file in use",
    "MPI_ERR_FILE: invalid file handle",
    "MPI_ERR_INFO: invalid info object",
    "MPI_ERR_INFO_KEY: info key too long",
    "MPI_ERR_INFO_VALUE: info value too long",
    "MPI_ERR_INFO_NOKEY: no such info key",
    "MPI_ERR_IO: I/O error",
    "MPI_ERR_NAME: invalid service name",
    "MPI_ERR_NO_MEM: out of memory",
    "MPI_ERR_NOT_SAME: collective arguments differ between processes",
    "MPI_ERR_NO_SPACE: not enough space",
    "MPI_ERR_NO_SUCH_FILE: no such file",
    "MPI_ERR_PORT: invalid port name",
    "MPI_ERR_QUOTA: quota exceeded",
    "MPI_ERR_READ_ONLY: read-only file or file system",
    "MPI_ERR_SERVICE: invalid service",
    "MPI_ERR_SPAWN: could not spawn processes",
    "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
    "MPI_ERR_WIN: invalid window",
    "MPI_ERR_BASE: invalid base address",
    "MPI_ERR_LOCKTYPE: invalid lock type",
    "MPI_ERR_KEYVAL: invalid attribute key",
    "MPI_ERR_RMA_CONFLICT: conflicting RMA accesses",
    "MPI_ERR_RMA_SYNC: wrong RMA synchronization",
    "MPI_ERR_SIZE: invalid size",
    "MPI_ERR_DISP: invalid displacement",
    "MPI_ERR_ASSERT: invalid assert",
    "MPI_ERR_RMA_RANGE: RMA target out of range",
    "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    "MPI_ERR_RMA_SHARED: memory cannot be shared",
    "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    "MPI_ERR_SESSION: invalid session",
    "MPI_ERR_PROC_ABORTED: a peer process aborted",
    "MPI_ERR_VALUE_TOO_LARGE: value too large for the output argument",
    "MPI_ERR_ERRHANDLER: invalid error handler",
    "MPI_T_ERR_MEMORY: out of memory",
    "MPI_T_ERR_NOT_INITIALIZED: MPI_T not initialized",
    "MPI_T_ERR_CANNOT_INIT: MPI_T cannot be initialized",
    "MPI_T_ERR_INVALID_INDEX: index out of range",
    "MPI_T_ERR_INVALID_ITEM: item index out of range",
    "MPI_T_ERR_INVALID_HANDLE: invalid handle",
    "MPI_T_ERR_OUT_OF_HANDLES: no more handles",
    "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions",
    "MPI_T_ERR_INVALID_SESSION: invalid session",
    "MPI_T_ERR_CVAR_SET_NOT_NOW: control variable cannot be set now",
    "MPI_T_ERR_CVAR_SET_NEVER: control variable can never be set",
    "MPI_T_ERR_PVAR_NO_STARTSTOP: performance variable cannot be started or stopped",
    "MPI_T_ERR_PVAR_NO_WRITE: performance variable cannot be written",
    "MPI_T_ERR_PVAR_NO_ATOMIC: performance variable cannot be read and reset atomically",
    "MPI_T_ERR_INVALID_NAME: no variable of that name",
    "MPI_T_ERR_INVALID: invalid use of the tool interface",
    "MPI_T_ERR_NOT_SUPPORTED: not supported",
    "MPI_T_ERR_NOT_ACCESSIBLE: not accessible",
};
constexpr int kNumErrorStrings = int(sizeof(kErrorStrings) / sizeof(kErrorStrings[0]));

const char* error_string(int code) {
  if (code >= 0 && code < kNumErrorStrings) return kErrorStrings[code];
  if (const char* user = user_error_string(code)) return user;  // MPI_Add_error_string
  return "unknown error code";
}

[[noreturn]] void end_job(int code, const char* message) {
  std::fprintf(stderr, "%s\n", message);
  std::fflush(stderr);
  Engine& e = engine();
  if (e.wireup) e.wireup->abort(code ? code : 1, message);
  std::_Exit(code ? code : 1);
}
}  // namespace

void EngineLock::lock() { g_lock.lock(); }
void EngineLock::unlock() { g_lock.unlock(); }
bool EngineLock::enabled() { return g_lock_enabled; }

// ---- MPI 4.0 sessions (helper `conform`, engine/session.h) ----
// The engine runs while the World model is initialized or a session is
// open: g_state says where the World model is, these where the engine is.
namespace {
bool g_engine_up = false;
int g_sessions = 0;
}  // namespace

int init_state() { return g_state == 1 || (g_engine_up && g_sessions > 0) ? 1 : g_state; }

int raise(Comm* comm, int code, const char* fn) {
  Engine& e = engine();
  int handler = MPI_ERRORS_ARE_FATAL;
  const bool up = init_state() == 1;
  if (up) handler = comm ? comm->errhandler : e.world()->errhandler;
  if (handler == MPI_ERRORS_RETURN) return code;
  if (up && call_user_errhandler(handler, comm, &code)) return code;  // user handler (errors.h)
  char msg[512];
  std::snprintf(msg, sizeof msg, "sonde: rank %d: %s failed: %s%s", e.world_rank, fn, error_string(code),
                g_state == 0   ? " (MPI is not initialized)"
                : g_state == 2 ? " (MPI is finalized)"
                               : "");
  end_job(code, msg);
}

Comm* find_comm(MPI_Comm h) {
  Comm* c = engine().comms.lookup(h);
  return c && c->live ? c : nullptr;
}

double wtime() { return now() - g_time_origin; }

}  // namespace sonde::engine

using namespace sonde::engine;

namespace {
void install_peruse_hooks() {
  sonde::peruse::EngineHooks hooks;
  hooks.mpi_state = [] { return init_state(); };
  hooks.find_comm = [](MPI_Comm h) -> sonde::peruse::CommEvents* {
    Comm* c = find_comm(h);
    return c ? &c->peruse : nullptr;
  };
  hooks.comm_name = [](MPI_Comm h) -> std::string {
    Comm* c = engine().comms.lookup(h);
    if (c && !c->name.empty()) return c->name;
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(h));
    return buf;
  };
  hooks.fatal = [](const char* message, int code) { end_job(code ? code : 1, message); };
  hooks.lock_engine = [] {
    if (EngineLock::enabled()) EngineLock::lock();
  };
  hooks.unlock_engine = [] {
    if (EngineLock::enabled()) EngineLock::unlock();
  };
  sonde::peruse::install_hooks(hooks);
  sonde::peruse::set_environment(engine().settings.set_from_environment);
}

// Starts the engine unless a session (or MPI_Init) already did.
void start_engine(int required, const char* fn) {
  if (g_engine_up) return;
  g_time_origin = now();
  g_main_thread = pthread_self();
  int rc = engine().init(required);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "sonde: %s failed\n", fn);
    std::_Exit(1);
  }
  g_lock_enabled = engine().thread_level == MPI_THREAD_MULTIPLE;
  install_peruse_hooks();
  g_engine_up = true;
}

void stop_engine_at_exit() {
  // Sessions only (or sessions outliving MPI_Finalize): the engine's own
  // finalize, so the job ends as cleanly as after MPI_Finalize.
  if (g_engine_up && g_state != 1) {
    engine().finalize();
    g_engine_up = false;
  }
}

int do_init(int required, int* provided) {
  if (g_state != 0) return raise(nullptr, MPI_ERR_OTHER, "MPI_Init");
  start_engine(required, "MPI_Init");
  if (provided) *provided = engine().thread_level;
  g_state = 1;
  return MPI_SUCCESS;
}
}  // namespace

namespace sonde::engine {

int session_engine_acquire(int required, int* provided) {
  // Once torn down (MPI_Finalize with no session open) the engine does not
  // start again.
  if (!g_engine_up && g_state == 2) return MPI_ERR_OTHER;
  if (!g_engine_up) {
    start_engine(required, "MPI_Session_init");
    static bool registered = false;
    if (!registered) std::atexit(stop_engine_at_exit);
    registered = true;
  }
  ++g_sessions;
  *provided = engine().thread_level;
  return MPI_SUCCESS;
}

int session_engine_release() {
  --g_sessions;
  // MPI_Finalize ran while this session was open and left the engine to it.
  if (g_sessions == 0 && g_state == 2 && g_engine_up) {
    g_engine_up = false;
    return engine().finalize();
  }
  return MPI_SUCCESS;
}

}  // namespace sonde::engine

extern "C" {

int PMPI_Init(int* argc, char*** argv) { return do_init(MPI_THREAD_SINGLE, nullptr); }
SONDE_WEAK_ALIAS(Init)

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return do_init(required, provided);
}
SONDE_WEAK_ALIAS(Init_thread)

int PMPI_Finalize(void) {
  SONDE_ENTER("MPI_Finalize");
  if (g_state != 1) return raise(nullptr, MPI_ERR_OTHER, fn);  // only sessions are open
  // Attribute delete callbacks, MPI_COMM_SELF's first (MPI 4.1 11.2.3).
  int ra = attr::finalize_comm_attributes();
  // With sessions open the engine stays up for them (helper `conform`):
  // the last MPI_Session_finalize tears it down.
  int rc = MPI_SUCCESS;
  if (g_sessions == 0) {
    rc = engine().finalize();
    g_engine_up = false;
  }
  if (rc == MPI_SUCCESS) rc = ra;
  g_state = 2;
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise(nullptr, rc, fn);
}
SONDE_WEAK_ALIAS(Finalize)

int PMPI_Initialized(int* flag) {
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Initialized");
  *flag = g_state >= 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Initialized)

int PMPI_Finalized(int* flag) {
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Finalized");
  *flag = g_state == 2;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Finalized)

int PMPI_Query_thread(int* provided) {
  SONDE_ENTER("MPI_Query_thread");
  if (!provided) return raise(nullptr, MPI_ERR_ARG, fn);
  *provided = engine().thread_level;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Query_thread)

int PMPI_Is_thread_main(int* flag) {
  SONDE_ENTER("MPI_Is_thread_main");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, fn);
  *flag = pthread_equal(pthread_self(), g_main_thread) != 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Is_thread_main)

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  char msg[256];
  std::snprintf(msg, sizeof msg, "sonde: rank %d called MPI_Abort with error code %d", engine().world_rank,
                errorcode);
  end_job(errorcode, msg);
}
SONDE_WEAK_ALIAS(Abort)

double PMPI_Wtime(void) { return wtime(); }
SONDE_WEAK_ALIAS(Wtime)

double PMPI_Wtick(void) {
  timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
SONDE_WEAK_ALIAS(Wtick)

int PMPI_Get_version(int* version, int* subversion) {
  if (!version || !subversion) return raise(nullptr, MPI_ERR_ARG, "MPI_Get_version");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_version)

int PMPI_Get_library_version(char* version, int* resultlen) {
  if (!version || !resultlen) return raise(nullptr, MPI_ERR_ARG, "MPI_Get_library_version");
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                        "Sonde %s (MPI %d.%d; PERUSE 2.0 instrumented engine)", SONDE_VERSION_STRING, MPI_VERSION,
                        MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_library_version)

int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (!name || !resultlen) return raise(nullptr, MPI_ERR_ARG, "MPI_Get_processor_name");
  std::string host = engine().processor_name;
  if (host.empty()) {
    utsname u;
    uname(&u);
    host = u.nodename;
  }
  int n = std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host.c_str());
  *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_processor_name)

int PMPI_Pcontrol(const int level, ...) { return MPI_SUCCESS; }
SONDE_WEAK_ALIAS(Pcontrol)

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (!string || !resultlen) return raise(nullptr, MPI_ERR_ARG, "MPI_Error_string");
  int n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", error_string(errorcode));
  *resultlen = n;
  bool known = (errorcode >= 0 && errorcode < kNumErrorStrings) || user_error_class(errorcode) >= 0;
  return known ? MPI_SUCCESS : raise(nullptr, MPI_ERR_ARG, "MPI_Error_string");
}
SONDE_WEAK_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass && user_error_class(errorcode) >= 0) {  // MPI_Add_error_code
    *errorclass = user_error_class(errorcode);
    return MPI_SUCCESS;
  }
  if (!errorclass || errorcode < 0 || errorcode >= kNumErrorStrings)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Error_class");
  *errorclass = errorcode;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Error_class)

}  // extern "C"
