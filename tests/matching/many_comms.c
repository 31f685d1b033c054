/* A program with 100 000 communicators alive at once starts, matches on
 * them and frees them: every one is a duplicate of MPI_COMM_WORLD, each
 * carries a message in each direction (one received from the unexpected
 * queue, one matched against a posted receive), every 1000th also a queue
 * deep enough to be indexed, and every 7th is freed with a message still
 * waiting unexpected. Rank 0 prints its resident memory per communicator
 * (informational: "many_comms <n> <bytes_per_comm>"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/itest.h"

#define DEEP 100

static long rss_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "run with 2 ranks");
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int peer = 1 - itest_rank;
  MPI_Comm* comms = malloc(sizeof(MPI_Comm) * (size_t)n);
  long before = rss_kb();
  int created = 0;
  for (; created < n; ++created)
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comms[created]) != MPI_SUCCESS) break;
  CHECK(created == n, "created %d of %d communicators", created, n);
  long after = rss_kb();
  if (itest_rank == 0 && created > 0)
    printf("many_comms %d %ld\n", created, (after - before) * 1024 / created);

  /* Rank 0 sends first on every communicator (unexpected at rank 1 unless
   * it already posted), rank 1 answers to a posted receive. */
  for (int i = 0; i < created; ++i) {
    int v = i, got = -1;
    if (itest_rank == 0) {
      MPI_Request r;
      CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, peer, 2, comms[i], &r));
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 1, comms[i]));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 1, comms[i], MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 2, comms[i]));
    }
    CHECK(got == i, "communicator %d carried %d", i, got);
  }

  /* Deep queues on a few: DEEP receives with distinct tags, matched in
   * reverse order, on top of a message left waiting. */
  for (int i = 0; i < created; i += 1000) {
    int slots[DEEP];
    MPI_Request rq[DEEP];
    if (itest_rank == 1) {
      for (int k = 0; k < DEEP; ++k) CHECK_OK(MPI_Irecv(&slots[k], 1, MPI_INT, peer, 10 + k, comms[i], &rq[k]));
      CHECK_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 5, comms[i]));
      CHECK_OK(MPI_Waitall(DEEP, rq, MPI_STATUSES_IGNORE));
      for (int k = 0; k < DEEP; ++k) CHECK(slots[k] == k, "deep %d: slot %d holds %d", i, k, slots[k]);
    } else {
      CHECK_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 5, comms[i], MPI_STATUS_IGNORE));
      for (int k = DEEP - 1; k >= 0; --k) CHECK_OK(MPI_Send(&k, 1, MPI_INT, peer, 10 + k, comms[i]));
    }
  }

  /* Messages left waiting at the free on every 7th communicator; the
   * barrier makes sure they have arrived. */
  for (int i = 0; i < created; i += 7)
    if (itest_rank == 0) CHECK_OK(MPI_Send(&i, 1, MPI_INT, peer, 3, comms[i]));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < created; ++i) CHECK_OK(MPI_Comm_free(&comms[i]));
  free(comms);

  /* WORLD still matches. */
  int v = itest_rank, got = -1;
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 0, &got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(got == peer, "WORLD after the frees carried %d", got);
  return itest_finish("many_comms");
}
