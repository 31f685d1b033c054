/* Many small collectives in flight on one communicator at once, checked
 * against serial references: a root streams blocking broadcasts and reduces
 * ahead of its peers (eager sends, so messages of many calls wait
 * unexpected, past the point where the match queues index them), and rounds
 * of nonblocking collectives are started together and completed in reverse
 * order, with blocking ones in between. Covers a non-commutative user op, a
 * strided derived datatype, a truncated broadcast and reduce, MPI_IN_PLACE and more requests in one round than
 * a schedule keeps in place (coll/coll_schedule.h). */
#include "check.h"

#define JUNK (-777)
enum { kCalls = 200, kInFlight = 48 };

static int val(int r, long i, unsigned salt) { return (int)(hash3((unsigned)r, (unsigned)i, salt) % 1000u) - 500; }

/* 2x2 integer matrices under multiplication (mod 9973): associative, not commutative. */
typedef struct {
  int a, b, c, d;
} Mat;
static Mat mat_of(int r, long i) {
  Mat m = {val(r, i, 1) & 7, val(r, i, 2) & 7, val(r, i, 3) & 7, 1 + (val(r, i, 4) & 7)};
  return m;
}
static Mat mul(Mat x, Mat y) {
  Mat z = {(x.a * y.a + x.b * y.c) % 9973, (x.a * y.b + x.b * y.d) % 9973, (x.c * y.a + x.d * y.c) % 9973,
           (x.c * y.b + x.d * y.d) % 9973};
  return z;
}
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  Mat *x = in, *y = inout;
  for (int i = 0; i < *len; ++i) y[i] = mul(x[i], y[i]); /* in comes from lower ranks: in op inout */
}
static void expect_mat(Mat got, Mat want, long index) {
  if (got.a != want.a || got.b != want.b || got.c != want.c || got.d != want.d) mismatch(index, got.a, want.a);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "deep_backlog";
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  int rank = g_world_rank, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  /* Blocking stream: the root returns from each call as soon as its sends are handed over. */
  begin_case("blocking bcast/reduce stream (size %d)", size);
  for (int i = 0; i < kCalls; ++i) {
    const int root = (i / 50) % size;
    int x = rank == root ? val(root, i, 5) : JUNK;
    check_rc(MPI_Bcast(&x, 1, MPI_INT, root, comm), "MPI_Bcast");
    if (x != val(root, i, 5)) mismatch(i, x, val(root, i, 5));
    long mine = val(rank, i, 6), sum = JUNK, want = 0;
    for (int r = 0; r < size; ++r) want += val(r, i, 6);
    check_rc(MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, root, comm), "MPI_Reduce");
    if (rank == root && sum != want) mismatch(i, (double)sum, (double)want);
  }

  /* Nonblocking rounds, completed newest first, with blocking calls between. */
  MPI_Op matop;
  MPI_Op_create(mat_op, 0, &matop);
  MPI_Datatype mat_type, strided;
  MPI_Type_contiguous(4, MPI_INT, &mat_type);
  MPI_Type_commit(&mat_type);
  MPI_Type_vector(3, 1, 2, MPI_INT, &strided); /* elements 0, 2, 4 */
  MPI_Type_commit(&strided);
  begin_case("nonblocking rounds in reverse order (size %d)", size);
  MPI_Request req[4 * kInFlight];
  static int bc[kInFlight][6], ar[kInFlight], ag[kInFlight][8];
  Mat *m_in = xmalloc(kInFlight * sizeof(Mat)), *m_out = xmalloc(kInFlight * sizeof(Mat));
  int n = 0;
  for (int k = 0; k < kInFlight; ++k) {
    const int root = k % size;
    for (int j = 0; j < 6; ++j) bc[k][j] = rank == root ? val(root, k * 6 + j, 7) : JUNK;
    check_rc(MPI_Ibcast(bc[k], 1, strided, root, comm, &req[n++]), "MPI_Ibcast");
    ar[k] = val(rank, k, 8);
    check_rc(MPI_Iallreduce(MPI_IN_PLACE, &ar[k], 1, MPI_INT, MPI_SUM, comm, &req[n++]), "MPI_Iallreduce");
    m_in[k] = mat_of(rank, k);
    check_rc(MPI_Ireduce(&m_in[k], &m_out[k], 1, mat_type, matop, root, comm, &req[n++]), "MPI_Ireduce");
    int mine = val(rank, k, 9);
    check_rc(MPI_Iallgather(&mine, 1, MPI_INT, ag[k], 1, MPI_INT, comm, &req[n++]), "MPI_Iallgather");
    if (k % 8 == 7) { /* a blocking collective while the others are outstanding */
      int one = 1, total = 0;
      check_rc(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
      if (total != size) mismatch(k, total, size);
    }
  }
  for (int i = n - 1; i >= 0; --i) check_rc(MPI_Wait(&req[i], MPI_STATUS_IGNORE), "MPI_Wait");
  for (int k = 0; k < kInFlight; ++k) {
    const int root = k % size;
    for (int j = 0; j < 6; ++j) {
      const int want = j % 2 == 0 || rank == root ? val(root, k * 6 + j, 7) : JUNK;
      if (bc[k][j] != want) mismatch(k * 6 + j, bc[k][j], want);
    }
    int sum = 0;
    for (int r = 0; r < size; ++r) sum += val(r, k, 8);
    if (ar[k] != sum) mismatch(k, ar[k], sum);
    if (rank == root) {
      Mat want = mat_of(0, k);
      for (int r = 1; r < size; ++r) want = mul(want, mat_of(r, k));
      expect_mat(m_out[k], want, k);
    }
    for (int r = 0; r < size; ++r)
      if (ag[k][r] != val(r, k, 9)) mismatch(k * 8 + r, ag[k][r], val(r, k, 9));
  }

  free(m_in);
  free(m_out);

  /* One round with more requests than a schedule keeps in place: a
   * neighbour alltoall over ten parallel edges from the left neighbour and
   * ten to the right one. */
  begin_case("neighbour alltoall over parallel edges (size %d)", size);
  enum { kEdges = 10 };
  int srcs[kEdges], dsts[kEdges], out[kEdges], in[kEdges];
  for (int e = 0; e < kEdges; ++e) {
    srcs[e] = (rank + size - 1) % size;
    dsts[e] = (rank + 1) % size;
    out[e] = val(rank, 0, 10); /* one value per sender: the pairing of parallel edges is not checked */
    in[e] = JUNK;
  }
  MPI_Comm graph;
  check_rc(MPI_Dist_graph_create_adjacent(comm, kEdges, srcs, MPI_UNWEIGHTED, kEdges, dsts, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &graph),
           "MPI_Dist_graph_create_adjacent");
  check_rc(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, graph), "MPI_Neighbor_alltoall");
  for (int e = 0; e < kEdges; ++e)
    if (in[e] != val(srcs[e], 0, 10)) mismatch(e, in[e], val(srcs[e], 0, 10));
  MPI_Comm_free(&graph);
  /* A broadcast longer than the receiver's buffer: MPI_ERR_TRUNCATE, with
   * the message already waiting when the receiver calls (the root's user-tag
   * send after it arrives behind it) and with the receiver waiting first. */
  MPI_Comm pair;
  MPI_Comm_split(comm, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (pair != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
    for (int waiting = 0; waiting < 2; ++waiting) {
      begin_case("truncated bcast, message %s", waiting ? "waiting" : "arriving");
      int four[4] = {11, 12, 13, 14}, two[2] = {JUNK, JUNK}, token = 0;
      if (rank == 0) {
        check_rc(MPI_Bcast(four, 4, MPI_INT, 0, pair), "MPI_Bcast");
        if (waiting) check_rc(MPI_Send(&token, 1, MPI_INT, 1, 5, pair), "MPI_Send");
      } else {
        if (waiting) check_rc(MPI_Recv(&token, 1, MPI_INT, 0, 5, pair, MPI_STATUS_IGNORE), "MPI_Recv");
        int rc = MPI_Bcast(two, 2, MPI_INT, 0, pair), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) mismatch(0, cls, MPI_ERR_TRUNCATE);
        if (two[0] != 11 || two[1] != 12) mismatch(1, two[0], 11);
      }
      int one = 1, total = 0; /* still in step */
      check_rc(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, pair), "MPI_Allreduce");
      if (total != 2) mismatch(2, total, 2);
    }
    /* A reduce whose contribution is longer than the root's scratch: the
     * root reports MPI_ERR_TRUNCATE, the sender returns at once. */
    for (int waiting = 0; waiting < 2; ++waiting) {
      begin_case("truncated reduce, message %s", waiting ? "waiting" : "arriving");
      int four[4] = {1, 2, 3, 4}, two[2] = {5, 6}, sum[2] = {JUNK, JUNK}, token = 0;
      if (rank == 1) {
        check_rc(MPI_Reduce(four, NULL, 4, MPI_INT, MPI_SUM, 0, pair), "MPI_Reduce");
        if (waiting) check_rc(MPI_Send(&token, 1, MPI_INT, 0, 6, pair), "MPI_Send");
      } else {
        if (waiting) check_rc(MPI_Recv(&token, 1, MPI_INT, 1, 6, pair, MPI_STATUS_IGNORE), "MPI_Recv");
        int rc = MPI_Reduce(two, sum, 2, MPI_INT, MPI_SUM, 0, pair), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) mismatch(0, cls, MPI_ERR_TRUNCATE);
      }
      int one = 1, total = 0; /* still in step */
      check_rc(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, pair), "MPI_Allreduce");
      if (total != 2) mismatch(2, total, 2);
    }
    MPI_Comm_free(&pair);
  }

  MPI_Type_free(&strided);
  MPI_Type_free(&mat_type);
  MPI_Op_free(&matop);
  MPI_Comm_free(&comm);
  report();
  MPI_Finalize();
  return g_failures != 0;
}
