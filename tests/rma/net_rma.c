/* Put and Get between ranks whose transport offers network RMA (the ofi
 * transport: libfabric fi_write / fi_read), against serial references:
 * fence epochs (contiguous, strided target and origin layouts, a 1 MiB
 * transfer), exclusive and shared locks with flush (a Get after a flushed
 * Put sees it), Rput/Rget, lock_all with flush_all, post/start/complete/
 * wait, in windows of MPI_Win_create and MPI_Win_allocate memory; an
 * accumulate between them still applies in order.
 *
 *   net_rma MODE   MODE: "all"     every Put/Get to another rank goes
 *                                  through network RMA (all ranks on ofi);
 *                         "offnode" those to ranks of other nodes do;
 *                         "none"    none does (network RMA turned off).
 * MPI_T's sonde_rma_network_operations must count exactly that. */
#include "tests/mpit/mtest.h"

#define N 256            /* ints per rank in the small window */
#define BIG (1 << 18)    /* ints in the 1 MiB window */

static int me, n;
static int on_my_node[64];
static unsigned long long expected_net;
static const char* mode;

/* Counts an operation to `t` that moves data. */
static void note(int t) {
  if (t == me) return;
  if (strcmp(mode, "all") == 0 || (strcmp(mode, "offnode") == 0 && !on_my_node[t])) ++expected_net;
}

static int value(int origin, int i, int round) { return origin * 100000 + i * 7 + round; }

static void fence_epochs(MPI_Win win, int* base, int round) {
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  int src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = value(me, i, round);
  for (int i = 0; i < N; ++i) base[i] = -1;
  CHECK_OK(MPI_Win_fence(0, win));
  /* Contiguous: the first half of the right neighbour's window. */
  CHECK_OK(MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win));
  note(right);
  /* Strided target: every other int of the second half (64 runs). */
  MPI_Datatype every_other;
  CHECK_OK(MPI_Type_vector(N / 4, 1, 2, MPI_INT, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  CHECK_OK(MPI_Put(src + N / 2, N / 4, MPI_INT, right, N / 2, 1, every_other, win));
  note(right);
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N / 2; ++i)
    CHECK(base[i] == value(left, i, round), "round %d: put [%d] = %d, want %d", round, i, base[i], value(left, i, round));
  for (int k = 0; k < N / 4; ++k) {
    CHECK(base[N / 2 + 2 * k] == value(left, N / 2 + k, round), "round %d: strided put [%d] = %d", round,
          N / 2 + 2 * k, base[N / 2 + 2 * k]);
    CHECK(base[N / 2 + 2 * k + 1] == -1, "round %d: strided put wrote a gap [%d]", round, N / 2 + 2 * k + 1);
  }
  /* Get back what the right neighbour holds now: contiguous into a strided
   * origin, then through the strided target into a contiguous origin. */
  int strided[N];
  for (int i = 0; i < N; ++i) strided[i] = -2, got[i] = -2;
  CHECK_OK(MPI_Get(strided, 1, every_other, right, 0, N / 4, MPI_INT, win));
  note(right);
  CHECK_OK(MPI_Get(got, N / 4, MPI_INT, right, N / 2, 1, every_other, win));
  note(right);
  CHECK_OK(MPI_Win_fence(0, win));
  for (int k = 0; k < N / 4; ++k) {
    CHECK(strided[2 * k] == value(me, k, round), "round %d: get into strided [%d] = %d", round, 2 * k, strided[2 * k]);
    CHECK(strided[2 * k + 1] == -2, "round %d: get wrote an origin gap", round);
    CHECK(got[k] == value(me, N / 2 + k, round), "round %d: get through strided target [%d] = %d", round, k, got[k]);
  }
  CHECK_OK(MPI_Type_free(&every_other));
  /* An accumulate after the puts, in its own epoch: still applied. */
  int one = 1;
  CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, N - 1, 1, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  /* [N - 1] is the last gap of the strided put: -1, plus one. */
  CHECK(base[N - 1] == 0, "round %d: accumulate [%d] = %d, want 0", round, N - 1, base[N - 1]);
}

