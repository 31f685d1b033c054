/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv between two ranks.
 *
 * Statuses (source, tag, count) must describe the message before it is
 * received, for eager and rendezvous sizes; a plain probe leaves the message
 * in place; a matched probe takes it, so no later probe or receive sees it;
 * MPI_PROC_NULL probes answer at once with MPI_MESSAGE_NO_PROC.
 */
#include "tests/integration/itest.h"

#define BIG 200000 /* above the default eager limit */
static MPI_Comm ctl;

/* Iprobe until a message is there (the sender has started it). */
static void iprobe_until(int source, int tag, MPI_Status* st) {
  int flag = 0;
  double t0 = MPI_Wtime();
  while (!flag && MPI_Wtime() - t0 < 30) MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, st);
  CHECK(flag, "Iprobe(%d, %d) never saw the message", source, tag);
}

static void proc_null_cases(void) {
  MPI_Status st;
  MPI_Message msg = MPI_MESSAGE_NULL;
  int flag = 0;
  char buf[4] = {1, 2, 3, 4};

  CHECK_OK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
  CHECK_PROC_NULL_STATUS(&st, "Probe(PROC_NULL)");
  CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag == 1, "Iprobe(PROC_NULL) flag %d", flag);
  CHECK_PROC_NULL_STATUS(&st, "Iprobe(PROC_NULL)");

  CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) message %#x", (unsigned)msg);
  CHECK_PROC_NULL_STATUS(&st, "Mprobe(PROC_NULL)");
  CHECK_OK(MPI_Mrecv(buf, 4, MPI_BYTE, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) left message %#x", (unsigned)msg);
  CHECK_PROC_NULL_STATUS(&st, "Mrecv(NO_PROC)");
  CHECK(buf[0] == 1 && buf[3] == 4, "Mrecv(NO_PROC) wrote the buffer");

  flag = 0;
  msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL) flag %d message %#x", flag, (unsigned)msg);
  MPI_Request req = MPI_REQUEST_NULL;
  CHECK_OK(MPI_Imrecv(buf, 4, MPI_BYTE, &msg, &req));
  CHECK(msg == MPI_MESSAGE_NULL, "Imrecv(NO_PROC) left message %#x", (unsigned)msg);
  CHECK_OK(MPI_Wait(&req, &st));
  CHECK_PROC_NULL_STATUS(&st, "Imrecv(NO_PROC)");
}

