/* Process topologies through the MPI calls on any number of ranks:
 * Cartesian grids (full and smaller than the job), sub-grids, graphs and
 * distributed graphs, each checked against the structure it was built from
 * and by sending messages along its edges; duplicates keep the topology,
 * splits drop it; error classes of bad arguments. */
#include "tests/integration/itest.h"

/* Send my rank to `dest`, receive from `source`: what arrives must be
 * `source` itself (nothing from MPI_PROC_NULL). */
static void exchange_along(MPI_Comm comm, int source, int dest, const char* what) {
  int me, got = -7;
  MPI_Comm_rank(comm, &me);
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(&me, 1, MPI_INT, dest, 5, &got, 1, MPI_INT, source, 5, comm, &st));
  if (source == MPI_PROC_NULL) {
    CHECK(got == -7, "%s: a receive from MPI_PROC_NULL wrote %d", what, got);
  } else {
    CHECK(got == source, "%s: got %d from source %d", what, got, source);
  }
}

static void check_cart(MPI_Comm cart, int ndims, const int* dims, const int* periods, const char* what) {
  int status = -1, nd = -1, size, me;
  CHECK_OK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "%s: Topo_test %d", what, status);
  CHECK_OK(MPI_Cartdim_get(cart, &nd));
  CHECK(nd == ndims, "%s: %d dimensions, want %d", what, nd, ndims);
  MPI_Comm_size(cart, &size);
  MPI_Comm_rank(cart, &me);
  int d[8], p[8], c[8], c2[8], r;
  CHECK_OK(MPI_Cart_get(cart, 8, d, p, c));
  CHECK_OK(MPI_Cart_coords(cart, me, 8, c2));
  int product = 1;
  for (int i = 0; i < ndims; ++i) {
    CHECK(d[i] == dims[i] && p[i] == (periods[i] != 0), "%s: dim %d is %d/%d", what, i, d[i], p[i]);
    CHECK(c[i] == c2[i], "%s: Cart_get and Cart_coords disagree in dim %d", what, i);
    product *= dims[i];
  }
  CHECK(product == size, "%s: grid of %d for %d ranks", what, product, size);
  /* Row-major numbering: every rank's coordinates map back to it. */
  for (int q = 0; q < size; ++q) {
    CHECK_OK(MPI_Cart_coords(cart, q, 8, c));
    int expect = 0;
    for (int i = 0; i < ndims; ++i) expect = expect * dims[i] + c[i];
    CHECK(expect == q, "%s: rank %d has row-major index %d", what, q, expect);
    CHECK_OK(MPI_Cart_rank(cart, c, &r));
    CHECK(r == q, "%s: Cart_rank(coords(%d)) = %d", what, q, r);
  }
  /* Shifts by +1 and -2 in every dimension deliver from the right rank. */
  for (int i = 0; i < ndims; ++i) {
    for (int disp = 1; disp >= -2; disp -= 3) {
      int src, dst;
      CHECK_OK(MPI_Cart_shift(cart, i, disp, &src, &dst));
      int mine[8];
      MPI_Cart_coords(cart, me, 8, mine);
      int want_dst = mine[i] + disp;
      if (periods[i]) want_dst = ((want_dst % dims[i]) + dims[i]) % dims[i];
      if (want_dst < 0 || want_dst >= dims[i]) {
        CHECK(dst == MPI_PROC_NULL, "%s: shift past the edge gives %d", what, dst);
      } else {
        mine[i] = want_dst;
        MPI_Cart_rank(cart, mine, &r);
        CHECK(dst == r, "%s: shift dim %d by %d: dest %d, want %d", what, i, disp, dst, r);
      }
      exchange_along(cart, src, dst, what);
    }
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank;

  /* A 2-D grid over everyone, periodic in its second dimension. */
  int dims[2] = {0, 0}, periods[2] = {0, 1};
  CHECK_OK(MPI_Dims_create(n, 2, dims));
  CHECK(dims[0] * dims[1] == n && dims[0] >= dims[1], "Dims_create(%d) = %d x %d", n, dims[0], dims[1]);
  MPI_Comm cart;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  check_cart(cart, 2, dims, periods, "2-D grid");

  /* Duplicates keep the topology; a split of it has none. */
  MPI_Comm dup, split;
  CHECK_OK(MPI_Comm_dup(cart, &dup));
  check_cart(dup, 2, dims, periods, "duplicate");
  CHECK_OK(MPI_Comm_split(cart, 0, me, &split));
  int status = 0;
  CHECK_OK(MPI_Topo_test(split, &status));
  CHECK(status == MPI_UNDEFINED, "a split of a grid has topology %d", status);
  CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "MPI_COMM_WORLD has topology %d", status);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);

  /* Rows: keep the second dimension. None kept: a 0-D grid of rank 0 alone
   * (MPICH's answer; the others get MPI_COMM_NULL). */
  int keep[2] = {0, 1}, none[2] = {0, 0};
  MPI_Comm row, alone;
  CHECK_OK(MPI_Cart_sub(cart, keep, &row));
  check_cart(row, 1, &dims[1], &periods[1], "row");
  int row_size, row_rank, c[2];
  MPI_Comm_size(row, &row_size);
  MPI_Comm_rank(row, &row_rank);
  MPI_Cart_coords(cart, me, 2, c);
  CHECK(row_size == dims[1] && row_rank == c[1], "row: %d of %d", row_rank, row_size);
  CHECK_OK(MPI_Cart_sub(cart, none, &alone));
  if (me == 0) {
    int alone_size = 0, nd = -1, cmp = -1;
    MPI_Comm_size(alone, &alone_size);
    CHECK_OK(MPI_Cartdim_get(alone, &nd));
    CHECK_OK(MPI_Comm_compare(alone, MPI_COMM_SELF, &cmp));
    CHECK(alone_size == 1 && nd == 0 && cmp == MPI_CONGRUENT, "no dimension kept: size %d, %d dims, compare %d",
          alone_size, nd, cmp);
    MPI_Comm_free(&alone);
  } else {
    CHECK(alone == MPI_COMM_NULL, "no dimension kept: rank %d got a communicator", me);
  }
  MPI_Comm_free(&row);

  /* A line shorter than the job: the last rank is left out. */
  int line = n > 1 ? n - 1 : 1, nonperiodic = 0, mapped = -1;
  MPI_Comm part;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &line, &nonperiodic, &mapped));
  CHECK(mapped == (me < line ? me : MPI_UNDEFINED), "Cart_map gives %d", mapped);
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &nonperiodic, 1, &part));
  if (me < line) {
    check_cart(part, 1, &line, &nonperiodic, "short line");
    MPI_Comm_free(&part);
  } else {
    CHECK(part == MPI_COMM_NULL, "a rank outside the grid got a communicator");
  }

  /* A graph: ring with both directions as edges. */
  int index[64], edges[128];
  for (int i = 0; i < n; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + 1) % n;
    edges[2 * i + 1] = (i + n - 1) % n;
  }
  MPI_Comm graph;
  CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
  CHECK(mapped == me, "Graph_map gives %d", mapped);
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
  CHECK_OK(MPI_Topo_test(graph, &status));
  CHECK(status == MPI_GRAPH, "graph: Topo_test %d", status);
  int nnodes = 0, nedges = 0, count = 0, nb[2] = {-1, -1}, gi[64], ge[128];
  CHECK_OK(MPI_Graphdims_get(graph, &nnodes, &nedges));
  CHECK(nnodes == n && nedges == 2 * n, "Graphdims_get %d %d", nnodes, nedges);
  CHECK_OK(MPI_Graph_get(graph, 64, 128, gi, ge));
  for (int i = 0; i < 2 * n; ++i) CHECK(ge[i] == edges[i], "Graph_get edge %d is %d", i, ge[i]);
  CHECK_OK(MPI_Graph_neighbors_count(graph, me, &count));
  CHECK_OK(MPI_Graph_neighbors(graph, me, 2, nb));
  CHECK(count == 2 && nb[0] == (me + 1) % n && nb[1] == (me + n - 1) % n, "graph neighbours %d: %d %d", count,
        nb[0], nb[1]);
  exchange_along(graph, nb[1], nb[0], "graph ring");
  MPI_Comm_free(&graph);

  /* Distributed graph, adjacent form: ring to the right, weighted. */
  int left = (me + n - 1) % n, right = (me + 1) % n;
  int lw = 10 + left, rw = 10 + me;
  MPI_Comm dg;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &lw, 1, &right, &rw, MPI_INFO_NULL, 0, &dg));
  int indeg = -1, outdeg = -1, weighted = -1, s = -1, sw = -1, d = -1, dw = -1;
  CHECK_OK(MPI_Topo_test(dg, &status));
  CHECK(status == MPI_DIST_GRAPH, "dist graph: Topo_test %d", status);
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1 && weighted == 1, "adjacent: %d in %d out weighted %d", indeg, outdeg, weighted);
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 1, &s, &sw, 1, &d, &dw));
  CHECK(s == left && sw == 10 + left && d == right && dw == 10 + me, "adjacent: %d(%d) -> me -> %d(%d)", s, sw, d,
        dw);
  exchange_along(dg, s, d, "adjacent ring");
  MPI_Comm_free(&dg);

  /* Distributed graph, general form: rank 0 gives every edge i -> i+1
   * (weight i); the others give none. */
  int srcs[64], degs[64], dsts[64], wts[64], k = me == 0 ? n : 0;
  for (int i = 0; i < n; ++i) {
    srcs[i] = i;
    degs[i] = 1;
    dsts[i] = (i + 1) % n;
    wts[i] = i;
  }
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, k, srcs, degs, dsts, me == 0 ? wts : MPI_WEIGHTS_EMPTY,
                                 MPI_INFO_NULL, 0, &dg));
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1 && weighted == 1, "general: %d in %d out weighted %d", indeg, outdeg, weighted);
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 1, &s, &sw, 1, &d, &dw));
  CHECK(s == left && sw == left && d == right && dw == me, "general: %d(%d) -> me -> %d(%d)", s, sw, d, dw);
  exchange_along(dg, s, d, "general ring");
  MPI_Comm_free(&dg);

  /* Unweighted, each rank giving its own outgoing edge. */
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, degs, &right, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1 && weighted == 0, "unweighted: %d in %d out weighted %d", indeg, outdeg, weighted);
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 1, &s, MPI_UNWEIGHTED, 1, &d, MPI_UNWEIGHTED));
  CHECK(s == left && d == right, "unweighted: %d -> me -> %d", s, d);
  MPI_Comm_free(&dg);

  /* Bad arguments: documented error classes, nothing else happens. */
  int big = n + 1, bad_dims[2] = {0, 5}, coords_out[1] = {dims[0]}, nd2;
  MPI_Comm never = MPI_COMM_NULL;
  CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &nonperiodic, 0, &never), MPI_ERR_TOPOLOGY);
  CHECK(never == MPI_COMM_NULL, "a failed Cart_create set the new communicator");
  CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &never), MPI_ERR_DIMS);
  CHECK_CLASS(MPI_Dims_create(12, 2, bad_dims), MPI_ERR_DIMS);
  CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd2), MPI_ERR_TOPOLOGY);
  CHECK_CLASS(MPI_Graphdims_get(cart, &nnodes, &nedges), MPI_ERR_TOPOLOGY);
  CHECK_CLASS(MPI_Cart_coords(cart, n, 2, c), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &s, &d), MPI_ERR_ARG);
  int outside[2] = {coords_out[0], 0};  /* first dimension is not periodic */
  CHECK_CLASS(MPI_Cart_rank(cart, outside, &s), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &big, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &never),
              MPI_ERR_RANK);
  /* A bad edge on one rank fails the collective call everywhere, no hang. */
  int bad_dest = me == n - 1 ? n : right;
  CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, degs, &bad_dest, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                    &never),
              MPI_ERR_RANK);
  CHECK(never == MPI_COMM_NULL, "a failed Dist_graph_create set the new communicator");

  MPI_Comm_free(&cart);
  return itest_finish("topo_calls");
}
