// C ABI: error handlers, user error classes/codes/strings, MPI_Alloc_mem,
// status setters and generalized requests (MPI 4.1 sections 9.3-9.5, 9.2,
// 13.2-13.3).
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>

#include "engine/abi.h"
#include "engine/engine.h"
#include "engine/errors.h"
#include "engine/p2p.h"

namespace sonde::engine {

namespace {

struct UserCode {
  int error_class;
  std::string text;
};
std::map<int, UserCode>& user_codes() {
  static auto* m = new std::map<int, UserCode>;
  return *m;
}
int g_last_used = MPI_ERR_LASTCODE;

struct Greq {
  MPI_Grequest_query_function* query;
  MPI_Grequest_free_function* free;
  MPI_Grequest_cancel_function* cancel;
  void* extra;
};
std::unordered_map<Request*, Greq>& greqs() {
  static auto* m = new std::unordered_map<Request*, Greq>;
  return *m;
}

// A predefined class is any code with a predefined string (0..last MPI_T
// class); user classes are user codes that are their own class.
bool valid_class(int cls) {
  char buf[MPI_MAX_ERROR_STRING];
  int len;
  if (cls >= 0 && cls <= MPI_T_ERR_NOT_ACCESSIBLE) return PMPI_Error_string(cls, buf, &len) == MPI_SUCCESS;
  auto it = user_codes().find(cls);
  return it != user_codes().end() && it->second.error_class == cls;
}

Errhandler* find_user_errhandler(int h) {
  Errhandler* e = engine().errhandlers.lookup(h);
  return e && e->fn ? e : nullptr;
}

}  // namespace

bool call_user_errhandler(int handler, Comm* comm, int* code) {
  Errhandler* e = find_user_errhandler(handler);
  if (!e) return false;
  MPI_Comm h = comm ? comm->handle : MPI_COMM_WORLD;
  e->fn(&h, code);
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

int query_generalized(Request* r, MPI_Status* status) {
  auto it = greqs().find(r);
  if (it == greqs().end()) return MPI_ERR_REQUEST;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE || !status ? &local : status;
  // Defaults the query function may leave alone.
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  st->MPI_ERROR = MPI_SUCCESS;
  st->sonde_cancelled = 0;
  st->sonde_count = 0;
  return it->second.query ? it->second.query(it->second.extra, st) : MPI_SUCCESS;
}

namespace {
// free_fn, then forget the request (the caller releases it).
int run_free(Request* r) {
  auto it = greqs().find(r);
  if (it == greqs().end()) return MPI_SUCCESS;
  Greq g = it->second;
  greqs().erase(it);
  return g.free ? g.free(g.extra) : MPI_SUCCESS;
}
}  // namespace

int retire_generalized(MPI_Request* handle, Request* r, MPI_Status* status) {
  int rc = query_generalized(r, status);
  int rf = run_free(r);
  engine().release(r);
  *handle = MPI_REQUEST_NULL;
  return rc ? rc : rf;
}

int free_generalized(Request* r) {
  if (!r->complete) {
    r->user_freed = true;  // free_fn runs at MPI_Grequest_complete
    return MPI_SUCCESS;
  }
  int rc = run_free(r);
  engine().release(r);
  return rc;
}

int cancel_generalized(Request* r) {
  auto it = greqs().find(r);
  if (it == greqs().end() || !it->second.cancel) return MPI_SUCCESS;
  return it->second.cancel(it->second.extra, r->complete ? 1 : 0);
}

}  // namespace sonde::engine

using namespace sonde::engine;

namespace {

int create_errhandler(MPI_Comm_errhandler_function* f, MPI_Errhandler* out) {
  Errhandler* e = nullptr;
  int h = engine().errhandlers.allocate(&e);
  if (!h) return MPI_ERR_INTERN;
  e->live = true;
  e->fn = f;
  e->user_refs = 1;
  *out = h;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Comm_create_errhandler");
  if (!function || !errhandler) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, create_errhandler(function, errhandler), fn);
}
SONDE_WEAK_ALIAS(Comm_create_errhandler)

int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Errhandler_create");
  if (!function || !errhandler) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, create_errhandler(function, errhandler), fn);
}
SONDE_WEAK_ALIAS(Errhandler_create)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
SONDE_WEAK_ALIAS(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
SONDE_WEAK_ALIAS(Errhandler_get)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  SONDE_ENTER("MPI_Comm_call_errhandler");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  int code = errorcode;
  if (call_user_errhandler(c->errhandler, c, &code)) return MPI_SUCCESS;
  // MPI_ERRORS_RETURN hands the code back (as MPICH does); the fatal and
  // abort handlers end the job naming the code.
  return raise(c, errorcode, fn);
}
SONDE_WEAK_ALIAS(Comm_call_errhandler)

