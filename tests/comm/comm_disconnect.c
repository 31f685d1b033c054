/* MPI_Comm_disconnect: a collective free that returns once the
 * communicator's traffic is done; the handle becomes MPI_COMM_NULL, the
 * communicator is gone, and a new one can take its place. On an
 * intracommunicator and an intercommunicator; the predefined ones and null
 * handles are refused with MPI_ERR_COMM, a null pointer with MPI_ERR_ARG. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int n = itest_size, me = itest_rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

  for (int round = 0; round < 50; ++round) {
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int right = (me + 1) % n, left = (me + n - 1) % n, got = -1, value = round * 100 + me;
    MPI_Request r;
    CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, left, round, dup, &r));
    CHECK_OK(MPI_Send(&value, 1, MPI_INT, right, round, dup));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(got == round * 100 + left, "round %d: got %d", round, got);
    MPI_Comm keep = dup;
    CHECK_OK(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "round %d: the handle is not MPI_COMM_NULL", round);
    int size = -1;
    CHECK_CLASS(MPI_Comm_size(keep, &size), MPI_ERR_COMM);
  }

  if (n >= 2) {
    MPI_Comm half, inter;
    int color = me % 2;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, me, &half));
    CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter));
    int remote = -1;
    CHECK_OK(MPI_Comm_remote_size(inter, &remote));
    CHECK(remote == (color ? (n + 1) / 2 : n / 2), "remote size %d", remote);
    CHECK_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "the intercommunicator handle is not MPI_COMM_NULL");
    CHECK_OK(MPI_Comm_disconnect(&half));
  }

  MPI_Comm world = MPI_COMM_WORLD, self = MPI_COMM_SELF, null = MPI_COMM_NULL;
  CHECK_CLASS(MPI_Comm_disconnect(&world), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_disconnect(&self), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_disconnect(&null), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_disconnect(NULL), MPI_ERR_ARG);
  CHECK(world == MPI_COMM_WORLD, "a refused disconnect changed the handle");
  return itest_finish("comm_disconnect");
}
