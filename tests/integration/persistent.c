/* Persistent requests: Send_init / Ssend_init / Bsend_init / Rsend_init /
 * Recv_init started many times with Start and Startall, completed with Wait,
 * Waitall, Test and Testall, with fresh data each round (the request keeps
 * pointing at the buffer, not at a copy taken at init time).
 *
 * Also: an inactive persistent request completes at once with an empty status;
 * Start on an active request is an error; a started one can be cancelled; Request_free on an inactive request
 * frees it; a persistent request survives completion (handle not nulled).
 */
#include "tests/integration/itest.h"

#define ROUNDS 150
#define SMALL 64      /* ints: eager */
#define LARGE 40000   /* ints: 160 KB, rendezvous */
static MPI_Comm ctl;

static void fill_ints(int* v, int n, int round, int which) {
  for (int i = 0; i < n; ++i) v[i] = round * 1000003 + which * 7919 + i;
}

static int check_ints(const int* v, int n, int round, int which) {
  for (int i = 0; i < n; ++i)
    if (v[i] != round * 1000003 + which * 7919 + i) {
      CHECK(0, "round %d stream %d: int %d is %d", round, which, i, v[i]);
      return 0;
    }
  return 1;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int peer = 1 - itest_rank;
  int* small[2];
  int* large[2];
  for (int k = 0; k < 2; ++k) {
    small[k] = malloc(SMALL * sizeof(int));
    large[k] = malloc(LARGE * sizeof(int));
  }
  MPI_Request req[4];
  MPI_Status st[4];
  const int bsize = 4 * (SMALL * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  void* bbuf = malloc((size_t)bsize);

  if (itest_rank == 0) {
    CHECK_OK(MPI_Send_init(small[0], SMALL, MPI_INT, peer, 1, MPI_COMM_WORLD, &req[0]));
    CHECK_OK(MPI_Ssend_init(large[0], LARGE, MPI_INT, peer, 2, MPI_COMM_WORLD, &req[1]));
    CHECK_OK(MPI_Send_init(large[1], LARGE, MPI_INT, peer, 3, MPI_COMM_WORLD, &req[2]));
    CHECK_OK(MPI_Ssend_init(small[1], SMALL, MPI_INT, peer, 4, MPI_COMM_WORLD, &req[3]));
  } else {
    CHECK_OK(MPI_Recv_init(small[0], SMALL, MPI_INT, peer, 1, MPI_COMM_WORLD, &req[0]));
    CHECK_OK(MPI_Recv_init(large[0], LARGE, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req[1]));
    CHECK_OK(MPI_Recv_init(large[1], LARGE, MPI_INT, peer, 3, MPI_COMM_WORLD, &req[2]));
    CHECK_OK(MPI_Recv_init(small[1], SMALL, MPI_INT, peer, 4, MPI_COMM_WORLD, &req[3]));
  }

  /* Inactive persistent requests complete at once with an empty status. */
  MPI_Status est;
  CHECK_OK(MPI_Wait(&req[0], &est));
  CHECK(req[0] != MPI_REQUEST_NULL, "Wait on an inactive persistent request nulled it");
  CHECK_EMPTY_STATUS(&est, "Wait on inactive");
  int flag = 0;
  CHECK_OK(MPI_Test(&req[1], &flag, &est));
  CHECK(flag == 1, "Test on an inactive persistent request: flag 0");
  CHECK_EMPTY_STATUS(&est, "Test on inactive");

  /* Regression: see persistent_status_after_completion.c.
   * A started receive nobody sends to: starting it again is erroneous (MPI
   * need not detect it; Sonde does), and it can be cancelled and freed. */
  MPI_Request lone;
  int dummy;
  CHECK_OK(MPI_Recv_init(&dummy, 1, MPI_INT, peer, 999, MPI_COMM_WORLD, &lone));
  CHECK_OK(MPI_Start(&lone));
  CHECK_CLASS(MPI_Start(&lone), MPI_ERR_REQUEST);
  CHECK_OK(MPI_Cancel(&lone));
  CHECK_OK(MPI_Wait(&lone, &est));
  flag = 0;
  MPI_Test_cancelled(&est, &flag);
  CHECK(flag == 1, "the cancelled persistent receive does not report cancelled");
  CHECK_OK(MPI_Request_free(&lone));

  for (int round = 0; round < ROUNDS; ++round) {
    if (itest_rank == 0) {
      fill_ints(small[0], SMALL, round, 0);
      fill_ints(large[0], LARGE, round, 1);
      fill_ints(large[1], LARGE, round, 2);
      fill_ints(small[1], SMALL, round, 3);
    } else {
      memset(small[0], 0, SMALL * sizeof(int));
      memset(small[1], 0, SMALL * sizeof(int));
      large[0][0] = large[0][LARGE - 1] = large[1][0] = large[1][LARGE - 1] = -1;
    }
    switch (round % 3) {
      case 0: /* Startall + Waitall */
        CHECK_OK(MPI_Startall(4, req));
        CHECK_OK(MPI_Waitall(4, req, st));
        break;
      case 1: /* Start each + Wait each, in a different order */
        for (int k = 3; k >= 0; --k) CHECK_OK(MPI_Start(&req[k]));
        for (int k = 0; k < 4; ++k) CHECK_OK(MPI_Wait(&req[k], &st[k]));
        break;
      case 2: { /* Startall + Test/Testall loops */
        CHECK_OK(MPI_Startall(4, req));
        int done = 0;
        double t0 = MPI_Wtime();
        while (!done && MPI_Wtime() - t0 < 30) {
          CHECK_OK(MPI_Test(&req[0], &flag, &st[0]));
          CHECK_OK(MPI_Testall(4, req, &done, st));
        }
        CHECK(done, "round %d: Testall never completed", round);
        break;
      }
    }
    for (int k = 0; k < 4; ++k) CHECK(req[k] != MPI_REQUEST_NULL, "round %d: request %d nulled", round, k);
    if (itest_rank == 1) {
      check_ints(small[0], SMALL, round, 0);
      check_ints(large[0], LARGE, round, 1);
      check_ints(large[1], LARGE, round, 2);
      check_ints(small[1], SMALL, round, 3);
      int count;
      MPI_Get_count(&st[2], MPI_INT, &count);
      CHECK(st[2].MPI_TAG == 3 && count == LARGE, "round %d: tag 3 receive got tag %d, %d ints", round,
            st[2].MPI_TAG, count);
      MPI_Get_count(&st[1], MPI_INT, &count);
      CHECK(st[1].MPI_SOURCE == 0 && count == LARGE, "round %d: ANY_SOURCE receive: source %d, %d ints", round,
            st[1].MPI_SOURCE, count);
    }
  }

  /* Request_free on inactive persistent requests. */
  for (int k = 0; k < 4; ++k) {
    CHECK_OK(MPI_Request_free(&req[k]));
    CHECK(req[k] == MPI_REQUEST_NULL, "Request_free left handle %d", k);
  }

  /* Buffered and ready persistent sends. */
  CHECK_OK(MPI_Buffer_attach(bbuf, bsize));
  MPI_Request b, rr;
  if (itest_rank == 0) {
    CHECK_OK(MPI_Bsend_init(small[0], SMALL, MPI_INT, peer, 5, MPI_COMM_WORLD, &b));
    CHECK_OK(MPI_Rsend_init(large[0], LARGE, MPI_INT, peer, 6, MPI_COMM_WORLD, &rr));
  } else {
    CHECK_OK(MPI_Recv_init(small[0], SMALL, MPI_INT, peer, 5, MPI_COMM_WORLD, &b));
    CHECK_OK(MPI_Recv_init(large[0], LARGE, MPI_INT, peer, 6, MPI_COMM_WORLD, &rr));
  }
  for (int round = 0; round < 20; ++round) {
    if (itest_rank == 0) {
      fill_ints(small[0], SMALL, round, 5);
      fill_ints(large[0], LARGE, round, 6);
      itest_sync(peer, ctl); /* the ready-mode receive is posted */
      CHECK_OK(MPI_Start(&b));
      CHECK_OK(MPI_Start(&rr));
      CHECK_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
      fill_ints(small[0], SMALL, -1, -1); /* buffered: the message is already a copy */
      CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Start(&rr));
      itest_sync(peer, ctl);
      CHECK_OK(MPI_Start(&b));
      CHECK_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
      check_ints(small[0], SMALL, round, 5);
      check_ints(large[0], LARGE, round, 6);
    }
  }
  CHECK_OK(MPI_Request_free(&b));
  CHECK_OK(MPI_Request_free(&rr));
  void* detached;
  int dsize;
  CHECK_OK(MPI_Buffer_detach(&detached, &dsize));
  CHECK(detached == bbuf && dsize == bsize, "Buffer_detach returned %p/%d", detached, dsize);

  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  for (int k = 0; k < 2; ++k) {
    free(small[k]);
    free(large[k]);
  }
  free(bbuf);
  return itest_finish("persistent");
}
