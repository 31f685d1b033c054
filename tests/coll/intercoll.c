/* Intercommunicator collectives against serial references: the world is
 * split into two groups of unequal sizes (A: the first third, B: the rest),
 * joined by MPI_Intercomm_create, and every collective runs in both
 * directions (rooted ones with MPI_ROOT / MPI_PROC_NULL / remote root),
 * blocking and nonblocking (all nonblocking ones outstanding at once,
 * completed in reverse order), at a small and a large count. Plain C, so it
 * also builds against MPICH and Open MPI. Needs 2 ranks at least; on 1 it
 * only reports. */
#include <string.h>

#include "check.h"

static int g_group, g_lrank, g_lsize, g_rsize;
static MPI_Comm g_inter;
static MPI_Op g_left;

static void left_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  memcpy(inout, in, sizeof(int) * (size_t)*len);
}

/* Element i of (group, local rank)'s data. */
static int val(int group, int rank, long i) { return group * 1000003 + rank * 7919 + (int)(i % 7907); }

static int *ints(long n) { return xmalloc(sizeof(int) * (size_t)(n ? n : 1)); }

static void fill(int *b, long n, int v) {
  for (long i = 0; i < n; ++i) b[i] = v;
}

static void expect_eq(const int *got, long n, long i0, int (*want)(long, void *), void *ctx) {
  for (long i = 0; i < n; ++i) {
    int w = want(i0 + i, ctx);
    if (got[i] != w) mismatch(i0 + i, got[i], w);
  }
}

/* A request list completed in reverse order at the end of a pass (the
 * nonblocking pass) or right away (the blocking pass, req == NULL). */
