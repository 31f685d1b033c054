/* Neighbourhood collectives against references computed from the topology
 * queries (MPI_Cart_shift, MPI_Graph_neighbors, the distributed graph's own
 * lists): a periodic ring (on 1 and 2 ranks a peer is both neighbours), a
 * non-periodic 2-D grid (MPI_PROC_NULL edges), an undirected graph, a
 * directed distributed graph; blocking, nonblocking (outstanding together)
 * and large-count forms; the error classes. Plain C, so it also builds
 * against MPICH and Open MPI. */
#include <string.h>

#include "check.h"

static int g_rank, g_size;

static int val(int rank, int block, int i) { return rank * 10000 + block * 100 + i; }

static void expect_block(const int *got, int n, int rank, int block) {
  for (int i = 0; i < n; ++i)
    if (got[i] != val(rank, block, i)) mismatch(i, got[i], val(rank, block, i));
}
static void expect_untouched(const int *got, int n) {
  for (int i = 0; i < n; ++i)
    if (got[i] != -1) mismatch(i, got[i], -1);
}

/* Periodic ring: block 0 goes to the -1 neighbour, block 1 to the +1
 * neighbour; slot 0 comes from the -1 neighbour, which sent its block 1. */
static void ring(int mode) {
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int left, right;
  MPI_Cart_shift(ring, 0, 1, &left, &right);
  enum { N = 3 };
  int s[2 * N], r[2 * N];
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < N; ++i) s[b * N + i] = val(g_rank, b, i);
  memset(r, 0xff, sizeof r);
  MPI_Request req;
  const char *name[] = {"Neighbor_alltoall", "Ineighbor_alltoall", "Neighbor_alltoall_c"};
  begin_case("%s on a periodic ring of %d", name[mode], g_size);
  if (mode == 0) check_rc(MPI_Neighbor_alltoall(s, N, MPI_INT, r, N, MPI_INT, ring), name[mode]);
  if (mode == 1) {
    check_rc(MPI_Ineighbor_alltoall(s, N, MPI_INT, r, N, MPI_INT, ring, &req), name[mode]);
    check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  if (mode == 2) check_rc(MPI_Neighbor_alltoall_c(s, N, MPI_INT, r, N, MPI_INT, ring), name[mode]);
  expect_block(r, N, left, 1);
  expect_block(r + N, N, right, 0);
  MPI_Comm_free(&ring);
}

/* Non-periodic 2-D grid: allgather and allgatherv (with gaps between the
 * slots), neighbours past an edge are MPI_PROC_NULL and leave their slot
 * alone. */
static void grid(int nonblocking, MPI_Request *reqs, int *nreq, int *rbuf, int *rvbuf, MPI_Comm *grid_out) {
  int dims[2] = {0, 0}, periods[2] = {0, 0};
  MPI_Dims_create(g_size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, grid_out);
  static int s[5];
  for (int i = 0; i < 5; ++i) s[i] = val(g_rank, 0, i);
  static int counts[4], displs[4];
  for (int k = 0; k < 4; ++k) counts[k] = 5, displs[k] = k * 8;
  memset(rbuf, 0xff, sizeof(int) * 20);
  memset(rvbuf, 0xff, sizeof(int) * 32);
  if (nonblocking) {
    check_rc(MPI_Ineighbor_allgather(s, 5, MPI_INT, rbuf, 5, MPI_INT, *grid_out, &reqs[(*nreq)++]),
             "MPI_Ineighbor_allgather");
    check_rc(MPI_Ineighbor_allgatherv(s, 5, MPI_INT, rvbuf, counts, displs, MPI_INT, *grid_out, &reqs[(*nreq)++]),
             "MPI_Ineighbor_allgatherv");
  } else {
    check_rc(MPI_Neighbor_allgather(s, 5, MPI_INT, rbuf, 5, MPI_INT, *grid_out), "MPI_Neighbor_allgather");
    check_rc(MPI_Neighbor_allgatherv(s, 5, MPI_INT, rvbuf, counts, displs, MPI_INT, *grid_out),
             "MPI_Neighbor_allgatherv");
  }
}

