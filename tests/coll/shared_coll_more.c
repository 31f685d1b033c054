/* Gather, Scatter, Allgatherv, Scan, Exscan, Reduce_scatter and
 * Reduce_scatter_block through the shared segment (coll/shared.h), against
 * serial references, on MPI_COMM_WORLD and on a split communicator whose
 * rank order is reversed, after a warm-up past the point where each
 * decides on its segment:
 *  - sizes straddling the segment's tiers and limits (one rank's block of
 *    0, 1, 48, 49, 4096, 4097 bytes; Scatter's p blocks together under, at
 *    and over 4096; Allgatherv blocks of unequal sizes, some empty, the
 *    largest on either side of 4096; reductions whose p * vector is at and
 *    just over 256 KiB), MPI_IN_PLACE where MPI allows it, every root;
 *  - a gapped datatype (two ints with one between them), whose gaps the
 *    calls must leave alone;
 *  - a non-commutative user op (2x2 matrix product mod 9973) for Scan,
 *    Exscan and Reduce_scatter_block, against the product in rank order;
 *  - run-ahead: Gather's non-roots, Scatter's root and Scan's lower ranks
 *    issue 600 calls while the others sleep 50 ms first;
 *  - refusals: the last rank refuses a Scan (nobody needs its data: the
 *    others succeed) and, with segments only, a Gather, whose root then
 *    gets MPI_ERR_OTHER;
 *  - on fresh duplicates, each of these calls as the one that decides.
 * With SONDE_COLL_SHM=0 the same checks run over point-to-point (the
 * Gather refusal excepted). shared_coll_v.c checks Gatherv, Scatterv and
 * Alltoallv. Any mismatch is printed and fails the job.
 */
#include "tests/coll/segments.h"
#include "tests/coll/shared_data.h"

enum { kWarmup = 20, kRunAhead = 600, kCombineSpan = 256 * 1024 };

static MPI_Datatype gapped; /* vector(2, 1, 2, MPI_INT): ints 0 and 2 of every 3 */

/* ---- Gather, Scatter, Allgatherv ---------------------------------------------------- */

static void gather_bytes(const Cx* c, size_t n, int root, int in_place) {
  const uint32_t id = ++g_id;
  const size_t all = n * (size_t)c->p;
  unsigned char *sbuf = xmalloc(n), *rbuf = xmalloc(all), *want = xmalloc(all);
  for (int r = 0; r < c->p; ++r)
    for (size_t i = 0; i < n; ++i) want[(size_t)r * n + i] = bval(id, r, (long)i);
  memcpy(sbuf, want + (size_t)c->r * n, n);
  memset(rbuf, 0xEE, all);
  const int ip = in_place && c->r == root;
  if (ip) memcpy(rbuf + (size_t)c->r * n, sbuf, n);
  CHECK_OK(MPI_Gather(ip ? MPI_IN_PLACE : sbuf, (int)n, MPI_BYTE, c->r == root ? rbuf : NULL, (int)n, MPI_BYTE, root,
                      c->comm));
  if (c->r == root)
    CHECK_BYTES(rbuf, want, all, "%s: MPI_Gather of %zu-byte blocks to %d%s", c->name, n, root, ip ? ", in place" : "");
  free(sbuf), free(rbuf), free(want);
}

/* The root's block j is bval(id, j, i); every rank gets its own. */
static void scatter_bytes(const Cx* c, size_t n, int root, int in_place) {
  const uint32_t id = ++g_id;
  const size_t all = n * (size_t)c->p;
  unsigned char *sbuf = xmalloc(all), *rbuf = xmalloc(n), *want = xmalloc(n);
  for (int r = 0; r < c->p; ++r)
    for (size_t i = 0; i < n; ++i) sbuf[(size_t)r * n + i] = c->r == root ? bval(id, r, (long)i) : 0xDD;
  for (size_t i = 0; i < n; ++i) want[i] = bval(id, c->r, (long)i);
  memset(rbuf, 0xEE, n);
  const int ip = in_place && c->r == root;
  CHECK_OK(MPI_Scatter(c->r == root ? sbuf : NULL, (int)n, MPI_BYTE, ip ? MPI_IN_PLACE : rbuf, (int)n, MPI_BYTE, root,
                       c->comm));
  const unsigned char* got = ip ? sbuf + (size_t)root * n : rbuf;
  CHECK_BYTES(got, want, n, "%s: MPI_Scatter of %zu-byte blocks from %d%s", c->name, n, root, ip ? ", in place" : "");
  free(sbuf), free(rbuf), free(want);
}

