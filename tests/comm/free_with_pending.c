/* MPI_Comm_free with operations still pending: they complete normally
 * (MPI 4.1 section 7.4.3), and the freed handle is rejected afterwards. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm dup, keep;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  keep = dup;
  int peer = rank ^ 1;
  int value = -1, mine = 1000 + rank;
  MPI_Request req;
  if (rank % 2 == 1) {
    /* Post, free, then let the peer send: the receive must still complete. */
    MPI_Irecv(&value, 1, MPI_INT, peer, 7, dup, &req);
    MPI_Comm_free(&dup);
    if (dup != MPI_COMM_NULL) { fprintf(stderr, "rank %d: handle not nulled\n", rank); ++failures; }
    MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD); /* go */
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (value != 1000 + peer) { fprintf(stderr, "rank %d: got %d\n", rank, value); ++failures; }
  } else {
    MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Isend(&mine, 1, MPI_INT, peer, 7, dup, &req);
    MPI_Comm_free(&dup);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  int n;
  if (MPI_Comm_size(keep, &n) != MPI_ERR_COMM) { fprintf(stderr, "rank %d: freed comm still usable\n", rank); ++failures; }
  /* Many dup/free rounds must not run out of context ids. */
  for (int i = 0; i < 4200; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
  }
  int total;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("free_with_pending: %d failures on %d ranks\n", total, size);
  MPI_Finalize();
  return total != 0;
}
