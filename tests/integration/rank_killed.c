/* A rank dies (SIGKILL, no chance to clean up) while the others are blocked
 * in MPI_Recv from it, or in the middle of a large transfer with it.
 *
 * The launcher must end the job promptly with a non-zero status and leave no
 * shared-memory object of the job in /dev/shm. Rank 0 prints the job id so
 * the runner can check. With argument "mid-transfer" the victim dies after
 * starting a 64 MiB send to rank 0 (streamed when SONDE_SHM_SINGLE_COPY=0).
 */
#include <signal.h>

#include "tests/integration/itest.h"

#define BIG (64 << 20)

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int mid_transfer = argc > 1 && strcmp(argv[1], "mid-transfer") == 0;
  itest_print_jobid();
  int victim = itest_size - 1, v = 0;
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  MPI_Sendrecv(&itest_rank, 1, MPI_INT, right, 0, &v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (itest_rank == victim) {
    if (mid_transfer) {
      unsigned char* buf = malloc(BIG);
      memset(buf, 1, BIG);
      MPI_Request r;
      MPI_Isend(buf, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
      int flag;
      for (int i = 0; i < 50; ++i) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    } else {
      itest_sleep(0.3);
    }
    raise(SIGKILL);
  }
  if (mid_transfer && itest_rank == 0) {
    unsigned char* buf = malloc(BIG);
    MPI_Recv(buf, BIG, MPI_BYTE, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Recv(&v, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
  fprintf(stderr, "rank %d: a receive from the killed rank completed\n", itest_rank);
  MPI_Finalize();
  return 0;
}
