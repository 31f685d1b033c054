/* Shared by the benchmarks: plain MPI, so the same source builds against
 * Sonde, MPICH and Open MPI. Timing is the median over repeated trials, since
 * the machines are shared and noisy. */
#ifndef SONDE_BENCH_COMMON_H
#define SONDE_BENCH_COMMON_H
#include <stdlib.h>

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}
#endif
