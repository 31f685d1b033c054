/* Helpers for the PERUSE API tests: the integration tests' CHECK macros
 * (tests/integration/itest.h) plus checks on PERUSE return codes that print
 * the codes by name. Plain C; also compiles as C++. */
#ifndef SONDE_TESTS_PERUSE_API_PTEST_H
#define SONDE_TESTS_PERUSE_API_PTEST_H

#include <peruse.h>
#include <stdint.h>

#include "tests/integration/itest.h"

static inline const char* ptest_rc_name(int rc) {
  switch (rc) {
    case PERUSE_SUCCESS: return "PERUSE_SUCCESS";
    case PERUSE_ERR_INIT: return "PERUSE_ERR_INIT";
    case PERUSE_ERR_GENERIC: return "PERUSE_ERR_GENERIC";
    case PERUSE_ERR_MALLOC: return "PERUSE_ERR_MALLOC";
    case PERUSE_ERR_EVENT: return "PERUSE_ERR_EVENT";
    case PERUSE_ERR_EVENT_HANDLE: return "PERUSE_ERR_EVENT_HANDLE";
    case PERUSE_ERR_PARAMETER: return "PERUSE_ERR_PARAMETER";
    case PERUSE_ERR_MPI_INIT: return "PERUSE_ERR_MPI_INIT";
    case PERUSE_ERR_COMM: return "PERUSE_ERR_COMM";
    case PERUSE_ERR_MPI_OBJECT: return "PERUSE_ERR_MPI_OBJECT";
    case PERUSE_ERR_LOCK: return "PERUSE_ERR_LOCK";
    case PERUSE_ERR_UNLOCK: return "PERUSE_ERR_UNLOCK";
    case PERUSE_ERR_LOCK_NOT_GRANTABLE: return "PERUSE_ERR_LOCK_NOT_GRANTABLE";
    default: return "(not a PERUSE code)";
  }
}

/* A PERUSE call must return exactly `want`. */
#define CHECK_RC(call, want)                                                                                       \
  do {                                                                                                             \
    int ptest_rc_ = (call);                                                                                        \
    CHECK(ptest_rc_ == (want), "%s returned %d (%s), want %s", #call, ptest_rc_, ptest_rc_name(ptest_rc_), #want); \
  } while (0)

/* A PERUSE call must return some error (anything but PERUSE_SUCCESS). */
#define CHECK_ERR(call)                                                                     \
  do {                                                                                      \
    int ptest_rc_ = (call);                                                                 \
    CHECK(ptest_rc_ != PERUSE_SUCCESS, "%s returned PERUSE_SUCCESS, want an error", #call); \
  } while (0)

#define CHECK_PERUSE_OK(call) CHECK_RC(call, PERUSE_SUCCESS)

/* The communicator a handle reports through PERUSE_Event_object_get. */
static inline MPI_Comm ptest_comm_of(void* object) { return (MPI_Comm)(intptr_t)object; }

/* Every event Sonde defines (the spec's 16 plus XFER_CONTINUE). */
#define PTEST_FIRST_EVENT PERUSE_COMM_REQ_ACTIVATE
#define PTEST_LAST_EVENT PERUSE_COMM_REQ_XFER_CONTINUE

/* An exchange of `n` bytes between two ranks of `comm`: rank `a` sends, rank
 * `b` receives, anyone else does nothing. */
static inline void ptest_transfer(MPI_Comm comm, int a, int b, void* buf, int n, int tag) {
  int me;
  MPI_Comm_rank(comm, &me);
  if (me == a) CHECK_OK(MPI_Send(buf, n, MPI_BYTE, b, tag, comm));
  if (me == b) CHECK_OK(MPI_Recv(buf, n, MPI_BYTE, a, tag, comm, MPI_STATUS_IGNORE));
}

/* A send to ourselves and its receive: every request event of both fires on
 * `comm` without another rank. */
static inline void ptest_self_exchange(MPI_Comm comm, int tag) {
  int me;
  char out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8];
  MPI_Request rq[2];
  MPI_Comm_rank(comm, &me);
  CHECK_OK(MPI_Irecv(in, 8, MPI_BYTE, me, tag, comm, &rq[0]));
  CHECK_OK(MPI_Isend(out, 8, MPI_BYTE, me, tag, comm, &rq[1]));
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

/* xorshift64: deterministic pseudo-random numbers (same on every rank for
 * the same seed). */
static inline uint64_t ptest_rng(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* MPI_Init_thread(MPI_THREAD_MULTIPLE) for the threaded tests, with the
 * itest rank/size set and the thread level checked. */
static inline void ptest_init_multiple(int* argc, char*** argv) {
  int provided = -1;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &itest_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &itest_size);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d, want MPI_THREAD_MULTIPLE", provided);
}

#endif
