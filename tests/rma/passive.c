/* Passive-target epochs: exclusive locks serialize read-modify-write cycles
 * (a counter every rank increments with Get + Put under MPI_LOCK_EXCLUSIVE
 * ends at the exact total); shared locks and lock_all with flush,
 * flush_local and the request forms; accumulate ordering (a sequence of
 * MPI_REPLACE accumulates from one origin to one location leaves the last
 * value; Get_accumulate sees the previous one); a target that sits in a
 * blocking receive (inside MPI, not calling RMA) still serves the origins. */
#include "tests/integration/itest.h"

#define ROUNDS 20

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  for (int i = 0; i < 64; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  /* Exclusive lock: read-modify-write of rank 0's counter. */
  for (int r = 0; r < ROUNDS; ++r) {
    int v = -1;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(0, win));
    ++v;
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_unlock(0, win));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK(base[0] == ROUNDS * n, "exclusive counter %d, want %d", base[0], ROUNDS * n);
    CHECK_OK(MPI_Win_unlock(0, win));
  }

  /* Accumulate ordering: one origin, one location, a run of REPLACEs. */
  int target = (me + 1) % n;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
  for (int i = 1; i <= 50; ++i) {
    int v = me * 100 + i;
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, target, 1 + me, 1, MPI_INT, MPI_REPLACE, win));
  }
  int prev = -1, nv = -5;
  CHECK_OK(MPI_Get_accumulate(&nv, 1, MPI_INT, &prev, 1, MPI_INT, target, 1 + me, 1, MPI_INT, MPI_REPLACE, win));
  CHECK_OK(MPI_Win_flush(target, win));
  CHECK(prev == me * 100 + 50, "ordered accumulates: get_accumulate saw %d, want %d", prev, me * 100 + 50);
  int now = 0;
  CHECK_OK(MPI_Get(&now, 1, MPI_INT, target, 1 + me, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(target, win));
  CHECK(now == -5, "after the swap the location holds %d", now);

  /* lock_all: everyone adds to everyone's slot 20 + me; flush_all; check. */
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int t = 0; t < n; ++t) {
    int one = 1;
    MPI_Request r;
    CHECK_OK(MPI_Raccumulate(&one, 1, MPI_INT, t, 20, 1, MPI_INT, MPI_SUM, win, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Put(&one, 1, MPI_INT, t, 30 + (me % 30), 1, MPI_INT, win));
  }
  CHECK_OK(MPI_Win_flush_all(win));
  CHECK_OK(MPI_Win_flush_local_all(win));
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
  CHECK(base[20] == n, "lock_all sums: %d, want %d", base[20], n);
  CHECK_OK(MPI_Win_unlock(me, win));

  /* Progress at a target inside MPI but not in RMA: rank 0 waits in a
   * blocking receive while the others lock it, put, and unlock; the last
   * of them then sends it the message it waits for. */
  MPI_Comm others;
  MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, me, &others);
  if (n > 1) {
    if (me == 0) {
      int token = 0;
      MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(token == n - 1, "token %d", token);
    } else {
      int v = 1000 + me;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 40 + (me % 20), 1, MPI_INT, win));
      CHECK_OK(MPI_Win_unlock(0, win));
      int done = 1, all = 0;
      /* The ranks other than 0 agree they are done, then one tells rank 0. */
      MPI_Allreduce(&done, &all, 1, MPI_INT, MPI_SUM, others);
      MPI_Comm_free(&others);
      if (me == n - 1) MPI_Send(&all, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    if (me == 0) {
      for (int r = 1; r < n && r < 21; ++r)
        CHECK(base[40 + (r % 20)] == 1000 + r || r >= 20, "put during a blocking receive: [%d] = %d", 40 + r,
              base[40 + (r % 20)]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&win));
  return itest_finish("passive");
}
