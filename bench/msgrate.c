/* One-way message rate between ranks 0 and 1: rank 0 sends a stream of
 * small messages that rank 1 receives, so the sender runs ahead and the
 * receiver takes most of them from its unexpected queue (as the leaves of
 * back-to-back MPI_Bcast calls and the root of back-to-back MPI_Reduce calls
 * do); "msgrate_window" posts 64 receives first, then the 64 sends follow
 * (every message finds its receive). A trial ends with a 0-byte reply, so
 * it times delivery, not only injection. Prints "msgrate <bytes> <us>" and
 * "msgrate_window <bytes> <us>": microseconds per message, median of trials. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

enum { kWindow = 64 };

static double trial(int rank, int n, int msgs, int windowed, char* buf) {
  MPI_Request req[kWindow];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int done = 0; done < msgs; done += kWindow) {
    if (rank == 1 && windowed) {
      for (int k = 0; k < kWindow; ++k) MPI_Irecv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[k]);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD); /* receives posted */
      MPI_Waitall(kWindow, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
      for (int k = 0; k < kWindow; ++k) MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
      if (windowed) MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int k = 0; k < kWindow; ++k) MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    }
  }
  if (rank == 1) MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
  if (rank == 0) MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return (MPI_Wtime() - t0) * 1e6 / msgs;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int msgs = env_int("BENCH_ITERS", 64000), trials = env_int("BENCH_TRIALS", 11);
  if (msgs < kWindow) msgs = kWindow;
  if (trials > 64) trials = 64;
  static const int sizes[] = {0, 8, 64, 1024};
  static char buf[1024];
  double samples[64];
  for (int windowed = 0; windowed < 2; ++windowed) {
    for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
      for (int t = 0; t < trials + 1; ++t) {
        double us = trial(rank, sizes[s], msgs, windowed, buf);
        if (t > 0) samples[t - 1] = us; /* first trial is warm-up */
      }
      if (rank == 0) printf("%s %d %.3f\n", windowed ? "msgrate_window" : "msgrate", sizes[s], median(samples, trials));
    }
  }
  MPI_Finalize();
  return 0;
}
