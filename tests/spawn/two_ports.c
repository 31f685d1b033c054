/* Two ports open at once, connected from two different client jobs: the
 * server job's rank 0 opens both ports, the server spawns client job X
 * (given the first port) and client job Y (given the second), and both
 * client jobs connect at once while the server accepts the second port
 * first, so X waits in MPI_Comm_connect while Y's connection is made. Data
 * then goes both ways over both accepted intercommunicators and over both
 * spawn intercommunicators. Clients run this program with argv[1] "x" or
 * "y" and argv[2] the port. */
#include "tests/integration/itest.h"

enum { kClients = 2 };

/* Local rank i and remote rank i swap `base + rank` when both exist; then an
 * allreduce across the intercommunicator gives each side the other side's
 * sum of `base + rank`. */
static void exchange(MPI_Comm inter, int base, const char* what) {
  int rank, size, remote;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &remote);
  if (rank < remote) {
    int v = base + rank, got = -1;
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, rank, base, &got, 1, MPI_INT, rank, base, inter, MPI_STATUS_IGNORE));
    CHECK(got == base + rank, "%s: got %d from remote %d, want %d", what, got, rank, base + rank);
  }
  int mine = base + rank, sum = -1;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  int want = remote * base + remote * (remote - 1) / 2;
  CHECK(sum == want, "%s: allreduce %d, want %d", what, sum, want);
}

static void client(MPI_Comm parent, const char* job, const char* port) {
  const int base = job[0] == 'x' ? 100 : 200;
  MPI_Comm server;
  CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server));
  int remote = -1;
  MPI_Comm_remote_size(server, &remote);
  CHECK(remote == kClients, "job %s: server size %d", job, remote);
  exchange(server, base, job);
  exchange(parent, base + 50, job);
  CHECK_OK(MPI_Comm_disconnect(&server));
  CHECK_OK(MPI_Comm_disconnect(&parent));
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  if (parent != MPI_COMM_NULL) {
    CHECK(argc > 2, "client argv");
    if (argc > 2) client(parent, argv[1], argv[2]);
    itest_rank += 100; /* clients report as 100+ */
    return itest_finish("two_ports");
  }
  char port[2][MPI_MAX_PORT_NAME] = {"", ""};
  if (itest_rank == 0) {
    CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port[0]));
    CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port[1]));
    CHECK(strcmp(port[0], port[1]) != 0, "two ports with one name '%s'", port[0]);
  }
  MPI_Comm spawned[2];
  const char* jobs[2] = {"x", "y"};
  for (int j = 0; j < 2; ++j) {
    char* args[] = {(char*)jobs[j], port[j], NULL};
    CHECK_OK(MPI_Comm_spawn(argv[0], args, kClients, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &spawned[j],
                            MPI_ERRCODES_IGNORE));
  }
  MPI_Comm accepted[2];
  CHECK_OK(MPI_Comm_accept(port[1], MPI_INFO_NULL, 0, MPI_COMM_WORLD, &accepted[1]));
  CHECK_OK(MPI_Comm_accept(port[0], MPI_INFO_NULL, 0, MPI_COMM_WORLD, &accepted[0]));
  for (int j = 0; j < 2; ++j) {
    int remote = -1;
    MPI_Comm_remote_size(accepted[j], &remote);
    CHECK(remote == kClients, "job %s: client size %d", jobs[j], remote);
  }
  /* Each client job talks to its accepted intercommunicator, then to its
   * parent one; the server follows that order per job, Y's first. */
  exchange(accepted[1], 200, "y");
  exchange(spawned[1], 250, "y parent");
  exchange(accepted[0], 100, "x");
  exchange(spawned[0], 150, "x parent");
  for (int j = 0; j < 2; ++j) {
    CHECK_OK(MPI_Comm_disconnect(&accepted[j]));
    CHECK_OK(MPI_Comm_disconnect(&spawned[j]));
  }
  if (itest_rank == 0) {
    CHECK_OK(MPI_Close_port(port[0]));
    CHECK_OK(MPI_Close_port(port[1]));
  }
  return itest_finish("two_ports");
}
