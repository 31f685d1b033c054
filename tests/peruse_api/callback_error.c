/* A callback that returns anything but MPI_SUCCESS ends the job (spec
 * 5.1.2): a message naming the event, the communicator and the value; every
 * rank stops; mpiexec exits non-zero. run_job.sh checks the exit and the
 * message; this program only sets the scene.
 *
 *   callback_error EVENT VALUE [NAME]
 *     rank 1 watches EVENT (a request or message event of a receive) on a
 *     dup of WORLD, named NAME with MPI_Comm_set_name when given (else on
 *     MPI_COMM_WORLD itself), with a callback returning VALUE; rank 0 sends
 *     it one message and then waits for an answer that never comes. Both
 *     ranks must be stopped by the failure; if either gets past the point
 *     where the job should have ended it says so (the test rejects that).
 */
#include "tests/peruse_api/ptest.h"

static int fail_value;

static int failing_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  if (spec->tag != 21) return MPI_SUCCESS; /* only the test's message */
  return fail_value;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  if (argc < 3 || itest_size != 2) {
    fprintf(stderr, "usage: callback_error EVENT VALUE [NAME], 2 ranks\n");
    return 2;
  }
  int event = PERUSE_EVENT_INVALID;
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Query_event(argv[1], &event), PERUSE_SUCCESS);
  fail_value = atoi(argv[2]);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (argc > 3) {
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK_OK(MPI_Comm_set_name(comm, argv[3]));
  }
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  if (itest_rank == 1) {
    CHECK_RC(PERUSE_Event_comm_register(event, comm, failing_cb, NULL, &h), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  }
  itest_barrier(MPI_COMM_WORLD);
  if (itest_failures) return itest_finish("callback_error setup");
  int v = 5;
  if (itest_rank == 0) {
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 1, 21, comm));
    /* Never answered: only the job's end gets us out of here. */
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 1, 22, comm, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 0, 21, comm, MPI_STATUS_IGNORE));
  }
  printf("[rank %d] STILL RUNNING after the failing callback\n", itest_rank);
  fflush(stdout);
  return 0;
}
