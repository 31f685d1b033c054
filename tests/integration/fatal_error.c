/* With the default MPI_ERRORS_ARE_FATAL, one bad call ends the whole job.
 *
 * Rank 1 sends to a rank that does not exist; the others are blocked in
 * MPI_Recv from rank 1 and would wait forever. The launcher must end the job
 * with a non-zero status (not its timeout) and leave nothing in /dev/shm.
 * Rank 0 prints the job id so the runner can look for leftovers.
 */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  itest_print_jobid();
  int v = 0;
  /* Some traffic first, so the shared-memory channels are in use. */
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  MPI_Sendrecv(&itest_rank, 1, MPI_INT, right, 0, &v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (itest_rank == 1) {
    MPI_Send(&v, 1, MPI_INT, itest_size + 5, 0, MPI_COMM_WORLD); /* fatal */
    fprintf(stderr, "rank 1: MPI_Send to an invalid rank returned under MPI_ERRORS_ARE_FATAL\n");
    return 0;
  }
  MPI_Recv(&v, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
  fprintf(stderr, "rank %d: a receive that nobody sent to completed\n", itest_rank);
  MPI_Finalize();
  return 0;
}
