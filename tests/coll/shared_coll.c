/* Shared-segment collectives (coll/shared.h) against serial references.
 *
 * After a warm-up of barriers (past the point where a communicator decides
 * on a segment), on MPI_COMM_WORLD and on a split communicator whose rank
 * order is reversed, every rank computes locally what each call must give
 * and compares, gaps of derived datatypes included:
 *  - Barrier, Bcast, Reduce, Allreduce, Allgather and Alltoall with one
 *    rank's contribution straddling the segment's tiers and limits (0, 1,
 *    8, 48, 49, 1024, 4096, 4097, 65536, 65537 bytes; reductions whose
 *    p * vector is at and just over 256 KiB; Alltoall blocks with p*block
 *    under, at and over 4096), MPI_IN_PLACE where MPI allows it, every
 *    root;
 *  - a strided (vector, resized) and a shifted (indexed, true_lb > 0)
 *    datatype for Bcast, Allgather, Reduce and Allreduce;
 *  - a non-commutative user op (2x2 matrix product mod 9973) for Reduce and
 *    Allreduce, against rank0 op rank1 op ... op rank(p-1);
 *  - run-ahead: a Bcast root, or a Reduce's non-roots, issue 600 calls of
 *    mixed sizes while the other ranks sleep 50 ms first;
 *  - an MPI_Iallreduce started before blocking calls and waited on after;
 *  - a refused MPI_Bcast (MPI_DATATYPE_NULL on the last rank) after the
 *    segment exists, and (segments only) a refused MPI_Reduce whose root
 *    then gets MPI_ERR_OTHER, then mixed calls;
 *  - on fresh duplicates, each kind of call (and a refused one, and one
 *    with an MPI_Iallreduce in flight) as the call that decides;
 *  - 30 rounds of MPI_Comm_dup, 20 Allreduces, MPI_Comm_free: each dup maps
 *    a segment and unmaps it when freed (/proc/self/maps), and no
 *    /dev/shm/sonde-<job>-coll-* object is left.
 * Unless SONDE_COLL_SHM=0 (or the job has 1 or more than 16 ranks), WORLD
 * and the split communicator each map a segment after the warm-up; else
 * none is mapped and the same checks run over point-to-point. Any mismatch
 * is printed and fails the job.
 */
#include <dirent.h>

#include "tests/coll/segments.h"
#include "tests/coll/shared_data.h"
#include "tests/integration/itest.h"

enum { kWarmup = 20, kRunAhead = 600, kDups = 30, kDupCalls = 20 };

/* ---- 1. byte-sized calls around the slot size ------------------------------------- */

static const size_t kSizes[] = {0, 1, 8, 48, 49, 1024, 4096, 4097, 65536, 65537};
enum { kNSizes = sizeof kSizes / sizeof kSizes[0] };
/* Reductions take the segment while p * vector <= 256 KiB. */
enum { kCombineSpan = 256 * 1024 };

static void bcast_bytes(const Cx* c, size_t n, int root) {
  const uint32_t id = ++g_id;
  unsigned char *buf = xmalloc(n), *want = xmalloc(n);
  for (size_t i = 0; i < n; ++i) {
    want[i] = bval(id, root, (long)i);
    buf[i] = c->r == root ? want[i] : 0xEE;
  }
  CHECK_OK(MPI_Bcast(buf, (int)n, MPI_BYTE, root, c->comm));
  CHECK_BYTES(buf, want, n, "%s: MPI_Bcast of %zu bytes from root %d", c->name, n, root);
  free(buf);
  free(want);
}

/* MPI_Reduce to `root`, or MPI_Allreduce (root < 0), MPI_SUM over n bytes
 * as MPI_UNSIGNED_CHAR or as n/4 MPI_INT. Non-roots pass no receive buffer. */
