/* What the collective checkers (coll_check.c, coll_more.c) share: case
 * bookkeeping, mismatch reports, deterministic data. Plain C against
 * <mpi.h>, so the checkers also build against MPICH and Open MPI. Each
 * program sets g_prog and g_world_rank first. */
#ifndef SONDE_TESTS_COLL_CHECK_H
#define SONDE_TESTS_COLL_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *g_prog = "coll";
static int g_world_rank;
static long g_failures;
static long g_case_failures;
static char g_case[256];
static long g_cases;

static void begin_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void begin_case(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_case, sizeof g_case, fmt, ap);
  va_end(ap);
  g_case_failures = 0;
  ++g_cases;
}

static void mismatch(long index, double got, double want) {
  ++g_failures;
  if (++g_case_failures <= 4)
    fprintf(stderr, "%s: world rank %d: %s: element %ld is %.17g, expected %.17g\n", g_prog, g_world_rank, g_case,
            index, got, want);
}

static void check_rc(int rc, const char *call) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    ++g_failures;
    fprintf(stderr, "%s: world rank %d: %s: %s returned %d (%s)\n", g_prog, g_world_rank, g_case, call, rc, msg);
  }
}

/* An expected error class (Sonde's classes; other libraries differ). */
static inline void expect_error(int rc, int want_class, const char *what) {
  begin_case("error check: %s", what);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != want_class) mismatch(0, cls, want_class);
}

static inline unsigned hash3(unsigned a, unsigned b, unsigned salt) {
  unsigned x = a * 2654435761u ^ (b + 0x9e3779b9u * salt);
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  x *= 0x297a2d39u;
  x ^= x >> 15;
  return x;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "%s: out of memory\n", g_prog);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* Sums every rank's failures at world rank 0, which prints the verdict. */
static void report(void) {
  long total = 0;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Reduce(&g_failures, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_world_rank == 0) {
    if (total == 0) printf("%s: %d ranks: all %ld cases passed\n", g_prog, size, g_cases);
    else printf("%s: %d ranks: %ld mismatches\n", g_prog, size, total);
  }
}

#endif
