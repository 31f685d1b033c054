/* MPI_Cancel and MPI_Test_cancelled.
 *
 * - A posted receive that nothing matched yet is cancelled: Wait completes it,
 *   Test_cancelled says so, and the message it would have matched goes to the
 *   next receive instead (eager and rendezvous sizes, specific and wildcard).
 * - A receive that already matched is not cancelled: it completes with the
 *   data (matched and complete, and matched with a rendezvous in flight).
 * - A persistent receive can be cancelled and started again.
 * - A send cancel may succeed or not, but the receiver's view must agree.
 *
 * "Matched" is made observable the MPI way: a receive posted earlier than one
 * that completed, for the same (source, tag), has matched (non-overtaking).
 */
#include "tests/integration/itest.h"

#define BIG 300000
static MPI_Comm ctl;

static int cancelled(const MPI_Status* st) {
  int flag = -1;
  CHECK_OK(MPI_Test_cancelled(st, &flag));
  return flag;
}

static void receiver(void) {
  int peer = 1;
  MPI_Status st;
  MPI_Request r;
  unsigned char* buf = malloc(BIG);
  unsigned char* buf2 = malloc(BIG);
  int count;

  /* 1. Cancel unmatched posted receives, then the messages arrive. */
  const int sizes[2] = {100, BIG};
  for (int k = 0; k < 2; ++k) {
    int tag = 10 + k;
    memset(buf, 0xEE, BIG);
    CHECK_OK(MPI_Irecv(buf, BIG, MPI_BYTE, k ? MPI_ANY_SOURCE : peer, k ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "Cancel nulled the request handle");
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not free the cancelled request");
    CHECK(cancelled(&st) == 1, "unmatched receive %d was not cancelled", k);
    CHECK(buf[0] == 0xEE && buf[sizes[k] - 1] == 0xEE, "cancelled receive %d wrote its buffer", k);
    itest_sync(peer, ctl); /* sender may send now */
    CHECK_OK(MPI_Recv(buf2, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == sizes[k], "message after cancel %d: %d bytes", k, count);
    long bad = itest_verify(buf2, (size_t)sizes[k], (uint32_t)tag);
    CHECK(bad < 0, "message after cancel %d differs at %ld", k, bad);
    CHECK(cancelled(&st) == 0, "the later receive reports cancelled");
    CHECK(buf[0] == 0xEE && buf[sizes[k] - 1] == 0xEE, "the message went into the cancelled receive's buffer");
  }

  /* 2. Cancel after match: the message arrived and matched, request complete. */
  CHECK_OK(MPI_Irecv(buf, BIG, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &r));
  itest_sync(peer, ctl);
  int flag = 0;
  double t0 = MPI_Wtime();
  while (!flag && MPI_Wtime() - t0 < 30) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  CHECK(flag, "the tag 20 receive never completed");
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(cancelled(&st) == 0, "a completed receive was cancelled");
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == 64 && itest_verify(buf, 64, 20) < 0, "completed receive lost its data (count %d)", count);

  /* 3. Cancel after match, transfer maybe still in flight: the sender starts
   * a rendezvous message and then a small one with the same tag. Once the
   * small one completes our second receive, non-overtaking says the big one
   * matched our first receive, so that one can no longer be cancelled. */
  for (int tag = 21; tag <= 22; ++tag) {
    int small = -1;
    CHECK_OK(MPI_Irecv(buf, BIG, MPI_BYTE, tag == 21 ? peer : MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r));
    itest_sync(peer, ctl); /* receive posted */
    CHECK_OK(MPI_Recv(&small, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(small == tag, "second message of tag %d carries %d", tag, small);
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(cancelled(&st) == 0, "matched rendezvous receive (tag %d) was cancelled", tag);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == BIG, "matched rendezvous receive (tag %d): %d bytes", tag, count);
    long bad = itest_verify(buf, BIG, (uint32_t)tag);
    CHECK(bad < 0, "matched rendezvous receive (tag %d) differs at %ld", tag, bad);
  }

  /* 4. Persistent receive: start, cancel, start again, receive.
   * Regression: see persistent_status_after_completion.c. */
  CHECK_OK(MPI_Recv_init(buf, BIG, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r != MPI_REQUEST_NULL, "Wait freed a persistent request");
  CHECK(cancelled(&st) == 1, "persistent receive was not cancelled");
  CHECK_OK(MPI_Start(&r));
  itest_sync(peer, ctl);
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(cancelled(&st) == 0, "restarted persistent receive reports cancelled");
  MPI_Get_count(&st, MPI_BYTE, &count);
  CHECK(count == 1000 && itest_verify(buf, 1000, 30) < 0, "restarted persistent receive: %d bytes", count);
  CHECK_OK(MPI_Request_free(&r));

  /* 5. Cancel many posted receives in the middle of a queue: the survivors
   * match in order. */
  MPI_Request rs[6];
  int vals[6];
  for (int i = 0; i < 6; ++i) CHECK_OK(MPI_Irecv(&vals[i], 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &rs[i]));
  for (int i = 0; i < 6; i += 2) CHECK_OK(MPI_Cancel(&rs[i]));
  itest_sync(peer, ctl);
  MPI_Status sts[6];
  CHECK_OK(MPI_Waitall(6, rs, sts));
  for (int i = 0; i < 6; ++i) {
    if (i % 2 == 0) {
      CHECK(cancelled(&sts[i]) == 1, "queue cancel %d not cancelled", i);
    } else {
      CHECK(cancelled(&sts[i]) == 0, "queue receive %d cancelled", i);
      CHECK(vals[i] == i / 2, "queue receive %d got %d, want %d", i, vals[i], i / 2);
    }
  }

  /* 6. Send cancel (eager and rendezvous sizes): the sender tells us whether
   * its cancel succeeded; our receive, posted meanwhile, must agree. */
  for (int tag = 50; tag <= 51; ++tag) {
    int n = tag == 50 ? 100 : BIG, sent_cancelled = -1;
    memset(buf, 0, BIG);
    CHECK_OK(MPI_Irecv(buf, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(&sent_cancelled, 1, MPI_INT, peer, 0, ctl, MPI_STATUS_IGNORE));
    if (sent_cancelled) {
      CHECK_OK(MPI_Cancel(&r));
      CHECK_OK(MPI_Wait(&r, &st));
      CHECK(cancelled(&st) == 1, "send %d was cancelled but our receive matched it", tag);
    } else {
      CHECK_OK(MPI_Wait(&r, &st));
      MPI_Get_count(&st, MPI_BYTE, &count);
      CHECK(count == n && itest_verify(buf, (size_t)n, (uint32_t)tag) < 0,
            "send %d was not cancelled but arrived wrong (%d bytes)", tag, count);
    }
    printf("cancel of a %d-byte send %s\n", n, sent_cancelled ? "succeeded" : "was refused (allowed)");
  }

  flag = 1;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 0, "a message is left over");
  free(buf);
  free(buf2);
}

static void sender(void) {
  int peer = 0;
  unsigned char* buf = malloc(BIG);
  MPI_Request r;

  for (int k = 0; k < 2; ++k) {
    int tag = 10 + k, n = k ? BIG : 100;
    itest_fill(buf, (size_t)n, (uint32_t)tag);
    itest_sync(peer, ctl);
    CHECK_OK(MPI_Send(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
  }

  itest_sync(peer, ctl);
  itest_fill(buf, 64, 20);
  CHECK_OK(MPI_Send(buf, 64, MPI_BYTE, peer, 20, MPI_COMM_WORLD));

  for (int tag = 21; tag <= 22; ++tag) {
    itest_fill(buf, BIG, (uint32_t)tag);
    itest_sync(peer, ctl);
    CHECK_OK(MPI_Isend(buf, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Send(&tag, 1, MPI_INT, peer, tag, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }

  itest_sync(peer, ctl);
  itest_fill(buf, 1000, 30);
  CHECK_OK(MPI_Send(buf, 1000, MPI_BYTE, peer, 30, MPI_COMM_WORLD));

  itest_sync(peer, ctl);
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Send(&i, 1, MPI_INT, peer, 40, MPI_COMM_WORLD));

  for (int tag = 50; tag <= 51; ++tag) {
    int n = tag == 50 ? 100 : BIG;
    itest_fill(buf, (size_t)n, (uint32_t)tag);
    CHECK_OK(MPI_Isend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    MPI_Status st;
    CHECK_OK(MPI_Wait(&r, &st));
    int was = cancelled(&st);
    CHECK(was == 0 || was == 1, "Test_cancelled gave %d", was);
    CHECK_OK(MPI_Send(&was, 1, MPI_INT, peer, 0, ctl));
  }
  free(buf);
}

int main(int argc, char** argv) { return itest_pair_main(argc, argv, "cancel", &ctl, receiver, sender); }