static void reduce_sum(const Cx* c, size_t n, int as_int, int root, int in_place) {
  const uint32_t id = ++g_id;
  const size_t count = as_int ? n / 4 : n;
  unsigned char *sbuf = xmalloc(n), *rbuf = xmalloc(n), *want = xmalloc(n);
  for (size_t i = 0; i < count; ++i) {
    int sum = 0;
    for (int r = 0; r < c->p; ++r) sum += as_int ? ival(id, r, (long)i) : bval(id, r, (long)i);
    if (as_int) {
      ((int*)want)[i] = sum;
      ((int*)sbuf)[i] = ival(id, c->r, (long)i);
    } else {
      want[i] = (unsigned char)sum;
      sbuf[i] = bval(id, c->r, (long)i);
    }
  }
  const int receives = root < 0 || c->r == root;
  if (in_place && receives) memcpy(rbuf, sbuf, n);
  else memset(rbuf, 0xEE, n);
  const MPI_Datatype t = as_int ? MPI_INT : MPI_UNSIGNED_CHAR;
  const void* s = in_place && receives ? MPI_IN_PLACE : sbuf;
  const int rc = root < 0 ? MPI_Allreduce(s, rbuf, (int)count, t, MPI_SUM, c->comm)
                          : MPI_Reduce(s, receives ? rbuf : NULL, (int)count, t, MPI_SUM, root, c->comm);
  CHECK(rc == MPI_SUCCESS, "%s: reduction returned %d", c->name, rc);
  if (receives)
    CHECK_BYTES(rbuf, want, count * (as_int ? 4 : 1), "%s: %s of %zu %s, root %d%s", c->name,
                root < 0 ? "MPI_Allreduce" : "MPI_Reduce", count, as_int ? "ints" : "bytes", root,
                in_place ? ", in place" : "");
  free(sbuf);
  free(rbuf);
  free(want);
}

static void allgather_bytes(const Cx* c, size_t n, int in_place) {
  const uint32_t id = ++g_id;
  const size_t all = n * (size_t)c->p;
  unsigned char *sbuf = xmalloc(n), *rbuf = xmalloc(all), *want = xmalloc(all);
  for (int r = 0; r < c->p; ++r)
    for (size_t i = 0; i < n; ++i) want[(size_t)r * n + i] = bval(id, r, (long)i);
  memcpy(sbuf, want + (size_t)c->r * n, n);
  memset(rbuf, 0xEE, all);
  if (in_place) memcpy(rbuf + (size_t)c->r * n, sbuf, n);
  CHECK_OK(MPI_Allgather(in_place ? MPI_IN_PLACE : sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, c->comm));
  CHECK_BYTES(rbuf, want, all, "%s: MPI_Allgather of %zu-byte blocks%s", c->name, n, in_place ? ", in place" : "");
  free(sbuf);
  free(rbuf);
  free(want);
}

/* Block j of rank r's send buffer: bytes bval(id, r * p + j, i). */
static void alltoall_bytes(const Cx* c, size_t b, int in_place) {
  const uint32_t id = ++g_id;
  const int p = c->p;
  const size_t all = b * (size_t)p;
  unsigned char *sbuf = xmalloc(all), *rbuf = xmalloc(all), *want = xmalloc(all);
  for (int j = 0; j < p; ++j)
    for (size_t i = 0; i < b; ++i) {
      sbuf[(size_t)j * b + i] = bval(id, c->r * p + j, (long)i);
      want[(size_t)j * b + i] = bval(id, j * p + c->r, (long)i);
    }
  if (in_place) memcpy(rbuf, sbuf, all);
  else memset(rbuf, 0xEE, all);
  CHECK_OK(MPI_Alltoall(in_place ? MPI_IN_PLACE : sbuf, (int)b, MPI_BYTE, rbuf, (int)b, MPI_BYTE, c->comm));
  CHECK_BYTES(rbuf, want, all, "%s: MPI_Alltoall of %zu-byte blocks (%zu in all)%s", c->name, b, all,
              in_place ? ", in place" : "");
  free(sbuf);
  free(rbuf);
  free(want);
}

