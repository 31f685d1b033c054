/* A rank blocked for long leaves its core: rank 1 waits about a second for
 * each of rank 0's messages (0 sleeps before sending) in MPI_Recv, MPI_Wait
 * on an MPI_Irecv, MPI_Probe and an MPI_Ssend rank 0 matches late, and
 * measures the CPU time its process spent meanwhile. With
 * SONDE_IDLE_SLEEP_MS=10 (the test's environment) a wait sleeps between polls once it has been idle
 * that long, so the CPU time is a small part of the wait; a busy-polling wait
 * would spend all of it (or, if the machine is loaded, whatever share of a
 * core it is given, still far above this bound). Every message arrives
 * with its bytes.
 *
 *   idle_wait_sleeps [MAX_CPU_SHARE]   default 0.5
 */
#include <time.h>
#include <unistd.h>

#include "tests/integration/itest.h"

#define WAIT_S 1.0

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 sleeps (not in MPI) so rank 1's wait is idle throughout. */
static void late(void) { usleep((useconds_t)(WAIT_S * 1e6)); }

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  const double max_share = argc > 1 ? atof(argv[1]) : 0.5;
  const char* names[] = {"MPI_Recv", "MPI_Wait", "MPI_Probe", "MPI_Ssend"};
  for (int k = 0; k < 4; ++k) {
    int v = -1, flag = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (itest_rank == 0) {
      late();
      if (k == 3) {
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 1000 + k, "rank 0 received %d", v);
      } else {
        v = 1000 + k;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, 1, k, MPI_COMM_WORLD));
      }
    } else {
      MPI_Request r;
      MPI_Status st;
      switch (k) {
        case 0: CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); break;
        case 1:
          CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, 0, k, MPI_COMM_WORLD, &r));
          CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
          break;
        case 2:
          CHECK_OK(MPI_Probe(0, k, MPI_COMM_WORLD, &st));
          CHECK_OK(MPI_Iprobe(0, k, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
          CHECK(flag, "the probed message is gone");
          CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          break;
        default:
          v = 1000 + k;
          CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, 0, k, MPI_COMM_WORLD));
          break;
      }
      const double wall = clock_s(CLOCK_MONOTONIC) - wall0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
      CHECK(v == 1000 + k, "%s: received %d", names[k], v);
      CHECK(wall >= 0.5 * WAIT_S, "%s returned after %.3f s, before the message was sent", names[k], wall);
      CHECK(cpu <= max_share * wall, "%s: %.3f s of CPU in a %.3f s wait (bound %.0f %%)", names[k], cpu, wall,
            100 * max_share);
      printf("idle_wait_sleeps: %s waited %.3f s using %.3f s of CPU\n", names[k], wall, cpu);
    }
  }
  return itest_finish("idle_wait_sleeps");
}
