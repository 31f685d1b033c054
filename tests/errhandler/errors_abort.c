/* MPI_ERRORS_ABORT on a communicator: an error there ends the job with a
 * non-zero status (and the other ranks with it). */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT);
  if (itest_rank == 0) {
    int x = 0;
    MPI_Send(&x, 1, MPI_INT, itest_size, 0, c);
    printf("survived an error under MPI_ERRORS_ABORT\n");
  } else {
    int x;
    MPI_Recv(&x, 1, MPI_INT, 0, 0, c, MPI_STATUS_IGNORE);  /* never arrives */
  }
  return itest_finish("errors_abort");
}
