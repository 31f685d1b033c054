/* Accept/connect between two jobs that share no route yet: the root job
 * spawns job X and job Y (2 ranks each; argv[1], argv[2]: their hosts, "-"
 * for the launcher's choice); X opens a port, which reaches Y through the
 * root job; X accepts, Y connects, and they exchange data over the new
 * intercommunicator and the merged one. With argv[3], the transport that
 * connection wired last (the MPI_T cvar sonde_transports lists them in the
 * order they were added) must be that one, on both sides. */
#include "tests/integration/itest.h"
#include "tests/spawn/last_transport.h"

enum { kRanks = 2 };

/* Job X (acceptor) and job Y (connector). */
static void member(MPI_Comm parent, int acceptor, const char* transport) {
  char port[MPI_MAX_PORT_NAME] = "";
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (acceptor && rank == 0) {
    CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, parent));
  }
  if (!acceptor && rank == 0) CHECK_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, parent, MPI_STATUS_IGNORE));
  MPI_Comm other;
  if (acceptor)
    CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
  else
    CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
  if (transport) check_last_transport(transport);
  int remote = -1;
  MPI_Comm_remote_size(other, &remote);
  CHECK(remote == kRanks, "remote size %d", remote);
  /* Rank i swaps with remote rank i: a small and a large (rendezvous) message. */
  const int mine = (acceptor ? 10 : 20) + rank, theirs = (acceptor ? 20 : 10) + rank;
  int got = -1;
  CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_INT, rank, 3, &got, 1, MPI_INT, rank, 3, other, MPI_STATUS_IGNORE));
  CHECK(got == theirs, "got %d, want %d", got, theirs);
  enum { kBig = 1 << 20 };
  unsigned char* out = malloc(kBig);
  unsigned char* in = malloc(kBig);
  itest_fill(out, kBig, mine);
  CHECK_OK(MPI_Sendrecv(out, kBig, MPI_BYTE, rank, 4, in, kBig, MPI_BYTE, rank, 4, other, MPI_STATUS_IGNORE));
  CHECK(itest_verify(in, kBig, theirs) < 0, "large message from remote %d is wrong", rank);
  free(out);
  free(in);
  MPI_Comm merged;
  CHECK_OK(MPI_Intercomm_merge(other, acceptor ? 0 : 1, &merged));
  int v = acceptor ? 1 : 100, sum = -1;
  CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK(sum == kRanks * 101, "merged allreduce %d", sum);
  CHECK_OK(MPI_Comm_free(&merged));
  CHECK_OK(MPI_Comm_disconnect(&other));
  if (acceptor && rank == 0) CHECK_OK(MPI_Close_port(port));
  CHECK_OK(MPI_Comm_disconnect(&parent));
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int provided = 0;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  if (parent != MPI_COMM_NULL) {
    CHECK(argc > 1, "member argv");
    member(parent, argv[1][0] == 'x', argc > 2 ? argv[2] : NULL);
    itest_rank += argv[1][0] == 'x' ? 100 : 200;
    MPI_T_finalize();
    return itest_finish("cross_connect");
  }
  CHECK(argc > 2, "usage: cross_connect HOST_X HOST_Y [TRANSPORT]");
  MPI_Comm job[2];
  for (int j = 0; j < 2; ++j) {
    char* args[] = {j == 0 ? "x" : "y", argc > 3 ? argv[3] : NULL, NULL};
    MPI_Info info = MPI_INFO_NULL;
    if (strcmp(argv[1 + j], "-") != 0) {
      CHECK_OK(MPI_Info_create(&info));
      CHECK_OK(MPI_Info_set(info, "host", argv[1 + j]));
    }
    CHECK_OK(MPI_Comm_spawn(argv[0], args, kRanks, info, 0, MPI_COMM_WORLD, &job[j], MPI_ERRCODES_IGNORE));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  }
  if (itest_rank == 0) {
    char port[MPI_MAX_PORT_NAME] = "";
    CHECK_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, job[0], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, job[1]));
  }
  CHECK_OK(MPI_Comm_disconnect(&job[0]));
  CHECK_OK(MPI_Comm_disconnect(&job[1]));
  MPI_T_finalize();
  return itest_finish("cross_connect");
}