static void sizes(const Cx* c) {
  for (int k = 0; k < kNSizes; ++k) {
    const size_t n = kSizes[k];
    CHECK_OK(MPI_Barrier(c->comm));
    for (int root = 0; root < c->p; ++root) {
      bcast_bytes(c, n, root);
      for (int in_place = 0; in_place < 2; ++in_place) {
        reduce_sum(c, n, 0, root, in_place);
        if (n % 4 == 0) reduce_sum(c, n, 1, root, in_place);
      }
    }
    for (int in_place = 0; in_place < 2; ++in_place) {
      reduce_sum(c, n, 0, -1, in_place);
      if (n % 4 == 0) reduce_sum(c, n, 1, -1, in_place);
      allgather_bytes(c, n, in_place);
    }
  }
  /* Reductions at and just over the span (multiples of 4: as ints too). */
  const size_t span = (size_t)kCombineSpan / (size_t)c->p / 4 * 4;
  const size_t spans[] = {span, span + 4};
  for (int k = 0; k < 2; ++k)
    for (int in_place = 0; in_place < 2; ++in_place) {
      reduce_sum(c, spans[k], 1, -1, in_place);
      reduce_sum(c, spans[k], 1, c->p - 1, in_place);
    }
  const size_t q = 4096 / (size_t)c->p; /* p*q is at (p divides 4096) or just under 4096 */
  const size_t blocks[] = {0, 1, 8, 49, q - 1, q, q + 1, 1024};
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; ++k)
    for (int in_place = 0; in_place < 2; ++in_place) alltoall_bytes(c, blocks[k], in_place);
}

/* ---- 2. derived datatypes ---------------------------------------------------------- */

/* Both shapes hold 4 ints per element: int k of an array of elements sits
 * at lead + (k / 4) * span + (k % 4) * step; the rest are gaps. */
typedef struct {
  MPI_Datatype type;
  const char* name;
  int lead, span, step;
} Shape;
static Shape strided, shifted; /* vector(4, 1, 2, MPI_INT) resized to 8 ints; indexed {4 ints at 1} */

static size_t at_k(const Shape* s, size_t k) {
  return (size_t)s->lead + k / 4 * (size_t)s->span + k % 4 * (size_t)s->step;
}
static size_t total(const Shape* s, size_t elems) { return (size_t)s->lead + elems * (size_t)s->span; }
static int* gaps(const Shape* s, size_t elems) {
  int* b = xmalloc(total(s, elems) * sizeof(int));
  for (size_t i = 0; i < total(s, elems); ++i) b[i] = SENT;
  return b;
}

static void bcast_shaped(const Cx* c, const Shape* s, size_t elems, int root) {
  const uint32_t id = ++g_id;
  int *buf = gaps(s, elems), *want = gaps(s, elems);
  for (size_t k = 0; k < 4 * elems; ++k) {
    want[at_k(s, k)] = ival(id, root, (long)k);
    if (c->r == root) buf[at_k(s, k)] = want[at_k(s, k)];
  }
  CHECK_OK(MPI_Bcast(buf, (int)elems, s->type, root, c->comm));
  CHECK_INTS(buf, want, total(s, elems), "%s: MPI_Bcast of %zu %s from root %d", c->name, elems, s->name, root);
  free(buf);
  free(want);
}

/* mode 0: shaped send; 1: contiguous MPI_INT send; 2: in place; 3: 0 or 1 by rank parity. */
static void allgather_shaped(const Cx* c, const Shape* s, size_t elems, int mode_) {
  const int mode = mode_ == 3 ? c->r % 2 : mode_;
  const uint32_t id = ++g_id;
  const size_t all = elems * (size_t)c->p;
  int *sbuf = gaps(s, elems), *flat = xmalloc(4 * elems * sizeof(int)), *rbuf = gaps(s, all), *want = gaps(s, all);
  for (size_t k = 0; k < 4 * elems; ++k) {
    sbuf[at_k(s, k)] = flat[k] = ival(id, c->r, (long)k);
    for (int r = 0; r < c->p; ++r) want[at_k(s, (size_t)r * 4 * elems + k)] = ival(id, r, (long)k);
  }
  if (mode == 2)
    for (size_t k = 0; k < 4 * elems; ++k) rbuf[at_k(s, (size_t)c->r * 4 * elems + k)] = flat[k];
  CHECK_OK(MPI_Allgather(mode == 2   ? MPI_IN_PLACE
                         : mode == 1 ? (void*)flat
                                     : (void*)sbuf,
                         mode == 1 ? 4 * (int)elems : (int)elems, mode == 1 ? MPI_INT : s->type, rbuf, (int)elems,
                         s->type, c->comm));
  CHECK_INTS(rbuf, want, total(s, all), "%s: MPI_Allgather of %zu %s per rank, mode %d", c->name, elems, s->name,
             mode_);
  free(sbuf);
  free(flat);
  free(rbuf);
  free(want);
}

