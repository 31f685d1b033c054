/* Operations on node-local targets, which go directly to the target's
 * memory (docs/rma.md, "Node-local targets"), against serial references:
 * - accumulates from every rank to one location stay atomic with respect
 *   to each other (MPI_SUM counters through Accumulate, Fetch_and_op and a
 *   Compare_and_swap increment loop end at the exact totals), in windows
 *   from MPI_Win_allocate, MPI_Win_allocate_shared and MPI_Win_create;
 * - large Put and Get (more than 1 MiB) with strided origin and target
 *   datatypes in all four flavors (dynamic: memory attached whole);
 * - a target that makes no MPI call at all while an origin puts into its
 *   MPI_Win_allocate memory under MPI_MODE_NOCHECK sees the data (no
 *   target progress needed); the same with memory attached to a dynamic
 *   window, where the origin first gets a value from it and puts it back
 *   incremented;
 * - fence and post/start/complete/wait order direct puts with the target's
 *   own loads. */
#include "tests/integration/itest.h"

#define ROUNDS 200
#define BIG (300 * 1024) /* ints: 1.2 MB */

static int flavor_of(MPI_Win win) {
  int* f = NULL;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag);
  return flag ? *f : -1;
}

/* Counters at rank 0: [0] Accumulate sums, [1] Fetch_and_op sums, [2] CAS increments. */
static void counters(MPI_Win win, long long* base, int me, int n) {
  const char* what = flavor_of(win) == MPI_WIN_FLAVOR_SHARED ? "shared"
                     : flavor_of(win) == MPI_WIN_FLAVOR_CREATE ? "create"
                                                               : "allocate";
  CHECK_OK(MPI_Win_lock_all(0, win));
  long long one = 1, old = 0;
  for (int i = 0; i < ROUNDS; ++i) {
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 1, MPI_SUM, win));
    CHECK_OK(MPI_Win_flush(0, win));
    CHECK(old >= 0 && old < (long long)ROUNDS * n, "%s: fetch_and_op saw %lld", what, old);
    for (int tries = 0;; ++tries) {
      long long seen = -1, want = 0, next = 0;
      CHECK_OK(MPI_Fetch_and_op(NULL, &want, MPI_LONG_LONG, 0, 2, MPI_NO_OP, win));
      CHECK_OK(MPI_Win_flush(0, win));
      next = want + 1;
      CHECK_OK(MPI_Compare_and_swap(&next, &want, &seen, MPI_LONG_LONG, 0, 2, win));
      CHECK_OK(MPI_Win_flush(0, win));
      if (seen == want) break;
      if (tries > 1000000) {
        CHECK(0, "%s: compare_and_swap never succeeded", what);
        break;
      }
    }
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    for (int k = 0; k < 3; ++k)
      CHECK(base[k] == (long long)ROUNDS * n, "%s: counter %d is %lld, want %lld", what, k, base[k],
            (long long)ROUNDS * n);
    CHECK_OK(MPI_Win_unlock(0, win));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank puts BIG/2 ints, every other one of its origin buffer, into
 * every second int of the next rank's memory, then gets them back. `tdisp`:
 * where the target's memory starts (its address in a dynamic window). */
