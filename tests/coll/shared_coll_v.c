/* Gatherv, Scatterv and Alltoallv through the shared segment
 * (coll/shared.h), which they take block by block: a block small enough
 * goes through the segment, the others point-to-point in the same call.
 * Against serial references, on MPI_COMM_WORLD and on a split
 * communicator whose rank order is reversed, after a warm-up past the
 * point where each decides on its segment:
 *  - blocks of unequal sizes, some empty, on both sides of each call's
 *    limit (a medium slot for Gatherv; Scatterv's and Alltoallv's stride,
 *    which shrinks with the number of ranks), so one call mixes both ways;
 *    every root, MPI_IN_PLACE at the root; the gaps between the blocks in
 *    the buffers stay untouched, and so does a root's send buffer;
 *  - a gapped datatype (two ints with one between them);
 *  - a Scatterv whose receiver expects fewer bytes than the root sends:
 *    MPI_ERR_TRUNCATE on that receiver;
 *  - run-ahead: Gatherv's non-roots and Scatterv's root issue 600 calls
 *    while the others sleep 50 ms first;
 *  - refusals (segments only): a rank whose block others need refuses a
 *    Gatherv, a Scatterv and an Alltoallv; those others get MPI_ERR_OTHER
 *    and later calls agree;
 *  - on fresh duplicates, each of these calls as the one that decides.
 * With SONDE_COLL_SHM=0 the same checks run over point-to-point (the
 * refusals excepted). Any mismatch is printed and fails the job.
 */
#include "tests/coll/segments.h"
#include "tests/coll/shared_data.h"

enum { kWarmup = 20, kRunAhead = 600 };

static MPI_Datatype gapped; /* vector(2, 1, 2, MPI_INT): ints 0 and 2 of every 3 */

/* ---- bytes ------------------------------------------------------------------------- */

static void gatherv_bytes(const Cx* c, size_t scale, int root, int in_place) {
  const int ip = in_place && c->r == root;
  VBlocks v = vblocks(c, scale, ip);
  CHECK_OK(MPI_Gatherv(ip ? MPI_IN_PLACE : v.sbuf, v.counts[c->r], MPI_BYTE, v.rbuf, v.counts, v.displs, MPI_BYTE, root,
                       c->comm));
  if (c->r == root)
    CHECK_BYTES(v.rbuf, v.want, v.all, "%s: MPI_Gatherv of blocks up to %zu bytes to %d%s", c->name, 2 * scale, root,
                ip ? ", in place" : "");
  vblocks_free(&v);
}

/* The root sends from a copy of `want`; rank j gets its block, and the
 * byte after it in its buffer stays 0xEE. */
static void scatterv_bytes(const Cx* c, size_t scale, int root, int in_place) {
  const int ip = in_place && c->r == root;
  VBlocks v = vblocks(c, scale, 0);
  const size_t mine = (size_t)v.counts[c->r];
  unsigned char *send = xmalloc(v.all), *got = xmalloc(mine + 1);
  memcpy(send, v.want, v.all);
  memset(got, 0xEE, mine + 1);
  CHECK_OK(
      MPI_Scatterv(send, v.counts, v.displs, MPI_BYTE, ip ? MPI_IN_PLACE : got, (int)mine, MPI_BYTE, root, c->comm));
  if (!ip) {
    CHECK_BYTES(got, v.want + v.displs[c->r], mine, "%s: MPI_Scatterv of blocks up to %zu bytes from %d", c->name,
                2 * scale, root);
    CHECK(got[mine] == 0xEE, "%s: MPI_Scatterv from %d wrote past a %zu-byte block", c->name, root, mine);
  }
  if (c->r == root)
    CHECK_BYTES(send, v.want, v.all, "%s: the send buffer of MPI_Scatterv from %d%s", c->name, root,
                ip ? ", in place" : "");
  free(send), free(got);
  vblocks_free(&v);
}

/* Rank r's block for rank j has (r + 2j + id) % 3 * scale bytes, 3 bytes
 * apart in both buffers, whose gaps keep 0xEE. */
static size_t a2a_bytes(uint32_t id, int from, int to, size_t scale) {
  return ((uint32_t)from + 2u * (uint32_t)to + id) % 3 * scale;
}