int PMPI_Add_error_class(int* errorclass) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_class");
  if (!errorclass) return raise(nullptr, MPI_ERR_ARG, fn);
  int code = ++g_last_used;
  user_codes()[code] = UserCode{code, ""};
  *errorclass = code;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_code");
  if (!errorcode || !valid_class(errorclass)) return raise(nullptr, MPI_ERR_ARG, fn);
  int code = ++g_last_used;
  user_codes()[code] = UserCode{errorclass, ""};
  *errorcode = code;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char* string) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_string");
  auto it = user_codes().find(errorcode);
  // Predefined codes keep their strings (MPI 4.1 9.5).
  if (it == user_codes().end() || !string) return raise(nullptr, MPI_ERR_ARG, fn);
  if (strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING) return raise(nullptr, MPI_ERR_ARG, fn);
  it->second.text = string;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_string)

// MPI 4.1 9.5: the reverse of the Add_ calls. A class goes only when no
// code of it is left; predefined classes, codes and strings cannot go. All
// six calls may be made at any time (MPI 4.1 12.4.1).
int PMPI_Remove_error_class(int errorclass) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_class");
  auto it = user_codes().find(errorclass);
  if (it == user_codes().end() || it->second.error_class != errorclass) return raise(nullptr, MPI_ERR_ARG, fn);
  for (auto& [code, uc] : user_codes())
    if (code != errorclass && uc.error_class == errorclass) return raise(nullptr, MPI_ERR_ARG, fn);
  user_codes().erase(it);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Remove_error_class)

int PMPI_Remove_error_code(int errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_code");
  auto it = user_codes().find(errorcode);
  if (it == user_codes().end() || it->second.error_class == errorcode) return raise(nullptr, MPI_ERR_ARG, fn);
  user_codes().erase(it);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Remove_error_code)

int PMPI_Remove_error_string(int errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_string");
  auto it = user_codes().find(errorcode);
  if (it == user_codes().end()) return raise(nullptr, MPI_ERR_ARG, fn);
  it->second.text.clear();
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Remove_error_string)

// MPICH 4.0's names (MPIX_Delete_error_*) of the three calls above, which
// MPI 4.1 standardized as MPI_Remove_error_*; PMPIX_ twins as MPICH has.
int PMPIX_Delete_error_class(int errorclass) { return PMPI_Remove_error_class(errorclass); }
int PMPIX_Delete_error_code(int errorcode) { return PMPI_Remove_error_code(errorcode); }
int PMPIX_Delete_error_string(int errorcode) { return PMPI_Remove_error_string(errorcode); }
#pragma weak MPIX_Delete_error_class = PMPIX_Delete_error_class
#pragma weak MPIX_Delete_error_code = PMPIX_Delete_error_code
#pragma weak MPIX_Delete_error_string = PMPIX_Delete_error_string

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  SONDE_ENTER("MPI_Alloc_mem");
  (void)info;  // no placement hints are acted on
  if (size < 0) return raise(nullptr, MPI_ERR_SIZE, fn);
  if (!baseptr) return raise(nullptr, MPI_ERR_ARG, fn);
  // 64-byte alignment: cache lines, and any vector type a user may store.
  void* p = nullptr;
  if (posix_memalign(&p, 64, size_t(size ? size : 1)) != 0) return raise(nullptr, MPI_ERR_NO_MEM, fn);
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Alloc_mem)

int PMPI_Free_mem(void* base) {
  SONDE_ENTER("MPI_Free_mem");
  // (ofi) Registrations cached for this memory must not serve whatever is
  // allocated at these addresses next (transport.h, forget_memory).
  if (base) {
    for (auto& t : engine().transports) t->forget_memory(base, malloc_usable_size(base));
  }
  std::free(base);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Free_mem)

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  SONDE_ENTER("MPI_Status_set_elements_x");
  if (!status || status == MPI_STATUS_IGNORE) return raise(nullptr, MPI_ERR_ARG, fn);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  // The status stores bytes; count elements of a type are count * size
  // bytes (Get_elements of a derived type then counts its basic elements).
  status->sonde_count = count * static_cast<long long>(t->size);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}
SONDE_WEAK_ALIAS(Status_set_elements)

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  SONDE_ENTER("MPI_Status_set_cancelled");
  if (!status || status == MPI_STATUS_IGNORE) return raise(nullptr, MPI_ERR_ARG, fn);
  status->sonde_cancelled = flag != 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Status_set_cancelled)

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  SONDE_ENTER("MPI_Grequest_start");
  if (!request) return raise(nullptr, MPI_ERR_ARG, fn);
  Request* r = engine().new_request(RequestKind::kGeneralized);
  if (!r) return raise(nullptr, MPI_ERR_INTERN, fn);
  r->active = true;  // complete only when the user says so
  greqs()[r] = Greq{query_fn, free_fn, cancel_fn, extra_state};
  *request = r->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request) {
  SONDE_ENTER("MPI_Grequest_complete");
  Request* r = engine().requests.lookup(request);
  if (!r || r->kind != RequestKind::kGeneralized || r->complete) return raise(nullptr, MPI_ERR_REQUEST, fn);
  int rc = MPI_SUCCESS;
  if (r->user_freed) rc = run_free(r);  // Engine::complete releases it
  engine().complete(r);
  return finish(nullptr, rc, fn);
}
SONDE_WEAK_ALIAS(Grequest_complete)

}  // extern "C"
