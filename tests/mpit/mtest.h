/* Helpers for the MPI_T tests: the integration tests' CHECK macros
 * (tests/integration/itest.h) plus checks on MPI_T return codes that print
 * the codes by name, and lookups by name. Plain C. */
#ifndef SONDE_TESTS_MPIT_MTEST_H
#define SONDE_TESTS_MPIT_MTEST_H

#include "tests/integration/itest.h"

static inline const char* mtest_rc_name(int rc) {
  switch (rc) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_T_ERR_MEMORY: return "MPI_T_ERR_MEMORY";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T_ERR_NOT_INITIALIZED";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T_ERR_CANNOT_INIT";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T_ERR_INVALID_INDEX";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T_ERR_INVALID_ITEM";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T_ERR_INVALID_HANDLE";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T_ERR_OUT_OF_HANDLES";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T_ERR_OUT_OF_SESSIONS";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T_ERR_INVALID_SESSION";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T_ERR_CVAR_SET_NOT_NOW";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T_ERR_CVAR_SET_NEVER";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T_ERR_PVAR_NO_STARTSTOP";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T_ERR_PVAR_NO_WRITE";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T_ERR_PVAR_NO_ATOMIC";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T_ERR_INVALID_NAME";
    case MPI_T_ERR_INVALID: return "MPI_T_ERR_INVALID";
    case MPI_T_ERR_NOT_SUPPORTED: return "MPI_T_ERR_NOT_SUPPORTED";
    case MPI_T_ERR_NOT_ACCESSIBLE: return "MPI_T_ERR_NOT_ACCESSIBLE";
    default: return "(another code)";
  }
}

/* An MPI_T call must return exactly `want`. */
#define CHECK_T(call, want)                                                                                        \
  do {                                                                                                             \
    int mtest_rc_ = (call);                                                                                        \
    CHECK(mtest_rc_ == (want), "%s returned %d (%s), want %s", #call, mtest_rc_, mtest_rc_name(mtest_rc_), #want); \
  } while (0)

static inline int mtest_cvar(const char* name) {
  int i = -1;
  int rc = MPI_T_cvar_get_index(name, &i);
  CHECK(rc == MPI_SUCCESS, "no cvar %s (%s)", name, mtest_rc_name(rc));
  return i;
}

static inline int mtest_pvar(const char* name, int var_class) {
  int i = -1;
  int rc = MPI_T_pvar_get_index(name, var_class, &i);
  CHECK(rc == MPI_SUCCESS, "no pvar %s of class %d (%s)", name, var_class, mtest_rc_name(rc));
  return i;
}

/* A started handle of pvar `name` in `session`, bound to `*comm` (ignored
 * for process-wide variables). */
static inline MPI_T_pvar_handle mtest_handle(MPI_T_pvar_session session, const char* name, int var_class,
                                             MPI_Comm* comm, int start) {
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  CHECK_T(MPI_T_pvar_handle_alloc(session, mtest_pvar(name, var_class), comm, &h, &count), MPI_SUCCESS);
  if (start) CHECK_T(MPI_T_pvar_start(session, h), MPI_SUCCESS);
  return h;
}

static inline unsigned long long mtest_read_ull(MPI_T_pvar_session session, MPI_T_pvar_handle h) {
  unsigned long long v = ~0ull;
  CHECK_T(MPI_T_pvar_read(session, h, &v), MPI_SUCCESS);
  return v;
}

static inline double mtest_read_double(MPI_T_pvar_session session, MPI_T_pvar_handle h) {
  double v = -1;
  CHECK_T(MPI_T_pvar_read(session, h, &v), MPI_SUCCESS);
  return v;
}

#endif
