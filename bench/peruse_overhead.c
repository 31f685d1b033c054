/* PERUSE overhead on the 0-byte ping-pong: BENCH_PERUSE=none registers
 * nothing; =all registers and activates a counting callback for every
 * supported event on MPI_COMM_WORLD; =ompi only for the ten events Open MPI
 * 4.1 fires on this path (its receive side: no send-side events, no XFER
 * events for 0 bytes, no REQ_NOTIFY), so the two libraries can be compared
 * event for event. A comma-separated list of event names activates just those
 * (for exploring what one event costs). Run it against a library with PERUSE
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

/* What Open MPI 4.1's ob1 fires on a 0-byte ping-pong (counted with every
 * event active): the receive side only. */
static const char* const kOmpiFires[] = {
    "PERUSE_COMM_REQ_ACTIVATE",          "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q", "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q",
    "PERUSE_COMM_REQ_COMPLETE",          "PERUSE_COMM_MSG_ARRIVED",            "PERUSE_COMM_MSG_MATCH_POSTED_REQ",
    "PERUSE_COMM_SEARCH_POSTED_Q_BEGIN", "PERUSE_COMM_SEARCH_POSTED_Q_END",    "PERUSE_COMM_SEARCH_UNEX_Q_BEGIN",
    "PERUSE_COMM_SEARCH_UNEX_Q_END"};

static int listed(const char* list, const char* name) {
  size_t n = strlen(name);
  for (const char* p = strstr(list, name); p; p = strstr(p + 1, name))
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

static int ompi_fires(const char* name) {
  for (size_t i = 0; i < sizeof kOmpiFires / sizeof kOmpiFires[0]; ++i)
    if (strcmp(name, kOmpiFires[i]) == 0) return 1;
  return 0;
}

static long callbacks, before;

/* The callbacks of the warm-up trial do not count. */
static void mark_callbacks(int trial) {
  if (trial == 1) before = callbacks;
}

/* BENCH_HISTOGRAM=1: which events fire, per round trip, on rank 0. */
static long per_event[64];
static int count_by_event(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t* spec, void* param) {
  (void)h, (void)uid, (void)spec;
  ++per_event[(long)param];
  ++callbacks;
  return MPI_SUCCESS;
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
  int only_ompi = mode && strcmp(mode, "ompi") == 0;
  const char* list = mode && strncmp(mode, "PERUSE_", 7) == 0 ? mode : NULL;
  int all = (mode && strcmp(mode, "all") == 0) || only_ompi || list;
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  int histogram = env_int("BENCH_HISTOGRAM", 0);
  int n = 0, *ids = NULL;
  char** names = NULL;
  if (all) {
    PERUSE_Init();
    PERUSE_Query_supported_events(&n, &names, &ids);
    for (int i = 0; i < n; ++i) {
      peruse_event_h h;
      if ((only_ompi && !ompi_fires(names[i])) || (list && !listed(list, names[i]))) continue;
      if (PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, histogram ? count_by_event : count_event,
                                     (void*)(long)i, &h) == PERUSE_SUCCESS)
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
    printf("peruse_%s 0 %.4f\n", only_ompi ? "ompiset" : all ? "all" : "idle", us);
    if (all) fprintf(stderr, "callbacks per round trip on rank 0: %.1f\n", (double)(callbacks - before) / ((double)iters * trials));
    for (int i = 0; histogram && i < n && i < 64; ++i)
      if ((double)per_event[i] / ((double)iters * (trials + 1)) >= 0.005) fprintf(stderr, "  %-40s %.2f\n", names[i], (double)per_event[i] / ((double)iters * (trials + 1)));
  }
  MPI_Finalize();
  return 0;
}
