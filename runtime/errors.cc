// Errors (errors.h).
#include "runtime/errors.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/engine.h"
#include "core/process.h"
#include "runtime/lifecycle.h"

namespace sonde::engine {

namespace {

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

struct UserCode {
  int error_class;
  std::string text;
};
std::map<int, UserCode>& user_codes() {
  static auto* m = new std::map<int, UserCode>;
  return *m;
}
int g_last_used = MPI_ERR_LASTCODE;

Errhandler* find_user_errhandler(int h) {
  Errhandler* e = engine().tables().errhandlers.lookup(h);
  return e && e->fn ? e : nullptr;
}

// A predefined class is any code with a predefined string (0..last MPI_T
// class); user classes are user codes that are their own class.
bool valid_class(int cls) {
  if (cls >= 0 && cls <= MPI_T_ERR_NOT_ACCESSIBLE) return predefined_error(cls);
  auto it = user_codes().find(cls);
  return it != user_codes().end() && it->second.error_class == cls;
}

}  // namespace

bool predefined_error(int code) { return code >= 0 && code < kNumErrorStrings; }

const char* error_string(int code) {
  if (predefined_error(code)) return kErrorStrings[code];
  if (const char* user = user_error_string(code)) return user;  // MPI_Add_error_string
  return "unknown error code";
}

void end_job(int code, const char* message) {
  std::fprintf(stderr, "%s\n", message);
  std::fflush(stderr);
  if (Wireup* w = job_wireup()) w->abort(code ? code : 1, message);
  std::_Exit(code ? code : 1);
}

int raise(Comm* comm, int code, const char* fn) {
  Engine& e = engine();
  int handler = MPI_ERRORS_ARE_FATAL;
  const bool up = init_state() == 1;
  if (up) handler = comm ? comm->errhandler : e.world()->errhandler;
  if (handler == MPI_ERRORS_RETURN) return code;
  if (up && call_user_errhandler(handler, comm, &code)) return code;
  const int state = process().world_model;
  char msg[512];
  std::snprintf(msg, sizeof msg, "sonde: rank %d: %s failed: %s%s", e.world_rank(), fn, error_string(code),
                state == 0   ? " (MPI is not initialized)"
                : state == 2 ? " (MPI is finalized)"
                             : "");
  end_job(code, msg);
}

bool call_user_errhandler(int handler, Comm* comm, int* code) {
  Errhandler* e = find_user_errhandler(handler);
  if (!e) return false;
  MPI_Comm h = comm ? comm->handle : MPI_COMM_WORLD;
  e->fn(&h, code);
  return true;
}

int add_error_class() {
  int code = ++g_last_used;
  user_codes()[code] = UserCode{code, ""};
  return code;
}

int add_error_code(int error_class) {
  if (!valid_class(error_class)) return -1;
  int code = ++g_last_used;
  user_codes()[code] = UserCode{error_class, ""};
  return code;
}

bool set_error_string(int code, const char* text) {
  auto it = user_codes().find(code);
  // Predefined codes keep their strings (MPI 4.1 9.5).
  if (it == user_codes().end() || !text) return false;
  it->second.text = text;
  return true;
}

bool remove_error_class(int error_class) {
  auto it = user_codes().find(error_class);
  if (it == user_codes().end() || it->second.error_class != error_class) return false;
  for (auto& [code, uc] : user_codes())
    if (code != error_class && uc.error_class == error_class) return false;
  user_codes().erase(it);
  return true;
}

bool remove_error_code(int code) {
  auto it = user_codes().find(code);
  if (it == user_codes().end() || it->second.error_class == code) return false;
  user_codes().erase(it);
  return true;
}

bool remove_error_string(int code) {
  auto it = user_codes().find(code);
  if (it == user_codes().end()) return false;
  it->second.text.clear();
  return true;
}

const char* user_error_string(int code) {
  auto it = user_codes().find(code);
  return it == user_codes().end() ? nullptr : it->second.text.c_str();
}

int user_error_class(int code) {
  auto it = user_codes().find(code);
  return it == user_codes().end() ? -1 : it->second.error_class;
}

int* last_used_code() { return &g_last_used; }

}  // namespace sonde::engine
