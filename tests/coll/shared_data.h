/* What the shared-segment collective checkers (shared_coll.c,
 * shared_coll_more.c, shared_coll_v.c) share: the communicator under test, deterministic
 * data every rank can compute for every other, checks that name the
 * failing call, and a non-commutative operation (2x2 matrix product mod
 * 9973 on four contiguous ints). */
#ifndef SONDE_TESTS_COLL_SHARED_DATA_H
#define SONDE_TESTS_COLL_SHARED_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/coll/segments.h"
#include "tests/integration/itest.h"

#define SENT (-12345) /* what gaps and not-yet-received data hold */

typedef struct {
  MPI_Comm comm;
  int r, p;
  const char* name;
} Cx;

static uint32_t g_id; /* data id of the current call: the same on every rank */
static int shm_on;    /* communicators of all ranks get segments: 2..16 ranks, SONDE_COLL_SHM is not 0 */

/* ---- deterministic data ---------------------------------------------------------- */

static inline int ival(uint32_t id, int r, long i) {
  uint32_t x = id * 2654435761u ^ (uint32_t)r * 40503u ^ (uint32_t)i * 2246822519u;
  x ^= x >> 15;
  x *= 2654435761u;
  x ^= x >> 13;
  return (int)(x % 20001u) - 10000;
}
static inline unsigned char bval(uint32_t id, int r, long i) { return (unsigned char)(ival(id, r, i) & 0xff); }

static inline void* xmalloc(size_t n) {
  void* q = malloc(n ? n : 1);
  if (!q) {
    fprintf(stderr, "out of memory\n");
    exit(3);
  }
  return q;
}

static inline long diff_bytes(const unsigned char* got, const unsigned char* want, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) return (long)i;
  return -1;
}
static inline long diff_ints(const int* got, const int* want, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) return (long)i;
  return -1;
}
static char g_what[256]; /* what the failing call was, for CHECK_BYTES and CHECK_INTS */
#define CHECK_BYTES(got, want, n, ...)                                                                       \
  do {                                                                                                       \
    long d_ = diff_bytes((got), (want), (n));                                                                \
    CHECK(d_ < 0, "%s: byte %ld is %d, want %d", (snprintf(g_what, sizeof g_what, __VA_ARGS__), g_what), d_, \
          (got)[d_], (want)[d_]);                                                                            \
  } while (0)
#define CHECK_INTS(got, want, n, ...)                                                                                  \
  do {                                                                                                                 \
    long d_ = diff_ints((got), (want), (n));                                                                           \
    CHECK(d_ < 0, "%s: int %ld is %d, want %d", (snprintf(g_what, sizeof g_what, __VA_ARGS__), g_what), d_, (got)[d_], \
          (want)[d_]);                                                                                                 \
  } while (0)

/* ---- v-collectives' blocks ---------------------------------------------------------- */

/* The blocks of an Allgatherv, Gatherv or Scatterv: rank j's has (j + id)
 * % 3 * scale bytes (some empty), 3 bytes apart in the gathered buffer,
 * whose gaps keep 0xEE. `sbuf` holds this rank's block, `rbuf` is all 0xEE
 * but (in place) this rank's block, `want` the gathered buffer expected
 * (a Scatterv's send buffer). */
typedef struct {
  uint32_t id;
  int *counts, *displs;
  size_t all;
  unsigned char *sbuf, *rbuf, *want;
} VBlocks;

static inline VBlocks vblocks(const Cx* c, size_t scale, int in_place) {
  VBlocks v = {++g_id, xmalloc((size_t)c->p * sizeof(int)), xmalloc((size_t)c->p * sizeof(int)), 0, 0, 0, 0};
  for (int j = 0; j < c->p; ++j) {
    v.counts[j] = (int)(((uint32_t)j + v.id) % 3 * scale);
    v.displs[j] = (int)v.all;
    v.all += (size_t)v.counts[j] + 3;
  }
  v.sbuf = xmalloc((size_t)v.counts[c->r]), v.rbuf = xmalloc(v.all), v.want = xmalloc(v.all);
  memset(v.want, 0xEE, v.all);
  for (int j = 0; j < c->p; ++j)
    for (int i = 0; i < v.counts[j]; ++i) v.want[v.displs[j] + i] = bval(v.id, j, i);
  memcpy(v.sbuf, v.want + v.displs[c->r], (size_t)v.counts[c->r]);
  memset(v.rbuf, 0xEE, v.all);
  if (in_place) memcpy(v.rbuf + v.displs[c->r], v.sbuf, (size_t)v.counts[c->r]);
  return v;
}

