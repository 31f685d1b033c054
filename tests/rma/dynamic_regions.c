/* Dynamic windows whose attached regions follow one another in memory: one
 * array attached as two halves (the second half first), so an access that
 * starts in one region and runs into the next is inside the window. Put,
 * Accumulate (MPI_REPLACE and MPI_SUM), Get_accumulate and Get spanning
 * both halves, small (one message) and large (a separate payload), each
 * checked with a Get against the serial reference; an access that runs past
 * the last region into memory nobody attached answers MPI_ERR_RMA_RANGE at
 * the flush and changes nothing. */
#include "tests/integration/itest.h"

#define HALF 8192
static int region[2 * HALF + 64];

static int check_range(int* got, int count, int first, int step, const char* what) {
  int bad = 0;
  for (int i = 0; i < count; ++i)
    if (got[i] != first + i * step) {
      if (++bad == 1) CHECK(0, "%s: [%d] = %d, want %d", what, i, got[i], first + i * step);
    }
  return bad;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  int t = (me + 1) % n;
  MPI_Win win;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Win_attach(win, &region[HALF], HALF * sizeof(int)));
  CHECK_OK(MPI_Win_attach(win, &region[0], HALF * sizeof(int)));
  MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)n);
  CHECK_OK(MPI_Get_address(&region[0], &mine));
  CHECK_OK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));

  int* local = malloc(sizeof(int) * 2 * HALF);
  int* back = malloc(sizeof(int) * 2 * HALF);
  /* Counts: small across the seam, and the MPICH suite's 9216 from the start. */
  const int starts[2] = {HALF - 8, 0};
  const int counts[2] = {16, HALF + HALF / 8};
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int c = 0; c < 2; ++c) {
    MPI_Aint disp = addr[t] + (MPI_Aint)(starts[c] * (int)sizeof(int));
    int count = counts[c];
    for (int i = 0; i < count; ++i) local[i] = me * 100000 + i;
    CHECK_OK(MPI_Put(local, count, MPI_INT, t, disp, count, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(t, win));
    CHECK_OK(MPI_Get(back, count, MPI_INT, t, disp, count, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(t, win));
    check_range(back, count, me * 100000, 1, "put across regions");

    for (int i = 0; i < count; ++i) local[i] = 1;
    CHECK_OK(MPI_Accumulate(local, count, MPI_INT, t, disp, count, MPI_INT, MPI_SUM, win));
    CHECK_OK(MPI_Win_flush(t, win));
    CHECK_OK(MPI_Get(back, count, MPI_INT, t, disp, count, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(t, win));
    check_range(back, count, me * 100000 + 1, 1, "accumulate across regions");

    for (int i = 0; i < count; ++i) local[i] = -i;
    CHECK_OK(MPI_Get_accumulate(local, count, MPI_INT, back, count, MPI_INT, t, disp, count, MPI_INT, MPI_REPLACE,
                                win));
    CHECK_OK(MPI_Win_flush(t, win));
    check_range(back, count, me * 100000 + 1, 1, "get_accumulate's old values across regions");
    CHECK_OK(MPI_Get(back, count, MPI_INT, t, disp, count, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(t, win));
    check_range(back, count, 0, -1, "get_accumulate across regions");
  }

  /* Past the end of the last region: refused, nothing written. */
  MPI_Aint last = addr[t] + (MPI_Aint)((2 * HALF - 4) * (int)sizeof(int));
  int eight[8] = {7, 7, 7, 7, 7, 7, 7, 7};
  CHECK_OK(MPI_Put(eight, 8, MPI_INT, t, last, 8, MPI_INT, win));
  CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(region[2 * HALF - 4] != 7 && region[2 * HALF] == 0, "a refused put wrote: %d %d", region[2 * HALF - 4],
        region[2 * HALF]);

  CHECK_OK(MPI_Win_detach(win, &region[0]));
  CHECK_OK(MPI_Win_detach(win, &region[HALF]));
  CHECK_OK(MPI_Win_free(&win));
  free(local);
  free(back);
  free(addr);
  return itest_finish("dynamic_regions");
}