static void allgatherv_bytes(const Cx* c, size_t scale, int in_place) {
  VBlocks v = vblocks(c, scale, in_place);
  CHECK_OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : v.sbuf, v.counts[c->r], MPI_BYTE, v.rbuf, v.counts, v.displs,
                          MPI_BYTE, c->comm));
  CHECK_BYTES(v.rbuf, v.want, v.all, "%s: MPI_Allgatherv of blocks up to %zu bytes%s", c->name, 2 * scale,
              in_place ? ", in place" : "");
  vblocks_free(&v);
}

/* Gather and Scatter of `elems` gapped elements per rank. */
static void gapped_rooted(const Cx* c, size_t elems, int root) {
  const uint32_t id = ++g_id;
  const size_t one = 3 * elems, all = one * (size_t)c->p;
  int *mine = xmalloc(one * sizeof(int)), *every = xmalloc(all * sizeof(int)), *want = xmalloc(all * sizeof(int));
  for (size_t k = 0; k < all; ++k) want[k] = k % 3 == 1 ? SENT : ival(id, (int)(k / one), (long)(k % one));
  memcpy(mine, want + (size_t)c->r * one, one * sizeof(int));
  for (size_t k = 0; k < all; ++k) every[k] = SENT;
  CHECK_OK(MPI_Gather(mine, (int)elems, gapped, every, (int)elems, gapped, root, c->comm));
  if (c->r == root) CHECK_INTS(every, want, all, "%s: MPI_Gather of %zu gapped elements to %d", c->name, elems, root);
  if (c->r != root) memset(every, 0, all * sizeof(int));
  for (size_t k = 0; k < one; ++k) mine[k] = SENT;
  CHECK_OK(MPI_Scatter(every, (int)elems, gapped, mine, (int)elems, gapped, root, c->comm));
  CHECK_INTS(mine, want + (size_t)c->r * one, one, "%s: MPI_Scatter of %zu gapped elements from %d", c->name, elems,
             root);
  free(mine), free(every), free(want);
}

/* ---- Scan, Exscan, Reduce_scatter(_block) ------------------------------------------- */

/* Sum over ranks lo..hi-1 of ival(id, q, k). */
static int sum_of(uint32_t id, int lo, int hi, long k) {
  int s = 0;
  for (int q = lo; q < hi; ++q) s += ival(id, q, k);
  return s;
}

/* MPI_SUM over `elems` ints, or gapped elements (gaps keep SENT). */
static void scan_sum(const Cx* c, size_t elems, int exclusive, int in_place, int gaps) {
  const uint32_t id = ++g_id;
  const size_t n = gaps ? 3 * elems : elems;
  int *in = xmalloc(n * sizeof(int)), *out = xmalloc(n * sizeof(int)), *want = xmalloc(n * sizeof(int));
  for (size_t k = 0; k < n; ++k) {
    const int gap = gaps && k % 3 == 1;
    in[k] = gap ? SENT : ival(id, c->r, (long)k);
    want[k] = gap ? SENT : sum_of(id, 0, exclusive ? c->r : c->r + 1, (long)k);
    out[k] = in_place ? in[k] : SENT;
  }
  const char* call = exclusive ? "MPI_Exscan" : "MPI_Scan";
  const void* sb = in_place ? MPI_IN_PLACE : in;
  const MPI_Datatype t = gaps ? gapped : MPI_INT;
  int rc = exclusive ? MPI_Exscan(sb, out, (int)elems, t, MPI_SUM, c->comm)
                     : MPI_Scan(sb, out, (int)elems, t, MPI_SUM, c->comm);
  CHECK(rc == MPI_SUCCESS, "%s: %s returned %d", c->name, call, rc);
  if (!exclusive || c->r > 0)
    CHECK_INTS(out, want, n, "%s: %s of %zu %s%s", c->name, call, elems, gaps ? "gapped elements" : "ints",
               in_place ? ", in place" : "");
  free(in), free(out), free(want);
}

/* Product in rank order over ranks lo..hi-1 of matrix k. */
static Mat product(uint32_t id, int lo, int hi, long k) {
  Mat m = mat_of(id, lo, k);
  for (int q = lo + 1; q < hi; ++q) m = mul(m, mat_of(id, q, k));
  return m;
}

