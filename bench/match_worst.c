/* Matching cost with a long posted queue: rank 1 posts N receives with
 * distinct tags, rank 0 then sends to them in reverse order, so every arrival
 * searches past all the receives still posted. Prints
 * "match_worst <N> <median_us_per_message>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = env_int("BENCH_POSTED", 4096), trials = env_int("BENCH_TRIALS", 7);
  int* slots = calloc((size_t)n, sizeof(int));
  MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)n);
  double samples[64];
  for (int t = 0; t < trials + 1; ++t) {
    double t0 = 0, t1 = 0;
    if (rank == 1) {
      for (int i = 0; i < n; ++i) MPI_Irecv(&slots[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &req[i]);
      MPI_Send(NULL, 0, MPI_BYTE, 0, n, MPI_COMM_WORLD); /* all posted: go */
      t0 = MPI_Wtime();
      MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
      t1 = MPI_Wtime();
      for (int i = 0; i < n; ++i)
        if (slots[i] != i) {
          fprintf(stderr, "match_worst: slot %d holds %d\n", i, slots[i]);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else if (rank == 0) {
      MPI_Recv(NULL, 0, MPI_BYTE, 1, n, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = n - 1; i >= 0; --i) MPI_Send(&i, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t > 0) samples[t - 1] = (t1 - t0) * 1e6 / n;
  }
  if (rank == 1) printf("match_worst %d %.3f\n", n, median(samples, trials));
  free(slots);
  free(req);
  MPI_Finalize();
  return 0;
}
