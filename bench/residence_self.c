/* Per-message cost of the queue-residence profiler without a partner
 * process: one rank receives from itself (MPI_Irecv, MPI_Send, MPI_Wait on
 * MPI_COMM_SELF), so the time is the message path's own CPU cost, not two
 * processes' scheduling. Each message passes the posted queue and fires the
 * profiler's callbacks and its MPI_Send / MPI_Wait interceptors.
 * Prints "self <ns per message>": the median of BENCH_TRIALS trials of
 * BENCH_ITERS messages (run by bench/residence_overhead.sh). */
#include <mpi.h>
#include <stdio.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  double samples[64];
  if (trials > 63) trials = 63;
  char buf[8];
  for (int t = 0; t < trials + 1; ++t) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Request r;
      MPI_Irecv(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &r);
      MPI_Send(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double ns = (MPI_Wtime() - t0) * 1e9 / iters;
    if (t > 0) samples[t - 1] = ns; /* the first trial warms up */
  }
  printf("self %.1f\n", median(samples, trials));
  MPI_Finalize();
  return 0;
}
