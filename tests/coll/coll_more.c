/* The collectives coll_check.c does not cover, against serial references:
 * Scatter(v), Gatherv, Allgatherv, Alltoall(v,w), Reduce_scatter(_block),
 * Scan, Exscan, Reduce_local, user operations (a non-commutative 2x2 matrix
 * product on a derived datatype, whose result shows the order in which
 * ranks were combined), MAXLOC/MINLOC ties on every pair type, and the
 * nonblocking collectives: several outstanding on one communicator,
 * overlapped with point-to-point traffic and with blocking collectives.
 *
 * Plain C against <mpi.h> only, so it also runs under MPICH and Open MPI.
 * Sizes cross every algorithm switch of docs/collectives.md and the
 * eager/rendezvous limit. Runs on MPI_COMM_WORLD, on a split communicator
 * with reversed rank order, and on MPI_COMM_SELF. Any mismatch is printed
 * and makes the exit status non-zero.
 */
#include <string.h>

#include "tests/coll/check.h"
#include "tests/coll/more_data.h"
#include "tests/coll/more_nonblocking.h"

/* ---- scatter / gatherv / scatterv / allgatherv ------------------------------ */

static void test_scatter(MPI_Comm comm, long count, int root, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Scatter int count %ld root %d%s (size %d)", count, root, in_place ? " MPI_IN_PLACE" : "", size);
  int *all = ints(count * size), *mine = ints(count), *want = ints(count);
  for (long i = 0; i < count * size; ++i) all[i] = rank == root ? val(root, i, 1) : JUNK;
  fill(mine, count, JUNK);
  const int ip = in_place && rank == root;
  check_rc(MPI_Scatter(all, (int)count, MPI_INT, ip ? MPI_IN_PLACE : mine, (int)count, MPI_INT, root, comm),
           "MPI_Scatter");
  for (long i = 0; i < count; ++i) want[i] = val(root, rank * count + i, 1);
  if (ip) expect_ints(all + rank * count, want, count);
  else expect_ints(mine, want, count);
  free(all), free(mine), free(want);
}

static void test_gatherv(MPI_Comm comm, long scale, int root, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Gatherv scale %ld root %d%s (size %d)", scale, root, in_place ? " MPI_IN_PLACE" : "", size);
  int *counts = ints(size), *displs = ints(size);
  long total;
  vlayout(size, scale, counts, displs, &total);
  int *send = ints(counts[rank]), *recv = ints(total), *want = ints(total);
  for (long i = 0; i < counts[rank]; ++i) send[i] = val(rank, i, 2);
  fill(recv, total, JUNK);
  fill(want, total, JUNK);
  for (int r = 0; r < size; ++r)
    for (long i = 0; i < counts[r]; ++i) want[displs[r] + i] = val(r, i, 2);
  const int ip = in_place && rank == root;
  if (ip) memcpy(recv + displs[rank], send, (size_t)counts[rank] * sizeof(int));
  check_rc(MPI_Gatherv(ip ? MPI_IN_PLACE : send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, root, comm),
           "MPI_Gatherv");
  if (rank == root) expect_ints(recv, want, total);

  begin_case("Scatterv scale %ld root %d%s (size %d)", scale, root, in_place ? " MPI_IN_PLACE" : "", size);
  int *mine = ints(counts[rank]);
  fill(mine, counts[rank], JUNK);
  check_rc(MPI_Scatterv(want, counts, displs, MPI_INT, ip ? MPI_IN_PLACE : mine, counts[rank], MPI_INT, root, comm),
           "MPI_Scatterv");
  if (!ip) expect_ints(mine, send, counts[rank]);

  begin_case("Allgatherv scale %ld%s (size %d)", scale, in_place ? " MPI_IN_PLACE" : "", size);
  fill(recv, total, JUNK);
  if (in_place) memcpy(recv + displs[rank], send, (size_t)counts[rank] * sizeof(int));
  check_rc(MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, comm),
           "MPI_Allgatherv");
  expect_ints(recv, want, total);
  free(counts), free(displs), free(send), free(recv), free(want), free(mine);
}

/* ---- alltoall(v,w) ---------------------------------------------------------- */

