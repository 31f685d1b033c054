/* MPI_Ssend and MPI_Issend complete only once the receive has matched.
 *
 * The receiver holds off posting its receive for DELAY seconds (sleeping, so
 * it does not even drive progress). Clocks of different ranks are not
 * comparable (MPI_Wtime is per process), so the checks are:
 *  - blocking Ssend: from a common starting point (a zero-byte exchange) to
 *    its return, the sender must have waited at least most of DELAY;
 *  - Issend: MPI_Test must keep saying "not complete" during the receiver's
 *    sleep; the receiver reports how long it slept before posting.
 * Sizes on both sides of the eager limit; an eager Ssend that returned early
 * would take microseconds.
 */
#include "tests/integration/itest.h"

#define DELAY 0.4
static MPI_Comm ctl;
static const int kSizes[] = {0, 8, 1000, 16384, 100000};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int peer = 1 - itest_rank;
  unsigned char* buf = malloc(100000);

  for (int k = 0; k < NSIZES; ++k) {
    int n = kSizes[k];
    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
      int tag = 10 * k + nonblocking;
      if (itest_rank == 0) {
        itest_fill(buf, (size_t)n, (uint32_t)tag);
        itest_sync(peer, ctl);
        double t0 = MPI_Wtime();
        if (!nonblocking) {
          CHECK_OK(MPI_Ssend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
          double waited = MPI_Wtime() - t0;
          CHECK(waited >= DELAY * 0.6, "Ssend of %d bytes returned after %.3fs, before the receive was posted (%.1fs)",
                n, waited, DELAY);
        } else {
          MPI_Request r;
          int flag = 0, early = 0, polls = 0;
          CHECK_OK(MPI_Issend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
          while (MPI_Wtime() - t0 < DELAY * 0.5) {
            CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            ++polls;
            if (flag) {
              early = 1;
              break;
            }
          }
          CHECK(!early, "Issend of %d bytes completed after %.3fs (%d polls), before the receive was posted", n,
                MPI_Wtime() - t0, polls);
          if (!early) CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
          double slept = 0;
          CHECK_OK(MPI_Recv(&slept, 1, MPI_DOUBLE, peer, 1, ctl, MPI_STATUS_IGNORE));
          CHECK(slept >= DELAY, "receiver slept only %.3fs", slept);
        }
      } else {
        memset(buf, 0, (size_t)n);
        itest_sync(peer, ctl);
        double t0 = MPI_Wtime();
        itest_sleep(DELAY);
        double slept = MPI_Wtime() - t0;
        MPI_Status st;
        int count = -1;
        CHECK_OK(MPI_Recv(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == n && itest_verify(buf, (size_t)n, (uint32_t)tag) < 0, "Ssend data of %d bytes wrong", n);
        if (nonblocking) CHECK_OK(MPI_Send(&slept, 1, MPI_DOUBLE, peer, 1, ctl));
      }
    }
  }

  /* An Ssend whose receive is already posted completes promptly. */
  if (itest_rank == 0) {
    itest_sync(peer, ctl);
    double t0 = MPI_Wtime();
    CHECK_OK(MPI_Ssend(buf, 8, MPI_BYTE, peer, 99, MPI_COMM_WORLD));
    CHECK(MPI_Wtime() - t0 < 5, "Ssend to a posted receive took %.3fs", MPI_Wtime() - t0);
  } else {
    MPI_Request r;
    CHECK_OK(MPI_Irecv(buf, 8, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &r));
    itest_sync(peer, ctl);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }

  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  free(buf);
  return itest_finish("ssend_sync");
}
