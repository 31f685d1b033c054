/* MPI_Type_free while requests still use the type: the requests complete
 * with the right data (the type lives until they are done), the freed
 * handle is invalid at once, and a persistent request keeps working
 * across restarts. Sizes cover eager and rendezvous.
 */
#include "tests/integration/itest.h"

static MPI_Datatype make(int blocks) {
  MPI_Datatype v, s;
  MPI_Type_vector(blocks, 1, 2, MPI_DOUBLE, &v);
  MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(double) * 2 * blocks, &s);
  MPI_Type_free(&v);
  MPI_Type_commit(&s);
  return s;
}

static void exercise(int blocks, int tag) {
  int n = 2 * blocks;
  double* buf = malloc(sizeof(double) * (size_t)n);
  MPI_Datatype t = make(blocks), kept = t;
  int peer = 1 - itest_rank;
  MPI_Request r;
  for (int i = 0; i < n; ++i) buf[i] = itest_rank == 0 ? i : -1;
  if (itest_rank == 1) {
    CHECK_OK(MPI_Irecv(buf, 1, t, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Type_free(&t));
    int size;
    CHECK_CLASS(MPI_Type_size(kept, &size), MPI_ERR_TYPE);
    /* Another type made now must not take over the pending one's slot. */
    MPI_Datatype other = make(3);
    itest_sync(peer, MPI_COMM_WORLD);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += buf[i] != (i % 2 ? -1 : i);
    CHECK(bad == 0, "receive with a freed type: %d wrong of %d", bad, n);
    MPI_Type_free(&other);
  } else {
    CHECK_OK(MPI_Isend(buf, 1, t, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Type_free(&t));
    itest_sync(peer, MPI_COMM_WORLD);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
  /* Persistent: the type freed between starts. */
  t = make(blocks);
  if (itest_rank == 0) CHECK_OK(MPI_Send_init(buf, 1, t, peer, tag + 1, MPI_COMM_WORLD, &r));
  else CHECK_OK(MPI_Recv_init(buf, 1, t, peer, tag + 1, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Type_free(&t));
  for (int k = 0; k < 3; ++k) {
    if (itest_rank == 0) for (int i = 0; i < n; ++i) buf[i] = i + 1000 * k;
    else for (int i = 0; i < n; ++i) buf[i] = -1;
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (itest_rank == 1) {
      int bad = 0;
      for (int i = 0; i < n; ++i) bad += buf[i] != (i % 2 ? -1 : i + 1000 * k);
      CHECK(bad == 0, "persistent start %d with a freed type: %d wrong", k, bad);
    }
  }
  CHECK_OK(MPI_Request_free(&r));
  free(buf);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  exercise(100, 10);
  exercise(50000, 20);
  return itest_finish("free_while_pending");
}