/* MPI_SUM over shaped buffers: Reduce to root, or Allreduce (root < 0). */
static void reduce_shaped(const Cx* c, const Shape* s, size_t elems, int root, int in_place) {
  const uint32_t id = ++g_id;
  const int receives = root < 0 || c->r == root;
  int *sbuf = gaps(s, elems), *rbuf = gaps(s, elems), *want = gaps(s, elems);
  for (size_t k = 0; k < 4 * elems; ++k) {
    int sum = 0;
    for (int r = 0; r < c->p; ++r) sum += ival(id, r, (long)k);
    want[at_k(s, k)] = sum;
    sbuf[at_k(s, k)] = ival(id, c->r, (long)k);
    if (in_place && receives) rbuf[at_k(s, k)] = sbuf[at_k(s, k)];
  }
  const void* sb = in_place && receives ? MPI_IN_PLACE : sbuf;
  if (root < 0) CHECK_OK(MPI_Allreduce(sb, rbuf, (int)elems, s->type, MPI_SUM, c->comm));
  else CHECK_OK(MPI_Reduce(sb, receives ? rbuf : NULL, (int)elems, s->type, MPI_SUM, root, c->comm));
  if (receives)
    CHECK_INTS(rbuf, want, total(s, elems), "%s: %s of %zu %s, root %d%s", c->name,
               root < 0 ? "MPI_Allreduce" : "MPI_Reduce", elems, s->name, root, in_place ? ", in place" : "");
  free(sbuf);
  free(rbuf);
  free(want);
}

static void shaped(const Cx* c) {
  static const size_t elems[] = {1, 3, 256, 257}; /* 16, 48, 4096, 4112 bytes */
  const Shape* shapes[] = {&strided, &shifted};
  for (int h = 0; h < 2; ++h)
    for (size_t e = 0; e < 4; ++e) {
      const Shape* s = shapes[h];
      for (int root = 0; root < c->p; ++root) {
        bcast_shaped(c, s, elems[e], root);
        for (int in_place = 0; in_place < 2; ++in_place) reduce_shaped(c, s, elems[e], root, in_place);
      }
      for (int mode = 0; mode < 4; ++mode) allgather_shaped(c, s, elems[e], mode);
      for (int in_place = 0; in_place < 2; ++in_place) reduce_shaped(c, s, elems[e], -1, in_place);
    }
}

/* ---- 3. a non-commutative operation ------------------------------------------------ */

/* Product in rank order over `elems` matrices: Reduce to root, or Allreduce (root < 0). */
static void reduce_mat(const Cx* c, size_t elems, int root, int in_place) {
  const uint32_t id = ++g_id;
  const int receives = root < 0 || c->r == root;
  Mat *sbuf = xmalloc(elems * sizeof(Mat)), *rbuf = xmalloc(elems * sizeof(Mat)), *want = xmalloc(elems * sizeof(Mat));
  for (size_t k = 0; k < elems; ++k) {
    sbuf[k] = mat_of(id, c->r, (long)k);
    want[k] = mat_of(id, 0, (long)k);
    for (int r = 1; r < c->p; ++r) want[k] = mul(want[k], mat_of(id, r, (long)k));
  }
  if (in_place && receives) memcpy(rbuf, sbuf, elems * sizeof(Mat));
  else memset(rbuf, 0xEE, elems * sizeof(Mat));
  const void* sb = in_place && receives ? MPI_IN_PLACE : sbuf;
  if (root < 0) CHECK_OK(MPI_Allreduce(sb, rbuf, (int)elems, mat_type, mat_op, c->comm));
  else CHECK_OK(MPI_Reduce(sb, receives ? rbuf : NULL, (int)elems, mat_type, mat_op, root, c->comm));
  if (receives)
    CHECK_INTS((int*)rbuf, (int*)want, 4 * elems, "%s: %s of %zu matrices (non-commutative), root %d%s", c->name,
               root < 0 ? "MPI_Allreduce" : "MPI_Reduce", elems, root, in_place ? ", in place" : "");
  free(sbuf);
  free(rbuf);
  free(want);
}

