/* threads: MPI_THREAD_MULTIPLE under the residence profiler. On ranks 0 and
 * 1, THREADS threads each run ROUNDS ping-pongs with their twin on the other
 * rank, every pair on its own duplicate of MPI_COMM_WORLD ("thread<t>"),
 * while callbacks fire on all of them at once. After MPI_Finalize each rank
 * checks its CSV: on every thread's communicator exactly ROUNDS messages went
 * through one of the queues, ROUNDS sends and receives were measured, and the
 * profiler lost nothing (no dropped record, no unmatched event).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/residence/report_csv.h"

#define THREADS 4
#define ROUNDS 2000

static MPI_Comm comms[THREADS];

static void* worker(void* arg) {
  int t = (int)(long)arg;
  int peer = rank ^ 1, x = 0;
  for (int i = 0; i < ROUNDS; ++i) {
    if (rank == 0) {
      MPI_Send(&i, 1, MPI_INT, peer, t, comms[t]);
      MPI_Recv(&x, 1, MPI_INT, peer, t, comms[t], MPI_STATUS_IGNORE);
    } else {
      /* Half of them wildcards: the sender is learnt at match. */
      MPI_Recv(&x, 1, MPI_INT, i % 2 ? MPI_ANY_SOURCE : peer, t, comms[t], MPI_STATUS_IGNORE);
      MPI_Send(&x, 1, MPI_INT, peer, t, comms[t]);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  char dir[4096];
  choose_report_dir(dir, sizeof dir);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");
  for (int t = 0; t < THREADS; ++t) {
    char name[32];
    snprintf(name, sizeof name, "thread%d", t);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    MPI_Comm_set_name(comms[t], name);
  }
  /* No barrier here: rank 0's first message on the last dup often reaches
   * rank 1 while it is still inside MPI_Comm_dup. Sonde must install the
   * propagated handles before that early message is adopted, or the profiler
   * sees only its removal (an unmatched event, one sample short). */
  if (rank <= 1 && size >= 2) {
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();

  if (rank <= 1 && load_report(dir, "rank", rank)) {
    char me[16], peer[16];
    snprintf(me, sizeof me, "%d", rank);
    snprintf(peer, sizeof peer, "%d", rank ^ 1);
    check_all_rows();
    check_nothing_lost();
    expect_count(me, "*", "*", "dropped_lock_not_grantable", 0);
    for (int t = 0; t < THREADS; ++t) {
      char comm[64];
      snprintf(comm, sizeof comm, "MPI_COMM_WORLD/dup%d", t + 1);
      char what[512];
      long long queued = count_of(me, comm, peer, "posted_q") + count_of(me, comm, peer, "unexpected_q");
      snprintf(what, sizeof what, "%s: %lld messages through the queues, expected %d", comm, queued, ROUNDS);
      check(queued == ROUNDS, what);
      expect_count(me, comm, peer, "recv_complete_to_notify", ROUNDS);
      expect_count(me, comm, peer, "recv_activate_to_xfer", ROUNDS);
      expect_count(me, comm, peer, "send_activate_to_xfer", ROUNDS);
      expect_count(me, comm, peer, "send_complete_to_notify", ROUNDS);
      const struct row* r = find(me, comm, peer, "user", "recv_complete_to_notify");
      snprintf(what, sizeof what, "%s is named thread%d", comm, t);
      char want[32];
      snprintf(want, sizeof want, "thread%d", t);
      check(r && strcmp(r->f[F_NAME], want) == 0, what);
    }
  }
  return verdict();
}
