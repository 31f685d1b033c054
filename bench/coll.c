/* Collective latency: MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce
 * (MPI_DOUBLE, MPI_SUM, root 0), MPI_Allgather, MPI_Alltoall and
 * MPI_Iallreduce+MPI_Wait at a few sizes, on all
 * ranks of MPI_COMM_WORLD. Prints one line per (collective, bytes):
 * "<collective> <bytes> <median_us>", the median over trials of the mean
 * time per call (the slowest rank's, as the caller of a collective sees
 * it). Bytes: the whole vector (bcast, reduce, allreduce) or one rank's
 * block (allgather, alltoall). Plain MPI: bench/compare.sh builds it against Sonde, MPICH
 * and Open MPI.
 * Environment: BENCH_TRIALS (default 7), BENCH_BYTES (bytes moved per trial,
 * which sets the iterations per size), BENCH_MAX_ITERS (at most this many
 * calls per trial, default 20000; compare.sh lowers it when the ranks
 * outnumber the cores, where every call may wait for a time slice). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum Kind { BARRIER, BCAST, REDUCE, ALLREDUCE, IALLREDUCE, ALLGATHER, ALLTOALL, NKINDS };
static const char* kNames[NKINDS] = {"barrier",    "bcast",     "reduce",  "allreduce",
                                     "iallreduce", "allgather", "alltoall"};

static void run_once(enum Kind k, double* a, double* b, int n, int size) {
  MPI_Request req;
  switch (k) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case IALLREDUCE:
      MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    case ALLGATHER: MPI_Allgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD); (void)size; break;
    default: break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int trials = env_int("BENCH_TRIALS", 7);
  const long budget = env_int("BENCH_BYTES", 64 << 20); /* bytes moved per trial, roughly */
  const int max_iters = env_int("BENCH_MAX_ITERS", 20000);
  const int counts[] = {1, 128, 8192, 131072};           /* doubles: 8 B, 1 KiB, 64 KiB, 1 MiB */
  const int ncounts = (int)(sizeof counts / sizeof counts[0]);
  const size_t max_elems = (size_t)counts[ncounts - 1] * (size_t)size;
  double* a = malloc(max_elems * sizeof(double));
  double* b = malloc(max_elems * sizeof(double));
  for (size_t i = 0; i < max_elems; ++i) a[i] = (double)(i % 1000), b[i] = 0;
  double samples[64];
  for (int k = 0; k < NKINDS; ++k) {
    for (int c = 0; c < ncounts; ++c) {
      if (k == BARRIER && c > 0) break;
      const int n = counts[c];
      const long bytes = k == BARRIER ? 0 : (long)n * 8;
      int iters = (int)(budget / (bytes + 4096));
      if (iters > max_iters) iters = max_iters;
      if (iters < 5) iters = 5;
      for (int t = 0; t < trials + 1 && t < 64; ++t) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) run_once((enum Kind)k, a, b, n, size);
        double mine = (MPI_Wtime() - t0) * 1e6 / iters, slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (t > 0) samples[t - 1] = slowest; /* first trial is warm-up */
      }
      if (rank == 0) printf("%s %ld %.3f\n", kNames[k], bytes, median(samples, trials));
      fflush(stdout);
    }
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
