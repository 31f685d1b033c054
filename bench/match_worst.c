/* Matching cost against queue depth, messages in the worst order for a
 * linear search. For each depth N (BENCH_DEPTHS, default 64 256 1024 4096
 * 16384) and each pattern:
 *   posted         rank 1 posts N receives with distinct tags, rank 0 sends to
 *                  them in reverse order: every arrival's receive is the last
 *                  one posted.
 *   posted_anysrc  the same, every other receive MPI_ANY_SOURCE.
 *   unexpected     rank 0 sends N messages with distinct tags before rank 1
 *                  receives any; rank 1 receives them newest first: every
 *                  receive's message is the last one waiting.
 *   unexpected_anysrc  the same, every other receive MPI_ANY_SOURCE.
 * Prints "match_worst_<pattern> <N> <median_us_per_matched_message>" (median
 * over BENCH_TRIALS trials after one warm-up; BENCH_PATTERN=<pattern> runs
 * only that one). BENCH_SETTLE_US=<us> (default 0): on the posted side,
 * rank 1 sleeps that long after the start signal, before its clock starts,
 * so the first messages are already waiting in the transport (they are
 * matched only when MPI_Waitall progresses); bench/match_callgrind.sh uses
 * it so that the counted rank does not poll for a descheduled sender.
 * Run with 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

enum { kPosted, kUnexpected };

static void check(const int* slots, int n, const char* what) {
  for (int i = 0; i < n; ++i)
    if (slots[i] != i) {
      fprintf(stderr, "match_worst %s: slot %d holds %d\n", what, i, slots[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* One trial; rank 1 returns its microseconds per message. */
static double trial(int rank, int side, int anysrc, int n, int* slots, MPI_Request* req, int settle_us) {
  double t0 = 0, t1 = 0;
  const int go = n; /* tag of the start signal, above every data tag */
  memset(slots, 0xff, sizeof(int) * (size_t)n);
  if (rank == 1) {
    if (side == kPosted) {
      for (int i = 0; i < n; ++i)
        MPI_Irecv(&slots[i], 1, MPI_INT, anysrc && i % 2 ? MPI_ANY_SOURCE : 0, i, MPI_COMM_WORLD, &req[i]);
      MPI_Send(NULL, 0, MPI_BYTE, 0, go, MPI_COMM_WORLD); /* all posted: go */
      if (settle_us > 0) usleep((useconds_t)settle_us);
      t0 = MPI_Wtime();
      MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
      t1 = MPI_Wtime();
    } else {
      /* The signal comes after the n messages from the same sender: once it
       * is in, all n wait unexpected. */
      MPI_Recv(NULL, 0, MPI_BYTE, 0, go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      t0 = MPI_Wtime();
      for (int i = n - 1; i >= 0; --i)
        MPI_Recv(&slots[i], 1, MPI_INT, anysrc && i % 2 ? MPI_ANY_SOURCE : 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      t1 = MPI_Wtime();
    }
    check(slots, n, side == kPosted ? "posted" : "unexpected");
  } else if (rank == 0) {
    if (side == kPosted) {
      MPI_Recv(NULL, 0, MPI_BYTE, 1, go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = n - 1; i >= 0; --i) MPI_Send(&i, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
    } else {
      for (int i = 0; i < n; ++i) MPI_Send(&i, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
      MPI_Send(NULL, 0, MPI_BYTE, 1, go, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return (t1 - t0) * 1e6 / n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int trials = env_int("BENCH_TRIALS", 7);
  int settle_us = env_int("BENCH_SETTLE_US", 0);
  if (trials > 64) trials = 64;
  int depths[32], ndepths = 0;
  const char* list = getenv("BENCH_DEPTHS");
  if (!list || !*list) list = "64 256 1024 4096 16384";
  for (char* end; ndepths < 32; list = end) {
    long d = strtol(list, &end, 10);
    if (end == list) break;
    if (d > 0) depths[ndepths++] = (int)d;
  }
  static const struct {
    const char* name;
    int side, anysrc;
  } patterns[] = {{"posted", kPosted, 0},
                  {"posted_anysrc", kPosted, 1},
                  {"unexpected", kUnexpected, 0},
                  {"unexpected_anysrc", kUnexpected, 1}};
  for (int d = 0; d < ndepths; ++d) {
    int n = depths[d];
    int* slots = malloc(sizeof(int) * (size_t)n);
    MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)n);
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; ++p) {
      const char* only = getenv("BENCH_PATTERN"); /* run just this pattern */
      if (only && *only && strcmp(only, patterns[p].name) != 0) continue;
      double samples[64];
      for (int t = 0; t < trials + 1; ++t) {
        double us = trial(rank, patterns[p].side, patterns[p].anysrc, n, slots, req, settle_us);
        if (t > 0) samples[t - 1] = us;
      }
      if (rank == 1) printf("match_worst_%s %d %.4f\n", patterns[p].name, n, median(samples, trials));
    }
    fflush(stdout);
    free(slots);
    free(req);
  }
  MPI_Finalize();
  return 0;
}
