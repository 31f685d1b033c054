/* One-sided operations in fence epochs against serial references: every
 * rank puts, gets and accumulates into every other rank's window; contiguous
 * and strided (vector) origin and target datatypes; every predefined
 * operation that applies to int and double, MPI_REPLACE and MPI_NO_OP;
 * MAXLOC on MPI_2INT and MPI_DOUBLE_INT; Get_accumulate, Fetch_and_op and
 * Compare_and_swap; the request forms. */
#include "tests/integration/itest.h"

#define N 16

static void check_put_get(MPI_Win win, int* base, int me, int n) {
  /* Each rank writes its rank-stamped block into slot `me` of every target. */
  int block[N];
  for (int i = 0; i < N; ++i) block[i] = me * 1000 + i;
  for (int i = 0; i < N * n; ++i) base[i] = -1;
  CHECK_OK(MPI_Win_fence(0, win));
  for (int t = 0; t < n; ++t) CHECK_OK(MPI_Put(block, N, MPI_INT, t, (MPI_Aint)me * N, N, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int o = 0; o < n; ++o)
    for (int i = 0; i < N; ++i)
      CHECK(base[o * N + i] == o * 1000 + i, "put: slot %d[%d] = %d, want %d", o, i, base[o * N + i], o * 1000 + i);
  /* Get back the block of the next rank from every target. */
  int got[N];
  int src = (me + 1) % n;
  for (int t = 0; t < n; ++t) {
    memset(got, 0, sizeof got);
    CHECK_OK(MPI_Get(got, N, MPI_INT, t, (MPI_Aint)src * N, N, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; ++i) CHECK(got[i] == src * 1000 + i, "get from %d: [%d] = %d", t, i, got[i]);
  }
}

static void check_strided(MPI_Win win, int* base, int me, int n) {
  /* Origin: every other int of a 2N buffer; target: a vector of N blocks of 1
   * with stride 3 at displacement 1 of a 3N window region (the window is
   * N * n ints; use a region of the target that fits). */
  if (3 * N + 1 > N * n) return;
  MPI_Datatype ovec, tvec;
  MPI_Type_vector(N, 1, 2, MPI_INT, &ovec);
  MPI_Type_vector(N, 1, 3, MPI_INT, &tvec);
  MPI_Type_commit(&ovec);
  MPI_Type_commit(&tvec);
  int src[2 * N];
  for (int i = 0; i < 2 * N; ++i) src[i] = (i % 2) ? -7 : 500 + i / 2;
  for (int i = 0; i < N * n; ++i) base[i] = 0;
  int target = (me + 1) % n;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, 1, ovec, target, 1, 1, tvec, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < 3 * N; ++i) {
    int want = (i >= 1 && (i - 1) % 3 == 0) ? 500 + (i - 1) / 3 : 0;
    CHECK(base[i] == want, "strided put: [%d] = %d, want %d", i, base[i], want);
  }
  /* Strided get back into a strided origin. */
  int back[2 * N];
  for (int i = 0; i < 2 * N; ++i) back[i] = -1;
  CHECK_OK(MPI_Get(back, 1, ovec, target, 1, 1, tvec, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < 2 * N; ++i) {
    int want = (i % 2) ? -1 : 500 + i / 2;
    CHECK(back[i] == want, "strided get: [%d] = %d, want %d", i, back[i], want);
  }
  MPI_Type_free(&ovec);
  MPI_Type_free(&tvec);
}

static void check_accumulate_int(MPI_Win win, int* base, int me, int n) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
  const char* names[] = {"SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR"};
  for (int k = 0; k < 10; ++k) {
    for (int i = 0; i < N; ++i) base[i] = (ops[k] == MPI_PROD) ? 1 : (i & 3);
    int v[N];
    for (int i = 0; i < N; ++i) v[i] = (ops[k] == MPI_PROD) ? 1 + ((me + i) % 2) : me + i;
    CHECK_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < n; ++t) CHECK_OK(MPI_Accumulate(v, N, MPI_INT, t, 0, N, MPI_INT, ops[k], win));
    CHECK_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; ++i) {
      long long r = (ops[k] == MPI_PROD) ? 1 : (i & 3);
      for (int o = 0; o < n; ++o) {
        long long x = (ops[k] == MPI_PROD) ? 1 + ((o + i) % 2) : o + i;
        switch (k) {
          case 0: r += x; break;
          case 1: r *= x; break;
          case 2: r = r > x ? r : x; break;
          case 3: r = r < x ? r : x; break;
          case 4: r &= x; break;
          case 5: r |= x; break;
          case 6: r ^= x; break;
          case 7: r = r && x; break;
          case 8: r = r || x; break;
          case 9: r = (!r) != (!x); break;
        }
      }
      CHECK(base[i] == (int)r, "accumulate %s: [%d] = %d, want %lld", names[k], i, base[i], r);
    }
  }
}