static inline void vblocks_free(VBlocks* v) {
  free(v->counts), free(v->displs), free(v->sbuf), free(v->rbuf), free(v->want);
}

/* ---- a non-commutative operation ---------------------------------------------------- */

typedef struct {
  int a, b, c, d;
} Mat;
/* Not every checker uses the operation. */
__attribute__((unused)) static MPI_Datatype mat_type; /* 4 contiguous ints */
__attribute__((unused)) static MPI_Op mat_op;         /* mat_fn, not commutative */

static inline Mat mat_of(uint32_t id, int r, long k) {
  Mat m = {(ival(id, r, 4 * k) + 10000) % 9973, (ival(id, r, 4 * k + 1) + 10000) % 9973,
           (ival(id, r, 4 * k + 2) + 10000) % 9973, (ival(id, r, 4 * k + 3) + 10000) % 9973};
  return m;
}
static inline Mat mul(Mat x, Mat y) {
  Mat z = {(x.a * y.a + x.b * y.c) % 9973, (x.a * y.b + x.b * y.d) % 9973, (x.c * y.a + x.d * y.c) % 9973,
           (x.c * y.b + x.d * y.d) % 9973};
  return z;
}
/* MPI: inout = in op inout, `in` from the lower ranks. */
static inline void mat_fn(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const Mat* x = in;
  Mat* y = inout;
  for (int i = 0; i < *len; ++i) y[i] = mul(x[i], y[i]);
}

/* ---- the communicators under test --------------------------------------------------- */

/* MPI_COMM_WORLD and a split of it with the rank order reversed (*rev,
 * for the caller to free), each past `warmup` barriers, by which each has
 * decided on its segment: mapped when shm_on. */
static inline void two_comms(Cx cx[2], MPI_Comm* rev, int warmup) {
  const char* env = getenv("SONDE_COLL_SHM");
  shm_on = !(env && strcmp(env, "0") == 0) && itest_size >= 2 && itest_size <= 16;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, itest_size - 1 - itest_rank, rev));
  MPI_Comm_set_errhandler(*rev, MPI_ERRORS_RETURN);
  cx[0] = (Cx){MPI_COMM_WORLD, itest_rank, itest_size, "MPI_COMM_WORLD"};
  cx[1] = (Cx){*rev, -1, itest_size, "reversed split"};
  MPI_Comm_rank(*rev, &cx[1].r);
  CHECK(cx[1].r == itest_size - 1 - itest_rank, "split rank %d", cx[1].r);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < warmup; ++k) CHECK_OK(MPI_Barrier(cx[i].comm));
  const int maps = mapped_segments();
  CHECK(maps == (shm_on ? 2 : 0), "after the warm-up %d segments are mapped, want %d", maps, shm_on ? 2 : 0);
}

/* ---- start-up and the deciding call ------------------------------------------------ */

/* A checker's start: MPI up, errors returned, the job id printed, this
 * job's segments known. */
static inline void checker_init(int* argc, char*** argv) {
  itest_init(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  itest_print_jobid();
  segments_init();
}

/* A fresh duplicate of MPI_COMM_WORLD (errors returned) past `barriers`
 * barriers: with 16, its next collective call is the one that decides on
 * its segment. *before: the segments this process has mapped then. */
static inline Cx deciding_dup(int barriers, int* before) {
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
  for (int k = 0; k < barriers; ++k) CHECK_OK(MPI_Barrier(d));
  *before = mapped_segments();
  return (Cx){d, itest_rank, itest_size, "dup deciding"};
}

/* The deciding call (of kind v, for the message) mapped one segment more
 * than `before` when segments are on, none otherwise. */
static inline void check_decided(int v, int before) {
  const int after = mapped_segments(), want = before + (shm_on ? 1 : 0);
  CHECK(after == want, "decision by call kind %d: %d segments mapped, want %d", v, after, want);
}

#endif
