/* Regression test (an engine bug the integration tests found; fixed in
 * dea3d1a).
 *
 * A persistent request that completes before the program calls MPI_Wait must
 * still be "active" until that Wait: Wait returns its real status (source,
 * tag, count, cancelled) and MPI_Start on it is refused until then.
 *
 * Engine::complete() (core/request.cc) leaves Request::active set, and
 * classify() (binding/c/abi_requests.cc) takes "persistent && !active" to
 * mean an inactive persistent request; were completion to clear it,
 * Wait/Test/Waitall/... would hand back an empty status (MPI_ANY_SOURCE,
 * MPI_ANY_TAG, count 0, not cancelled, error lost) for any persistent request
 * that completed before it was waited on.
 */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  int peer = 1 - itest_rank, v = 42, got = -1, count = -1, flag = 0;
  MPI_Request r;
  MPI_Status st;
  if (itest_rank == 0) {
    CHECK_OK(MPI_Send_init(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Request_free(&r));
  } else {
    /* Receive completed before Wait. */
    CHECK_OK(MPI_Recv_init(&got, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Start(&r));
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Wait(&r, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(got == 42, "data %d", got);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 5 && count == 1,
          "status of a persistent receive completed before Wait: source %d tag %d count %d (want %d, 5, 1)",
          st.MPI_SOURCE, st.MPI_TAG, count, peer);
    /* Cancelled before Wait. */
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1, "a cancelled persistent receive reports not cancelled");
    CHECK_OK(MPI_Request_free(&r));
    /* Receive from MPI_PROC_NULL: complete at Start, status still PROC_NULL's. */
    CHECK_OK(MPI_Recv_init(&got, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "persistent PROC_NULL receive: status source %d", st.MPI_SOURCE);
    CHECK_OK(MPI_Request_free(&r));
  }
  return itest_finish("persistent_status_after_completion");
}