static void noncommutative(const Cx* c) {
  static const size_t elems[] = {1, 3, 255, 256, 257}; /* 16 .. 4112 bytes */
  for (size_t e = 0; e < 5; ++e)
    for (int in_place = 0; in_place < 2; ++in_place) {
      for (int root = 0; root < c->p; ++root) reduce_mat(c, elems[e], root, in_place);
      reduce_mat(c, elems[e], -1, in_place);
    }
}

/* ---- 4. run-ahead ------------------------------------------------------------------ */

/* The root (Bcast) or the non-roots (Reduce) issue kRunAhead calls while
 * the others sleep first; sizes cycle through segment and point-to-point. */
static void run_ahead(const Cx* c) {
  /* The first 400 calls are of line-slot sizes (48 bytes or less) only,
   * so the writers run ahead far enough to wrap the line slots; the rest
   * mix in the other slots and point-to-point. */
  static const int small_bytes[] = {4, 48, 1, 8, 16};
  static const int bytes[] = {4, 48, 1, 4096, 8, 4097, 16, 65536, 64, 65537};
  static const int small_ints[] = {1, 12, 2};
  static const int ints[] = {1, 12, 1024, 1025, 2, 16384, 16385};
  unsigned char* b = xmalloc(65537);
  int *s = xmalloc(16385 * sizeof(int)), *r = xmalloc(16385 * sizeof(int));
  for (int root = 0; root < c->p; ++root) {
    uint32_t base = g_id;
    g_id += kRunAhead;
    if (c->r != root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) {
      const uint32_t id = base + 1 + (uint32_t)i;
      const int n = i < 400 ? small_bytes[i % 5] : bytes[i % 10];
      for (int k = 0; k < n; ++k) b[k] = c->r == root ? bval(id, root, k) : 0xEE;
      CHECK_OK(MPI_Bcast(b, n, MPI_BYTE, root, c->comm));
      long bad = -1;
      for (int k = 0; k < n && bad < 0; ++k)
        if (b[k] != bval(id, root, k)) bad = k;
      CHECK(bad < 0, "%s: run-ahead MPI_Bcast %d (%d bytes) from root %d: byte %ld wrong", c->name, i, n, root, bad);
    }
    base = g_id;
    g_id += kRunAhead;
    if (c->r == root) itest_sleep(0.05);
    for (int i = 0; i < kRunAhead; ++i) {
      const uint32_t id = base + 1 + (uint32_t)i;
      const int n = i < 400 ? small_ints[i % 3] : ints[i % 7];
      for (int k = 0; k < n; ++k) {
        s[k] = ival(id, c->r, k);
        r[k] = SENT;
      }
      CHECK_OK(MPI_Reduce(s, c->r == root ? r : NULL, n, MPI_INT, MPI_SUM, root, c->comm));
      long bad = -1;
      for (int k = 0; c->r == root && k < n && bad < 0; ++k) {
        int sum = 0;
        for (int q = 0; q < c->p; ++q) sum += ival(id, q, k);
        if (r[k] != sum) bad = k;
      }
      CHECK(bad < 0, "%s: run-ahead MPI_Reduce %d (%d ints) to root %d: int %ld wrong", c->name, i, n, root, bad);
    }
  }
  free(b);
  free(s);
  free(r);
}

/* ---- 5. a nonblocking collective around blocking ones ------------------------------ */

