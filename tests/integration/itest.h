/* Small helpers shared by the integration test programs (plain C, <mpi.h> only).
 *
 * CHECK records a failure with file, line and rank and keeps going, so one run
 * reports every broken expectation (the first 25 are printed); itest_finish()
 * finalizes and turns the failure count into the exit status the launcher
 * reports. Ranks keep going in step after a failure, so a failed check ends
 * the job with a non-zero status instead of hanging it.
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

#define CHECK(cond, ...)                                                                             \
  do {                                                                                               \
    if (!(cond) && ++itest_failures <= 25) {                                                         \
      fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", itest_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                                  \
      fputc('\n', stderr);                                                                           \
      if (itest_failures == 25) fputs("(further failures not shown)\n", stderr);                     \
      fflush(stderr);                                                                                \
    }                                                                                                \
  } while (0)

/* An MPI call that must succeed. */
#define CHECK_OK(call)                                                                                 \
  do {                                                                                                 \
    int itest_rc_ = (call);                                                                            \
    CHECK(itest_rc_ == MPI_SUCCESS, "%s returned %d (%s)", #call, itest_rc_, itest_errstr(itest_rc_)); \
  } while (0)

/* An MPI call that must fail with error class `cls` (needs MPI_ERRORS_RETURN). */
#define CHECK_CLASS(call, cls)                                                                                    \
  do {                                                                                                            \
    int itest_rc_ = (call), itest_cls_ = -1;                                                                      \
    if (itest_rc_ != MPI_SUCCESS) MPI_Error_class(itest_rc_, &itest_cls_);                                        \
    CHECK(itest_rc_ != MPI_SUCCESS && itest_cls_ == (cls), "%s returned %d (class %d, %s), want class %s", #call, \
          itest_rc_, itest_cls_, itest_errstr(itest_rc_), #cls);                                                  \
  } while (0)

/* A status must say (source, tag, byte count). The empty status of a null or
 * inactive request is (MPI_ANY_SOURCE, MPI_ANY_TAG, 0); that of a receive
 * from MPI_PROC_NULL is (MPI_PROC_NULL, MPI_ANY_TAG, 0). */
#define CHECK_STATUS(st, source, tag, bytes, what)                                                                  \
  do {                                                                                                              \
    const MPI_Status* itest_st_ = (st);                                                                             \
    int itest_n_ = -1;                                                                                              \
    MPI_Get_count(itest_st_, MPI_BYTE, &itest_n_);                                                                  \
    CHECK(itest_st_->MPI_SOURCE == (source) && itest_st_->MPI_TAG == (tag) && itest_n_ == (bytes),                  \
          "%s: status source %d tag %d count %d, want %d %d %d", (what), itest_st_->MPI_SOURCE, itest_st_->MPI_TAG, \
          itest_n_, (source), (tag), (bytes));                                                                      \
  } while (0)
#define CHECK_EMPTY_STATUS(st, what) CHECK_STATUS(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, what)
#define CHECK_PROC_NULL_STATUS(st, what) CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, what)

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

/* main() of a two-rank test: rank 0 runs rank0(), rank 1 runs rank1(); *ctl
 * is a private duplicate of WORLD for synchronisation meanwhile. */
static inline int itest_pair_main(int argc, char** argv, const char* name, MPI_Comm* ctl, void (*rank0)(void),
                                  void (*rank1)(void)) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, ctl);
  if (itest_rank == 0) rank0();
  else rank1();
  itest_barrier(*ctl);
  MPI_Comm_free(ctl);
  return itest_finish(name);
}

/* For tests whose job is killed: rank 0 prints the job id (Sonde's launcher
 * sets SONDE_JOBID) so run_job.sh --clean-shm can look for leftovers. */
static inline void itest_print_jobid(void) {
  const char* job = getenv("SONDE_JOBID");
  if (itest_rank == 0) {
    printf("SONDE_JOBID=%s\n", job ? job : "unknown");
    fflush(stdout);
  }
}

#endif
