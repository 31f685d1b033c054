/* Small helpers shared by the integration test programs (plain C, <mpi.h> only).
 *
 * CHECK records a failure with file, line and rank and keeps going, so one run
 * reports every broken expectation (the first 25 are printed); itest_finish() finalizes and turns the
 * failure count into the exit status the launcher reports.
 */
#ifndef SONDE_TESTS_INTEGRATION_ITEST_H
#define SONDE_TESTS_INTEGRATION_ITEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int itest_rank = -1;
static int itest_size = 0;
static int itest_failures = 0;

#define CHECK(cond, ...)                                                                       \
  do {                                                                                         \
    if (!(cond) && ++itest_failures <= 25) {                                                   \
      fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", itest_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fputc('\n', stderr);                                                                     \
      if (itest_failures == 25) fputs("(further failures not shown)\n", stderr);               \
      fflush(stderr);                                                                          \
    }                                                                                          \
  } while (0)

/* An MPI call that must succeed. */
#define CHECK_OK(call)                                                                         \
  do {                                                                                         \
    int itest_rc_ = (call);                                                                    \
    CHECK(itest_rc_ == MPI_SUCCESS, "%s returned %d (%s)", #call, itest_rc_, itest_errstr(itest_rc_)); \
  } while (0)

/* An MPI call that must fail with error class `cls` (needs MPI_ERRORS_RETURN). */
#define CHECK_CLASS(call, cls)                                                                 \
  do {                                                                                         \
    int itest_rc_ = (call), itest_cls_ = -1;                                                   \
    if (itest_rc_ != MPI_SUCCESS) MPI_Error_class(itest_rc_, &itest_cls_);                     \
    CHECK(itest_rc_ != MPI_SUCCESS && itest_cls_ == (cls), "%s returned %d (class %d, %s), want class %s", \
          #call, itest_rc_, itest_cls_, itest_errstr(itest_rc_), #cls);                       \
  } while (0)

static inline const char* itest_errstr(int code) {
  static char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) snprintf(buf, sizeof buf, "code %d", code);
  return buf;
}

static inline void itest_init(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &itest_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &itest_size);
}

/* Finalize and return the exit status: 0 only if no CHECK failed here. */
static inline int itest_finish(const char* name) {
  MPI_Finalize();
  if (itest_failures) {
    fprintf(stderr, "[rank %d] %s: %d check(s) failed\n", itest_rank, name, itest_failures);
    return 1;
  }
  if (itest_rank == 0) printf("%s: rank 0 passed (%d ranks)\n", name, itest_size);
  return 0;
}

/* Sleep without touching MPI (the peer must not be progressed by us). */
static inline void itest_sleep(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Deterministic byte pattern for message `id`, byte `i`. */
static inline unsigned char itest_byte(uint32_t id, size_t i) {
  uint32_t x = id * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 8);
  return (unsigned char)(x ^ (x >> 13));
}

static inline void itest_fill(unsigned char* buf, size_t n, uint32_t id) {
  for (size_t i = 0; i < n; ++i) buf[i] = itest_byte(id, i);
}

/* Index of the first wrong byte, or -1. */
static inline long itest_verify(const unsigned char* buf, size_t n, uint32_t id) {
  for (size_t i = 0; i < n; ++i)
    if (buf[i] != itest_byte(id, i)) return (long)i;
  return -1;
}

/* A zero-byte exchange with `peer`: a cheap rendezvous point that does not
 * depend on the collectives. */
static inline void itest_sync(int peer, MPI_Comm comm) {
  char a = 0, b = 0;
  MPI_Sendrecv(&a, 0, MPI_BYTE, peer, 32000, &b, 0, MPI_BYTE, peer, 32000, comm, MPI_STATUS_IGNORE);
}

/* All ranks of `comm` meet (point-to-point only: rank 0 gathers and releases). */
static inline void itest_barrier(MPI_Comm comm) {
  int r, n;
  char z = 0;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  if (r == 0) {
    for (int p = 1; p < n; ++p) MPI_Recv(&z, 0, MPI_BYTE, p, 32001, comm, MPI_STATUS_IGNORE);
    for (int p = 1; p < n; ++p) MPI_Send(&z, 0, MPI_BYTE, p, 32002, comm);
  } else {
    MPI_Send(&z, 0, MPI_BYTE, 0, 32001, comm);
    MPI_Recv(&z, 0, MPI_BYTE, 0, 32002, comm, MPI_STATUS_IGNORE);
  }
}

#endif