static void passive_epochs(MPI_Win win, int* base, int round) {
  const int right = (me + 1) % n;
  for (int i = 0; i < N; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  /* Exclusive: a Put, flush, then a Get of the same ints sees it. */
  int src[8], back[8];
  for (int i = 0; i < 8; ++i) src[i] = value(me, i, round), back[i] = -3;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_OK(MPI_Put(src, 8, MPI_INT, right, 8 * me % (N - 8), 8, MPI_INT, win));
  note(right);
  CHECK_OK(MPI_Win_flush(right, win));
  CHECK_OK(MPI_Get(back, 8, MPI_INT, right, 8 * me % (N - 8), 8, MPI_INT, win));
  note(right);
  CHECK_OK(MPI_Win_unlock(right, win));
  for (int i = 0; i < 8; ++i) CHECK(back[i] == src[i], "round %d: get after flushed put [%d] = %d", round, i, back[i]);
  /* Shared, request forms: Rput then Rget of another range. */
  MPI_Request rq[2];
  int src2[4] = {round, round + 1, round + 2, round + 3}, back2[4] = {-4, -4, -4, -4};
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_OK(MPI_Rput(src2, 4, MPI_INT, right, N - 4, 4, MPI_INT, win, &rq[0]));
  note(right);
  CHECK_OK(MPI_Win_flush(right, win));
  CHECK_OK(MPI_Rget(back2, 4, MPI_INT, right, N - 4, 4, MPI_INT, win, &rq[1]));
  note(right);
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Win_unlock(right, win));
  for (int i = 0; i < 4; ++i) CHECK(back2[i] == src2[i], "round %d: rget [%d] = %d", round, i, back2[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  /* lock_all: every rank writes its slot in every window; flush_all; the
   * barrier after unlock_all makes them visible. */
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int t = 0; t < n; ++t) {
    int v = value(me, t, round);
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, t, 16 + me, 1, MPI_INT, win));
    note(t);
  }
  CHECK_OK(MPI_Win_flush_all(win));
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
  for (int o = 0; o < n; ++o)
    CHECK(base[16 + o] == value(o, me, round), "round %d: lock_all put from %d = %d", round, o, base[16 + o]);
  CHECK_OK(MPI_Win_unlock(me, win));
}

static void pscw_epoch(MPI_Win win, int* base, int round) {
  MPI_Group world, peers;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  int ranks[2] = {left, right};
  CHECK_OK(MPI_Group_incl(world, n == 1 ? 1 : (left == right ? 1 : 2), ranks, &peers));
  for (int i = 0; i < N; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int v[3] = {value(me, 1, round), value(me, 2, round), value(me, 3, round)};
  CHECK_OK(MPI_Win_post(peers, 0, win));
  CHECK_OK(MPI_Win_start(peers, 0, win));
  CHECK_OK(MPI_Put(v, 3, MPI_INT, right, 40, 3, MPI_INT, win));
  note(right);
  CHECK_OK(MPI_Win_complete(win));
  CHECK_OK(MPI_Win_wait(win));
  for (int i = 0; i < 3; ++i)
    CHECK(base[40 + i] == value(left, i + 1, round), "round %d: pscw put [%d] = %d", round, i, base[40 + i]);
  MPI_Group_free(&peers);
  MPI_Group_free(&world);
}

static void big_transfer(void) {
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  int* src = malloc(BIG * sizeof(int));
  int* got = malloc(BIG * sizeof(int));
  for (int i = 0; i < BIG; ++i) src[i] = value(me, i, 9), base[i] = 0, got[i] = 0;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, BIG, MPI_INT, right, 0, BIG, MPI_INT, win));
  note(right);
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Get(got, BIG, MPI_INT, left, 0, BIG, MPI_INT, win));
  note(left);
  CHECK_OK(MPI_Win_fence(0, win));
  int bad = 0;
  for (int i = 0; i < BIG; ++i) bad += base[i] != value(left, i, 9);
  CHECK(bad == 0, "1 MiB put: %d ints wrong", bad);
  bad = 0;
  for (int i = 0; i < BIG; ++i) bad += got[i] != value((left + n - 1) % n, i, 9);
  CHECK(bad == 0, "1 MiB get: %d ints wrong", bad);
  free(src);
  free(got);
  CHECK_OK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  me = itest_rank;
  n = itest_size;
  mode = argc > 1 ? argv[1] : "all";
  CHECK(n <= 64, "at most 64 ranks");
  MPI_Comm node;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Group wg, ng;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(node, &ng);
  for (int t = 0; t < n; ++t) {
    int r = MPI_UNDEFINED;
    MPI_Group_translate_ranks(wg, 1, &t, ng, &r);
    on_my_node[t] = r != MPI_UNDEFINED;
  }
  MPI_Group_free(&wg);
  MPI_Group_free(&ng);
  MPI_Comm_free(&node);

  int provided = 0;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_T_pvar_session s;
  CHECK_OK(MPI_T_pvar_session_create(&s));
  MPI_T_pvar_handle h = mtest_handle(s, "sonde_rma_network_operations", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);

  /* MPI_Win_create over the user's memory, then MPI_Win_allocate. */
  int* mine = calloc(N, sizeof(int));
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mine, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  for (int round = 0; round < 3; ++round) {
    fence_epochs(win, mine, round);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    passive_epochs(win, mine, round);
    pscw_epoch(win, mine, round);
  }
  CHECK_OK(MPI_Win_free(&win));
  free(mine);
  int* base = NULL;
  CHECK_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  fence_epochs(win, base, 5);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  passive_epochs(win, base, 5);
  CHECK_OK(MPI_Win_free(&win));
  big_transfer();

  const unsigned long long got = mtest_read_ull(s, h);
  CHECK(got == expected_net, "sonde_rma_network_operations %llu, want %llu (mode %s)", got, expected_net, mode);
  MPI_T_pvar_handle_free(s, &h);
  MPI_T_pvar_session_free(&s);
  MPI_T_finalize();
  if (me == 0) printf("net_rma: %s, %llu network operations on rank 0\n", mode, got);
  return itest_finish("net_rma");
}
