/* A program for the Example 14.6 tool (umq_tool.c, linked in): rank 1 sends
 * N messages to rank 0 before rank 0 receives any, then rank 0 receives
 * them in order with MPI_Recv. While more than 5 wait unexpected, the tool
 * flags the receive: with N messages, receives 1 .. N-5 are flagged (the
 * k-th receive sees N-k+1 waiting). Exits non-zero if the tool's count on
 * rank 0 differs. Usage: app [N] (default 12). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

extern int umq_tool_detections;

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 12;
  int rank, size, i, x = 0;
  MPI_Comm ctl;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 1) {
    for (i = 0; i < n; ++i) MPI_Send(&i, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
    MPI_Send(&x, 0, MPI_INT, 0, 0, ctl); /* after all of them (one sender: in order) */
    /* Wait until rank 0 is done: the internal traffic of what follows
     * (MPI_Comm_free, MPI_Finalize) would otherwise join WORLD's queue. */
    MPI_Recv(&x, 0, MPI_INT, 0, 0, ctl, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&x, 0, MPI_INT, 1, 0, ctl, MPI_STATUS_IGNORE);
    for (i = 0; i < n; ++i) MPI_Recv(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 0, MPI_INT, 1, 0, ctl);
  }
  int want = rank == 0 && n > 5 ? n - 5 : 0;
  int got = umq_tool_detections;
  MPI_Comm_free(&ctl);
  MPI_Finalize();
  if (got != want) {
    fprintf(stderr, "rank %d: the tool flagged %d receives, want %d\n", rank, got, want);
    return 1;
  }
  return 0;
}
