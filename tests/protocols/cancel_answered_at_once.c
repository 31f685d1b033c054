/* MPI_Cancel of a send whose message waits unmatched in the receiver's
 * unexpected queue, on one node: the first MPI_Test (or
 * MPI_Request_get_status) after the cancel already reports the request
 * complete and cancelled, and the message is gone from the receiver. For a
 * send to oneself and to a peer that is inside MPI; synchronous (Issend),
 * standard eager (Isend) and rendezvous-sized (Isend) messages. And
 * MPI_Cancel is local: with 2 or more ranks, a receiver outside MPI that
 * waits for something the canceller does after MPI_Cancel returns (a file
 * appearing) does not make MPI_Cancel wait for it; the cancel completes
 * once the receiver is back in MPI. */
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/itest.h"

enum { kBig = 1 << 20 };

static char big[kBig];

/* `mode` 0: Issend of one int, 1: Isend of one int, 2: Isend of kBig bytes. */
static void start_send(int mode, int dest, int tag, MPI_Request* r) {
  static int value = 42;
  if (mode == 0) CHECK_OK(MPI_Issend(&value, 1, MPI_INT, dest, tag, MPI_COMM_WORLD, r));
  if (mode == 1) CHECK_OK(MPI_Isend(&value, 1, MPI_INT, dest, tag, MPI_COMM_WORLD, r));
  if (mode == 2) CHECK_OK(MPI_Isend(big, kBig, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r));
}

static void cancel_and_test_once(MPI_Request* r, int use_get_status, const char* what) {
  CHECK_OK(MPI_Cancel(r));
  int flag = 0, cancelled = 0;
  MPI_Status st;
  if (use_get_status) {
    CHECK_OK(MPI_Request_get_status(*r, &flag, &st));
  } else {
    CHECK_OK(MPI_Test(r, &flag, &st));
  }
  CHECK(flag, "%s: the first test after MPI_Cancel says not complete", what);
  if (flag) {
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "%s: complete but not cancelled", what);
  }
  if (*r != MPI_REQUEST_NULL) CHECK_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;

  /* To oneself: the message sits in this process's own unexpected queue. */
  for (int mode = 0; mode < 3; ++mode) {
    for (int get_status = 0; get_status < 2; ++get_status) {
      int tag = 10 + mode * 2 + get_status, found = 1;
      MPI_Request r;
      start_send(mode, me, tag, &r);
      MPI_Status st;
      CHECK_OK(MPI_Iprobe(me, tag, MPI_COMM_WORLD, &found, &st));
      CHECK(found, "self mode %d: the message is not in the unexpected queue", mode);
      cancel_and_test_once(&r, get_status, "to oneself");
      CHECK_OK(MPI_Iprobe(me, tag, MPI_COMM_WORLD, &found, &st));
      CHECK(!found, "self mode %d: the cancelled message is still there", mode);
    }
  }

  /* To a peer on this node that is waiting in a barrier meanwhile. */
  if (n >= 2) {
    for (int mode = 0; mode < 3; ++mode) {
      int tag = 30 + mode;
      if (me == 0) {
        MPI_Request r;
        start_send(mode, 1, tag, &r);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the message reached rank 1 before this */
        cancel_and_test_once(&r, mode == 1, "to a peer");
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      } else {
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 cancels while this one waits here */
        if (me == 1) {
          int found = 1;
          CHECK_OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE));
          CHECK(!found, "peer mode %d: the cancelled message is still at the receiver", mode);
        }
      }
    }
  }
  /* A receiver outside MPI until the canceller has returned from MPI_Cancel. */
  if (n >= 2) {
    int pid = (int)getpid();
    CHECK_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    const char* dir = getenv("TEST_TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/cancel_local_%d", dir && *dir ? dir : "/tmp", pid);
    int tag = 40;
    if (me == 0) {
      MPI_Request r;
      start_send(0, 1, tag, &r);
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the message reached rank 1 */
      CHECK_OK(MPI_Cancel(&r));
      FILE* f = fopen(path, "w");
      CHECK(f != NULL, "cannot create %s", path);
      if (f) fclose(f);
      MPI_Status st;
      int cancelled = 0;
      CHECK_OK(MPI_Wait(&r, &st));
      CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
      CHECK(cancelled, "a send cancelled while its receiver was outside MPI was not cancelled");
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      unlink(path);
    } else {
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      if (me == 1) {
        struct stat sb;
        while (stat(path, &sb) != 0) usleep(1000); /* outside MPI */
      }
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      if (me == 1) {
        int found = 1;
        CHECK_OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE));
        CHECK(!found, "the send cancelled while its receiver was outside MPI is still there");
      }
    }
  }
  return itest_finish("cancel_answered_at_once");
}