static void test_alltoall(MPI_Comm comm, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Alltoall int count %ld%s (size %d)", count, in_place ? " MPI_IN_PLACE" : "", size);
  int *send = ints(count * size), *recv = ints(count * size), *want = ints(count * size);
  for (int j = 0; j < size; ++j)
    for (long i = 0; i < count; ++i) {
      send[j * count + i] = a2a(rank, j, i);
      want[j * count + i] = a2a(j, rank, i);
    }
  if (in_place) memcpy(recv, send, (size_t)(count * size) * sizeof(int));
  else fill(recv, count * size, JUNK);
  check_rc(MPI_Alltoall(in_place ? MPI_IN_PLACE : send, (int)count, MPI_INT, recv, (int)count, MPI_INT, comm),
           "MPI_Alltoall");
  expect_ints(recv, want, count * size);
  free(send), free(recv), free(want);
}

/* Sent as a strided vector (every other int; the vector's extent ends at
 * its last int, so peer j's element starts at int j*(2n-1)), received as
 * contiguous ints. */
static void test_alltoall_vector(MPI_Comm comm, long count) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Alltoall strided vector x%ld into ints (size %d)", count, size);
  MPI_Datatype strided;
  MPI_Type_vector((int)count, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  const long span = 2 * count - 1;
  int *send = ints(span * size), *recv = ints(count * size), *want = ints(count * size);
  fill(send, span * size, JUNK);
  for (int j = 0; j < size; ++j)
    for (long i = 0; i < count; ++i) {
      send[j * span + 2 * i] = a2a(rank, j, i);
      want[j * count + i] = a2a(j, rank, i);
    }
  fill(recv, count * size, JUNK);
  check_rc(MPI_Alltoall(send, 1, strided, recv, (int)count, MPI_INT, comm), "MPI_Alltoall");
  expect_ints(recv, want, count * size);
  MPI_Type_free(&strided);
  free(send), free(recv), free(want);
}

/* Counts depend on both ends (symmetrically in place, where MPI uses the
 * receive counts for both directions); blocks are packed in reverse peer
 * order. */
static int a2av_count(int from, int to, long scale, int sym) {
  return (int)(((sym ? from + to : from + 2 * to) % 4) * scale);
}

static void test_alltoallv(MPI_Comm comm, long scale, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Alltoallv scale %ld%s (size %d)", scale, in_place ? " MPI_IN_PLACE" : "", size);
  int *sc = ints(size), *sd = ints(size), *rc = ints(size), *rd = ints(size);
  long stotal = 0, rtotal = 0;
  for (int j = size - 1; j >= 0; --j) {
    sc[j] = a2av_count(rank, j, scale, in_place), sd[j] = (int)stotal, stotal += sc[j] + 1;
    rc[j] = a2av_count(j, rank, scale, in_place), rd[j] = (int)rtotal, rtotal += rc[j] + 2;
  }
  int *send = ints(stotal), *recv = ints(rtotal), *want = ints(rtotal);
  fill(send, stotal, JUNK);
  fill(want, rtotal, JUNK);
  for (int j = 0; j < size; ++j) {
    for (long i = 0; i < sc[j]; ++i) send[sd[j] + i] = a2a(rank, j, i);
    for (long i = 0; i < rc[j]; ++i) want[rd[j] + i] = a2a(j, rank, i);
  }
  fill(recv, rtotal, JUNK);
  if (in_place)
    for (int j = 0; j < size; ++j)
      for (long i = 0; i < rc[j]; ++i) recv[rd[j] + i] = a2a(rank, j, i);
  check_rc(MPI_Alltoallv(in_place ? MPI_IN_PLACE : send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm),
           "MPI_Alltoallv");
  expect_ints(recv, want, rtotal);
  free(sc), free(sd), free(rc), free(rd), free(send), free(recv), free(want);
}

/* Alltoallw: even peers get ints, odd peers pairs of ints (one derived
 * element per 2 ints); byte displacements. */
