/* The profiler's callbacks never fault in fresh memory: the first message
 * on each of many new communicators (never freed, so each takes pair blocks
 * the run has not used before) costs this thread no minor page fault inside
 * the send or receive. Linked with the profiler; prints
 * "first-touch: rank R: N faults in M first messages" and fails above a
 * small allowance (the engine's own first use of a communicator). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>

static long faults(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

int main(int argc, char **argv) {
  enum { kComms = 64, kAllowance = 8 };
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "first-touch: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long total = 0;
  char byte = 0;
  for (int i = 0; i < kComms; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    /* Both directions, so each rank has a fresh send and receive pair. */
    for (int dir = 0; dir < 2; ++dir) {
      long before = faults();
      if (rank == dir)
        MPI_Send(&byte, 1, MPI_CHAR, 1 - rank, 7, c);
      else
        MPI_Recv(&byte, 1, MPI_CHAR, 1 - rank, 7, c, MPI_STATUS_IGNORE);
      total += faults() - before;
    }
    MPI_Barrier(c);
  }
  printf("first-touch: rank %d: %ld faults in %d first messages\n", rank, total, 2 * kComms);
  int bad = total > kAllowance, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0) printf(any ? "first-touch: FAILED\n" : "first-touch: ok\n");
  MPI_Finalize();
  return any;
}
