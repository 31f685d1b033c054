/* MPI_Abort(comm, 7) on one rank ends the whole job with status 7 while the
 * others are blocked, and leaves nothing in /dev/shm. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  itest_print_jobid();
  int v = 0;
  if (itest_rank == itest_size - 1) {
    itest_sleep(0.2);
    MPI_Abort(MPI_COMM_WORLD, 7);
    fprintf(stderr, "MPI_Abort returned\n");
    return 0;
  }
  MPI_Recv(&v, 1, MPI_INT, itest_size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  fprintf(stderr, "rank %d: a receive that nobody sent to completed\n", itest_rank);
  MPI_Finalize();
  return 0;
}