static void test_alltoallw(MPI_Comm comm, long count) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Alltoallw count %ld (size %d)", count, size);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  const long n = 2 * count; /* ints per peer */
  int *sc = ints(size), *sd = ints(size), *rc = ints(size), *rd = ints(size);
  MPI_Datatype *st = xmalloc((size_t)size * sizeof *st), *rt = xmalloc((size_t)size * sizeof *rt);
  for (int j = 0; j < size; ++j) {
    st[j] = j % 2 ? pair : MPI_INT;
    sc[j] = j % 2 ? (int)count : (int)n;
    sd[j] = (int)((size - 1 - j) * n * (long)sizeof(int));
    rt[j] = rank % 2 ? pair : MPI_INT; /* what this rank receives is typed by itself */
    rc[j] = rank % 2 ? (int)count : (int)n;
    rd[j] = (int)(j * n * (long)sizeof(int));
  }
  /* Receive types must match the sender's signature: both are n ints. */
  int *send = ints(n * size), *recv = ints(n * size), *want = ints(n * size);
  for (int j = 0; j < size; ++j)
    for (long i = 0; i < n; ++i) {
      send[(size - 1 - j) * n + i] = a2a(rank, j, i);
      want[j * n + i] = a2a(j, rank, i);
    }
  fill(recv, n * size, JUNK);
  check_rc(MPI_Alltoallw(send, sc, sd, st, recv, rc, rd, rt, comm), "MPI_Alltoallw");
  expect_ints(recv, want, n * size);
  MPI_Type_free(&pair);
  free(sc), free(sd), free(rc), free(rd), free(st), free(rt), free(send), free(recv), free(want);
}

/* ---- a non-commutative user operation ------------------------------------------ */

/* Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block with the matrix
 * op; in place where MPI allows it. */
static void test_matrix(MPI_Comm comm, MPI_Op op, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Mat *in = xmalloc((size_t)(count * size) * sizeof(Mat)), *out = xmalloc((size_t)(count * size) * sizeof(Mat));
  const char *ip = in_place ? " MPI_IN_PLACE" : "";
  for (long i = 0; i < count * size; ++i) in[i] = mat_of(rank, i);

  for (int root = 0; root<size; root += size> 2 ? size / 2 + 1 : 1) {
    begin_case("Reduce matrix count %ld root %d%s (size %d)", count, root, ip, size);
    const int p = in_place && rank == root;
    memcpy(out, in, (size_t)count * sizeof(Mat));
    check_rc(MPI_Reduce(p ? MPI_IN_PLACE : in, out, (int)count, g_mat_type, op, root, comm), "MPI_Reduce");
    if (rank == root) expect_mats(out, count, 0, size, 0);
  }
  begin_case("Allreduce matrix count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)count * sizeof(Mat));
  check_rc(MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)count, g_mat_type, op, comm), "MPI_Allreduce");
  expect_mats(out, count, 0, size, 0);

  begin_case("Scan matrix count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)count * sizeof(Mat));
  check_rc(MPI_Scan(in_place ? MPI_IN_PLACE : in, out, (int)count, g_mat_type, op, comm), "MPI_Scan");
  expect_mats(out, count, 0, rank + 1, 0);

  begin_case("Exscan matrix count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)count * sizeof(Mat));
  check_rc(MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, (int)count, g_mat_type, op, comm), "MPI_Exscan");
  if (rank > 0) expect_mats(out, count, 0, rank, 0);

  begin_case("Reduce_scatter_block matrix count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)(count * size) * sizeof(Mat));
  check_rc(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, (int)count, g_mat_type, op, comm),
           "MPI_Reduce_scatter_block");
  expect_mats(out, count, 0, size, rank * count);
  free(in), free(out);
}

/* ---- integer SUM reductions: reduce_scatter(_block), scan, exscan ------------- */

