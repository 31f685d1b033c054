/* BENCH_WARMUP calls (default 3000) of one small collective on
 * MPI_COMM_WORLD (root 0), a barrier, BENCH_ITERS more calls (default 1000)
 * and a barrier: the program bench/coll_callgrind.sh runs with one rank
 * under callgrind to count instructions per call (the difference between
 * two values of BENCH_ITERS, so the warm-up, in which descriptor tables
 * and buffers grow while the backlog of a running-ahead peer builds up,
 * cancels out).
 * BENCH_COLL: bcast (MPI_Bcast) or reduce (MPI_Reduce, MPI_SUM);
 * BENCH_COUNT: MPI_DOUBLEs per call (default 1, 8 bytes). Plain MPI: it
 * builds against Sonde, MPICH and Open MPI. Checks the values it receives
 * and exits 1 on a wrong one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int bad;

static void calls(int rank, int size, int reduce, int first, int iters, double* a, double* b, int n) {
  for (int i = first; i < first + iters; ++i) {
    for (int j = 0; j < n; ++j) a[j] = rank == 0 || reduce ? (double)(i + j) : -1.0;
    if (reduce) {
      MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0 && b[0] != (double)i * size) bad = 1;
    } else {
      MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (a[n - 1] != (double)(i + n - 1)) bad = 1;
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* coll = getenv("BENCH_COLL");
  const int reduce = coll && strcmp(coll, "reduce") == 0;
  const int iters = env_int("BENCH_ITERS", 1000);
  const int n = env_int("BENCH_COUNT", 1);
  double* a = malloc((size_t)n * sizeof(double));
  double* b = malloc((size_t)n * sizeof(double));
  const int warmup = env_int("BENCH_WARMUP", 3000);
  calls(rank, size, reduce, 0, warmup, a, b, n);
  MPI_Barrier(MPI_COMM_WORLD);
  calls(rank, size, reduce, warmup, iters, a, b, n);
  MPI_Barrier(MPI_COMM_WORLD);
  if (bad) fprintf(stderr, "coll_calls: rank %d received a wrong value\n", rank);
  free(a);
  free(b);
  MPI_Finalize();
  return bad;
}
