/* Waitany / Waitsome / Testany / Testsome / Testall / Waitall semantics.
 *
 * Arrays mixing MPI_REQUEST_NULL entries with live requests; the receiver
 * controls when each message may be sent (the sender waits for a go on ctl),
 * so "not complete yet" is known for sure:
 *  - Testany/Testsome/Testall on incomplete requests: flag 0 / outcount 0,
 *    index MPI_UNDEFINED, nothing freed;
 *  - Waitany returns the index of the completed request and nulls only it;
 *  - Waitsome returns exactly the completed ones, in increasing index order;
 *  - all-null (or empty) arrays: Waitany/Testany give MPI_UNDEFINED (Testany
 *    with flag 1), Waitsome/Testsome give outcount MPI_UNDEFINED, Testall
 *    flag 1; statuses of null entries are empty.
 */
#include "tests/integration/itest.h"

static MPI_Comm ctl;
#define N 5

static void go(int peer, int which) { MPI_Send(&which, 1, MPI_INT, peer, 1, ctl); }

/* Wait (by Request_get_status, which frees nothing) until r completes. */
static void await(MPI_Request r) {
  int flag = 0;
  double t0 = MPI_Wtime();
  while (!flag && MPI_Wtime() - t0 < 30) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  CHECK(flag, "request never completed");
}