static void nonblocking_around(const Cx* c) {
  static const int counts[] = {4, 2000};
  for (int t = 0; t < 2; ++t) {
    const uint32_t id = ++g_id;
    const int n = counts[t];
    int *x = xmalloc((size_t)n * sizeof(int)), *y = xmalloc((size_t)n * sizeof(int));
    for (int k = 0; k < n; ++k) {
      x[k] = ival(id, c->r, k);
      y[k] = SENT;
    }
    MPI_Request req;
    CHECK_OK(MPI_Iallreduce(x, y, n, MPI_INT, MPI_SUM, c->comm, &req));
    reduce_sum(c, 32, 1, -1, 0);
    bcast_bytes(c, 16, c->p - 1);
    CHECK_OK(MPI_Barrier(c->comm));
    reduce_sum(c, 8, 0, 0, 1);
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    long bad = -1;
    for (int k = 0; k < n && bad < 0; ++k) {
      int sum = 0;
      for (int q = 0; q < c->p; ++q) sum += ival(id, q, k);
      if (y[k] != sum) bad = k;
    }
    CHECK(bad < 0, "%s: MPI_Iallreduce of %d ints around blocking calls: int %ld wrong", c->name, n, bad);
    free(x);
    free(y);
  }
}

/* ---- 7. a refused call --------------------------------------------------------------- */

/* The last rank refuses an MPI_Bcast from root 0 (MPI_DATATYPE_NULL); the
 * others get the data, and mixed calls afterwards agree everywhere. */
static void refusal(const Cx* c) {
  const uint32_t id = ++g_id;
  const int last = c->p - 1;
  int v[4];
  for (int k = 0; k < 4; ++k) v[k] = c->r == 0 ? ival(id, 0, k) : SENT;
  const int rc = MPI_Bcast(v, 4, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, 0, c->comm);
  if (c->r == last) {
    CHECK_CLASS(rc, MPI_ERR_TYPE);
  } else {
    CHECK(rc == MPI_SUCCESS, "%s: refused MPI_Bcast returned %d on rank %d", c->name, rc, c->r);
    for (int k = 0; k < 4; ++k) CHECK(v[k] == ival(id, 0, k), "%s: refused MPI_Bcast: int %d is %d", c->name, k, v[k]);
  }
  CHECK_OK(MPI_Barrier(c->comm));
  /* Through the segment, a rank whose data is needed may refuse too: the
   * Reduce's root then gets MPI_ERR_OTHER instead of waiting for it (over
   * point-to-point it would wait forever, so only with segments). */
  if (shm_on) {
    int in = c->r, out = -1;
    const int rr = MPI_Reduce(&in, &out, 1, c->r == last ? MPI_DATATYPE_NULL : MPI_INT, MPI_SUM, 0, c->comm);
    if (c->r == last) CHECK_CLASS(rr, MPI_ERR_TYPE);
    else if (c->r == 0) CHECK_CLASS(rr, MPI_ERR_OTHER);
    else CHECK(rr == MPI_SUCCESS, "%s: MPI_Reduce with a refusing rank returned %d on rank %d", c->name, rr, c->r);
    CHECK_OK(MPI_Barrier(c->comm));
  }
  bcast_bytes(c, 48, last);
  reduce_sum(c, 1024, 1, 1 % c->p, 0);
  reduce_sum(c, 8, 0, -1, 1);
  allgather_bytes(c, 49, 0);
  alltoall_bytes(c, 8, 1);
  bcast_bytes(c, 4097, 0);
  reduce_mat(c, 3, -1, 0);
  reduce_shaped(c, &strided, 3, last, 0);
  CHECK_OK(MPI_Barrier(c->comm));
}

/* ---- 6. segments come and go with their communicators ------------------------------ */

/* No POSIX shared-memory object of this job's collective segments is left. */
static void leftover_objects(void) {
  DIR* d = opendir("/dev/shm");
  CHECK(d != NULL, "cannot list /dev/shm");
  if (!d) return;
  for (struct dirent* e; (e = readdir(d));) {
    char path[512];
    snprintf(path, sizeof path, "/%s", e->d_name);
    CHECK(!strstr(path, g_pattern), "/dev/shm/%s is left", e->d_name);
  }
  closedir(d);
}