static void grid_check(const int *rbuf, const int *rvbuf, MPI_Comm grid) {
  for (int d = 0; d < 2; ++d) {
    int src, dst;
    MPI_Cart_shift(grid, d, 1, &src, &dst);
    int nb[2] = {src, dst};
    for (int k = 0; k < 2; ++k) {
      int slot = 2 * d + k;
      begin_case("Neighbor_allgather on a %d-rank grid, slot %d", g_size, slot);
      if (nb[k] == MPI_PROC_NULL) expect_untouched(rbuf + 5 * slot, 5);
      else expect_block(rbuf + 5 * slot, 5, nb[k], 0);
      begin_case("Neighbor_allgatherv on a %d-rank grid, slot %d", g_size, slot);
      if (nb[k] == MPI_PROC_NULL) expect_untouched(rvbuf + 8 * slot, 8);
      else {
        expect_block(rvbuf + 8 * slot, 5, nb[k], 0);
        expect_untouched(rvbuf + 8 * slot + 5, 3);
      }
    }
  }
}

/* Undirected graph: r joined to r+-1 and r+-2 (mod size), no repeated edge.
 * Alltoallv: to neighbour k send k+1 elements val(me, k, i). */
static int graph_nbrs(int r, int *out) {
  int n = 0;
  const int off[4] = {-2, -1, 1, 2};
  for (int k = 0; k < 4; ++k) {
    int x = ((r + off[k]) % g_size + g_size) % g_size;
    int dup = x == r;
    for (int j = 0; j < n; ++j) dup |= out[j] == x;
    if (!dup) out[n++] = x;
  }
  return n;
}

static void graph(int large, MPI_Request *req, int **rbuf_out, MPI_Comm *graph_out) {
  int *index = xmalloc(sizeof(int) * (size_t)g_size), *edges = xmalloc(sizeof(int) * 4 * (size_t)g_size);
  int ne = 0;
  for (int r = 0; r < g_size; ++r) {
    ne += graph_nbrs(r, edges + ne);
    index[r] = ne;
  }
  MPI_Graph_create(MPI_COMM_WORLD, g_size, index, edges, 0, graph_out);
  free(index);
  free(edges);
  int nb[4], deg = graph_nbrs(g_rank, nb);
  static int s[4 * 4];
  int sc[4], sd[4], rc[4], rd[4];
  MPI_Count scc[4], rcc[4];
  MPI_Aint sdc[4], rdc[4];
  for (int k = 0; k < deg; ++k) {
    sc[k] = k + 1, sd[k] = 4 * k;
    for (int i = 0; i <= k; ++i) s[4 * k + i] = val(g_rank, k, i);
    int theirs[4], tdeg = graph_nbrs(nb[k], theirs), j = 0;
    while (j < tdeg && theirs[j] != g_rank) ++j;
    rc[k] = j + 1, rd[k] = 4 * k;
    scc[k] = sc[k], sdc[k] = sd[k], rcc[k] = rc[k], rdc[k] = rd[k];
  }
  int *r = xmalloc(sizeof(int) * 16);
  memset(r, 0xff, sizeof(int) * 16);
  *rbuf_out = r;
  if (req) {
    check_rc(MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, *graph_out, req),
             "MPI_Ineighbor_alltoallv");
  } else if (large) {
    check_rc(MPI_Neighbor_alltoallv_c(s, scc, sdc, MPI_INT, r, rcc, rdc, MPI_INT, *graph_out),
             "MPI_Neighbor_alltoallv_c");
  } else {
    check_rc(MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, *graph_out), "MPI_Neighbor_alltoallv");
  }
}

static void graph_check(const int *r, const char *what) {
  int nb[4], deg = graph_nbrs(g_rank, nb);
  for (int k = 0; k < deg; ++k) {
    int theirs[4], tdeg = graph_nbrs(nb[k], theirs), j = 0;
    while (j < tdeg && theirs[j] != g_rank) ++j;
    begin_case("%s on a graph, neighbour %d", what, k);
    expect_block(r + 4 * k, j + 1, nb[k], j);
  }
}

