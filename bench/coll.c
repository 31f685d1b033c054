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
static const char* kNames[NKINDS] = {"barrier", "bcast", "reduce", "allreduce", "iallreduce", "allgather", "alltoall"};

/* One call of the collective being timed. */
typedef struct {
  enum Kind kind;
  double *a, *b;
  int n;
} Call;

static void run_once(void* arg) {
  const Call* c = arg;
  MPI_Request req;
  switch (c->kind) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(c->a, c->n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(c->a, c->b, c->n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(c->a, c->b, c->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case IALLREDUCE:
      MPI_Iallreduce(c->a, c->b, c->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    case ALLGATHER: MPI_Allgather(c->a, c->n, MPI_DOUBLE, c->b, c->n, MPI_DOUBLE, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(c->a, c->n, MPI_DOUBLE, c->b, c->n, MPI_DOUBLE, MPI_COMM_WORLD); break;
    default: break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int counts[] = {1, 128, 8192, 131072}; /* doubles: 8 B, 1 KiB, 64 KiB, 1 MiB */
  const int ncounts = (int)(sizeof counts / sizeof counts[0]);
  const size_t max_elems = (size_t)counts[ncounts - 1] * (size_t)size;
  double* a = malloc(max_elems * sizeof(double));
  double* b = malloc(max_elems * sizeof(double));
  for (size_t i = 0; i < max_elems; ++i) a[i] = (double)(i % 1000), b[i] = 0;
  for (int k = 0; k < NKINDS; ++k) {
    for (int c = 0; c < ncounts; ++c) {
      if (k == BARRIER && c > 0) break;
      Call call = {(enum Kind)k, a, b, counts[c]};
      const long bytes = k == BARRIER ? 0 : (long)counts[c] * 8;
      const double us = coll_call_us(bytes, run_once, &call);
      if (rank == 0) printf("%s %ld %.3f\n", kNames[k], bytes, us);
      fflush(stdout);
    }
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
