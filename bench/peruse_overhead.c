/* PERUSE overhead on the 0-byte ping-pong: BENCH_PERUSE=none registers
 * nothing; =all registers and activates a counting callback for every
 * supported event on MPI_COMM_WORLD. Run it against a library with PERUSE
 * compiled in and one built with --define=peruse=off (bench/peruse_overhead.sh
 * does all three side by side). Prints "peruse_<mode> 0 <median_us>" and, for
 * =all, the number of callbacks per round trip.
 *
 * On one rank it is the instruction-count probe instead (bench/peruse_overhead.sh
 * --callgrind): BENCH_ITERS rounds of a 0-byte receive posted to itself, a
 * send that matches it and the wait, the path a ping-pong's receiver takes
 * (18 events per round), untimed. */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static long callbacks, before;

/* The callbacks of the warm-up trial do not count. */
static void mark_callbacks(int trial) {
  if (trial == 1) before = callbacks;
}

static int count_event(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t* spec, void* param) {
  (void)h, (void)uid, (void)spec, (void)param;
  ++callbacks;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = getenv("BENCH_PERUSE");
  int all = mode && strcmp(mode, "all") == 0;
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  if (all) {
    int n = 0, *ids = NULL;
    char** names = NULL;
    PERUSE_Init();
    PERUSE_Query_supported_events(&n, &names, &ids);
    for (int i = 0; i < n; ++i) {
      peruse_event_h h;
      if (PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, count_event, NULL, &h) == PERUSE_SUCCESS)
        PERUSE_Event_activate(h);
    }
  }
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) {
    char buf[8];
    MPI_Request rq;
    for (int i = 0; i < iters; ++i) {
      MPI_Irecv(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &rq);
      MPI_Send(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    if (all) fprintf(stderr, "callbacks per round: %.1f\n", (double)callbacks / iters);
    MPI_Finalize();
    return 0;
  }
  double us = pingpong_half_rtt_us(rank, iters, trials, mark_callbacks);
  if (rank == 0) {
    printf("peruse_%s 0 %.4f\n", all ? "all" : "idle", us);
    if (all) fprintf(stderr, "callbacks per round trip on rank 0: %.1f\n", (double)(callbacks - before) / ((double)iters * trials));
  }
  MPI_Finalize();
  return 0;
}