static void scan_mat(const Cx* c, size_t elems, int exclusive, int in_place) {
  const uint32_t id = ++g_id;
  Mat *in = xmalloc(elems * sizeof(Mat)), *out = xmalloc(elems * sizeof(Mat)), *want = xmalloc(elems * sizeof(Mat));
  for (size_t k = 0; k < elems; ++k) {
    in[k] = mat_of(id, c->r, (long)k);
    if (!exclusive || c->r > 0) want[k] = product(id, 0, exclusive ? c->r : c->r + 1, (long)k);
  }
  if (in_place) memcpy(out, in, elems * sizeof(Mat));
  else memset(out, 0xEE, elems * sizeof(Mat));
  const void* sb = in_place ? MPI_IN_PLACE : in;
  CHECK_OK(exclusive ? MPI_Exscan(sb, out, (int)elems, mat_type, mat_op, c->comm)
                     : MPI_Scan(sb, out, (int)elems, mat_type, mat_op, c->comm));
  if (!exclusive || c->r > 0)
    CHECK_INTS((int*)out, (int*)want, 4 * elems, "%s: %s of %zu matrices (non-commutative)%s", c->name,
               exclusive ? "MPI_Exscan" : "MPI_Scan", elems, in_place ? ", in place" : "");
  free(in), free(out), free(want);
}

/* Reduce_scatter_block (block > 0: that many ints each) or Reduce_scatter
 * (rank j gets (j + id) % 3 * scale ints; some none). */
static void reduce_scatter_sum(const Cx* c, size_t block, size_t scale, int in_place) {
  const uint32_t id = ++g_id;
  const int p = c->p;
  int* counts = xmalloc((size_t)p * sizeof(int));
  size_t total = 0, first = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = block ? (int)block : (int)(((uint32_t)j + id) % 3 * scale);
    if (j == c->r) first = total;
    total += (size_t)counts[j];
  }
  const size_t mine = (size_t)counts[c->r];
  int *in = xmalloc(total * sizeof(int)), *out = xmalloc(total * sizeof(int)), *want = xmalloc(total * sizeof(int));
  for (size_t k = 0; k < total; ++k) in[k] = ival(id, c->r, (long)k);
  for (size_t k = 0; k < mine; ++k) want[k] = sum_of(id, 0, p, (long)(first + k));
  if (in_place) memcpy(out, in, total * sizeof(int));
  else
    for (size_t k = 0; k < total; ++k) out[k] = SENT;
  const void* sb = in_place ? MPI_IN_PLACE : in;
  if (block) CHECK_OK(MPI_Reduce_scatter_block(sb, out, (int)block, MPI_INT, MPI_SUM, c->comm));
  else CHECK_OK(MPI_Reduce_scatter(sb, out, counts, MPI_INT, MPI_SUM, c->comm));
  CHECK_INTS(out, want, mine, "%s: %s of %zu ints in all%s", c->name,
             block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter", total, in_place ? ", in place" : "");
  free(counts), free(in), free(out), free(want);
}

static void reduce_scatter_mat(const Cx* c, size_t block) {
  const uint32_t id = ++g_id;
  const size_t total = block * (size_t)c->p;
  Mat *in = xmalloc(total * sizeof(Mat)), *out = xmalloc(block * sizeof(Mat)), *want = xmalloc(block * sizeof(Mat));
  for (size_t k = 0; k < total; ++k) in[k] = mat_of(id, c->r, (long)k);
  for (size_t k = 0; k < block; ++k) want[k] = product(id, 0, c->p, (long)((size_t)c->r * block + k));
  CHECK_OK(MPI_Reduce_scatter_block(in, out, (int)block, mat_type, mat_op, c->comm));
  CHECK_INTS((int*)out, (int*)want, 4 * block, "%s: MPI_Reduce_scatter_block of %zu matrices (non-commutative)",
             c->name, block);
  free(in), free(out), free(want);
}

