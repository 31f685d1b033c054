/* Windowed bandwidth: rank 0 streams a window of nonblocking sends of one
 * size to rank 1, which acknowledges each window. Prints
 * "bandwidth <bytes> <median_GB/s>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define WINDOW 16

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int trials = env_int("BENCH_TRIALS", 11);
  int sizes[] = {65536, 1 << 20, 4 << 20};
  size_t max = 4 << 20;
  char* buf = malloc(max * WINDOW);
  memset(buf, 1, max * WINDOW);
  double samples[64];
  MPI_Request req[WINDOW];
  for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    int n = sizes[s];
    int reps = n >= (1 << 20) ? 4 : 32;
    for (int t = 0; t < trials + 1; ++t) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int r = 0; r < reps; ++r) {
        if (rank == 0) {
          for (int w = 0; w < WINDOW; ++w) MPI_Isend(buf + (size_t)w * n, n, MPI_BYTE, 1, w, MPI_COMM_WORLD, &req[w]);
          MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
          MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          for (int w = 0; w < WINDOW; ++w) MPI_Irecv(buf + (size_t)w * n, n, MPI_BYTE, 0, w, MPI_COMM_WORLD, &req[w]);
          MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
          MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
        }
      }
      double sec = MPI_Wtime() - t0;
      if (t > 0) samples[t - 1] = (double)n * WINDOW * reps / sec / 1e9;
    }
    if (rank == 0) printf("bandwidth %d %.3f\n", n, median(samples, trials));
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
