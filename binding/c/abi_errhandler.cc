// C ABI: error handlers, user error classes/codes/strings, MPI_Alloc_mem,
// status setters and generalized requests (MPI 4.1 sections 9.3-9.5, 9.2,
// 13.2-13.3).
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>

#include "binding/c/abi.h"
#include "core/alloc_mem.h"
#include "core/engine.h"
#include "runtime/errors.h"
#include "core/grequest.h"
#include "core/p2p.h"

using namespace sonde::engine;

namespace {

int create_errhandler(MPI_Comm_errhandler_function* f, MPI_Errhandler* out) {
  Errhandler* e = nullptr;
  int h = engine().tables().errhandlers.allocate(&e);
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

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return PMPI_Comm_set_errhandler(comm, errhandler); }
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
  // The fatal and abort handlers end the job naming the code. Once the
  // handler has been called and returned -- MPI_ERRORS_RETURN's too -- the
  // call succeeded (MPI 4.1 section 9.3.6), as MPICH and Open MPI answer.
  raise(c, errorcode, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_call_errhandler)

int PMPI_Add_error_class(int* errorclass) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_class");
  if (!errorclass) return raise(nullptr, MPI_ERR_ARG, fn);
  *errorclass = add_error_class();
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_code");
  if (!errorcode) return raise(nullptr, MPI_ERR_ARG, fn);
  int code = add_error_code(errorclass);
  if (code < 0) return raise(nullptr, MPI_ERR_ARG, fn);
  *errorcode = code;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char* string) {
  SONDE_ENTER_ANYTIME("MPI_Add_error_string");
  // Predefined codes keep their strings (MPI 4.1 9.5).
  if (!string || strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING) return raise(nullptr, MPI_ERR_ARG, fn);
  if (!set_error_string(errorcode, string)) return raise(nullptr, MPI_ERR_ARG, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Add_error_string)

// MPI 4.1 9.5: the reverse of the Add_ calls. A class goes only when no
// code of it is left; predefined classes, codes and strings cannot go. All
// six calls may be made at any time (MPI 4.1 12.4.1).
int PMPI_Remove_error_class(int errorclass) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_class");
  if (!remove_error_class(errorclass)) return raise(nullptr, MPI_ERR_ARG, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Remove_error_class)

int PMPI_Remove_error_code(int errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_code");
  if (!remove_error_code(errorcode)) return raise(nullptr, MPI_ERR_ARG, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Remove_error_code)

int PMPI_Remove_error_string(int errorcode) {
  SONDE_ENTER_ANYTIME("MPI_Remove_error_string");
  if (!remove_error_string(errorcode)) return raise(nullptr, MPI_ERR_ARG, fn);
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
  void* p = nullptr;
  if (int rc = alloc_mem(size, &p)) return raise(nullptr, rc, fn);
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Alloc_mem)

int PMPI_Free_mem(void* base) {
  SONDE_ENTER("MPI_Free_mem");
  // A pointer MPI_Alloc_mem did not return (or freed already): MPI_ERR_BASE.
  if (int rc = free_mem(base)) return raise(nullptr, rc, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Free_mem)

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  SONDE_ENTER("MPI_Status_set_elements_x");
  if (!status || status == MPI_STATUS_IGNORE) return raise(nullptr, MPI_ERR_ARG, fn);
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (!datatype_fits(*t, count)) return raise(nullptr, MPI_ERR_COUNT, fn);  // bytes past MPI_Count
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
  Request* r = start_generalized(query_fn, free_fn, cancel_fn, extra_state);
  if (!r) return raise(nullptr, MPI_ERR_INTERN, fn);
  *request = r->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request) {
  SONDE_ENTER("MPI_Grequest_complete");
  Request* r = engine().tables().requests.lookup(request);
  if (!r || r->kind != RequestKind::kGeneralized || r->complete) return raise(nullptr, MPI_ERR_REQUEST, fn);
  return finish(nullptr, complete_generalized(r), fn);
}
SONDE_WEAK_ALIAS(Grequest_complete)

}  // extern "C"
