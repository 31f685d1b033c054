/* The MPI 4 large-count forms (_c: MPI_Count counts, MPI_Aint
 * displacements) of every collective, blocking and nonblocking, against
 * serial references; the v/w forms with displacements that leave gaps.
 * (Counts beyond INT_MAX would need gigabytes per rank; these check that
 * the _c entry points carry their 64-bit arguments to the same algorithms
 * as the int forms.) Plain C. */
#include <string.h>

#include "check.h"

static int g_rank, g_size;

static int val(int rank, long i) { return rank * 1000 + (int)i; }

static void expect(const int *got, long n, int (*want)(long, long), long ctx) {
  for (long i = 0; i < n; ++i)
    if (got[i] != want(i, ctx)) mismatch(i, got[i], want(i, ctx));
}

static int want_root_data(long i, long root) { return val((int)root, i); }
static int want_sum(long i, long unused) {
  (void)unused;
  long s = 0;
  for (int r = 0; r < g_size; ++r) s += val(r, i);
  return (int)s;
}
static int want_prefix(long i, long upto) { /* sum over ranks < upto */
  long s = 0;
  for (int r = 0; r < upto; ++r) s += val(r, i);
  return (int)s;
}
enum { N = 4, GAP = 2 };
/* concatenation of N-element blocks from every rank, with GAP untouched (-1) after each */
static int want_gapped(long i, long unused) {
  (void)unused;
  long r = i / (N + GAP), k = i % (N + GAP);
  return k < N ? val((int)r, k) : -1;
}
/* Alltoall: block r comes from rank r, its block for me */
static int want_a2a(long i, long gapped) {
  long w = gapped ? N + GAP : N, r = i / w, k = i % w;
  return k < N ? val((int)r, g_rank * N + k) : -1;
}

