/* Windows that are alive but idle cost the progress engine nothing: with
 * 300 live windows, a thousand progress passes (Iprobe) and a ping-pong
 * of a hundred messages visit no window at all (MPI_T's
 * sonde_rma_window_visits stays put), and one-sided traffic on one window
 * visits that window a bounded number of times, however many others
 * exist. */
#include "tests/mpit/mtest.h"

#define WINDOWS 300

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  const int me = itest_rank, n = itest_size;
  int provided = 0;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_T_pvar_session s;
  CHECK_OK(MPI_T_pvar_session_create(&s));
  MPI_T_pvar_handle h = mtest_handle(s, "sonde_rma_window_visits", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);

  static MPI_Win wins[WINDOWS];
  static int* bases[WINDOWS];
  for (int i = 0; i < WINDOWS; ++i)
    CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &bases[i], &wins[i]));
  MPI_Barrier(MPI_COMM_WORLD);

  /* Idle: progress passes and point-to-point traffic touch no window. */
  const unsigned long long before = mtest_read_ull(s, h);
  int flag = 0;
  for (int i = 0; i < 1000; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  const int peer = me ^ 1;
  if (peer < n) {
    int v = me;
    for (int i = 0; i < 100; ++i) {
      if (me & 1) {
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
      } else {
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long idle = mtest_read_ull(s, h) - before;
  CHECK(idle == 0, "%d idle windows were visited %llu times", WINDOWS, idle);

  /* Traffic on one dynamic window (its operations always travel as
   * messages, so they need the target's progress): locks, puts, gets and
   * flushes to the right neighbour. The visits count that window's work
   * only: a few per operation, not one per window per pass. */
  MPI_Win dyn;
  int mem[16] = {0};
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
  CHECK_OK(MPI_Win_attach(dyn, mem, sizeof mem));
  MPI_Aint addr = 0, right_addr = 0;
  MPI_Get_address(mem, &addr);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  CHECK_OK(MPI_Sendrecv(&addr, 1, MPI_AINT, left, 2, &right_addr, 1, MPI_AINT, right, 2, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long start = mtest_read_ull(s, h);
  const int ops = 20;
  for (int i = 0; i < ops; ++i) {
    int v = me * 1000 + i, back = -1;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dyn));
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, right_addr, 1, MPI_INT, dyn));
    CHECK_OK(MPI_Win_flush(right, dyn));
    CHECK_OK(MPI_Get(&back, 1, MPI_INT, right, right_addr, 1, MPI_INT, dyn));
    CHECK_OK(MPI_Win_unlock(right, dyn));
    CHECK(back == v, "get after put through the dynamic window: %d, want %d", back, v);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long busy = mtest_read_ull(s, h) - start;
  /* Each message of the window's channel that this rank sends or receives
   * wakes the window once as it completes: per round 5 sent and 4 answers
   * received as origin, as many received and answered as target, so 40 a
   * round is ample; one visit per live window per pass would be
   * thousands. */
  if (n > 1) CHECK(busy > 0, "one-sided traffic visited no window");
  CHECK(busy <= (unsigned long long)ops * 40, "one busy window among %d: %llu visits for %d rounds", WINDOWS + 1,
        busy, ops);
  if (me == 0) printf("idle_windows: idle %llu visits, busy %llu visits for %d rounds\n", idle, busy, ops);
  CHECK_OK(MPI_Win_detach(dyn, mem));
  CHECK_OK(MPI_Win_free(&dyn));
  for (int i = 0; i < WINDOWS; ++i) CHECK_OK(MPI_Win_free(&wins[i]));
  MPI_T_pvar_handle_free(s, &h);
  MPI_T_pvar_session_free(&s);
  MPI_T_finalize();
  return itest_finish("idle_windows");
}