static void check_accumulate_double(MPI_Win win, double* base, int me, int n) {
  for (int i = 0; i < N; ++i) base[i] = 0.5 * i;
  double v[N];
  for (int i = 0; i < N; ++i) v[i] = me + 0.25;
  CHECK_OK(MPI_Win_fence(0, win));
  for (int t = 0; t < n; ++t) CHECK_OK(MPI_Accumulate(v, N, MPI_DOUBLE, t, 0, N, MPI_DOUBLE, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  double add = 0;
  for (int o = 0; o < n; ++o) add += o + 0.25;
  for (int i = 0; i < N; ++i) CHECK(base[i] == 0.5 * i + add, "double sum [%d] = %g", i, base[i]);
}

static void check_maxloc(MPI_Win win, void* base, int me, int n) {
  int* pairs = (int*)base;
  for (int i = 0; i < N; ++i) {
    pairs[2 * i] = -1;
    pairs[2 * i + 1] = -1;
  }
  int v[2 * N];
  for (int i = 0; i < N; ++i) {
    v[2 * i] = (me * 7 + i) % n;
    v[2 * i + 1] = me;
  }
  CHECK_OK(MPI_Win_fence(0, win));
  for (int t = 0; t < n; ++t) CHECK_OK(MPI_Accumulate(v, N, MPI_2INT, t, 0, N, MPI_2INT, MPI_MAXLOC, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N; ++i) {
    int best = -1, loc = -1;
    for (int o = 0; o < n; ++o) {
      int x = (o * 7 + i) % n;
      if (x > best || (x == best && o < loc)) best = x, loc = o;
    }
    CHECK(pairs[2 * i] == best && pairs[2 * i + 1] == loc, "maxloc [%d] = (%d,%d), want (%d,%d)", i, pairs[2 * i],
          pairs[2 * i + 1], best, loc);
  }
  /* MPI_DOUBLE_INT, with padding in memory. */
  struct di {
    double d;
    int i;
  };
  struct di* t = (struct di*)base;
  for (int i = 0; i < 4; ++i) t[i].d = 1e9, t[i].i = -1;
  struct di mine[4];
  for (int i = 0; i < 4; ++i) mine[i].d = (double)((me + i) % n), mine[i].i = me;
  CHECK_OK(MPI_Win_fence(0, win));
  for (int r = 0; r < n; ++r) CHECK_OK(MPI_Accumulate(mine, 4, MPI_DOUBLE_INT, r, 0, 4, MPI_DOUBLE_INT, MPI_MINLOC, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < 4; ++i) {
    /* The minimum value 0 comes from origin (n - i % n) % n. */
    int loc = (n - i % n) % n;
    CHECK(t[i].d == 0.0 && t[i].i == loc, "minloc [%d] = (%g,%d), want (0,%d)", i, t[i].d, t[i].i, loc);
  }
}

static void check_fetch_ops(MPI_Win win, int* base, int me, int n) {
  base[0] = 0;
  base[1] = 0;
  CHECK_OK(MPI_Win_fence(0, win));
  /* Every rank adds me + 1 to rank 0's counter with Fetch_and_op. */
  int one = me + 1, old = -1;
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  if (me == 0) CHECK(base[0] == n * (n + 1) / 2, "fetch_and_op total %d", base[0]);
  CHECK(old >= 0 && old < n * (n + 1) / 2, "fetch_and_op old value %d", old);
  /* Compare_and_swap: only one rank wins slot 1 (0 -> rank + 1). */
  int cmp = 0, mine = me + 1, prev = -1;
  CHECK_OK(MPI_Compare_and_swap(&mine, &cmp, &prev, MPI_INT, 0, 1, win));
  CHECK_OK(MPI_Win_fence(0, win));
  int won = prev == 0, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1, "compare_and_swap: %d winners", winners);
  if (me == 0) CHECK(base[1] >= 1 && base[1] <= n, "compare_and_swap value %d", base[1]);
  /* Get_accumulate with MPI_NO_OP reads; with MPI_REPLACE swaps. */
  int got = -1, dummy = 0;
  CHECK_OK(MPI_Get_accumulate(&dummy, 1, MPI_INT, &got, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, win));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK(got == n * (n + 1) / 2, "get_accumulate NO_OP read %d", got);
  /* Request forms. */
  MPI_Request r[3];
  int v = 5, res = -1, g = -1;
  base[2] = 0;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Raccumulate(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win, &r[0]));
  CHECK_OK(MPI_Rget_accumulate(&v, 1, MPI_INT, &res, 1, MPI_INT, (me + 1) % n, 3, 1, MPI_INT, MPI_REPLACE, win, &r[1]));
  CHECK_OK(MPI_Rget(&g, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &r[2]));
  CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  CHECK(g == n * (n + 1) / 2, "rget %d", g);
  CHECK_OK(MPI_Win_fence(0, win));
  if (me == 0) CHECK(base[2] == 5 * n, "raccumulate sum %d", base[2]);
  CHECK(base[3] == 5, "rget_accumulate replace left %d", base[3]);
  int pv = 9;
  CHECK_OK(MPI_Rput(&pv, 1, MPI_INT, (me + 1) % n, 4, 1, MPI_INT, win, &r[0]));
  CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK(base[4] == 9, "rput %d", base[4]);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  MPI_Win win;
  void* mem = NULL;
  CHECK_OK(MPI_Win_allocate((MPI_Aint)(N * n * sizeof(double) + 64), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &win));
  check_put_get(win, (int*)mem, me, n);
  check_strided(win, (int*)mem, me, n);
  check_accumulate_int(win, (int*)mem, me, n);
  check_maxloc(win, mem, me, n);
  check_fetch_ops(win, (int*)mem, me, n);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK_OK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "freed window handle");

  /* A window over the user's memory, displacement unit of a double. */
  double* d = malloc(N * sizeof(double));
  CHECK_OK(MPI_Win_create(d, N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_accumulate_double(win, d, me, n);
  CHECK_OK(MPI_Win_free(&win));
  free(d);
  return itest_finish("fence_ops");
}