static void alltoallv_bytes(const Cx* c, size_t scale) {
  const uint32_t id = ++g_id;
  const int p = c->p, me = c->r;
  int *sc = xmalloc((size_t)p * sizeof(int)), *sd = xmalloc((size_t)p * sizeof(int));
  int *rc = xmalloc((size_t)p * sizeof(int)), *rd = xmalloc((size_t)p * sizeof(int));
  size_t sall = 0, rall = 0;
  for (int j = 0; j < p; ++j) {
    sc[j] = (int)a2a_bytes(id, me, j, scale), sd[j] = (int)sall, sall += (size_t)sc[j] + 3;
    rc[j] = (int)a2a_bytes(id, j, me, scale), rd[j] = (int)rall, rall += (size_t)rc[j] + 3;
  }
  unsigned char *sbuf = xmalloc(sall), *rbuf = xmalloc(rall), *want = xmalloc(rall);
  memset(sbuf, 0xDD, sall), memset(rbuf, 0xEE, rall), memset(want, 0xEE, rall);
  for (int j = 0; j < p; ++j) {
    for (int i = 0; i < sc[j]; ++i) sbuf[sd[j] + i] = bval(id, me * 64 + j, i);
    for (int i = 0; i < rc[j]; ++i) want[rd[j] + i] = bval(id, j * 64 + me, i);
  }
  CHECK_OK(MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, c->comm));
  CHECK_BYTES(rbuf, want, rall, "%s: MPI_Alltoallv of blocks up to %zu bytes", c->name, 2 * scale);
  free(sc), free(sd), free(rc), free(rd), free(sbuf), free(rbuf), free(want);
}

/* ---- a gapped datatype ---------------------------------------------------------------- */

/* Scatterv and Alltoallv of `elems` gapped elements per block, one
 * element's room between blocks. */
static void gapped_v(const Cx* c, int elems, int root) {
  const uint32_t id = ++g_id;
  const int p = c->p, me = c->r, stride = elems + 1;
  const size_t one = 3 * (size_t)elems, all = 3 * (size_t)stride * (size_t)p;
  int *counts = xmalloc((size_t)p * sizeof(int)), *displs = xmalloc((size_t)p * sizeof(int));
  for (int j = 0; j < p; ++j) counts[j] = elems, displs[j] = j * stride;
  int *send = xmalloc(all * sizeof(int)), *recv = xmalloc(all * sizeof(int)), *want = xmalloc(all * sizeof(int));
  for (size_t k = 0; k < all; ++k) {
    const int j = (int)(k / (3 * (size_t)stride));
    const size_t at = k % (3 * (size_t)stride);
    send[k] = at < one && at % 3 != 1 ? ival(id, me * 64 + j, (long)at) : SENT;
    want[k] = at < one && at % 3 != 1 ? ival(id, j * 64 + me, (long)at) : SENT;
    recv[k] = SENT;
  }
  CHECK_OK(MPI_Alltoallv(send, counts, displs, gapped, recv, counts, displs, gapped, c->comm));
  CHECK_INTS(recv, want, all, "%s: MPI_Alltoallv of %d gapped elements per block", c->name, elems);
  for (size_t k = 0; k < all; ++k) recv[k] = SENT;
  CHECK_OK(MPI_Scatterv(send, counts, displs, gapped, recv, elems, gapped, root, c->comm));
  for (size_t k = 0; k < one; ++k) want[k] = k % 3 != 1 ? ival(id, root * 64 + me, (long)k) : SENT;
  CHECK_INTS(recv, want, one, "%s: MPI_Scatterv of %d gapped elements from %d", c->name, elems, root);
  free(counts), free(displs), free(send), free(recv), free(want);
}

/* ---- the checks on one communicator -------------------------------------------------- */

static void sizes(const Cx* c) {
  /* Blocks of 0, s and 2s bytes: across a medium slot (4096) and the
   * stride of 2 to 5 ranks (2040, 1360, 1016, 816), and of a 64-byte slot. */
  static const size_t scales[] = {0, 1, 8, 24, 400, 700, 1100, 2100, 2049};
  for (size_t s = 0; s < 9; ++s) {
    for (int root = 0; root < c->p; ++root)
      for (int ip = 0; ip < 2; ++ip) {
        gatherv_bytes(c, scales[s], root, ip);
        scatterv_bytes(c, scales[s], root, ip);
      }
    alltoallv_bytes(c, scales[s]);
  }
  static const int elems[] = {1, 7, 300};
  for (int e = 0; e < 3; ++e) gapped_v(c, elems[e], c->p - 1);
}

/* Rank 1 (of at least 2) expects 4 bytes of a Scatterv whose root sends
 * it 8. */
