// C ABI: environment, errors, handle lookup, the engine lock.
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "binding/c/abi.h"
#include "comm/attributes.h"
#include "core/engine.h"
#include "runtime/errors.h"
#include "runtime/lifecycle.h"

using namespace sonde::engine;

extern "C" {

int PMPI_Init(int* argc, char*** argv) { return init_world(MPI_THREAD_SINGLE, nullptr); }
SONDE_WEAK_ALIAS(Init)

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) { return init_world(required, provided); }
SONDE_WEAK_ALIAS(Init_thread)

int PMPI_Finalize(void) {
  SONDE_ENTER("MPI_Finalize");
  if (process().world_model != 1) return raise(nullptr, MPI_ERR_OTHER, fn);  // only sessions are open
  // Attribute delete callbacks, MPI_COMM_SELF's first (MPI 4.1 11.2.3).
  int ra = attr::finalize_comm_attributes();
  int rc = finalize_world();
  if (rc == MPI_SUCCESS) rc = ra;
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise(nullptr, rc, fn);
}
SONDE_WEAK_ALIAS(Finalize)

int PMPI_Initialized(int* flag) {
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Initialized");
  *flag = process().world_model >= 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Initialized)

int PMPI_Finalized(int* flag) {
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Finalized");
  *flag = process().world_model == 2;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Finalized)

int PMPI_Query_thread(int* provided) {
  SONDE_ENTER("MPI_Query_thread");
  if (!provided) return raise(nullptr, MPI_ERR_ARG, fn);
  *provided = engine().thread_level();
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Query_thread)

int PMPI_Is_thread_main(int* flag) {
  SONDE_ENTER("MPI_Is_thread_main");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, fn);
  *flag = pthread_equal(pthread_self(), process().main_thread) != 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Is_thread_main)

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  char msg[256];
  std::snprintf(msg, sizeof msg, "sonde: rank %d called MPI_Abort with error code %d", engine().world_rank(), errorcode);
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
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Sonde %s (MPI %d.%d; PERUSE 2.0 instrumented engine)",
                        SONDE_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Get_library_version)

int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (!name || !resultlen) return raise(nullptr, MPI_ERR_ARG, "MPI_Get_processor_name");
  std::string host = engine().processor_name();
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
  bool known = predefined_error(errorcode) || user_error_class(errorcode) >= 0;
  return known ? MPI_SUCCESS : raise(nullptr, MPI_ERR_ARG, "MPI_Error_string");
}
SONDE_WEAK_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass && user_error_class(errorcode) >= 0) {  // MPI_Add_error_code
    *errorclass = user_error_class(errorcode);
    return MPI_SUCCESS;
  }
  if (!errorclass || !predefined_error(errorcode)) return raise(nullptr, MPI_ERR_ARG, "MPI_Error_class");
  *errorclass = errorcode;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Error_class)

}  // extern "C"
