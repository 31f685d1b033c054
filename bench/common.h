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

/* How the collective benchmarks time one (collective, size): call(arg) back
 * to back on all ranks of MPI_COMM_WORLD, about BENCH_BYTES (default
 * 64 MiB) per trial at `bytes` per call, 5 to BENCH_MAX_ITERS (default
 * 20000) calls; returns on rank 0 the median over BENCH_TRIALS (default 7,
 * at most 63) trials, after one warm-up, of the slowest rank's mean time
 * per call in microseconds. */
static inline double coll_call_us(long bytes, void (*call)(void*), void* arg) {
  int trials = env_int("BENCH_TRIALS", 7);
  if (trials > 63) trials = 63;
  const long budget = env_int("BENCH_BYTES", 64 << 20);
  const int max_iters = env_int("BENCH_MAX_ITERS", 20000);
  int iters = (int)(budget / (bytes + 4096));
  if (iters > max_iters) iters = max_iters;
  if (iters < 5) iters = 5;
  double samples[64];
  for (int t = 0; t < trials + 1; ++t) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) call(arg);
    double mine = (MPI_Wtime() - t0) * 1e6 / iters, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (t > 0) samples[t - 1] = slowest; /* first trial is warm-up */
  }
  return median(samples, trials);
}
#endif
#endif
