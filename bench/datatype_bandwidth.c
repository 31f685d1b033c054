/* Non-contiguous bandwidth: rank 0 sends `n` packed bytes of doubles to
 * rank 1, which answers with a zero-byte message, for four layouts:
 *   contig   contiguous doubles on both sides (the baseline)
 *   vec>vec  every other block of BENCH_BLOCK doubles (default 1) on both sides
 *   vec>cont vector sender, contiguous receiver
 *   cont>vec contiguous sender, vector receiver
 * Prints "datatype_bandwidth <layout> <packed bytes> <median GB/s>". Plain
 * MPI: builds against Sonde, MPICH and Open MPI alike. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int trials = env_int("BENCH_TRIALS", 11);
  int block = env_int("BENCH_BLOCK", 1);
  const int sizes[] = {65536, 1 << 20, 8 << 20};
  const char* names[] = {"contig", "vec>vec", "vec>cont", "cont>vec"};
  size_t maxd = (8 << 20) / sizeof(double);
  double* buf = malloc(2 * maxd * sizeof(double));
  for (size_t i = 0; i < 2 * maxd; ++i) buf[i] = (double)i;
  double samples[64];
  for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    int n = sizes[s] / (int)sizeof(double);
    MPI_Datatype vec;
    MPI_Type_vector(n / block, block, 2 * block, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int reps = sizes[s] >= (1 << 20) ? 4 : 32;
    for (int layout = 0; layout < 4; ++layout) {
      int send_vec = layout == 1 || layout == 2, recv_vec = layout == 1 || layout == 3;
      for (int t = 0; t < trials + 1; ++t) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; ++r) {
          if (rank == 0) {
            if (send_vec) MPI_Send(buf, 1, vec, 1, 1, MPI_COMM_WORLD);
            else MPI_Send(buf, n, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else if (rank == 1) {
            if (recv_vec) MPI_Recv(buf, 1, vec, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else MPI_Recv(buf, n, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
          }
        }
        double dt = MPI_Wtime() - t0;
        if (t > 0) samples[t - 1] = (double)sizes[s] * reps / dt / 1e9;
      }
      if (rank == 0)
        printf("datatype_bandwidth %-8s block %5d B %9d %.2f\n", names[layout], block * 8, sizes[s],
               median(samples, trials));
    }
    MPI_Type_free(&vec);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
