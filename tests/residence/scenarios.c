/* scenarios: traffic whose queue behaviour is known in advance, run under the
 * queue-residence profiler (linked in, or LD_PRELOADed into this unmodified
 * program). After MPI_Finalize, when the profiler has written its reports,
 * ranks 0 and 1 read their CSV (and rank 0 the job summary) and check it:
 *
 *   "posted" (MPI_COMM_WORLD/dup1)   rank 1 posts N receives, a barrier, then
 *                                    rank 0 sends N: N posted-queue samples
 *                                    for peer 0, none unexpected, posted
 *                                    high-water mark N; one cancelled receive
 *   "unexpected" (dup2, freed)       rank 0 sends M, a barrier, then a "go"
 *                                    on "go" (dup3); only then does rank 1
 *                                    receive: M unexpected samples, high-water
 *                                    mark exactly M, none posted
 *   MPI_COMM_WORLD/split1:color0     K wildcard (MPI_ANY_SOURCE) receives
 *                                    posted first: K posted samples for peer 0
 *                                    (the sender, learnt at match), no "ANY"
 *   "nested" (dup1/dup1)             one message on a dup of a dup
 *   "churn" (dup4)                   CHURN synchronous sends in windows of 4, with
 *                                    tiny tables (SONDE_RESIDENCE_TABLE_SIZE):
 *                                    every one counted, nothing dropped
 *   --hold-lock                      (implies --multiple) rank 0 sends one
 *                                    message on "go" while holding
 *                                    PERUSE_Lock: the profiler's callbacks
 *                                    are refused the lock
 *                                    (PERUSE_ERR_LOCK_NOT_GRANTABLE) and count
 *                                    4 dropped records (activate, xfer begin,
 *                                    complete, notify). The spec forbids MPI
 *                                    calls under PERUSE_Lock (5.2.16): this
 *                                    breaks the rule on purpose, as a careless
 *                                    application or tool would.
 * plus, everywhere: p50 <= p99 <= max, min <= mean <= max, queue times > 0,
 * internal collective traffic filtered (counted on MPI_COMM_WORLD), no
 * unmatched events.
 *
 *   scenarios [--stderr] [--multiple] [--hold-lock]
 *
 * --multiple initialises with MPI_THREAD_MULTIPLE (the profiler then takes
 * PERUSE_Lock in every callback); the traffic stays on one thread.
 *
 * Without --stderr it points the profiler at $TEST_TMPDIR/residence-<job>
 * (SONDE_RESIDENCE_OUT) unless that is already set; with --stderr it leaves
 * the profiler to print on stderr and checks nothing itself.
 * Ranks beyond 1 only take part in the collective calls.
 */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/residence/report_csv.h"

#define N_POSTED 8
#define M_UNEXPECTED 6
#define K_WILDCARD 5
#define CHURN 3000
#define WINDOW 4

/* ---------------------------------------------------------------- traffic */