static void truncated(const Cx* c) {
  if (c->p < 2) return;
  int counts[16], displs[16];
  unsigned char send[16 * 8], got[8];
  for (int j = 0; j < c->p; ++j) counts[j] = 8, displs[j] = 8 * j;
  memset(send, 7, sizeof send);
  const int rc = MPI_Scatterv(send, counts, displs, MPI_BYTE, got, c->r == 1 ? 4 : 8, MPI_BYTE, 0, c->comm);
  if (c->r == 1) CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
  else CHECK(rc == MPI_SUCCESS, "%s: MPI_Scatterv with one short receiver returned %d on rank %d", c->name, rc, c->r);
  CHECK_OK(MPI_Barrier(c->comm));
}

/* Gatherv's non-roots and Scatterv's root run kRunAhead calls ahead of
 * ranks that sleep first; sizes cycle through the segment and
 * point-to-point. */
static void run_ahead(const Cx* c) {
  static const size_t scales[] = {4, 24, 1, 8, 16, 2100, 64, 2049, 200};
  for (int root = 0; root < c->p; ++root) {
    if (c->r == root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) gatherv_bytes(c, scales[i % (i < 400 ? 5 : 9)], root, 0);
    if (c->r != root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) scatterv_bytes(c, scales[i % (i < 400 ? 5 : 9)], root, 0);
  }
}

/* With segments: the last rank refuses a Gatherv to root 0 and an
 * Alltoallv, and root 0 a Scatterv (MPI_DATATYPE_NULL); the ranks that
 * need the refusing rank's block get MPI_ERR_OTHER instead of waiting. */
static void refusal(const Cx* c) {
  if (!shm_on || c->p < 2) return;
  const int last = c->p - 1;
  /* One int per block: through the segment even with a 64-byte slot. */
  int in[16], out[16], counts[16], displs[16];
  for (int j = 0; j < c->p; ++j) counts[j] = 1, displs[j] = j, in[j] = j;
  const int rg =
      MPI_Gatherv(in, 1, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, out, counts, displs, MPI_INT, 0, c->comm);
  if (c->r == last) CHECK_CLASS(rg, MPI_ERR_TYPE);
  else if (c->r == 0) CHECK_CLASS(rg, MPI_ERR_OTHER);
  else CHECK(rg == MPI_SUCCESS, "%s: MPI_Gatherv with a refusing rank returned %d on rank %d", c->name, rg, c->r);
  CHECK_OK(MPI_Barrier(c->comm));
  const int rs = MPI_Scatterv(in, counts, displs, c->r == 0 ? MPI_DATATYPE_NULL : MPI_INT, out, 1, MPI_INT, 0, c->comm);
  if (c->r == 0) CHECK_CLASS(rs, MPI_ERR_TYPE);
  else CHECK_CLASS(rs, MPI_ERR_OTHER);
  CHECK_OK(MPI_Barrier(c->comm));
  const int ra = MPI_Alltoallv(in, counts, displs, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, out, counts, displs,
                               MPI_INT, c->comm);
  if (c->r == last) CHECK_CLASS(ra, MPI_ERR_TYPE);
  else CHECK_CLASS(ra, MPI_ERR_OTHER);
  CHECK_OK(MPI_Barrier(c->comm));
  gatherv_bytes(c, 8, last, 0);
  scatterv_bytes(c, 8, 0, 1);
  alltoallv_bytes(c, 8);
  CHECK_OK(MPI_Barrier(c->comm));
}

/* On fresh duplicates, the call that decides on the segment (the 17th) is
 * each of these kinds in turn; later calls agree, and the duplicate has
 * its segment from then on. */
static void decision_points(void) {
  for (int v = 0; v < 3; ++v) {
    int before;
    Cx c = deciding_dup(16, &before);
    switch (v) {
      case 0: gatherv_bytes(&c, 24, c.p - 1, 1); break;
      case 1: scatterv_bytes(&c, 2100, 0, 0); break;
      case 2: alltoallv_bytes(&c, 8); break;
    }
    check_decided(v, before);
    gatherv_bytes(&c, 4, 0, 0);
    scatterv_bytes(&c, 4, 0, 1);
    alltoallv_bytes(&c, 4);
    CHECK_OK(MPI_Comm_free(&c.comm));
  }
}

int main(int argc, char** argv) {
  checker_init(&argc, &argv);
  MPI_Type_vector(2, 1, 2, MPI_INT, &gapped);
  MPI_Type_commit(&gapped);

  MPI_Comm rev;
  Cx cx[2];
  two_comms(cx, &rev, kWarmup);

  for (int i = 0; i < 2; ++i) {
    sizes(&cx[i]);
    truncated(&cx[i]);
    run_ahead(&cx[i]);
    refusal(&cx[i]);
  }
  decision_points();

  MPI_Comm_free(&rev);
  MPI_Type_free(&gapped);
  return itest_finish("shared_coll_v");
}