static void receiver(void) {
  int peer = 1;
  MPI_Status st;
  MPI_Message msg;
  int flag;
  unsigned char* big = malloc(BIG);
  int ints[100];

  proc_null_cases();

  /* Nothing sent yet: non-blocking probes find nothing. */
  flag = 1;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag == 0, "Iprobe found a message before any was sent");
  flag = 1;
  msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag == 0 && msg == MPI_MESSAGE_NULL, "Improbe found a message before any was sent");

  /* A blocking Probe posted before the message exists (sender waits for the
   * sync, then sleeps a little). */
  itest_sync(peer, ctl);
  CHECK_OK(MPI_Probe(peer, 7, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, peer, 7, 40, "Probe before send");
  /* A plain probe leaves it in place: probe again, with wildcards. */
  CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, peer, 7, 40, "second Probe");
  CHECK_OK(MPI_Recv(ints, 10, MPI_INT, peer, 7, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, peer, 7, 40, "Recv after Probe");
  for (int i = 0; i < 10; ++i) CHECK(ints[i] == 700 + i, "tag 7 int %d is %d", i, ints[i]);

  /* Sender now sends A (tag 5, 100 ints), B (tag 6, BIG bytes), C (tag 5, 0 bytes). */
  itest_sync(peer, ctl);
  itest_sync(peer, ctl); /* all three have been started */
  iprobe_until(peer, 5, &st);
  iprobe_until(peer, 6, &st); /* the rendezvous one announces its full size */
  CHECK_STATUS(&st, peer, 6, BIG, "Iprobe rendezvous");
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == BIG / 4, "Get_count(MPI_INT) on the probed rendezvous message: %d", n);
  CHECK_OK(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, peer, 5, 400, "Probe(ANY_TAG) sees the first message (A)");

  /* Mprobe takes A; afterwards tag-5 probes see C, not A. */
  msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &msg, &st));
  CHECK_STATUS(&st, peer, 5, 400, "Mprobe A");
  CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe gave message %#x", (unsigned)msg);
  CHECK_OK(MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag == 1, "Iprobe(tag 5) after Mprobe lost C");
  if (flag) CHECK_STATUS(&st, peer, 5, 0, "Iprobe(tag 5) after Mprobe sees C, not A");
  memset(ints, 0, sizeof ints);
  CHECK_OK(MPI_Mrecv(ints, 100, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left message %#x", (unsigned)msg);
  CHECK_STATUS(&st, peer, 5, 400, "Mrecv A");
  for (int i = 0; i < 100; ++i)
    if (ints[i] != 500 + i) {
      CHECK(0, "A int %d is %d", i, ints[i]);
      break;
    }

  /* Improbe takes B (rendezvous); then no tag-6 message is visible. */
  flag = 0;
  CHECK_OK(MPI_Improbe(peer, 6, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag == 1, "Improbe(tag 6) found nothing");
  CHECK_STATUS(&st, peer, 6, BIG, "Improbe B");
  int flag2 = 1;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag2, MPI_STATUS_IGNORE));
  CHECK(flag2 == 0, "Iprobe still sees B after Improbe took it");
  MPI_Message msg2 = MPI_MESSAGE_NULL;
  flag2 = 1;
  CHECK_OK(MPI_Improbe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag2, &msg2, MPI_STATUS_IGNORE));
  CHECK(flag2 == 0, "a second Improbe matched B again");
  MPI_Request req;
  memset(big, 0, BIG);
  CHECK_OK(MPI_Imrecv(big, BIG, MPI_BYTE, &msg, &req));
  CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left message %#x", (unsigned)msg);
  CHECK_OK(MPI_Wait(&req, &st));
  CHECK_STATUS(&st, peer, 6, BIG, "Imrecv B");
  long bad = itest_verify(big, BIG, 6);
  CHECK(bad < 0, "B differs at byte %ld", bad);

  /* C: zero bytes, still matched by Mprobe/Mrecv with a zero count. */
  CHECK_OK(MPI_Mprobe(peer, 5, MPI_COMM_WORLD, &msg, &st));
  CHECK_STATUS(&st, peer, 5, 0, "Mprobe C");
  CHECK_OK(MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, &st));
  CHECK_STATUS(&st, peer, 5, 0, "Mrecv C");

  /* Probe does not consume: several rendezvous messages, probed out of order
   * with Improbe by tag, received with Mrecv in a different order. */
  itest_sync(peer, ctl);
  itest_sync(peer, ctl);
  MPI_Message m[3];
  for (int t = 12; t >= 10; --t) {
    iprobe_until(peer, t, &st);
    CHECK_OK(MPI_Improbe(peer, t, MPI_COMM_WORLD, &flag, &m[t - 10], &st));
    CHECK(flag == 1, "Improbe(tag %d) found nothing", t);
    CHECK_STATUS(&st, peer, t, BIG / (t - 9), "Improbe out of order");
  }
  for (int t = 10; t <= 12; ++t) {
    memset(big, 0, BIG);
    CHECK_OK(MPI_Mrecv(big, BIG, MPI_BYTE, &m[t - 10], &st));
    CHECK_STATUS(&st, peer, t, BIG / (t - 9), "Mrecv out of order");
    bad = itest_verify(big, (size_t)(BIG / (t - 9)), (uint32_t)t);
    CHECK(bad < 0, "tag %d message differs at byte %ld", t, bad);
  }

  flag = 1;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 0, "a message is left over");
  free(big);
}

static void sender(void) {
  int peer = 0;
  unsigned char* big = malloc(BIG);
  int ints[100];
  MPI_Request reqs[3];

  proc_null_cases();
  itest_sync(peer, ctl);
  itest_sleep(0.2);
  for (int i = 0; i < 10; ++i) ints[i] = 700 + i;
  CHECK_OK(MPI_Send(ints, 10, MPI_INT, peer, 7, MPI_COMM_WORLD));

  itest_sync(peer, ctl);
  for (int i = 0; i < 100; ++i) ints[i] = 500 + i;
  itest_fill(big, BIG, 6);
  CHECK_OK(MPI_Isend(ints, 100, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[0]));
  CHECK_OK(MPI_Isend(big, BIG, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &reqs[1]));
  CHECK_OK(MPI_Isend(NULL, 0, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &reqs[2]));
  itest_sync(peer, ctl);
  CHECK_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));

  unsigned char* bigs[3];
  itest_sync(peer, ctl);
  for (int t = 10; t <= 12; ++t) {
    bigs[t - 10] = malloc(BIG);
    itest_fill(bigs[t - 10], (size_t)(BIG / (t - 9)), (uint32_t)t);
    CHECK_OK(MPI_Isend(bigs[t - 10], BIG / (t - 9), MPI_BYTE, peer, t, MPI_COMM_WORLD, &reqs[t - 10]));
  }
  itest_sync(peer, ctl);
  CHECK_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 3; ++i) free(bigs[i]);
  free(big);
}

int main(int argc, char** argv) { return itest_pair_main(argc, argv, "probe", &ctl, receiver, sender); }
