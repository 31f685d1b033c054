/* MPI_T cost on the 0-byte ping-pong. BENCH_MPIT selects:
 *   none    - MPI_T never initialized
 *   idle    - MPI_T initialized, a session with a level handle and a stopped
 *             counter handle on MPI_COMM_WORLD (nothing running: the bridge
 *             subscribes nothing)
 *   running - a counter handle started (the bridge's PERUSE subscribers are
 *             on every communicator)
 * Prints "mpit_<mode> 0 <median_us per half round trip>". With
 * BENCH_MPIT_READS=1 it also prints the cost of one MPI_T_pvar_read of a
 * level and of a running counter ("mpit_read_level"/"mpit_read_counter",
 * ns per call, median of trials). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int pvar(const char* name, int cls) {
  int i = -1;
  MPI_T_pvar_get_index(name, cls, &i);
  return i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = getenv("BENCH_MPIT");
  if (!mode) mode = "none";
  int iters = env_int("BENCH_ITERS", 20000), trials = env_int("BENCH_TRIALS", 11);
  MPI_T_pvar_session session;
  MPI_T_pvar_handle level, counter;
  MPI_Comm world = MPI_COMM_WORLD;
  int count, provided;
  if (strcmp(mode, "none") != 0) {
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle_alloc(session, pvar("sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL), &world, &level, &count);
    MPI_T_pvar_handle_alloc(session, pvar("sonde_unexpected_q_matches", MPI_T_PVAR_CLASS_COUNTER), &world, &counter,
                            &count);
    if (strcmp(mode, "running") == 0) MPI_T_pvar_start(session, counter);
  }
  double us = pingpong_half_rtt_us(rank, iters, trials, NULL);
  if (rank == 0) printf("mpit_%s 0 %.4f\n", mode, us);
  if (strcmp(mode, "running") == 0 && getenv("BENCH_MPIT_READS") && rank == 0) {
    unsigned long long v;
    double samples[64];
    if (trials > 64) trials = 64;
    MPI_T_pvar_handle hs[2] = {level, counter};
    const char* names[2] = {"mpit_read_level", "mpit_read_counter"};
    for (int k = 0; k < 2; ++k) {
      for (int t = 0; t < trials; ++t) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) MPI_T_pvar_read(session, hs[k], &v);
        samples[t] = (MPI_Wtime() - t0) * 1e9 / iters;
      }
      printf("%s 0 %.4f\n", names[k], median(samples, trials));
    }
  }
  if (strcmp(mode, "none") != 0) {
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
  }
  MPI_Finalize();
  return 0;
}
