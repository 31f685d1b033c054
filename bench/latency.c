/* Ping-pong half round-trip latency for small messages between ranks 0 and 1.
 * Prints one line per size: "latency <bytes> <median_us>" (median of trials). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  int sizes[] = {0, 1, 8, 64, 1024};
  char buf[1024];
  memset(buf, 0, sizeof buf);
  double samples[64];
  for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
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
  MPI_Finalize();
  return 0;
}
