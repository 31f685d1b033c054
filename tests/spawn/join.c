/* MPI_Comm_join over a TCP socket between ranks 0 and 1: rank 0 listens on
 * the loopback interface and sends its port number, rank 1 connects; the
 * intercommunicator joins the two, data goes both ways; then a second join
 * over the same socket while the first intercommunicator stands. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int fd = -1;
  if (itest_rank == 0) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(ls, (struct sockaddr*)&a, sizeof a) == 0 && listen(ls, 1) == 0, "listen");
    socklen_t len = sizeof a;
    getsockname(ls, (struct sockaddr*)&a, &len);
    int port = ntohs(a.sin_port);
    CHECK_OK(MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    fd = accept(ls, NULL, NULL);
    close(ls);
  } else if (itest_rank == 1) {
    int port = 0;
    CHECK_OK(MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    CHECK(connect(fd, (struct sockaddr*)&a, sizeof a) == 0, "connect");
  }
  if (itest_rank < 2) {
    /* Twice over the same socket: the second connection is new, and both
     * carry their own traffic. */
    MPI_Comm inter[2];
    for (int k = 0; k < 2; ++k) {
      CHECK_OK(MPI_Comm_join(fd, &inter[k]));
      int remote = 0;
      MPI_Comm_remote_size(inter[k], &remote);
      CHECK(remote == 1, "join %d: remote size %d", k, remote);
    }
    for (int k = 1; k >= 0; --k) {
      int v = 10 * k + 10 + itest_rank, got = -1;
      CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, inter[k], MPI_STATUS_IGNORE));
      CHECK(got == 10 * k + 11 - itest_rank, "join %d: got %d", k, got);
    }
    CHECK_OK(MPI_Comm_disconnect(&inter[0]));
    CHECK_OK(MPI_Comm_disconnect(&inter[1]));
    close(fd);
  }
  return itest_finish("join");
}
