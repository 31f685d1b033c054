/* MPI_Cancel of sends whose message already left (MPI 4.1 3.8.4): an eager
 * send (complete as soon as it is handed over), a rendezvous send (RTS out)
 * and a synchronous send, none matched yet, are cancelled at the receiver:
 * MPI_Wait returns, the status says cancelled, and the receiver never sees
 * the message; a cancelled send among others leaves the others in order; a
 * send the receiver already matched completes normally and says not
 * cancelled; a persistent send cancelled once and started again is
 * delivered and says not cancelled. Two ranks. */
#include "tests/integration/itest.h"

enum { kBig = 1 << 20 };

static int was_cancelled(const MPI_Status* st) {
  int flag = -1;
  MPI_Test_cancelled(st, &flag);
  return flag;
}

static void sender(int peer, unsigned char* buf) {
  MPI_Request r;
  MPI_Status st;
  /* Unmatched eager and rendezvous sends: cancelled. */
  for (int tag = 1; tag <= 2; ++tag) {
    int n = tag == 1 ? 8 : kBig;
    CHECK_OK(MPI_Isend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(was_cancelled(&st) == 1, "unmatched %d-byte send was not cancelled", n);
  }
  /* An unmatched synchronous send waits for a match that never comes. */
  CHECK_OK(MPI_Issend(buf, 8, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(was_cancelled(&st) == 1, "unmatched synchronous send was not cancelled");
  /* Two sends of one envelope, the second cancelled: the first arrives. */
  int a = 10, b = 20;
  MPI_Request two[2];
  CHECK_OK(MPI_Isend(&a, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &two[0]));
  CHECK_OK(MPI_Isend(&b, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &two[1]));
  CHECK_OK(MPI_Cancel(&two[1]));
  CHECK_OK(MPI_Wait(&two[1], &st));
  CHECK(was_cancelled(&st) == 1, "second send of the pair was not cancelled");
  /* Persistent: cancelled, then started again and delivered. */
  itest_fill(buf, 100, 4);
  CHECK_OK(MPI_Send_init(buf, 100, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(was_cancelled(&st) == 1, "persistent send was not cancelled");
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(was_cancelled(&st) == 0, "restarted persistent send says cancelled");
  CHECK_OK(MPI_Request_free(&r));
  itest_sync(peer, MPI_COMM_WORLD); /* the receiver may look now */
  CHECK_OK(MPI_Wait(&two[0], MPI_STATUS_IGNORE));
  /* Matched first: the cancel fails, the data arrives. */
  itest_sync(peer, MPI_COMM_WORLD); /* its receive is posted */
  itest_fill(buf, kBig, 5);
  CHECK_OK(MPI_Isend(buf, kBig, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r));
  itest_sync(peer, MPI_COMM_WORLD); /* the receiver has matched it */
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(was_cancelled(&st) == 0, "a matched send was cancelled");
}

static void receiver(int peer, unsigned char* buf) {
  MPI_Status st;
  int flag = 1, got = -1, count = -1;
  itest_sync(peer, MPI_COMM_WORLD);
  /* Nothing of tags 1 and 2, one message of tag 3 (the first), the
   * restarted persistent one of tag 4. */
  CHECK_OK(MPI_Iprobe(peer, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the cancelled eager message arrived");
  CHECK_OK(MPI_Iprobe(peer, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the cancelled rendezvous message arrived");
  CHECK_OK(MPI_Iprobe(peer, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the cancelled synchronous message arrived");
  CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(got == 10, "tag 3 delivered %d, want the first send's 10", got);
  CHECK_OK(MPI_Iprobe(peer, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the cancelled second send of tag 3 arrived");
  CHECK_OK(MPI_Recv(buf, 100, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st));
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == 100 && itest_verify(buf, 100, 4) < 0, "restarted persistent send: %d bytes", count);
  CHECK_OK(MPI_Iprobe(peer, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the cancelled persistent send arrived too");
  MPI_Request r;
  CHECK_OK(MPI_Irecv(buf, kBig, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r));
  itest_sync(peer, MPI_COMM_WORLD);
  /* The RTS has arrived (and matched) when the sender's sync message has:
   * messages between two ranks arrive in order. */
  itest_sync(peer, MPI_COMM_WORLD);
  CHECK_OK(MPI_Wait(&r, &st));
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == kBig && itest_verify(buf, kBig, 5) < 0, "matched send: %d bytes", count);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  unsigned char* buf = malloc(kBig);
  memset(buf, 0x5a, kBig);
  if (itest_rank == 0) sender(1, buf);
  else if (itest_rank == 1) receiver(0, buf);
  free(buf);
  return itest_finish("cancel_send");
}