static void big_strided(MPI_Win win, int* base, MPI_Aint tdisp, int me, int n) {
  int t = (me + 1) % n, from = (me + n - 1) % n;
  MPI_Datatype every_other;
  CHECK_OK(MPI_Type_vector(BIG / 2, 1, 2, MPI_INT, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  int* src = malloc(sizeof(int) * BIG);
  int* back = malloc(sizeof(int) * BIG);
  for (int i = 0; i < BIG; ++i) src[i] = (i % 2) ? -1 : me * 1000000 + i;
  for (int i = 0; i < BIG; ++i) base[i] = -7;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, 1, every_other, t, tdisp, 1, every_other, win));
  CHECK_OK(MPI_Win_fence(0, win));
  int bad = 0;
  for (int i = 0; i < BIG && bad < 3; ++i) {
    int want = (i % 2) ? -7 : from * 1000000 + i;
    if (base[i] != want) CHECK(++bad > 3, "strided put: [%d] = %d, want %d", i, base[i], want);
  }
  for (int i = 0; i < BIG; ++i) back[i] = -3;
  CHECK_OK(MPI_Get(back, BIG / 2, MPI_INT, t, tdisp, 1, every_other, win));
  CHECK_OK(MPI_Win_fence(0, win));
  bad = 0;
  for (int i = 0; i < BIG / 2 && bad < 3; ++i)
    if (back[i] != me * 1000000 + 2 * i) CHECK(++bad > 3, "strided get: [%d] = %d", i, back[i]);
  CHECK(back[BIG / 2] == -3, "get wrote past its count");
  /* Contiguous, the whole window. */
  for (int i = 0; i < BIG; ++i) src[i] = me + i;
  CHECK_OK(MPI_Put(src, BIG, MPI_INT, t, tdisp, BIG, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  bad = 0;
  for (int i = 0; i < BIG && bad < 3; ++i)
    if (base[i] != from + i) CHECK(++bad > 3, "contiguous put: [%d] = %d, want %d", i, base[i], from + i);
  CHECK_OK(MPI_Get(back, BIG, MPI_INT, t, tdisp, BIG, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  bad = 0;
  for (int i = 0; i < BIG && bad < 3; ++i)
    if (back[i] != me + i) CHECK(++bad > 3, "contiguous get: [%d] = %d, want %d", i, back[i], me + i);
  MPI_Type_free(&every_other);
  free(src);
  free(back);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  MPI_Win win;
  long long* lbase = NULL;

  /* Atomic counters in each flavor. */
  CHECK_OK(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &lbase, &win));
  memset(lbase, 0, 4 * sizeof(long long));
  MPI_Barrier(MPI_COMM_WORLD);
  counters(win, lbase, me, n);
  CHECK_OK(MPI_Win_free(&win));
  CHECK_OK(MPI_Win_allocate_shared(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &lbase,
                                   &win));
  memset(lbase, 0, 4 * sizeof(long long));
  MPI_Barrier(MPI_COMM_WORLD);
  counters(win, lbase, me, n);
  CHECK_OK(MPI_Win_free(&win));
  long long mine[4] = {0, 0, 0, 0};
  CHECK_OK(MPI_Win_create(mine, sizeof mine, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Barrier(MPI_COMM_WORLD);
  counters(win, mine, me, n);
  CHECK_OK(MPI_Win_free(&win));

  /* Large strided Put/Get in each flavor. */
  int* ibase = NULL;
  CHECK_OK(MPI_Win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &ibase, &win));
  big_strided(win, ibase, 0, me, n);
  CHECK_OK(MPI_Win_free(&win));
  CHECK_OK(MPI_Win_allocate_shared(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &ibase, &win));
  big_strided(win, ibase, 0, me, n);
  CHECK_OK(MPI_Win_free(&win));
  int* user = malloc(sizeof(int) * BIG);
  CHECK_OK(MPI_Win_create(user, BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  big_strided(win, user, 0, me, n);
  CHECK_OK(MPI_Win_free(&win));
  /* Dynamic: each rank attaches its array; the next rank's address comes
   * from an allgather. */
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_attach(win, user, BIG * sizeof(int)));
  MPI_Aint* where = malloc(sizeof(MPI_Aint) * n);
  CHECK_OK(MPI_Get_address(user, &where[me]));
  CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, where, 1, MPI_AINT, MPI_COMM_WORLD));
  big_strided(win, user, where[(me + 1) % n], me, n);
  CHECK_OK(MPI_Win_detach(win, user));
  CHECK_OK(MPI_Win_free(&win));
  free(where);
  free(user);

  /* A dynamic window's target outside MPI: rank 0 attaches two ints and
   * spins on the second; the last rank gets the first and puts it back
   * incremented into the second, with no message to rank 0. */
  if (n > 1) {
    static int cells[2];
    cells[0] = 41;
    cells[1] = 0;
    CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (me == 0) CHECK_OK(MPI_Win_attach(win, cells, sizeof cells));
    MPI_Aint at = 0;
    if (me == 0) CHECK_OK(MPI_Get_address(cells, &at));
    CHECK_OK(MPI_Bcast(&at, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    if (me == n - 1) {
      int got = -1;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
      CHECK_OK(MPI_Get(&got, 1, MPI_INT, 0, at, 1, MPI_INT, win));
      CHECK_OK(MPI_Win_flush(0, win));
      got += 1;
      CHECK_OK(MPI_Put(&got, 1, MPI_INT, 0, at + (MPI_Aint)sizeof(int), 1, MPI_INT, win));
      CHECK_OK(MPI_Win_unlock(0, win));
    } else if (me == 0) {
      /* A hang guard only: without the direct path this never ends. */
      time_t start = time(NULL);
      while (__atomic_load_n(&cells[1], __ATOMIC_ACQUIRE) == 0 && time(NULL) - start < 120) {
      }
      CHECK(cells[1] == 42, "dynamic window: the target outside MPI holds %d, want 42", cells[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) CHECK_OK(MPI_Win_detach(win, cells));
    CHECK_OK(MPI_Win_free(&win));
  }

  /* A target outside MPI: rank 0 spins on its own memory while the last
   * rank puts the flag with MPI_MODE_NOCHECK (no message to rank 0). */
  if (n > 1) {
    int* flag = NULL;
    CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &flag, &win));
    *flag = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == n - 1) {
      int one = 1;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
      CHECK_OK(MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
      CHECK_OK(MPI_Win_unlock(0, win));
    } else if (me == 0) {
      /* A hang guard only: without the direct path this never ends. */
      time_t start = time(NULL);
      while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0 && time(NULL) - start < 120) {
      }
      CHECK(*flag == 1, "the put never reached a target outside MPI");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_free(&win));
  }

  /* Post/start/complete/wait: even ranks expose, odd ranks put. */
  int* pbase = NULL;
  CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &pbase, &win));
  *pbase = -1;
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int partner = me ^ 1;
  if (partner < n) {
    MPI_Group_incl(world, 1, &partner, &peer);
    if (me % 2 == 0) {
      CHECK_OK(MPI_Win_post(peer, 0, win));
      CHECK_OK(MPI_Win_wait(win));
      CHECK(*pbase == 500 + partner, "pscw: exposed memory holds %d, want %d", *pbase, 500 + partner);
    } else {
      int v = 500 + me;
      CHECK_OK(MPI_Win_start(peer, 0, win));
      CHECK_OK(MPI_Put(&v, 1, MPI_INT, partner, 0, 1, MPI_INT, win));
      CHECK_OK(MPI_Win_complete(win));
    }
    MPI_Group_free(&peer);
  }
  MPI_Group_free(&world);
  CHECK_OK(MPI_Win_free(&win));
  return itest_finish("node_local");
}
