/* MPI_Cancel of sends on a communicator the receiver has not finished
 * creating: rank 0 completes MPI_Comm_idup while rank 1 has started its own
 * and stays outside MPI for a while, so rank 0's messages on the new
 * communicator (and its cancel requests) reach rank 1 before the
 * communicator exists there. An eager, a synchronous and a rendezvous send
 * are cancelled: each MPI_Wait returns with the status saying cancelled,
 * and once rank 1 has the communicator it finds none of them, only the
 * send of another tag that was not cancelled. Two ranks. */
#include "tests/integration/itest.h"

enum { kBig = 1 << 20, kKept = 9 };

static int was_cancelled(const MPI_Status* st) {
  int flag = -1;
  MPI_Test_cancelled(st, &flag);
  return flag;
}

static void sender(MPI_Comm comm, unsigned char* buf) {
  MPI_Request r[4];
  MPI_Status st[4];
  itest_fill(buf, kBig, 1);
  CHECK_OK(MPI_Isend(buf, 8, MPI_BYTE, 1, 1, comm, &r[0]));
  CHECK_OK(MPI_Cancel(&r[0]));
  CHECK_OK(MPI_Issend(buf, 8, MPI_BYTE, 1, 2, comm, &r[1]));
  CHECK_OK(MPI_Cancel(&r[1]));
  CHECK_OK(MPI_Isend(buf, kBig, MPI_BYTE, 1, 3, comm, &r[2]));
  CHECK_OK(MPI_Cancel(&r[2]));
  CHECK_OK(MPI_Isend(buf, 100, MPI_BYTE, 1, kKept, comm, &r[3]));
  CHECK_OK(MPI_Waitall(3, r, st));
  CHECK(was_cancelled(&st[0]) == 1, "the eager send was not cancelled");
  CHECK(was_cancelled(&st[1]) == 1, "the synchronous send was not cancelled");
  CHECK(was_cancelled(&st[2]) == 1, "the rendezvous send was not cancelled");
  CHECK_OK(MPI_Wait(&r[3], &st[3]));
  CHECK(was_cancelled(&st[3]) == 0, "the send nobody cancelled says cancelled");
}

static void receiver(MPI_Comm comm, unsigned char* buf) {
  MPI_Status st;
  int flag = 1, count = -1;
  CHECK_OK(MPI_Recv(buf, 100, MPI_BYTE, 0, kKept, comm, &st));
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == 100 && itest_verify(buf, 100, 1) < 0, "the kept send: %d bytes", count);
  for (int tag = 1; tag <= 3; ++tag) {
    CHECK_OK(MPI_Iprobe(0, tag, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the cancelled send of tag %d arrived", tag);
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  unsigned char* buf = malloc(kBig);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request q;
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &comm, &q));
  if (itest_rank == 1) itest_sleep(1.0); /* rank 0 sends and cancels meanwhile */
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (itest_rank == 0) sender(comm, buf);
  else if (itest_rank == 1) receiver(comm, buf);
  CHECK_OK(MPI_Comm_free(&comm));
  free(buf);
  return itest_finish("cancel_before_comm_created");
}