static void dups(void) {
  const int before = mapped_segments();
  for (int i = 0; i < kDups; ++i) {
    MPI_Comm d;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    Cx c = {d, itest_rank, itest_size, "dup"};
    for (int k = 0; k < kDupCalls; ++k) reduce_sum(&c, 4, 1, -1, 0);
    const int during = mapped_segments();
    CHECK(during == before + (shm_on ? 1 : 0), "dup %d: %d segments mapped, want %d", i, during,
          before + (shm_on ? 1 : 0));
    CHECK_OK(MPI_Comm_free(&d));
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const int after = mapped_segments();
  CHECK(after == before, "after %d freed duplicates %d segments mapped, want %d", kDups, after, before);
  if (itest_rank == 0) leftover_objects();
}

/* On fresh duplicates, the call that decides on the segment (the 17th) is
 * each kind in turn, over and under the slot size, refused, or a blocking
 * call while an MPI_Iallreduce is in flight; later calls still agree, and
 * the duplicate has its segment from then on. */
static void decision_points(void) {
  for (int v = 0; v < 11; ++v) {
    int before;
    Cx c = deciding_dup(v == 10 ? 15 : 16, &before);
    switch (v) {
      case 0: CHECK_OK(MPI_Barrier(c.comm)); break;
      case 1: bcast_bytes(&c, 4097, 0); break;
      case 2: bcast_bytes(&c, 8, c.p - 1); break;
      case 3: reduce_sum(&c, 4100, 1, 1 % c.p, 0); break;
      case 4: reduce_sum(&c, 48, 1, 0, 1); break;
      case 5: reduce_sum(&c, 4097, 0, -1, 1); break;
      case 6: allgather_bytes(&c, 4097, 0); break;
      case 7: allgather_bytes(&c, 1, 1); break;
      case 8: alltoall_bytes(&c, 4096 / (size_t)c.p + 1, 0); break;
      case 9: refusal(&c); break;
      case 10: nonblocking_around(&c); break; /* the Iallreduce is the 16th call */
    }
    check_decided(v, before);
    bcast_bytes(&c, 4097, c.p - 1);
    reduce_sum(&c, 8, 1, -1, 0);
    allgather_bytes(&c, 4097, 0);
    alltoall_bytes(&c, 4, 0);
    CHECK_OK(MPI_Barrier(c.comm));
    CHECK_OK(MPI_Comm_free(&c.comm));
  }
}

int main(int argc, char** argv) {
  checker_init(&argc, &argv);

  MPI_Datatype v;
  MPI_Type_vector(4, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 8 * sizeof(int), &strided.type);
  MPI_Type_free(&v);
  strided = (Shape){strided.type, "strided ints", 0, 8, 2};
  int len = 4, disp = 1;
  MPI_Type_indexed(1, &len, &disp, MPI_INT, &shifted.type);
  shifted = (Shape){shifted.type, "shifted ints", 1, 4, 1};
  MPI_Type_contiguous(4, MPI_INT, &mat_type);
  MPI_Datatype* types[] = {&strided.type, &shifted.type, &mat_type};
  for (int i = 0; i < 3; ++i) MPI_Type_commit(types[i]);
  MPI_Op_create(mat_fn, 0, &mat_op);

  MPI_Comm rev;
  Cx cx[2];
  two_comms(cx, &rev, kWarmup);

  for (int i = 0; i < 2; ++i) {
    sizes(&cx[i]);
    shaped(&cx[i]);
    noncommutative(&cx[i]);
    run_ahead(&cx[i]);
    nonblocking_around(&cx[i]);
    refusal(&cx[i]);
  }
  decision_points();
  dups();

  MPI_Comm_free(&rev);
  MPI_Op_free(&mat_op);
  for (int i = 0; i < 3; ++i) MPI_Type_free(types[i]);
  return itest_finish("shared_coll");
}
