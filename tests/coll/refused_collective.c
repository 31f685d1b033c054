/* A collective call that one rank refuses on a local argument check (it
 * returns the error without taking part) leaves the communicator usable:
 * the ranks whose calls went ahead finish theirs, and every later collective
 * -- and MPI_Finalize -- completes on every rank with the right results,
 * as MPICH and Open MPI behave. The refusing rank is one whose part the
 * others do not wait for (the root of a gather, a leaf of the broadcast
 * tree), as in the reports this reproduces.
 *
 *   refused_collective gather_root_aliased   the root passes one buffer as
 *                                            send and receive buffer
 *   refused_collective bcast_null_type       MPI_DATATYPE_NULL to MPI_Bcast
 *                                            on the last rank
 *   refused_collective mixed                 several kinds in a row: reduce
 *                                            with a bad root buffer, scatter
 *                                            with a bad receive type, a
 *                                            nonblocking broadcast without a
 *                                            request, an Ibcast with a bad
 *                                            count, a refused gather on a
 *                                            duplicate, MPI_Dist_graph_create
 *                                            without an output handle on one
 *                                            rank (every rank returns the
 *                                            error), each followed by
 *                                            collectives checked for their data
 */
#include "tests/integration/itest.h"

static int me, np;

/* Collectives after the refusal: they must complete with correct data. */
static void collectives_still_agree(const char* after) {
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  int sum = -1;
  CHECK_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == np * (np - 1) / 2, "after %s: allreduce gave %d, want %d", after, sum, np * (np - 1) / 2);
  int v = me == 0 ? 4242 : -1;
  CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK(v == 4242, "after %s: bcast gave %d", after, v);
  int* all = malloc(sizeof(int) * (size_t)np);
  CHECK_OK(MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
  for (int i = 0; i < np; ++i) CHECK(all[i] == i, "after %s: allgather slot %d holds %d", after, i, all[i]);
  MPI_Request r;
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  free(all);
}

static void gather_root_aliased(void) {
  int buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = me;
  int rc = MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (me == 0) CHECK_CLASS(rc, MPI_ERR_BUFFER);
  else CHECK_OK(rc);
  collectives_still_agree("a root's aliased gather");
}

static void bcast_null_type(void) {
  int v = me == 0 ? 7 : 0;
  int rc = MPI_Bcast(&v, 1, me == np - 1 && np > 1 ? MPI_DATATYPE_NULL : MPI_INT, 0, MPI_COMM_WORLD);
  if (me == np - 1 && np > 1) {
    CHECK_CLASS(rc, MPI_ERR_TYPE);
  } else {
    CHECK_OK(rc);
    CHECK(v == 7, "bcast delivered %d to rank %d", v, me);
  }
  collectives_still_agree("a bcast refused on the last rank");
}

static void mixed(void) {
  const int last = np - 1;
  int x = me, y = -1;
  /* Reduce: the root's receive buffer is MPI_IN_PLACE's misuse (aliased). */
  int rc = MPI_Reduce(&x, me == 0 ? (void*)&x : (void*)&y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) CHECK_CLASS(rc, MPI_ERR_BUFFER);
  else CHECK_OK(rc);
  collectives_still_agree("a refused reduce");
  /* Scatter: the last rank names no receive type. */
  int part[1] = {-1}, src[64];
  for (int i = 0; i < 64; ++i) src[i] = 100 + i;
  rc = MPI_Scatter(src, 1, MPI_INT, part, 1, me == last && np > 1 ? MPI_DATATYPE_NULL : MPI_INT, 0, MPI_COMM_WORLD);
  if (me == last && np > 1) CHECK_CLASS(rc, MPI_ERR_TYPE);
  else {
    CHECK_OK(rc);
    CHECK(part[0] == 100 + me, "scatter gave %d to rank %d", part[0], me);
  }
  collectives_still_agree("a refused scatter");
  /* Nonblocking: the last rank passes no request. */
  MPI_Request r = MPI_REQUEST_NULL;
  int v = me == 0 ? 9 : 0;
  if (me == last && np > 1) {
    CHECK_CLASS(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  } else {
    CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(v == 9, "ibcast gave %d", v);
  }
  collectives_still_agree("an ibcast without a request");
  /* Nonblocking with a negative count on the last rank. */
  v = me == 0 ? 11 : 0;
  if (me == last && np > 1) {
    CHECK_CLASS(MPI_Ibcast(&v, -1, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  } else {
    CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
  collectives_still_agree("an ibcast with a negative count");
  /* On a duplicate too, and the parent is unaffected. */
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
  int g[64];
  rc = MPI_Gather(g, 1, MPI_INT, g, 1, MPI_INT, 0, d);
  if (me == 0) CHECK_CLASS(rc, MPI_ERR_BUFFER);
  else CHECK_OK(rc);
  CHECK_OK(MPI_Barrier(d));
  CHECK_OK(MPI_Comm_free(&d));
  collectives_still_agree("a refused gather on a duplicate");
  /* A collective constructor: the local error travels to every rank. */
  int from = me, deg = 1, to = (me + 1) % np;
  MPI_Comm graph = MPI_COMM_NULL;
  rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &from, &deg, &to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                             me == last ? NULL : &graph);
  CHECK_CLASS(rc, MPI_ERR_ARG);
  CHECK(graph == MPI_COMM_NULL, "rank %d got a communicator from a refused MPI_Dist_graph_create", me);
  collectives_still_agree("a refused MPI_Dist_graph_create");
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  me = itest_rank;
  np = itest_size;
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "gather_root_aliased")) gather_root_aliased();
  else if (!strcmp(mode, "bcast_null_type")) bcast_null_type();
  else if (!strcmp(mode, "mixed")) mixed();
  else {
    fprintf(stderr, "usage: refused_collective gather_root_aliased|bcast_null_type|mixed\n");
    return 2;
  }
  return itest_finish(mode);
}