/* Directed distributed graph: r receives from r-1 and r-3, sends to r+1 and
 * r+3; Alltoallw with a vector type for the second block. Skipped on 1 and
 * 2 ranks, where the two destinations coincide. */
static void dist_graph(void) {
  if (g_size == 1 || g_size == 2) return;
  int src[2] = {(g_rank - 1 + g_size) % g_size, (g_rank - 3 + 3 * g_size) % g_size};
  int dst[2] = {(g_rank + 1) % g_size, (g_rank + 3) % g_size};
  MPI_Comm dg;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
  MPI_Datatype strided;
  MPI_Type_vector(3, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  /* block 0: 3 ints contiguous; block 1: 3 ints, every other one (sent as a vector, received contiguous) */
  int s[10], r[10];
  for (int i = 0; i < 3; ++i) s[i] = val(g_rank, 0, i);
  for (int i = 0; i < 3; ++i) s[4 + 2 * i] = val(g_rank, 1, i);
  memset(r, 0xff, sizeof r);
  int sc[2] = {3, 1}, rc[2] = {3, 3};
  MPI_Aint sd[2] = {0, 4 * sizeof(int)}, rd[2] = {0, 4 * sizeof(int)};
  MPI_Datatype st[2] = {MPI_INT, strided}, rt[2] = {MPI_INT, MPI_INT};
  begin_case("Neighbor_alltoallw on a distributed graph of %d", g_size);
  check_rc(MPI_Neighbor_alltoallw(s, sc, sd, st, r, rc, rd, rt, dg), "MPI_Neighbor_alltoallw");
  /* slot k comes from src[k], which sent me its block for its destination index k */
  expect_block(r, 3, src[0], 0);
  expect_block(r + 4, 3, src[1], 1);
  MPI_Type_free(&strided);
  MPI_Comm_free(&dg);
}

static void errors(void) {
  int a[4] = {0}, b[4];
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  expect_error(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, dup), MPI_ERR_TOPOLOGY,
               "Neighbor_allgather without a topology");
  MPI_Request req;
  expect_error(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, dup, &req), MPI_ERR_TOPOLOGY,
               "Ineighbor_alltoall without a topology");
  MPI_Comm_free(&dup);
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  expect_error(MPI_Neighbor_alltoall(a, -1, MPI_INT, b, 1, MPI_INT, ring), MPI_ERR_COUNT, "negative count");
  expect_error(MPI_Neighbor_alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, ring), MPI_ERR_TYPE, "null type");
  expect_error(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ring), MPI_ERR_BUFFER, "in place");
  MPI_Comm_free(&ring);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "neighbor";
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_world_rank = g_rank;

  for (int mode = 0; mode < 3; ++mode) ring(mode);

  int rbuf[20], rvbuf[32], *gr;
  MPI_Comm gridc, graphc;
  grid(0, NULL, NULL, rbuf, rvbuf, &gridc);
  grid_check(rbuf, rvbuf, gridc);
  MPI_Comm_free(&gridc);
  for (int large = 0; large < 2; ++large) {
    graph(large, NULL, &gr, &graphc);
    graph_check(gr, large ? "Neighbor_alltoallv_c" : "Neighbor_alltoallv");
    free(gr);
    MPI_Comm_free(&graphc);
  }
  dist_graph();

  /* Nonblocking: grid and graph exchanges outstanding together, completed in reverse order. */
  MPI_Request reqs[3];
  int nreq = 0;
  grid(1, reqs, &nreq, rbuf, rvbuf, &gridc);
  graph(0, &reqs[nreq++], &gr, &graphc);
  for (int i = nreq - 1; i >= 0; --i) check_rc(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE), "MPI_Wait");
  grid_check(rbuf, rvbuf, gridc);
  graph_check(gr, "Ineighbor_alltoallv");
  free(gr);
  MPI_Comm_free(&gridc);
  MPI_Comm_free(&graphc);

  errors();
  report();
  MPI_Finalize();
  return g_failures != 0;
}