static void test_sums(MPI_Comm comm, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const char *ip = in_place ? " MPI_IN_PLACE" : "";
  int *in = ints(2 * count * size), *out = ints(2 * count * size);
  for (long i = 0; i < 2 * count * size; ++i) in[i] = val(rank, i, 5);

  begin_case("Reduce_scatter_block SUM count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)(count * size) * sizeof(int));
  check_rc(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_INT, MPI_SUM, comm),
           "MPI_Reduce_scatter_block");
  for (long i = 0; i < count; ++i)
    if (out[i] != sum_upto(size, rank * count + i, 5)) mismatch(i, out[i], sum_upto(size, rank * count + i, 5));

  begin_case("Reduce_scatter SUM scale %ld%s (size %d)", count, ip, size);
  int *counts = ints(size);
  long total = 0, first = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = (int)(((r * 5 + 2) % 3) * count);
    if (r < rank) first += counts[r];
    total += counts[r];
  }
  memcpy(out, in, (size_t)total * sizeof(int));
  check_rc(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, out, counts, MPI_INT, MPI_SUM, comm), "MPI_Reduce_scatter");
  for (long i = 0; i < counts[rank]; ++i)
    if (out[i] != sum_upto(size, first + i, 5)) mismatch(i, out[i], sum_upto(size, first + i, 5));

  begin_case("Scan SUM count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)count * sizeof(int));
  check_rc(MPI_Scan(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_INT, MPI_SUM, comm), "MPI_Scan");
  for (long i = 0; i < count; ++i)
    if (out[i] != sum_upto(rank + 1, i, 5)) mismatch(i, out[i], sum_upto(rank + 1, i, 5));

  begin_case("Exscan SUM count %ld%s (size %d)", count, ip, size);
  memcpy(out, in, (size_t)count * sizeof(int));
  check_rc(MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_INT, MPI_SUM, comm), "MPI_Exscan");
  if (rank > 0)
    for (long i = 0; i < count; ++i)
      if (out[i] != sum_upto(rank, i, 5)) mismatch(i, out[i], sum_upto(rank, i, 5));
  free(in), free(out), free(counts);
}

/* Scan and Exscan on a non-contiguous type (two ints with a gap between
 * them): the gaps of the result keep what was there. */
static void test_strided_scans(MPI_Comm comm, long count, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Datatype gapped;
  MPI_Type_vector(2, 1, 2, MPI_INT, &gapped);
  MPI_Type_commit(&gapped);
  const char *ip = in_place ? " MPI_IN_PLACE" : "";
  int *in = ints(3 * count), *out = ints(3 * count);
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    begin_case("%s gapped ints count %ld%s (size %d)", exclusive ? "Exscan" : "Scan", count, ip, size);
    for (long i = 0; i < 3 * count; ++i) in[i] = i % 3 == 1 ? JUNK : val(rank, i, 7);
    if (in_place) memcpy(out, in, (size_t)(3 * count) * sizeof(int));
    else fill(out, 3 * count, JUNK);
    const void *send = in_place ? MPI_IN_PLACE : in;
    int rc = exclusive ? MPI_Exscan(send, out, (int)count, gapped, MPI_SUM, comm)
                       : MPI_Scan(send, out, (int)count, gapped, MPI_SUM, comm);
    check_rc(rc, exclusive ? "MPI_Exscan" : "MPI_Scan");
    if (exclusive && rank == 0) continue;
    for (long i = 0; i < 3 * count; ++i) {
      const long want = i % 3 == 1 ? JUNK : sum_upto(exclusive ? rank : rank + 1, i, 7);
      if (out[i] != want) mismatch(i, out[i], want);
    }
  }
  MPI_Type_free(&gapped);
  free(in), free(out);
}

/* ---- MAXLOC / MINLOC on every pair type, ties everywhere -------------------------- */

#define LOC_TEST(NAME, VTYPE, MPITYPE)                                                                         \
  static void loc_##NAME(MPI_Comm comm, long count, MPI_Op op, int maxloc) {                                   \
    int rank, size;                                                                                            \
    MPI_Comm_rank(comm, &rank);                                                                                \
    MPI_Comm_size(comm, &size);                                                                                \
    begin_case("Allreduce " #MPITYPE " %s count %ld (size %d)", maxloc ? "MAXLOC" : "MINLOC", count, size);    \
    struct {                                                                                                   \
      VTYPE v;                                                                                                 \
      int i;                                                                                                   \
    } *a = xmalloc((size_t)count * sizeof *a), *b = xmalloc((size_t)count * sizeof *b);                        \
    for (long i = 0; i < count; ++i)                                                                           \
      a[i].v = (VTYPE)(hash3((unsigned)rank, (unsigned)i, 31) % 3), a[i].i = size - rank;                      \
    check_rc(MPI_Allreduce(a, b, (int)count, MPITYPE, op, comm), "MPI_Allreduce");                             \
    for (long i = 0; i < count; ++i) {                                                                         \
      VTYPE best = 0;                                                                                          \
      int at = -1;                                                                                             \
      for (int r = 0; r < size; ++r) {                                                                         \
        VTYPE v = (VTYPE)(hash3((unsigned)r, (unsigned)i, 31) % 3);                                            \
        if (at < 0 || (maxloc ? v > best : v < best) || (v == best && size - r < at)) best = v, at = size - r; \
      }                                                                                                        \
      if (b[i].v != best || b[i].i != at) mismatch(i, (long)b[i].v * 1000 + b[i].i, (long)best * 1000 + at);   \
    }                                                                                                          \
    free(a), free(b);                                                                                          \
  }
