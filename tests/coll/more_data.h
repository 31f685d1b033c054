/* coll_more.c's data: each rank's deterministic elements, the layouts of
 * the v-forms, a non-commutative user operation and the serial references
 * they are checked against. Plain C against <mpi.h>; after check.h. */
#ifndef SONDE_TESTS_COLL_MORE_DATA_H
#define SONDE_TESTS_COLL_MORE_DATA_H

#include <string.h>

#include "tests/coll/check.h"

/* Rank r's element i of a data set `salt`. */
static int val(int r, long i, unsigned salt) { return (int)(hash3((unsigned)r, (unsigned)i, salt) % 100000u) - 50000; }

static void expect_ints(const int *got, const int *want, long n) {
  for (long i = 0; i < n; ++i)
    if (got[i] != want[i]) mismatch(i, got[i], want[i]);
}

static int *ints(long n) { return xmalloc((size_t)n * sizeof(int)); }
static void fill(int *buf, long n, int v) {
  for (long i = 0; i < n; ++i) buf[i] = v;
}

#define JUNK (-424242)

/* Per-rank counts that vary (some zero) and slots laid out in reverse rank
 * order with gaps, so displacements matter. */
static int vcount(int r, long scale) { return (int)(((r * 3 + 1) % 5) * scale); }
static void vlayout(int size, long scale, int *counts, int *displs, long *total) {
  long at = 0;
  for (int r = size - 1; r >= 0; --r) {
    counts[r] = vcount(r, scale);
    displs[r] = (int)at;
    at += counts[r] + 3;
  }
  *total = at;
}

/* What rank `from` sends rank `to`, element i. */
static int a2a(int from, int to, long i) { return val(from * 1000 + to, i, 3); }

/* 2x2 matrices mod 1009, as MPI_Type_contiguous(4, MPI_INT). inout = in x
 * inout: with `in` the lower ranks, the result is M0 x M1 x ... x Mp-1,
 * which differs for almost any other order. */
#define MOD 1009
typedef struct { int a, b, c, d; } Mat;
static MPI_Datatype g_mat_type;
static long g_matmul_calls;

static Mat matmul(Mat x, Mat y) {
  Mat z = {(x.a * y.a + x.b * y.c) % MOD, (x.a * y.b + x.b * y.d) % MOD, (x.c * y.a + x.d * y.c) % MOD,
           (x.c * y.b + x.d * y.d) % MOD};
  return z;
}

static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  ++g_matmul_calls;
  if (*type != g_mat_type) {
    ++g_failures;
    fprintf(stderr, "coll_more: world rank %d: %s: user op called with another datatype\n", g_world_rank, g_case);
  }
  Mat *x = in, *y = inout;
  for (int i = 0; i < *len; ++i) y[i] = matmul(x[i], y[i]);
}

static Mat mat_of(int r, long i) {
  Mat m = {(int)(hash3((unsigned)r, (unsigned)i, 21) % MOD), (int)(hash3((unsigned)r, (unsigned)i, 22) % MOD),
           (int)(hash3((unsigned)r, (unsigned)i, 23) % MOD), (int)(hash3((unsigned)r, (unsigned)i, 24) % MOD)};
  return m;
}

/* Product of ranks [lo, hi) for element i. */
static Mat mat_range(int lo, int hi, long i) {
  Mat acc = {1, 0, 0, 1};
  for (int r = lo; r < hi; ++r) acc = matmul(acc, mat_of(r, i));
  return acc;
}

static void expect_mats(const Mat *got, long n, int lo, int hi, long first) {
  for (long i = 0; i < n; ++i) {
    Mat w = mat_range(lo, hi, first + i);
    if (memcmp(&got[i], &w, sizeof w) != 0) mismatch(i, got[i].a * 10000L + got[i].b, w.a * 10000L + w.b);
  }
}

static long sum_upto(int hi, long i, unsigned salt) {
  long s = 0;
  for (int r = 0; r < hi; ++r) s += val(r, i, salt);
  return s;
}

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  int *x = in, *y = inout;
  for (int i = 0; i < *len; ++i) y[i] += x[i];
}

#endif