static void reduce_scatter_gapped(const Cx* c, size_t block) {
  const uint32_t id = ++g_id;
  const size_t n = 3 * block * (size_t)c->p;
  int *in = xmalloc(n * sizeof(int)), *out = xmalloc(3 * block * sizeof(int)), *want = xmalloc(3 * block * sizeof(int));
  for (size_t k = 0; k < n; ++k) in[k] = k % 3 == 1 ? SENT : ival(id, c->r, (long)k);
  for (size_t k = 0; k < 3 * block; ++k) {
    const size_t at = (size_t)c->r * 3 * block + k;
    want[k] = k % 3 == 1 ? SENT : sum_of(id, 0, c->p, (long)at);
    out[k] = SENT;
  }
  CHECK_OK(MPI_Reduce_scatter_block(in, out, (int)block, gapped, MPI_SUM, c->comm));
  CHECK_INTS(out, want, 3 * block, "%s: MPI_Reduce_scatter_block of %zu gapped elements", c->name, block);
  free(in), free(out), free(want);
}

/* ---- the checks on one communicator -------------------------------------------------- */

static void sizes(const Cx* c) {
  static const size_t bytes[] = {0, 1, 48, 49, 4096, 4097};
  const size_t p = (size_t)c->p;
  for (size_t s = 0; s < 6; ++s)
    for (int ip = 0; ip < 2; ++ip)
      for (int root = 0; root < c->p; ++root) gather_bytes(c, bytes[s], root, ip);
  const size_t scatter_bytes_[] = {1, 48 / p, 48 / p + 1, 4096 / p, 4096 / p + 1, 4097};
  for (size_t s = 0; s < 6; ++s)
    for (int ip = 0; ip < 2; ++ip)
      for (int root = 0; root < c->p; ++root) scatter_bytes(c, scatter_bytes_[s], root, ip);
  static const size_t scales[] = {0, 1, 24, 25, 2048, 2049};
  for (size_t s = 0; s < 6; ++s)
    for (int ip = 0; ip < 2; ++ip) allgatherv_bytes(c, scales[s], ip);
  const size_t span = kCombineSpan / 4 / p; /* ints: p * vector at 256 KiB */
  const size_t ints[] = {1, 12, 13, 1024, 1025, span, span + 1};
  for (size_t s = 0; s < 7; ++s)
    for (int ex = 0; ex < 2; ++ex)
      for (int ip = 0; ip < 2; ++ip) scan_sum(c, ints[s], ex, ip, 0);
  const size_t blocks[] = {1, 3, span / p, span / p + 1};
  for (size_t s = 0; s < 4; ++s)
    for (int ip = 0; ip < 2; ++ip) reduce_scatter_sum(c, blocks[s], 0, ip);
  const size_t vscales[] = {1, 5, span / p, span / p + 1};
  for (size_t s = 0; s < 4; ++s)
    for (int ip = 0; ip < 2; ++ip) reduce_scatter_sum(c, 0, vscales[s], ip);
}

static void shaped(const Cx* c) {
  static const size_t elems[] = {1, 7, 300, 1500};
  for (size_t e = 0; e < 4; ++e) {
    for (int root = 0; root<c->p; root += c->p> 2 ? c->p - 1 : 1) gapped_rooted(c, elems[e], root);
    for (int ex = 0; ex < 2; ++ex)
      for (int ip = 0; ip < 2; ++ip) scan_sum(c, elems[e], ex, ip, 1);
    reduce_scatter_gapped(c, elems[e]);
  }
}

static void noncommutative(const Cx* c) {
  static const size_t elems[] = {1, 3, 255, 256, 257}; /* 16 .. 4112 bytes */
  for (size_t e = 0; e < 5; ++e) {
    for (int ex = 0; ex < 2; ++ex)
      for (int ip = 0; ip < 2; ++ip) scan_mat(c, elems[e], ex, ip);
    reduce_scatter_mat(c, elems[e]);
  }
}

/* Gather's non-roots, Scatter's root and the lower ranks of a Scan run
 * kRunAhead calls ahead of ranks that sleep first; sizes cycle through the
 * segment's tiers and point-to-point. */
static void run_ahead(const Cx* c) {
  static const size_t bytes[] = {4, 48, 1, 8, 16, 4096, 64, 4097, 200};
  for (int root = 0; root < c->p; ++root) {
    if (c->r == root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) gather_bytes(c, bytes[i % (i < 400 ? 5 : 9)], root, 0);
    if (c->r != root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) scatter_bytes(c, bytes[i % (i < 400 ? 5 : 9)] / (size_t)c->p + 1, root, 0);
  }
  static const size_t ints[] = {1, 12, 2, 1024, 1025, 3};
  if (c->r == c->p - 1) itest_sleep(0.05);
  for (int i = 0; i < kRunAhead; ++i) scan_sum(c, ints[i % (i < 400 ? 3 : 6)], i % 2, 0, 0);
}