LOC_TEST(float, float, MPI_FLOAT_INT)
LOC_TEST(double, double, MPI_DOUBLE_INT)
LOC_TEST(long, long, MPI_LONG_INT)
LOC_TEST(int, int, MPI_2INT)
LOC_TEST(short, short, MPI_SHORT_INT)
LOC_TEST(ldouble, long double, MPI_LONG_DOUBLE_INT)

static void test_loc(MPI_Comm comm, long count) {
  for (int m = 0; m < 2; ++m) {
    MPI_Op op = m ? MPI_MAXLOC : MPI_MINLOC;
    loc_float(comm, count, op, m), loc_double(comm, count, op, m), loc_long(comm, count, op, m);
    loc_int(comm, count, op, m), loc_short(comm, count, op, m), loc_ldouble(comm, count, op, m);
  }
}

/* ---- user ops: Op_create/free/commutative, Reduce_local ------------------------------- */

static void test_user_ops(void) {
  begin_case("Op_create / Op_commutative / Reduce_local / Op_free");
  MPI_Op add;
  check_rc(MPI_Op_create(sum_op, 1, &add), "MPI_Op_create");
  int commute = -1;
  check_rc(MPI_Op_commutative(add, &commute), "MPI_Op_commutative");
  if (commute != 1) mismatch(0, commute, 1);
  int in[5] = {1, 2, 3, 4, 5}, io[5] = {10, 20, 30, 40, 50}, want[5] = {11, 22, 33, 44, 55};
  check_rc(MPI_Reduce_local(in, io, 5, MPI_INT, add), "MPI_Reduce_local");
  expect_ints(io, want, 5);
  check_rc(MPI_Reduce_local(in, io, 5, MPI_INT, MPI_SUM), "MPI_Reduce_local");
  for (int i = 0; i < 5; ++i) want[i] += in[i];
  expect_ints(io, want, 5);
  check_rc(MPI_Op_commutative(MPI_MAX, &commute), "MPI_Op_commutative");
  if (commute != 1) mismatch(1, commute, 1);
  check_rc(MPI_Op_free(&add), "MPI_Op_free");
  if (add != MPI_OP_NULL) mismatch(2, 1, 0); /* the handle was not nulled */

  begin_case("Reduce_local with the non-commutative matrix op keeps in x inout");
  MPI_Op mat;
  MPI_Op_create(matmul_op, 0, &mat);
  check_rc(MPI_Op_commutative(mat, &commute), "MPI_Op_commutative");
  if (commute != 0) mismatch(0, commute, 0);
  Mat x = mat_of(0, 0), y = mat_of(1, 0), w = matmul(x, y);
  check_rc(MPI_Reduce_local(&x, &y, 1, g_mat_type, mat), "MPI_Reduce_local");
  if (memcmp(&y, &w, sizeof w) != 0) mismatch(0, y.a, w.a);
  MPI_Op_free(&mat);
}

/* ---- argument errors (Sonde's classes; each detected by every rank) ------------------- */

