/* A 2-rank server group and a 2-rank client group of one job (even and odd
 * world ranks) connect twice through the same port, then a third time
 * through a second port opened while the first two connections stand.
 * Data goes both ways over each new intercommunicator as it is made and
 * again over the older ones, before and after the first is disconnected. */
#include "tests/integration/itest.h"

/* Local rank i and remote rank i swap values naming the connection and the
 * sender; then an allreduce across the intercommunicator gives each side
 * the sum of the other side's. */
static void exchange(MPI_Comm inter, int server, int base, const char* what) {
  int rank, remote;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == 2, "%s: remote size %d", what, remote);
  const int mine = base + (server ? 0 : 10) + rank, theirs = base + (server ? 10 : 0) + rank;
  int got = -1;
  CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_INT, rank, base, &got, 1, MPI_INT, rank, base, inter, MPI_STATUS_IGNORE));
  CHECK(got == theirs, "%s: got %d from remote %d, want %d", what, got, rank, theirs);
  int sum = -1;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  const int want = 2 * (base + (server ? 10 : 0)) + 1;
  CHECK(sum == want, "%s: allreduce %d, want %d", what, sum, want);
}

static void meet(int server, const char* port, MPI_Comm group, MPI_Comm* inter) {
  if (server) {
    CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, group, inter));
  } else {
    CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, group, inter));
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 4, "run on 4 ranks, not %d", itest_size);
  const int server = itest_rank % 2 == 0;
  MPI_Comm group;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, server ? 0 : 1, itest_rank, &group));
  char port[2][MPI_MAX_PORT_NAME];
  memset(port, 0, sizeof port);
  if (itest_rank == 0) CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port[0]));
  CHECK_OK(MPI_Bcast(port[0], MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));

  MPI_Comm first, second, third;
  meet(server, port[0], group, &first);
  exchange(first, server, 100, "first");
  meet(server, port[0], group, &second);
  exchange(second, server, 200, "second");
  exchange(first, server, 120, "first again");

  if (itest_rank == 0) CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port[1]));
  CHECK_OK(MPI_Bcast(port[1], MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
  CHECK(strcmp(port[0], port[1]) != 0, "two ports with one name '%s'", port[0]);
  meet(server, port[1], group, &third);
  exchange(third, server, 300, "third");
  CHECK_OK(MPI_Comm_disconnect(&first));
  exchange(second, server, 220, "second after the first is gone");
  exchange(third, server, 320, "third after the first is gone");
  CHECK_OK(MPI_Comm_disconnect(&third));
  CHECK_OK(MPI_Comm_disconnect(&second));
  if (itest_rank == 0) {
    CHECK_OK(MPI_Close_port(port[0]));
    CHECK_OK(MPI_Close_port(port[1]));
  }
  MPI_Comm_free(&group);
  return itest_finish("connect_twice");
}