static void run(int hold_lock) {
  MPI_Comm posted, unexpected, go, pair, nested, churn;
  MPI_Comm_dup(MPI_COMM_WORLD, &posted);
  MPI_Comm_set_name(posted, "posted");
  MPI_Comm_dup(MPI_COMM_WORLD, &unexpected);
  MPI_Comm_set_name(unexpected, "unexpected");
  MPI_Comm_dup(MPI_COMM_WORLD, &go);
  MPI_Comm_set_name(go, "go");
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, rank, &pair);
  MPI_Comm_dup(posted, &nested);
  MPI_Comm_set_name(nested, "nested");
  MPI_Comm_dup(MPI_COMM_WORLD, &churn);
  MPI_Comm_set_name(churn, "churn");
  int buf[64] = {0};
  MPI_Request req[64];

  /* Posted queue: receives wait for messages sent after a barrier. */
  if (rank == 1)
    for (int i = 0; i < N_POSTED; ++i) MPI_Irecv(&buf[i], 1, MPI_INT, 0, 5, posted, &req[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < N_POSTED; ++i) MPI_Send(&i, 1, MPI_INT, 1, 5, posted);
  if (rank == 1) MPI_Waitall(N_POSTED, req, MPI_STATUSES_IGNORE);

  /* Unexpected queue: all M are in rank 1's queue before it receives any
   * (one sender's messages arrive in order, and "go" comes after them). */
  if (rank == 0) {
    for (int i = 0; i < M_UNEXPECTED; ++i) MPI_Send(&i, 1, MPI_INT, 1, 7, unexpected);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(buf, 1, MPI_INT, 1, 1, go);
  } else if (rank == 1) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(buf, 1, MPI_INT, 0, 1, go, MPI_STATUS_IGNORE);
    for (int i = 0; i < M_UNEXPECTED; ++i) MPI_Recv(&buf[i], 1, MPI_INT, 0, 7, unexpected, MPI_STATUS_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* Wildcard receives, posted before the sends, on a split communicator. */
  if (rank == 1)
    for (int i = 0; i < K_WILDCARD; ++i) MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 9, pair, &req[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < K_WILDCARD; ++i) MPI_Send(&i, 1, MPI_INT, 1, 9, pair);
  if (rank == 1) MPI_Waitall(K_WILDCARD, req, MPI_STATUSES_IGNORE);

  /* A dup of a dup: propagation reaches it too. */
  if (rank == 0) MPI_Send(buf, 1, MPI_INT, 1, 3, nested);
  if (rank == 1) MPI_Recv(buf, 1, MPI_INT, 0, 3, nested, MPI_STATUS_IGNORE);

  /* A cancelled receive leaves the posted queue without a match. */
  if (rank == 1) {
    MPI_Irecv(buf, 1, MPI_INT, 0, 99, posted, &req[0]);
    MPI_Cancel(&req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  }

  /* Many more requests and messages than the tables have slots. */
  for (int done = 0; done < CHURN; done += WINDOW) {
    if (rank == 0) {
      /* Synchronous: a window completes only once matched, so no more than
       * WINDOW messages and requests are ever live. */
      for (int i = 0; i < WINDOW; ++i) MPI_Issend(&buf[i], 1, MPI_INT, 1, 11, churn, &req[i]);
      MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
      for (int i = 0; i < WINDOW; ++i) MPI_Irecv(&buf[i], 1, MPI_INT, 0, 11, churn, &req[i]);
      MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
    }
  }

  if (hold_lock) {
    if (rank == 0) {
      int rc = PERUSE_Lock();
      check(rc == PERUSE_SUCCESS, "PERUSE_Lock outside an upcall succeeds");
      MPI_Send(buf, 1, MPI_INT, 1, 2, go);
      if (rc == PERUSE_SUCCESS) PERUSE_Unlock();
    } else if (rank == 1) {
      MPI_Recv(buf, 1, MPI_INT, 0, 2, go, MPI_STATUS_IGNORE);
    }
  }

  MPI_Comm_free(&unexpected); /* reported all the same, as freed */
  MPI_Comm_free(&nested);
  MPI_Comm_free(&churn);
  MPI_Barrier(MPI_COMM_WORLD);
  /* posted, go and pair stay alive until MPI_Finalize. */
  (void)posted;
  (void)go;
  (void)pair;
}

static void check_rank_report(const char* dir, int hold_lock) {
  if (!load_report(dir, "rank", rank)) return;
  char me[16];
  snprintf(me, sizeof me, "%d", rank);
  check_all_rows();
  check_nothing_lost();
  expect_count(me, "*", "*", "dropped_lock_not_grantable", hold_lock && rank == 0 ? 4 : 0);
  check(count_of(me, "MPI_COMM_WORLD", "*", "filtered_events") > 0, "internal traffic on MPI_COMM_WORLD is counted");
  const struct row* name = find(me, "MPI_COMM_WORLD/dup2", "*", "user", "unexpected_q_high_water");
  check(name && strcmp(name->f[F_NAME], "unexpected") == 0, "MPI_COMM_WORLD/dup2 carries its name \"unexpected\"");

  if (rank == 1) {
    expect_count(me, "MPI_COMM_WORLD/dup1", "0", "posted_q", N_POSTED);
    expect_count(me, "MPI_COMM_WORLD/dup1", "0", "unexpected_q", 0);
    expect_count(me, "MPI_COMM_WORLD/dup1", "0", "recv_activate_to_xfer", N_POSTED);
    expect_count(me, "MPI_COMM_WORLD/dup1", "0", "recv_complete_to_notify", N_POSTED + 1); /* + the cancelled one */
    expect_count(me, "MPI_COMM_WORLD/dup1", "*", "posted_q_high_water", N_POSTED);
    expect_count(me, "MPI_COMM_WORLD/dup1", "*", "unexpected_q_high_water", 0);
    expect_count(me, "MPI_COMM_WORLD/dup1", "*", "cancelled_receives", 1);

    expect_count(me, "MPI_COMM_WORLD/dup2", "0", "unexpected_q", M_UNEXPECTED);
    expect_count(me, "MPI_COMM_WORLD/dup2", "0", "posted_q", 0);
    expect_count(me, "MPI_COMM_WORLD/dup2", "0", "recv_activate_to_xfer", M_UNEXPECTED);
    expect_count(me, "MPI_COMM_WORLD/dup2", "*", "unexpected_q_high_water", M_UNEXPECTED);
    expect_count(me, "MPI_COMM_WORLD/dup2", "*", "posted_q_high_water", 0);

    expect_count(me, "MPI_COMM_WORLD/split1:color0", "0", "posted_q", K_WILDCARD);
    expect_count(me, "MPI_COMM_WORLD/split1:color0", "0", "recv_activate_to_xfer", K_WILDCARD);
    expect_count(me, "MPI_COMM_WORLD/split1:color0", "*", "posted_q_high_water", K_WILDCARD);

    check(count_of(me, "MPI_COMM_WORLD/dup1/dup1", "0", "posted_q") +
                  count_of(me, "MPI_COMM_WORLD/dup1/dup1", "0", "unexpected_q") ==
              1,
          "the dup of a dup saw its one message in one of the queues");
    expect_count(me, "MPI_COMM_WORLD/dup1/dup1", "0", "recv_complete_to_notify", 1);

    check(count_of(me, "MPI_COMM_WORLD/dup4", "0", "posted_q") +
                  count_of(me, "MPI_COMM_WORLD/dup4", "0", "unexpected_q") ==
              CHURN,
          "every churn message was in one of the queues");
    expect_count(me, "MPI_COMM_WORLD/dup4", "0", "recv_complete_to_notify", CHURN);
    check(count_of(me, "MPI_COMM_WORLD/dup4", "*", "unexpected_q_high_water") <= WINDOW,
          "churn: at most a window of messages unexpected at once");
    expect_count(me, "MPI_COMM_WORLD/dup3", "0", "recv_complete_to_notify", hold_lock ? 2 : 1);
  }
  if (rank == 0) {
    expect_count(me, "MPI_COMM_WORLD/dup1", "1", "send_activate_to_xfer", N_POSTED);
    expect_count(me, "MPI_COMM_WORLD/dup1", "1", "send_complete_to_notify", N_POSTED);
    expect_count(me, "MPI_COMM_WORLD/dup2", "1", "send_activate_to_xfer", M_UNEXPECTED);
    expect_count(me, "MPI_COMM_WORLD/dup3", "1", "send_activate_to_xfer", 1); /* the locked send is not seen */
    expect_count(me, "MPI_COMM_WORLD/split1:color0", "1", "send_activate_to_xfer", K_WILDCARD);
    expect_count(me, "MPI_COMM_WORLD/dup1/dup1", "1", "send_activate_to_xfer", 1);
    expect_count(me, "MPI_COMM_WORLD/dup4", "1", "send_activate_to_xfer", CHURN);
    expect_count(me, "MPI_COMM_WORLD/dup4", "1", "send_complete_to_notify", CHURN);
    expect_count(me, "MPI_COMM_WORLD/dup1", "*", "posted_q_high_water", 0);
  }
}

static void check_summary(const char* dir) {
  if (!load_report(dir, "summary", -1)) return;
  check_all_rows();
  expect_count("all", "MPI_COMM_WORLD/dup2", "*", "unexpected_q", M_UNEXPECTED);
  expect_count("all", "MPI_COMM_WORLD/dup2", "*", "unexpected_q_high_water", M_UNEXPECTED);
  expect_count("all", "MPI_COMM_WORLD/dup1", "*", "posted_q", N_POSTED);
  expect_count("all", "MPI_COMM_WORLD/dup1", "*", "posted_q_high_water", N_POSTED);
  expect_count("all", "MPI_COMM_WORLD/dup1", "*", "send_activate_to_xfer", N_POSTED);
  expect_count("all", "MPI_COMM_WORLD/dup1", "*", "ranks", size);
  expect_count("all", "MPI_COMM_WORLD/split1:color0", "*", "ranks", size < 2 ? size : 2);
  /* The busiest pairs, by receiver: rank 1 waited on rank 0. */
  expect_count("1", "MPI_COMM_WORLD/dup2", "0", "unexpected_q", M_UNEXPECTED);
}

int main(int argc, char** argv) {
  int to_stderr = 0, hold_lock = 0, multiple = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--stderr") == 0) to_stderr = 1;
    else if (strcmp(argv[i], "--multiple") == 0) multiple = 1;
    else if (strcmp(argv[i], "--hold-lock") == 0) hold_lock = multiple = 1;
    else {
      fprintf(stderr, "usage: scenarios [--stderr] [--multiple] [--hold-lock]\n");
      return 2;
    }
  }
  char dir[4096] = "";
  if (!to_stderr) choose_report_dir(dir, sizeof dir);

  if (multiple) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "scenarios: needs at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  run(hold_lock);
  MPI_Finalize(); /* the profiler reports here */

  if (to_stderr) {
    printf("residence-check: rank %d: traffic done\n", rank);
    return 0;
  }
  if (rank <= 1) check_rank_report(dir, hold_lock);
  if (rank == 0) check_summary(dir);
  return verdict();
}
