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

#ifdef MPI_VERSION
/* 0-byte ping-pong between ranks 0 and 1 of MPI_COMM_WORLD: median over
 * `trials` (after one warm-up) of the half round trip, in microseconds.
 * `on_trial(t)` (may be null) runs before trial t's clock starts. */
static inline double pingpong_half_rtt_us(int rank, int iters, int trials, void (*on_trial)(int)) {
  char buf[8];
  double samples[64];
  if (trials > 64) trials = 64;
  for (int t = 0; t < trials + 1; ++t) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (on_trial) on_trial(t);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      if (rank == 0) {
        MPI_Send(buf, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    if (t > 0) samples[t - 1] = us;
  }
  return median(samples, trials);
}
#endif
#endif