/* The last rank refuses a Scan (MPI_DATATYPE_NULL): nobody reads its data,
 * so the others succeed. With segments, it also refuses a Gather to root
 * 0, which then gets MPI_ERR_OTHER instead of waiting for it. */
static void refusal(const Cx* c) {
  const uint32_t id = ++g_id;
  const int last = c->p - 1;
  int in[4], out[4];
  for (int k = 0; k < 4; ++k) in[k] = ival(id, c->r, k), out[k] = SENT;
  const int rc = MPI_Scan(in, out, 4, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, MPI_SUM, c->comm);
  if (c->r == last) {
    CHECK_CLASS(rc, MPI_ERR_TYPE);
  } else {
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Scan with a refusing last rank returned %d on rank %d", c->name, rc, c->r);
    for (int k = 0; k < 4; ++k)
      CHECK(out[k] == sum_of(id, 0, c->r + 1, k), "%s: MPI_Scan with a refusing last rank: int %d is %d", c->name, k,
            out[k]);
  }
  CHECK_OK(MPI_Barrier(c->comm));
  if (shm_on && c->p > 1) {
    int all[16 * 4];
    const int rg = MPI_Gather(in, 4, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, all, 4, MPI_INT, 0, c->comm);
    if (c->r == last) CHECK_CLASS(rg, MPI_ERR_TYPE);
    else if (c->r == 0) CHECK_CLASS(rg, MPI_ERR_OTHER);
    else CHECK(rg == MPI_SUCCESS, "%s: MPI_Gather with a refusing rank returned %d on rank %d", c->name, rg, c->r);
    CHECK_OK(MPI_Barrier(c->comm));
  }
  gather_bytes(c, 48, last, 0);
  scatter_bytes(c, 8, 0, 1);
  scan_sum(c, 5, 1, 0, 0);
  reduce_scatter_sum(c, 2, 0, 0);
  allgatherv_bytes(c, 24, 0);
  CHECK_OK(MPI_Barrier(c->comm));
}

/* On fresh duplicates, the call that decides on the segment (the 17th) is
 * each of these kinds in turn; later calls agree, and the duplicate has
 * its segment from then on. */
static void decision_points(void) {
  for (int v = 0; v < 8; ++v) {
    int before;
    Cx c = deciding_dup(16, &before);
    switch (v) {
      case 0: gather_bytes(&c, 8, c.p - 1, 0); break;
      case 1: scatter_bytes(&c, 4097, 0, 0); break;
      case 2: allgatherv_bytes(&c, 24, 1); break;
      case 3: scan_sum(&c, 3, 0, 0, 0); break;
      case 4: scan_mat(&c, 2, 1, 1); break;
      case 5: reduce_scatter_sum(&c, 4, 0, 0); break;
      case 6: reduce_scatter_sum(&c, 0, 3, 1); break;
      case 7: refusal(&c); break;
    }
    check_decided(v, before);
    gather_bytes(&c, 4, 0, 1);
    scan_sum(&c, 9, 1, 1, 0);
    CHECK_OK(MPI_Comm_free(&c.comm));
  }
}

int main(int argc, char** argv) {
  checker_init(&argc, &argv);
  MPI_Type_vector(2, 1, 2, MPI_INT, &gapped);
  MPI_Type_commit(&gapped);
  MPI_Type_contiguous(4, MPI_INT, &mat_type);
  MPI_Type_commit(&mat_type);
  MPI_Op_create(mat_fn, 0, &mat_op);

  MPI_Comm rev;
  Cx cx[2];
  two_comms(cx, &rev, kWarmup);

  for (int i = 0; i < 2; ++i) {
    sizes(&cx[i]);
    shaped(&cx[i]);
    noncommutative(&cx[i]);
    run_ahead(&cx[i]);
    refusal(&cx[i]);
  }
  decision_points();

  MPI_Comm_free(&rev);
  MPI_Op_free(&mat_op);
  MPI_Type_free(&mat_type);
  MPI_Type_free(&gapped);
  return itest_finish("shared_coll_more");
}
