/* Ping-pong half round-trip latency for small messages between ranks 0 and 1.
 * Prints one line per size: "latency <bytes> <median_us>" (median of trials). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  /* BENCH_LATENCY_SIZES="0,1,16384,65536" measures other sizes (e.g. around
   * a transport's eager limit); the default is the small-message set. */
  int sizes[32] = {0, 1, 8, 64, 1024};
  unsigned nsizes = 5;
  const char* list = getenv("BENCH_LATENCY_SIZES");
  if (list && *list) {
    nsizes = 0;
    for (char* end; *list && nsizes < 32; list = *end ? end + 1 : end) sizes[nsizes++] = (int)strtol(list, &end, 10);
  }
  int max = 1;
  for (unsigned s = 0; s < nsizes; ++s) max = sizes[s] > max ? sizes[s] : max;
  char* buf = calloc((size_t)max, 1);
  double samples[64];
  for (unsigned s = 0; s < nsizes; ++s) {
    int n = sizes[s];
    for (int t = 0; t < trials + 1; ++t) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) {
        if (rank == 0) {
          MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
      if (t > 0) samples[t - 1] = us; /* first trial is warm-up */
    }
    if (rank == 0) printf("latency %d %.3f\n", n, median(samples, trials));
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
