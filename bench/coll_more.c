/* The collectives bench/coll.c does not time: Gather, Scatter, Gatherv,
 * Scatterv (root 0), Allgatherv, Alltoallv, Reduce_scatter,
 * Reduce_scatter_block, Scan and Exscan (MPI_DOUBLE, MPI_SUM), called back
 * to back on all ranks of MPI_COMM_WORLD at 8 B, 1 KiB and 64 KiB per rank
 * (the v-forms with equal counts). Prints one line per (collective, bytes):
 * "<collective> <bytes> <median_us>", the median over trials of the mean
 * time per call (the slowest rank's). Bytes: one rank's block (gather,
 * scatter, their v-forms, allgatherv, alltoallv, reduce_scatter(_block))
 * or the whole vector (scan, exscan). Plain MPI: bench/compare.sh builds it
 * against Sonde, MPICH and Open MPI.
 * Environment as bench/coll.c: BENCH_TRIALS (default 7), BENCH_BYTES
 * (bytes moved per trial, which sets the iterations per size),
 * BENCH_MAX_ITERS (at most this many calls per trial, default 20000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

enum Kind { GATHER, SCATTER, GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, RSCAT, RSCAT_BLOCK, SCAN, EXSCAN, NKINDS };
static const char* kNames[NKINDS] = {"gather",     "scatter",   "gatherv",        "scatterv",
                                     "allgatherv", "alltoallv", "reduce_scatter", "reduce_scatter_block",
                                     "scan",       "exscan"};

static void run_once(enum Kind k, double* a, double* b, int n, const int* counts, const int* displs) {
  MPI_Comm w = MPI_COMM_WORLD;
  switch (k) {
    case GATHER: MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case SCATTER: MPI_Scatter(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case GATHERV: MPI_Gatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, w); break;
    case SCATTERV: MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case ALLGATHERV: MPI_Allgatherv(a, n, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, w); break;
    case ALLTOALLV: MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, w); break;
    case RSCAT: MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, w); break;
    case RSCAT_BLOCK: MPI_Reduce_scatter_block(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    case SCAN: MPI_Scan(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    case EXSCAN: MPI_Exscan(a, b, n, MPI_DOUBLE, MPI_SUM, w); break;
    default: break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int trials = env_int("BENCH_TRIALS", 7);
  const long budget = env_int("BENCH_BYTES", 64 << 20);
  const int max_iters = env_int("BENCH_MAX_ITERS", 20000);
  const int sizes[] = {1, 128, 8192}; /* doubles: 8 B, 1 KiB, 64 KiB */
  const size_t max_elems = (size_t)sizes[2] * (size_t)size;
  double* a = malloc(max_elems * sizeof(double));
  double* b = malloc(max_elems * sizeof(double));
  int* counts = malloc((size_t)size * sizeof(int));
  int* displs = malloc((size_t)size * sizeof(int));
  for (size_t i = 0; i < max_elems; ++i) a[i] = (double)(i % 1000), b[i] = 0;
  double samples[64];
  for (int k = 0; k < NKINDS; ++k) {
    for (int c = 0; c < 3; ++c) {
      const int n = sizes[c];
      for (int r = 0; r < size; ++r) counts[r] = n, displs[r] = r * n;
      int iters = (int)(budget / ((long)n * 8 + 4096));
      if (iters > max_iters) iters = max_iters;
      if (iters < 5) iters = 5;
      for (int t = 0; t < trials + 1 && t < 64; ++t) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) run_once((enum Kind)k, a, b, n, counts, displs);
        double mine = (MPI_Wtime() - t0) * 1e6 / iters, slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (t > 0) samples[t - 1] = slowest; /* first trial is warm-up */
      }
      if (rank == 0) printf("%s %ld %.3f\n", kNames[k], (long)n * 8, median(samples, trials));
      fflush(stdout);
    }
  }
  free(a);
  free(b);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