static void run(int nb) {
  MPI_Request req[32];
  int nreq = 0;
#define GO(call, icall)              \
  do {                               \
    if (nb) check_rc(icall, #icall); \
    else check_rc(call, #call);      \
  } while (0)
#define R (&req[nreq++])
  const long P = g_size, W = N + GAP;
  const int root = g_size - 1;
  MPI_Count cnt[64], cntN[64];
  MPI_Aint dis[64], disb[64];
  MPI_Datatype types[64];
  for (int r = 0; r < g_size; ++r) {
    cnt[r] = N;
    cntN[r] = N;
    dis[r] = r * W;
    disb[r] = r * W * (MPI_Aint)sizeof(int);
    types[r] = MPI_INT;
  }
  int *mine = xmalloc(sizeof(int) * (size_t)(N * P));
  for (long i = 0; i < N * P; ++i) mine[i] = val(g_rank, i);
  int *bc = xmalloc(sizeof(int) * N), *red = xmalloc(sizeof(int) * N), *allred = xmalloc(sizeof(int) * N);
  int *gat = xmalloc(sizeof(int) * (size_t)(N * P)), *gatv = xmalloc(sizeof(int) * (size_t)(W * P));
  int *sca = xmalloc(sizeof(int) * N), *scav = xmalloc(sizeof(int) * N);
  int *ag = xmalloc(sizeof(int) * (size_t)(N * P)), *agv = xmalloc(sizeof(int) * (size_t)(W * P));
  int *a2a = xmalloc(sizeof(int) * (size_t)(N * P)), *a2av = xmalloc(sizeof(int) * (size_t)(W * P));
  int *a2aw = xmalloc(sizeof(int) * (size_t)(W * P));
  int *rs = xmalloc(sizeof(int) * N), *rsb = xmalloc(sizeof(int) * N);
  int *scan = xmalloc(sizeof(int) * N), *exscan = xmalloc(sizeof(int) * N);
  int *rootsrc = xmalloc(sizeof(int) * (size_t)(W * P));
  for (long i = 0; i < W * P; ++i) rootsrc[i] = want_gapped(i, 0); /* rank r's block at r*W */
  for (int i = 0; i < N; ++i) bc[i] = g_rank == root ? val(root, i) : -1;
  memset(gatv, 0xff, sizeof(int) * (size_t)(W * P));
  memset(agv, 0xff, sizeof(int) * (size_t)(W * P));
  memset(a2av, 0xff, sizeof(int) * (size_t)(W * P));
  memset(a2aw, 0xff, sizeof(int) * (size_t)(W * P));
  memset(exscan, 0xff, sizeof(int) * N);
  /* Scatter sources: rank r's block is val(r, k), so the root sends rootsrc. */
  int *scasrc = xmalloc(sizeof(int) * (size_t)(N * P));
  for (long i = 0; i < N * P; ++i) scasrc[i] = val((int)(i / N), i % N);
  /* Alltoallv/w send layout: the block for rank r at r*W. */
  int *a2asrc = xmalloc(sizeof(int) * (size_t)(W * P));
  for (long r = 0; r < P; ++r)
    for (long k = 0; k < W; ++k) a2asrc[r * W + k] = k < N ? val(g_rank, r * N + k) : -7;
  /* Reduce_scatter: the whole vector is N * P elements, N per rank. */

  GO(MPI_Bcast_c(bc, N, MPI_INT, root, MPI_COMM_WORLD), MPI_Ibcast_c(bc, N, MPI_INT, root, MPI_COMM_WORLD, R));
  GO(MPI_Reduce_c(mine, red, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
     MPI_Ireduce_c(mine, red, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, R));
  GO(MPI_Allreduce_c(mine, allred, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iallreduce_c(mine, allred, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, R));
  GO(MPI_Gather_c(mine, N, MPI_INT, gat, N, MPI_INT, root, MPI_COMM_WORLD),
     MPI_Igather_c(mine, N, MPI_INT, gat, N, MPI_INT, root, MPI_COMM_WORLD, R));
  GO(MPI_Gatherv_c(mine, N, MPI_INT, gatv, cnt, dis, MPI_INT, root, MPI_COMM_WORLD),
     MPI_Igatherv_c(mine, N, MPI_INT, gatv, cnt, dis, MPI_INT, root, MPI_COMM_WORLD, R));
  GO(MPI_Scatter_c(scasrc, N, MPI_INT, sca, N, MPI_INT, root, MPI_COMM_WORLD),
     MPI_Iscatter_c(scasrc, N, MPI_INT, sca, N, MPI_INT, root, MPI_COMM_WORLD, R));
  GO(MPI_Scatterv_c(rootsrc, cnt, dis, MPI_INT, scav, N, MPI_INT, root, MPI_COMM_WORLD),
     MPI_Iscatterv_c(rootsrc, cnt, dis, MPI_INT, scav, N, MPI_INT, root, MPI_COMM_WORLD, R));
  GO(MPI_Allgather_c(mine, N, MPI_INT, ag, N, MPI_INT, MPI_COMM_WORLD),
     MPI_Iallgather_c(mine, N, MPI_INT, ag, N, MPI_INT, MPI_COMM_WORLD, R));
  GO(MPI_Allgatherv_c(mine, N, MPI_INT, agv, cnt, dis, MPI_INT, MPI_COMM_WORLD),
     MPI_Iallgatherv_c(mine, N, MPI_INT, agv, cnt, dis, MPI_INT, MPI_COMM_WORLD, R));
  GO(MPI_Alltoall_c(mine, N, MPI_INT, a2a, N, MPI_INT, MPI_COMM_WORLD),
     MPI_Ialltoall_c(mine, N, MPI_INT, a2a, N, MPI_INT, MPI_COMM_WORLD, R));
  GO(MPI_Alltoallv_c(a2asrc, cntN, dis, MPI_INT, a2av, cntN, dis, MPI_INT, MPI_COMM_WORLD),
     MPI_Ialltoallv_c(a2asrc, cntN, dis, MPI_INT, a2av, cntN, dis, MPI_INT, MPI_COMM_WORLD, R));
  GO(MPI_Alltoallw_c(a2asrc, cntN, disb, types, a2aw, cntN, disb, types, MPI_COMM_WORLD),
     MPI_Ialltoallw_c(a2asrc, cntN, disb, types, a2aw, cntN, disb, types, MPI_COMM_WORLD, R));
  GO(MPI_Reduce_scatter_c(mine, rs, cntN, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Ireduce_scatter_c(mine, rs, cntN, MPI_INT, MPI_SUM, MPI_COMM_WORLD, R));
  GO(MPI_Reduce_scatter_block_c(mine, rsb, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Ireduce_scatter_block_c(mine, rsb, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, R));
  GO(MPI_Scan_c(mine, scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iscan_c(mine, scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, R));
  GO(MPI_Exscan_c(mine, exscan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
     MPI_Iexscan_c(mine, exscan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, R));
  for (int i = nreq - 1; i >= 0; --i) check_rc(MPI_Wait(&req[i], MPI_STATUS_IGNORE), "MPI_Wait");

  const char *how = nb ? "nonblocking" : "blocking";
  begin_case("Bcast_c %s", how);
  expect(bc, N, want_root_data, root);
  if (g_rank == root) {
    begin_case("Reduce_c %s", how);
    expect(red, N, want_sum, 0);
    begin_case("Gather_c %s", how);
    for (long i = 0; i < N * P; ++i)
      if (gat[i] != val((int)(i / N), i % N)) mismatch(i, gat[i], val((int)(i / N), i % N));
    begin_case("Gatherv_c %s", how);
    expect(gatv, W * P, want_gapped, 0);
  }
  begin_case("Allreduce_c %s", how);
  expect(allred, N, want_sum, 0);
  begin_case("Scatter_c %s", how);
  expect(sca, N, want_root_data, g_rank);
  begin_case("Scatterv_c %s", how);
  expect(scav, N, want_root_data, g_rank);
  begin_case("Allgather_c %s", how);
  for (long i = 0; i < N * P; ++i)
    if (ag[i] != val((int)(i / N), i % N)) mismatch(i, ag[i], val((int)(i / N), i % N));
  begin_case("Allgatherv_c %s", how);
  expect(agv, W * P, want_gapped, 0);
  begin_case("Alltoall_c %s", how);
  expect(a2a, N * P, want_a2a, 0);
  begin_case("Alltoallv_c %s", how);
  expect(a2av, W * P, want_a2a, 1);
  begin_case("Alltoallw_c %s", how);
  expect(a2aw, W * P, want_a2a, 1);
  begin_case("Reduce_scatter_c %s", how);
  for (long i = 0; i < N; ++i)
    if (rs[i] != want_sum(g_rank * N + i, 0)) mismatch(i, rs[i], want_sum(g_rank * N + i, 0));
  begin_case("Reduce_scatter_block_c %s", how);
  for (long i = 0; i < N; ++i)
    if (rsb[i] != want_sum(g_rank * N + i, 0)) mismatch(i, rsb[i], want_sum(g_rank * N + i, 0));
  begin_case("Scan_c %s", how);
  expect(scan, N, want_prefix, g_rank + 1);
  if (g_rank > 0) {
    begin_case("Exscan_c %s", how);
    expect(exscan, N, want_prefix, g_rank);
  }
  free(mine), free(bc), free(red), free(allred), free(gat), free(gatv), free(sca), free(scav), free(ag), free(agv);
  free(a2a), free(a2av), free(a2aw), free(rs), free(rsb), free(scan), free(exscan), free(rootsrc), free(scasrc);
  free(a2asrc);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "large_count";
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_world_rank = g_rank;
  run(0);
  run(1);
  int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  begin_case("Reduce_local_c");
  check_rc(MPI_Reduce_local_c(a, b, 3, MPI_INT, MPI_SUM), "MPI_Reduce_local_c");
  for (int i = 0; i < 3; ++i)
    if (b[i] != 11 * (i + 1)) mismatch(i, b[i], 11 * (i + 1));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Count neg[64];
  MPI_Aint zero[64];
  for (int i = 0; i < 64; ++i) neg[i] = -1, zero[i] = 0;
  expect_error(MPI_Bcast_c(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Bcast_c with a negative count");
  expect_error(MPI_Alltoallv_c(a, neg, zero, MPI_INT, b, neg, zero, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
               "Alltoallv_c with negative counts");
  /* A block whose end, displacement + count elements, is past MPI_Count
   * bytes; a count past them. Every rank is the root of its own call on
   * MPI_COMM_SELF, so each checks the root's arrays. */
  MPI_Count one[1] = {1}, huge[1] = {((MPI_Count)1 << 62) + 1};
  MPI_Aint far[1] = {(MPI_Aint)1 << 61}, at0[1] = {0};
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  expect_error(MPI_Scatterv_c(a, one, far, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT,
               "Scatterv_c with a block end past MPI_Count bytes");
  expect_error(MPI_Gatherv_c(a, 1, MPI_INT, b, one, far, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT,
               "Gatherv_c with a block end past MPI_Count bytes");
  expect_error(MPI_Allgatherv_c(a, 1, MPI_INT, b, huge, at0, MPI_INT, MPI_COMM_SELF), MPI_ERR_COUNT,
               "Allgatherv_c with a count past MPI_Count bytes");
  report();
  MPI_Finalize();
  return g_failures != 0;
}
