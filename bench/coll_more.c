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

/* One call of the collective being timed; counts and displs: n and r * n
 * for rank r. */
typedef struct {
  enum Kind kind;
  double *a, *b;
  int n;
  const int *counts, *displs;
} Call;

static void run_once(void* arg) {
  const Call* c = arg;
  MPI_Comm w = MPI_COMM_WORLD;
  double *a = c->a, *b = c->b;
  const int n = c->n;
  switch (c->kind) {
    case GATHER: MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case SCATTER: MPI_Scatter(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case GATHERV: MPI_Gatherv(a, n, MPI_DOUBLE, b, c->counts, c->displs, MPI_DOUBLE, 0, w); break;
    case SCATTERV: MPI_Scatterv(a, c->counts, c->displs, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, w); break;
    case ALLGATHERV: MPI_Allgatherv(a, n, MPI_DOUBLE, b, c->counts, c->displs, MPI_DOUBLE, w); break;
    case ALLTOALLV: MPI_Alltoallv(a, c->counts, c->displs, MPI_DOUBLE, b, c->counts, c->displs, MPI_DOUBLE, w); break;
    case RSCAT: MPI_Reduce_scatter(a, b, c->counts, MPI_DOUBLE, MPI_SUM, w); break;
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
  const int sizes[] = {1, 128, 8192}; /* doubles: 8 B, 1 KiB, 64 KiB */
  const size_t max_elems = (size_t)sizes[2] * (size_t)size;
  double* a = malloc(max_elems * sizeof(double));
  double* b = malloc(max_elems * sizeof(double));
  int* counts = malloc((size_t)size * sizeof(int));
  int* displs = malloc((size_t)size * sizeof(int));
  for (size_t i = 0; i < max_elems; ++i) a[i] = (double)(i % 1000), b[i] = 0;
  for (int k = 0; k < NKINDS; ++k) {
    for (int c = 0; c < 3; ++c) {
      const int n = sizes[c];
      for (int r = 0; r < size; ++r) counts[r] = n, displs[r] = r * n;
      Call call = {(enum Kind)k, a, b, n, counts, displs};
      const double us = coll_call_us((long)n * 8, run_once, &call);
      if (rank == 0) printf("%s %ld %.3f\n", kNames[k], (long)n * 8, us);
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