static void receiver(void) {
  int peer = 1;
  int vals[N];
  MPI_Request r[N];
  MPI_Status st, sts[N];
  int index, flag, outcount, indices[N];

  /* Empty and all-null arrays. */
  MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  index = 12345;
  CHECK_OK(MPI_Waitany(3, nulls, &index, &st));
  CHECK(index == MPI_UNDEFINED, "Waitany(all null) index %d", index);
  CHECK_EMPTY_STATUS(&st, "Waitany(all null)");
  index = 12345;
  flag = 0;
  CHECK_OK(MPI_Testany(3, nulls, &index, &flag, &st));
  CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany(all null): flag %d index %d", flag, index);
  outcount = 12345;
  CHECK_OK(MPI_Waitsome(3, nulls, &outcount, indices, sts));
  CHECK(outcount == MPI_UNDEFINED, "Waitsome(all null) outcount %d", outcount);
  outcount = 12345;
  CHECK_OK(MPI_Testsome(3, nulls, &outcount, indices, sts));
  CHECK(outcount == MPI_UNDEFINED, "Testsome(all null) outcount %d", outcount);
  flag = 0;
  CHECK_OK(MPI_Testall(3, nulls, &flag, sts));
  CHECK(flag == 1, "Testall(all null) flag %d", flag);
  for (int i = 0; i < 3; ++i) CHECK_EMPTY_STATUS(&sts[i], "Testall(all null)");
  index = 12345;
  CHECK_OK(MPI_Waitany(0, NULL, &index, MPI_STATUS_IGNORE));
  CHECK(index == MPI_UNDEFINED, "Waitany(0) index %d", index);
  CHECK_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));

  /* r[0] and r[3] are null; 1, 2, 4 receive tags 1, 2, 4. */
  for (int i = 0; i < N; ++i) {
    vals[i] = -1;
    r[i] = MPI_REQUEST_NULL;
    if (i != 0 && i != 3) CHECK_OK(MPI_Irecv(&vals[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &r[i]));
  }
  /* Nothing has been sent: tests report nothing and free nothing. */
  flag = 1;
  index = 12345;
  CHECK_OK(MPI_Testany(N, r, &index, &flag, &st));
  CHECK(flag == 0 && index == MPI_UNDEFINED, "Testany(none done): flag %d index %d", flag, index);
  outcount = 12345;
  CHECK_OK(MPI_Testsome(N, r, &outcount, indices, sts));
  CHECK(outcount == 0, "Testsome(none done): outcount %d", outcount);
  flag = 1;
  CHECK_OK(MPI_Testall(N, r, &flag, sts));
  CHECK(flag == 0, "Testall(none done): flag %d", flag);
  for (int i = 0; i < N; ++i)
    CHECK((r[i] == MPI_REQUEST_NULL) == (i == 0 || i == 3), "a test freed request %d (or un-nulled one)", i);

  /* Only tag 2 goes: Waitany returns index 2 and nulls only it. */
  go(peer, 2);
  CHECK_OK(MPI_Waitany(N, r, &index, &st));
  CHECK(index == 2, "Waitany returned index %d, want 2", index);
  CHECK(st.MPI_TAG == 2 && st.MPI_SOURCE == peer && vals[2] == 2, "Waitany status tag %d source %d val %d",
        st.MPI_TAG, st.MPI_SOURCE, vals[2]);
  CHECK(r[2] == MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL && r[4] != MPI_REQUEST_NULL,
        "Waitany freed the wrong requests");

  /* Tag 4 goes: Testany (looping) finds index 4. */
  go(peer, 4);
  flag = 0;
  double t0 = MPI_Wtime();
  while (!flag && MPI_Wtime() - t0 < 30) CHECK_OK(MPI_Testany(N, r, &index, &flag, &st));
  CHECK(flag && index == 4 && st.MPI_TAG == 4 && vals[4] == 4, "Testany: flag %d index %d tag %d", flag, index,
        st.MPI_TAG);

  /* Tag 1 goes: Waitsome returns exactly {1}. */
  go(peer, 1);
  CHECK_OK(MPI_Waitsome(N, r, &outcount, indices, sts));
  CHECK(outcount == 1 && indices[0] == 1 && sts[0].MPI_TAG == 1 && vals[1] == 1,
        "Waitsome: outcount %d index %d tag %d", outcount, indices[0], sts[0].MPI_TAG);
  /* Now everything is null. */
  CHECK_OK(MPI_Waitsome(N, r, &outcount, indices, sts));
  CHECK(outcount == MPI_UNDEFINED, "Waitsome after all done: outcount %d", outcount);

  /* Waitsome/Testsome with several complete: all of them, increasing index. */
  for (int i = 0; i < N; ++i) {
    vals[i] = -1;
    r[i] = MPI_REQUEST_NULL;
    if (i != 2) CHECK_OK(MPI_Irecv(&vals[i], 1, MPI_INT, peer, 10 + i, MPI_COMM_WORLD, &r[i]));
  }
  go(peer, 14);
  go(peer, 11);
  go(peer, 10);
  await(r[0]);
  await(r[1]);
  await(r[4]);
  CHECK_OK(MPI_Testsome(N, r, &outcount, indices, sts));
  CHECK(outcount == 3, "Testsome with 3 complete: outcount %d", outcount);
  if (outcount == 3) {
    CHECK(indices[0] == 0 && indices[1] == 1 && indices[2] == 4, "Testsome indices %d %d %d", indices[0],
          indices[1], indices[2]);
    for (int k = 0; k < 3; ++k)
      CHECK(sts[k].MPI_TAG == 10 + indices[k], "Testsome status %d has tag %d", k, sts[k].MPI_TAG);
  }
  CHECK(r[3] != MPI_REQUEST_NULL, "Testsome freed an incomplete request");
  go(peer, 13);
  /* Waitall with nulls: the null entries get empty statuses. */
  for (int i = 0; i < N; ++i) sts[i].MPI_TAG = 999;
  CHECK_OK(MPI_Waitall(N, r, sts));
  CHECK(sts[3].MPI_TAG == 13 && vals[3] == 3, "Waitall status of the live entry: tag %d", sts[3].MPI_TAG);
  for (int i = 0; i < N; ++i) {
    CHECK(r[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
    if (i != 3) CHECK_EMPTY_STATUS(&sts[i], "Waitall null entry");
  }
  for (int i = 0; i < N; ++i)
    if (i != 2) CHECK(vals[i] == i, "receive %d got %d", i, vals[i]);

  /* Testall: not all complete -> flag 0, nothing freed; then all -> freed. */
  MPI_Request two[2];
  CHECK_OK(MPI_Irecv(&vals[0], 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &two[0]));
  CHECK_OK(MPI_Irecv(&vals[1], 1, MPI_INT, peer, 21, MPI_COMM_WORLD, &two[1]));
  go(peer, 20);
  await(two[0]);
  CHECK_OK(MPI_Testall(2, two, &flag, sts));
  CHECK(flag == 0 && two[0] != MPI_REQUEST_NULL && two[1] != MPI_REQUEST_NULL,
        "Testall with one incomplete: flag %d, freed something", flag);
  go(peer, 21);
  await(two[1]);
  CHECK_OK(MPI_Testall(2, two, &flag, sts));
  CHECK(flag == 1 && two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL, "Testall all complete: flag %d",
        flag);
  CHECK(sts[0].MPI_TAG == 20 && sts[1].MPI_TAG == 21, "Testall statuses: tags %d %d", sts[0].MPI_TAG,
        sts[1].MPI_TAG);

  /* Send requests in the same calls (the peer receives them after the go). */
  go(peer, -1);
  int out[3] = {7, 8, 9};
  MPI_Request s[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Isend(&out[i], 1, MPI_INT, peer, 30 + i, MPI_COMM_WORLD, &s[i + 1]));
  int done = 0;
  while (done < 3) {
    CHECK_OK(MPI_Waitany(4, s, &index, &st));
    if (index == MPI_UNDEFINED) break;
    CHECK(index >= 1 && index <= 3, "Waitany on sends: index %d", index);
    ++done;
  }
  CHECK(done == 3, "Waitany completed %d sends", done);
}

static void sender(void) {
  int peer = 0;
  for (;;) {
    int which;
    MPI_Recv(&which, 1, MPI_INT, peer, 1, ctl, MPI_STATUS_IGNORE);
    if (which < 0) break;
    int v = which % 10;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, which, MPI_COMM_WORLD));
  }
  for (int i = 0; i < 3; ++i) {
    int v = -1;
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 30 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(v == 7 + i, "send %d delivered %d", i, v);
  }
}

int main(int argc, char** argv) {
  return itest_pair_main(argc, argv, "completion_calls", &ctl, receiver, sender);
}