#define MAXREQ 64
static MPI_Request g_reqs[MAXREQ];
static int g_nreq;
static int g_nonblocking;
#define REQ (g_nonblocking ? &g_reqs[g_nreq++] : NULL)
/* Call the blocking or the nonblocking form. */
#define CALL(name, iname, ...) \
  check_rc(g_nonblocking ? MPI_##iname(__VA_ARGS__, REQ) : MPI_##name(__VA_ARGS__), "MPI_" #name)

/* Checks run after completion: closures of (buffer, reference). */
typedef struct {
  char name[96];
  int *buf;
  long n;
  int (*want)(long, void *);
  long ctx[6];
} Check;
static Check g_checks[MAXREQ * 2];
static int g_nchecks;
static int *g_free[MAXREQ * 8];
static int g_nfree;

static int *keep(int *p) {
  g_free[g_nfree++] = p;
  return p;
}

static void later(const char *name, int *buf, long n, int (*want)(long, void *), long c0, long c1, long c2, long c3) {
  Check *c = &g_checks[g_nchecks++];
  snprintf(c->name, sizeof c->name, "%s (%s)", name, g_nonblocking ? "nonblocking" : "blocking");
  c->buf = buf;
  c->n = n;
  c->want = want;
  c->ctx[0] = c0;
  c->ctx[1] = c1;
  c->ctx[2] = c2;
  c->ctx[3] = c3;
}

static void complete_all(void) {
  for (int i = g_nreq - 1; i >= 0; --i) check_rc(MPI_Wait(&g_reqs[i], MPI_STATUS_IGNORE), "MPI_Wait");
  g_nreq = 0;
  for (int i = 0; i < g_nchecks; ++i) {
    Check *c = &g_checks[i];
    begin_case("%s", c->name);
    expect_eq(c->buf, c->n, 0, c->want, c->ctx);
  }
  g_nchecks = 0;
  for (int i = 0; i < g_nfree; ++i) free(g_free[i]);
  g_nfree = 0;
}

/* ---- references ----------------------------------------------------------------------- */

/* ctx: [0] source group, [1] source rank, [2] count per block, [3] unused */
static int want_block_of(long i, void *p) {
  long *c = p;
  return val((int)c[0], (int)c[1], i);
}
/* the concatenation over ranks of group c[0] of c[2] elements each (c[1] ranks) */
static int want_concat(long i, void *p) {
  long *c = p;
  return val((int)c[0], (int)(i / c[2]), i % c[2]);
}
/* sum over c[1] ranks of group c[0] of element i (offset c[3]) */
static int want_sum(long i, void *p) {
  long *c = p;
  long s = 0;
  for (int r = 0; r < c[1]; ++r) s += val((int)c[0], r, i + c[3]);
  return (int)s;
}
/* max likewise */
static int want_max(long i, void *p) {
  long *c = p;
  int m = val((int)c[0], 0, i + c[3]);
  for (int r = 1; r < c[1]; ++r)
    if (val((int)c[0], r, i + c[3]) > m) m = val((int)c[0], r, i + c[3]);
  return m;
}
/* untouched: the fill value c[0] */
static int want_const(long i, void *p) {
  (void)i;
  return (int)((long *)p)[0];
}
/* Alltoall: block j of my result comes from remote rank j and is that
 * rank's block for me: value val(other, j, my_rank * n + k). c: [0] other
 * group, [1] my rank, [2] n */
static int want_alltoall(long i, void *p) {
  long *c = p;
  long j = i / c[2], k = i % c[2];
  return val((int)c[0], (int)j, c[1] * c[2] + k);
}
/* The same with the blocks in reverse rank order; c[3]: the number of blocks. */
static int want_alltoall_reversed(long i, void *p) {
  long *c = p;
  long j = c[3] - 1 - i / c[2], k = i % c[2];
  return val((int)c[0], (int)j, c[1] * c[2] + k);
}
/* v-layouts: remote rank j contributes cnt(j) = j + 1 + base elements at displ(j) = sum of
 * (cnt + 2) before it (two-element gaps, untouched = -1). c: [0] group, [1] nranks, [2] base */
static long vcnt(long j, long base) { return j + 1 + base; }
static long vdispl(long j, long base) {
  long d = 0;
  for (long k = 0; k < j; ++k) d += vcnt(k, base) + 2;
  return d;
}
static long vtotal(long n, long base) { return vdispl(n, base); }
static int want_vconcat(long i, void *p) {
  long *c = p;
  for (long j = 0; j < c[1]; ++j) {
    long d = vdispl(j, c[2]);
    if (i >= d && i < d + vcnt(j, c[2])) return val((int)c[0], (int)j, i - d);
  }
  return -1;
}

/* ---- one pass over every collective ------------------------------------------------------ */

static void pass(long n) {
  const int other = 1 - g_group;
  /* Roots: local rank lsize-1 of A and of B in turn. */
  for (int rg = 0; rg < 2; ++rg) {
    const int root_lrank = (rg == 0 ? (g_group == 0 ? g_lsize : g_rsize) : (g_group == 1 ? g_lsize : g_rsize)) - 1;
    const int in_root_group = g_group == rg;
    const int i_am_root = in_root_group && g_lrank == root_lrank;
    const int root_arg = in_root_group ? (i_am_root ? MPI_ROOT : MPI_PROC_NULL) : root_lrank;
    char what[64];

    /* Bcast */
    int *b = keep(ints(n));
    if (i_am_root)
      for (long i = 0; i < n; ++i) b[i] = val(rg, root_lrank, i);
    else fill(b, n, -1);
    CALL(Bcast, Ibcast, b, (int)n, MPI_INT, root_arg, g_inter);
    snprintf(what, sizeof what, "Bcast from group %d, n=%ld", rg, n);
    if (!in_root_group) later(what, b, n, want_block_of, rg, root_lrank, n, 0);
    else if (!i_am_root) later(what, b, n, want_const, -1, 0, 0, 0);

    /* Reduce (SUM) */
    int *s = keep(ints(n)), *r = keep(ints(n));
    for (long i = 0; i < n; ++i) s[i] = val(g_group, g_lrank, i);
    fill(r, n, -1);
    CALL(Reduce, Ireduce, s, r, (int)n, MPI_INT, MPI_SUM, root_arg, g_inter);
    snprintf(what, sizeof what, "Reduce to group %d, n=%ld", rg, n);
    if (i_am_root) later(what, r, n, want_sum, other, g_rsize, 0, 0);
    else later(what, r, n, want_const, -1, 0, 0, 0);

    /* Gather */
    s = keep(ints(n));
    for (long i = 0; i < n; ++i) s[i] = val(g_group, g_lrank, i);
    r = keep(ints(n * g_rsize));
    fill(r, n * g_rsize, -1);
    CALL(Gather, Igather, s, (int)n, MPI_INT, r, (int)n, MPI_INT, root_arg, g_inter);
    snprintf(what, sizeof what, "Gather to group %d, n=%ld", rg, n);
    if (i_am_root) later(what, r, n * g_rsize, want_concat, other, g_rsize, n, 0);

    /* Gatherv: remote rank j sends j + 1 + n elements */
    int cnt[64], dis[64];
    for (int j = 0; j < g_rsize; ++j) cnt[j] = (int)vcnt(j, n), dis[j] = (int)vdispl(j, n);
    long mine = vcnt(g_lrank, n);
    s = keep(ints(mine));
    for (long i = 0; i < mine; ++i) s[i] = val(g_group, g_lrank, i);
    long tot = vtotal(g_rsize, n);
    r = keep(ints(tot));
    fill(r, tot, -1);
    int *cntc = keep(ints(64)), *disc = keep(ints(64));
    memcpy(cntc, cnt, sizeof cnt);
    memcpy(disc, dis, sizeof dis);
    CALL(Gatherv, Igatherv, s, (int)mine, MPI_INT, r, cntc, disc, MPI_INT, root_arg, g_inter);
    snprintf(what, sizeof what, "Gatherv to group %d, n=%ld", rg, n);
    if (i_am_root) later(what, r, tot, want_vconcat, other, g_rsize, n, 0);

    /* Scatter: the root's send buffer is the concatenation for the other group */
    long sn = i_am_root ? n * g_rsize : 0;
    s = keep(ints(sn));
    for (long i = 0; i < sn; ++i) s[i] = val(rg, (int)(i / n), i % n);
    r = keep(ints(n));
    fill(r, n, -1);
    CALL(Scatter, Iscatter, s, (int)n, MPI_INT, r, (int)n, MPI_INT, root_arg, g_inter);
    snprintf(what, sizeof what, "Scatter from group %d, n=%ld", rg, n);
    if (!in_root_group) later(what, r, n, want_block_of, rg, g_lrank, n, 0);
    else later(what, r, n, want_const, -1, 0, 0, 0);

    /* Scatterv: rank j of the other group gets j + 1 + n elements */
    tot = i_am_root ? vtotal(g_rsize, n) : 0;
    s = keep(ints(tot));
    for (int j = 0; i_am_root && j < g_rsize; ++j)
      for (long k = 0; k < vcnt(j, n); ++k) s[vdispl(j, n) + k] = val(rg, j, k);
    r = keep(ints(mine));
    fill(r, mine, -1);
    CALL(Scatterv, Iscatterv, s, cntc, disc, MPI_INT, r, (int)mine, MPI_INT, root_arg, g_inter);
    snprintf(what, sizeof what, "Scatterv from group %d, n=%ld", rg, n);
    if (!in_root_group) later(what, r, mine, want_block_of, rg, g_lrank, 0, 0);
  }

  char what[64];
  /* Allreduce (SUM, MAX): each group gets the other's reduction */
  int *s = keep(ints(n)), *r = keep(ints(n)), *r2 = keep(ints(n));
  for (long i = 0; i < n; ++i) s[i] = val(g_group, g_lrank, i);
  CALL(Allreduce, Iallreduce, s, r, (int)n, MPI_INT, MPI_SUM, g_inter);
  CALL(Allreduce, Iallreduce, s, r2, (int)n, MPI_INT, MPI_MAX, g_inter);
  snprintf(what, sizeof what, "Allreduce SUM n=%ld", n);
  later(what, r, n, want_sum, 1 - g_group, g_rsize, 0, 0);
  snprintf(what, sizeof what, "Allreduce MAX n=%ld", n);
  later(what, r2, n, want_max, 1 - g_group, g_rsize, 0, 0);

  /* A non-commutative op (left projection: a op b = a) must combine the
   * other group's ranks in rank order, leaving its rank 0's data. */
  int *rl = keep(ints(n));
  CALL(Allreduce, Iallreduce, s, rl, (int)n, MPI_INT, g_left, g_inter);
  snprintf(what, sizeof what, "Allreduce non-commutative n=%ld", n);
  later(what, rl, n, want_block_of, 1 - g_group, 0, n, 0);

  /* Allgather / Allgatherv */
  r = keep(ints(n * g_rsize));
  CALL(Allgather, Iallgather, s, (int)n, MPI_INT, r, (int)n, MPI_INT, g_inter);
  snprintf(what, sizeof what, "Allgather n=%ld", n);
  later(what, r, n * g_rsize, want_concat, 1 - g_group, g_rsize, n, 0);
  int *cnt = keep(ints(64)), *dis = keep(ints(64));
  for (int j = 0; j < g_rsize; ++j) cnt[j] = (int)vcnt(j, n), dis[j] = (int)vdispl(j, n);
  long mine = vcnt(g_lrank, n), tot = vtotal(g_rsize, n);
  int *sv = keep(ints(mine));
  for (long i = 0; i < mine; ++i) sv[i] = val(g_group, g_lrank, i);
  r = keep(ints(tot));
  fill(r, tot, -1);
  CALL(Allgatherv, Iallgatherv, sv, (int)mine, MPI_INT, r, cnt, dis, MPI_INT, g_inter);
  snprintf(what, sizeof what, "Allgatherv n=%ld", n);
  later(what, r, tot, want_vconcat, 1 - g_group, g_rsize, n, 0);

  /* Alltoall: my block for remote rank j is val(me, j*n + k) */
  int *sa = keep(ints(n * g_rsize));
  for (long i = 0; i < n * g_rsize; ++i) sa[i] = val(g_group, g_lrank, i);
  r = keep(ints(n * g_rsize));
  CALL(Alltoall, Ialltoall, sa, (int)n, MPI_INT, r, (int)n, MPI_INT, g_inter);
  snprintf(what, sizeof what, "Alltoall n=%ld", n);
  later(what, r, n * g_rsize, want_alltoall, 1 - g_group, g_lrank, n, 0);

  /* Alltoallv and Alltoallw with the same layout as Alltoall, blocks reversed in memory */
  int *sc = keep(ints(64)), *sd = keep(ints(64)), *rc = keep(ints(64)), *rd = keep(ints(64));
  int *sdb = keep(ints(64)), *rdb = keep(ints(64));
  MPI_Datatype *ty = (MPI_Datatype *)keep(xmalloc(sizeof(MPI_Datatype) * 64));
  for (int j = 0; j < g_rsize; ++j) {
    sc[j] = rc[j] = (int)n;
    sd[j] = (int)(j * n);
    rd[j] = (int)((g_rsize - 1 - j) * n);
    sdb[j] = sd[j] * (int)sizeof(int);
    rdb[j] = rd[j] * (int)sizeof(int);
    ty[j] = MPI_INT;
  }
  int *rv = keep(ints(n * g_rsize)), *rw = keep(ints(n * g_rsize));
  CALL(Alltoallv, Ialltoallv, sa, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, g_inter);
  CALL(Alltoallw, Ialltoallw, sa, sc, sdb, ty, rw, rc, rdb, ty, g_inter);
  snprintf(what, sizeof what, "Alltoallv n=%ld", n);
  later(what, rv, n * g_rsize, want_alltoall_reversed, 1 - g_group, g_lrank, n, g_rsize);
  snprintf(what, sizeof what, "Alltoallw n=%ld", n);
  later(what, rw, n * g_rsize, want_alltoall_reversed, 1 - g_group, g_lrank, n, g_rsize);

  /* Reduce_scatter_block: vectors of n * lsize (both groups' totals must agree, so use
   * n * lsize * rsize / lsize = n * rsize per rank... simpler: per-rank count n*rsize) */
  long per = n * g_rsize, total = per * g_lsize; /* = n * lsize * rsize on both sides */
  int *sr = keep(ints(total));
  for (long i = 0; i < total; ++i) sr[i] = val(g_group, g_lrank, i);
  r = keep(ints(per));
  CALL(Reduce_scatter_block, Ireduce_scatter_block, sr, r, (int)per, MPI_INT, MPI_SUM, g_inter);
  snprintf(what, sizeof what, "Reduce_scatter_block n=%ld", n);
  later(what, r, per, want_sum, 1 - g_group, g_rsize, 0, g_lrank * per);
  /* Reduce_scatter: local rank k gets a share growing with k; same total */
  int *rcounts = keep(ints(64));
  long left = total;
  for (int k = 0; k < g_lsize; ++k) {
    long c = per / 2 + k < left ? per / 2 + k : left;
    rcounts[k] = k == g_lsize - 1 ? (int)left : (int)c;
    left -= rcounts[k];
  }
  long off = 0;
  for (int k = 0; k < g_lrank; ++k) off += rcounts[k];
  r = keep(ints(rcounts[g_lrank]));
  CALL(Reduce_scatter, Ireduce_scatter, sr, r, rcounts, MPI_INT, MPI_SUM, g_inter);
  snprintf(what, sizeof what, "Reduce_scatter n=%ld", n);
  later(what, r, rcounts[g_lrank], want_sum, 1 - g_group, g_rsize, 0, off);

  CALL(Barrier, Ibarrier, g_inter);
  complete_all();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "intercoll";
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size >= 2) {
    const int na = size / 3 > 0 ? size / 3 : 1; /* group A: world ranks [0, na) */
    g_group = g_world_rank < na ? 0 : 1;
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, g_group, g_world_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_group == 0 ? na : 0, 7, &g_inter);
    MPI_Comm_set_errhandler(g_inter, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g_inter, &g_lrank);
    MPI_Comm_size(g_inter, &g_lsize);
    MPI_Comm_remote_size(g_inter, &g_rsize);
    MPI_Op_create(left_op, 0, &g_left);
    const long counts[] = {0, 1, 3, 20000};
    for (int nb = 0; nb < 2; ++nb) {
      g_nonblocking = nb;
      for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) pass(counts[k]);
    }
    /* A duplicate works as well, and collectives on it do not mix with the original's. */
    MPI_Comm dup = MPI_COMM_NULL;
    check_rc(MPI_Comm_dup(g_inter, &dup), "MPI_Comm_dup");
    MPI_Comm orig = g_inter;
    g_inter = dup;
    g_nonblocking = 1;
    pass(5);
    g_inter = orig;
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g_inter);
    MPI_Comm_free(&local);
    MPI_Op_free(&g_left);
  }
  report();
  MPI_Finalize();
  return g_failures != 0;
}
