/* General active-target synchronization: even ranks expose their windows
 * to the odd ranks (post/wait), odd ranks access them (start/complete) and
 * put and accumulate; then the roles swap and MPI_Win_test polls for the
 * end of the exposure epoch. Checked against the serial result. */
#include "tests/integration/itest.h"

static MPI_Group group_of(int parity, int n) {
  MPI_Group world, g;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ranks[64], k = 0;
  for (int r = 0; r < n; ++r)
    if (r % 2 == parity) ranks[k++] = r;
  MPI_Group_incl(world, k, ranks, &g);
  MPI_Group_free(&world);
  return g;
}

static void round_trip(MPI_Win win, int* base, int me, int n, int exposer, int use_test) {
  MPI_Group exposers = group_of(exposer, n), accessors = group_of(1 - exposer, n);
  int gsize = 0;
  MPI_Group_size(accessors, &gsize);
  for (int i = 0; i < 64; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (me % 2 == exposer) {
    CHECK_OK(MPI_Win_post(accessors, 0, win));
    if (use_test) {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Win_test(win, &flag));
    } else {
      CHECK_OK(MPI_Win_wait(win));
    }
    for (int o = 1 - exposer; o < n; o += 2) CHECK(base[o] == o + 1, "put from %d: %d", o, base[o]);
    CHECK(base[63] == gsize, "accumulated count %d, want %d", base[63], gsize);
  } else {
    CHECK_OK(MPI_Win_start(exposers, 0, win));
    for (int t = exposer; t < n; t += 2) {
      int v = me + 1, one = 1;
      CHECK_OK(MPI_Put(&v, 1, MPI_INT, t, me, 1, MPI_INT, win));
      CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, t, 63, 1, MPI_INT, MPI_SUM, win));
    }
    CHECK_OK(MPI_Win_complete(win));
  }
  MPI_Group_free(&exposers);
  MPI_Group_free(&accessors);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  if (n > 63) n = 63;
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  if (n >= 2) {
    round_trip(win, base, me, n, 0, 0);
    round_trip(win, base, me, n, 1, 1);
    round_trip(win, base, me, n, 0, 1);
  }
  /* A rank may expose to itself and access itself. */
  MPI_Group self;
  MPI_Comm_group(MPI_COMM_SELF, &self);
  base[0] = 0;
  CHECK_OK(MPI_Win_post(self, 0, win));
  CHECK_OK(MPI_Win_start(self, 0, win));
  int v = 42;
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, me, 0, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_complete(win));
  CHECK_OK(MPI_Win_wait(win));
  CHECK(base[0] == 42, "self epoch put %d", base[0]);
  MPI_Group_free(&self);
  CHECK_OK(MPI_Win_free(&win));
  return itest_finish("pscw");
}
