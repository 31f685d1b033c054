/* Two groups of one job (even and odd world ranks) meet through the name
 * service: the even group opens a port and publishes it under a service
 * name, the odd group looks it up and connects, the even group accepts.
 * Both exchange data both ways and run an allreduce over the new
 * intercommunicator; then the name is withdrawn and the port closed. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  const int even = itest_rank % 2 == 0;
  MPI_Comm group;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, even ? 0 : 1, itest_rank, &group));
  int grank, gsize;
  MPI_Comm_rank(group, &grank);
  MPI_Comm_size(group, &gsize);
  char port[MPI_MAX_PORT_NAME] = "";
  MPI_Comm inter;
  if (even) {
    if (grank == 0) {
      CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
      CHECK_OK(MPI_Publish_name("sonde-accept-test", MPI_INFO_NULL, port));
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, group, &inter));
  } else {
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (grank == 0) {
      CHECK_OK(MPI_Lookup_name("sonde-accept-test", MPI_INFO_NULL, port));
      CHECK(strncmp(port, "sonde-port:", 11) == 0, "looked-up port '%s'", port);
    }
    CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, group, &inter));
  }
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == (even ? itest_size / 2 : (itest_size + 1) / 2), "remote size %d", remote);
  /* Local rank i exchanges with remote rank i when it exists. */
  if (grank < remote) {
    int v = itest_rank, got = -1;
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, grank, 3, &got, 1, MPI_INT, grank, 3, inter, MPI_STATUS_IGNORE));
    CHECK(got == (even ? itest_rank + 1 : itest_rank - 1), "got %d from remote %d", got, grank);
  }
  int one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == remote, "allreduce %d", sum);
  CHECK_OK(MPI_Comm_disconnect(&inter));
  if (even && grank == 0) {
    CHECK_OK(MPI_Unpublish_name("sonde-accept-test", MPI_INFO_NULL, port));
    CHECK_OK(MPI_Close_port(port));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char again[MPI_MAX_PORT_NAME];
    CHECK_CLASS(MPI_Lookup_name("sonde-accept-test", MPI_INFO_NULL, again), MPI_ERR_NAME);
  }
  MPI_Comm_free(&group);
  return itest_finish("accept_connect");
}