#ifdef SONDE_VERSION_STRING
static void test_errors(MPI_Comm parent) {
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int size;
  MPI_Comm_size(comm, &size);
  int a[64], b[64], counts[64], displs[64];
  for (int i = 0; i < 64; ++i) a[i] = i, counts[i] = 1, displs[i] = i;
  MPI_Request req = MPI_REQUEST_NULL;
  expect_error(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, size, comm), MPI_ERR_ROOT, "Scatter root == size");
  expect_error(MPI_Scatterv(a, counts, displs, MPI_INT, b, 1, MPI_INT, -1, comm), MPI_ERR_ROOT, "Scatterv root -1");
  expect_error(MPI_Gatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, -2, comm), MPI_ERR_ROOT, "Gatherv root -2");
  expect_error(MPI_Alltoall(a, 1, MPI_INT, a, 1, MPI_INT, comm), MPI_ERR_BUFFER, "Alltoall sendbuf == recvbuf");
  expect_error(MPI_Alltoall(a, 1, MPI_INT, b, -1, MPI_INT, comm), MPI_ERR_COUNT, "Alltoall recvcount -1");
  expect_error(MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm), MPI_ERR_TYPE, "Alltoall null sendtype");
  counts[0] = -1;
  expect_error(MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, comm), MPI_ERR_COUNT,
               "Alltoallv negative count");
  expect_error(MPI_Allgatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, comm), MPI_ERR_COUNT,
               "Allgatherv negative count");
  counts[0] = 1;
  expect_error(MPI_Alltoallw(a, counts, displs, NULL, b, counts, displs, NULL, comm), MPI_ERR_ARG,
               "Alltoallw null type arrays");
  expect_error(MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, comm), MPI_ERR_COUNT,
               "Reduce_scatter_block count -1");
  expect_error(MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, comm), MPI_ERR_ARG, "Reduce_scatter null counts");
  expect_error(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_MAXLOC, comm), MPI_ERR_OP, "Reduce_scatter MAXLOC on INT");
  expect_error(MPI_Scan(a, b, 1, MPI_INT, MPI_OP_NULL, comm), MPI_ERR_OP, "Scan MPI_OP_NULL");
  expect_error(MPI_Exscan(a, a, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER, "Exscan sendbuf == recvbuf");
  expect_error(MPI_Scan(a, b, 1, MPI_FLOAT, MPI_BXOR, comm), MPI_ERR_OP, "Scan BXOR on FLOAT");
  expect_error(MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, comm), MPI_ERR_OP, "Allreduce MPI_REPLACE");
  expect_error(MPI_Ibcast(a, 1, MPI_INT, 0, comm, NULL), MPI_ERR_ARG, "Ibcast null request");
  expect_error(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &req), MPI_ERR_COMM,
               "Iallreduce MPI_COMM_NULL");
  expect_error(MPI_Ialltoall(a, 1, MPI_INT, a, 1, MPI_INT, comm, &req), MPI_ERR_BUFFER, "Ialltoall aliased");
  expect_error(MPI_Reduce_local(a, b, 1, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP, "Reduce_local BAND on DOUBLE");
  expect_error(MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT, "Reduce_local count -1");
  MPI_Op op = MPI_SUM;
  expect_error(MPI_Op_free(&op), MPI_ERR_OP, "Op_free MPI_SUM");
  MPI_Op mine, copy;
  MPI_Op_create(sum_op, 1, &mine);
  copy = mine;
  MPI_Op_free(&mine);
  expect_error(MPI_Op_free(&copy), MPI_ERR_OP, "Op_free twice");
  int commute;
  expect_error(MPI_Op_commutative(copy, &commute), MPI_ERR_OP, "Op_commutative on a freed op");
  expect_error(MPI_Op_create(NULL, 1, &mine), MPI_ERR_ARG, "Op_create null function");
  /* MPI 4.1 section 6.12: a nonblocking collective's request may be neither freed nor cancelled. */
  MPI_Request r;
  check_rc(MPI_Ibarrier(comm, &r), "MPI_Ibarrier");
  expect_error(MPI_Request_free(&r), MPI_ERR_REQUEST, "Request_free on an Ibarrier request");
  expect_error(MPI_Cancel(&r), MPI_ERR_REQUEST, "Cancel on an Ibarrier request");
  begin_case("Ibarrier request still completes after refused calls");
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
  begin_case("Allreduce after refused calls");
  check_rc(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  if (b[0] != 0) mismatch(0, b[0], 0);
  /* Freed communicators, and what intercommunicators do not have (Scan,
   * MPI_IN_PLACE, a root that is neither MPI_ROOT, MPI_PROC_NULL nor a
   * remote rank); tests/coll/intercoll.c checks what they have. */
  MPI_Comm stale;
  MPI_Comm_dup(comm, &stale);
  MPI_Comm dead = stale;
  MPI_Comm_free(&stale);
  expect_error(MPI_Barrier(dead), MPI_ERR_COMM, "Barrier on a freed communicator");
  expect_error(MPI_Ibarrier(dead, &req), MPI_ERR_COMM, "Ibarrier on a freed communicator");
  if (size >= 2) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm half, inter;
    MPI_Comm_split(comm, rank % 2, rank, &half);
    check_rc(MPI_Intercomm_create(half, 0, comm, rank % 2 ? 0 : 1, 99, &inter), "MPI_Intercomm_create");
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    expect_error(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "Scan on an intercommunicator");
    expect_error(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM, "Iexscan on an intercommunicator");
    expect_error(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
                 "Allreduce in place on an intercommunicator");
    expect_error(MPI_Ibcast(a, 1, MPI_INT, size, inter, &req), MPI_ERR_ROOT,
                 "Ibcast to a root beyond the remote group");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  MPI_Comm_free(&comm);
}
#else
static void test_errors(MPI_Comm parent) { (void)parent; }
#endif

/* ---- driver --------------------------------------------------------------------------- */

static void suite(MPI_Comm comm, MPI_Op matop, long max_count) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* 1 and 64 ints: Bruck alltoall; 100: scattered; 10000: pairwise and
   * rendezvous; 20000: linear scatter. */
  const long counts[] = {0, 1, 64, 100, 1000, 10000, 20000};
  for (int c = 0; c < 7; ++c) {
    const long n = counts[c];
    if (n > max_count) continue;
    for (int ip = 0; ip < 2; ++ip) {
      test_scatter(comm, n, 0, ip);
      if (size > 1) test_scatter(comm, n, size - 1, ip);
      test_alltoall(comm, n, ip);
    }
    if (n > 0) test_alltoall_vector(comm, n);
    if (n <= 1000) test_sums(comm, n, c % 2);
    if (n > 0) test_strided_scans(comm, n, c % 2);
  }
  const long scales[] = {0, 1, 37, 3000};
  for (int c = 0; c < 4; ++c) {
    if (scales[c] > max_count) continue;
    for (int ip = 0; ip < 2; ++ip) {
      test_gatherv(comm, scales[c], size / 2, ip);
      test_alltoallv(comm, scales[c], ip);
    }
    test_alltoallw(comm, scales[c]);
    test_nonblocking_v(comm, scales[c]);
  }
  test_sums(comm, 3000, 0); /* pairwise reduce-scatter (large, commutative) */
  test_sums(comm, 3000, 1);
  const long mat_counts[] = {1, 7, 3000};
  for (int c = 0; c < 3; ++c)
    for (int ip = 0; ip < 2; ++ip) test_matrix(comm, matop, mat_counts[c], ip);
  test_loc(comm, 1000);
  test_comm_freed_while_running(comm, 1);
  test_comm_freed_while_running(comm, 20000);
  test_op_freed_while_running(comm, 1);
  test_op_freed_while_running(comm, 20000);
  test_nonblocking(comm, 1, matop);
  test_nonblocking(comm, 1000, matop);
  if (max_count >= 20000) test_nonblocking(comm, 20000, matop);
  test_errors(comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "coll_more";
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  long max_count = argc > 1 ? atol(argv[1]) : 20000;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Type_contiguous(4, MPI_INT, &g_mat_type);
  MPI_Type_commit(&g_mat_type);
  MPI_Op matop;
  MPI_Op_create(matmul_op, 0, &matop);

  test_user_ops();
  suite(MPI_COMM_WORLD, matop, max_count);
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, size > 2 ? g_world_rank % 2 : 0, -g_world_rank, &split);
  MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
  suite(split, matop, max_count);
  MPI_Comm_free(&split);
  suite(MPI_COMM_SELF, matop, 1000);

  begin_case("the matrix op was really called");
  if (size > 1 && g_matmul_calls == 0) mismatch(0, 0, 1);
  MPI_Op_free(&matop);
  MPI_Type_free(&g_mat_type);
  report();
  MPI_Finalize();
  return g_failures != 0;
}
