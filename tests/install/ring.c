/* Passes a token around the ring of ranks once; rank 0 checks it came back
 * having been incremented by every rank. Compiled by the installed mpicc in
 * install_test.sh, with a -D whose value holds a space. */
#include <mpi.h>
#include <stdio.h>

#ifndef GREETING
#error "install_test.sh passes -DGREETING"
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int token = 0;
  if (size > 1) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
      token = 1;
      MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++token;
      MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
    }
  } else {
    token = 1;
  }
  int status = 0;
  if (rank == 0) {
    status = token == size ? 0 : 3;
    printf("%s: token %d after a ring of %d ranks\n", GREETING, token, size);
  }
  printf("rank %d of %d done\n", rank, size);
  MPI_Finalize();
  return status;
}
