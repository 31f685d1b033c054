/* One-sided communication between ranks 0 (origin) and 1 (target) of
 * MPI_COMM_WORLD, in a passive-target epoch (MPI_Win_lock on rank 1, which
 * waits in MPI_Barrier meanwhile, so every implementation's target makes
 * progress the same way). Prints "name size value" lines for
 * bench/compare.sh:
 *   rma_put_lat / rma_get_lat   us per MPI_Put / MPI_Get + MPI_Win_flush
 *   rma_put_bw / rma_get_bw     GB/s for a window of BENCH_RMA_WINDOW
 *                               operations then one flush
 *   rma_acc_rate                million MPI_Accumulate(1 double, MPI_SUM)
 *                               per second, flushed every 64
 *   rma_dyn_put_lat / rma_dyn_get_lat
 *                               the latencies again on a window from
 *                               MPI_Win_create_dynamic, the target's memory
 *                               attached with MPI_Win_attach
 * Each value is the median over BENCH_TRIALS trials. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int rank;
static MPI_Win win;
static char* local;
static MPI_Aint target_disp; /* where the target's memory starts in `win` */

typedef double (*trial_fn)(int size, int iters);

static double put_lat(int size, int iters) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Put(local, size, MPI_BYTE, 1, target_disp, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
  }
  return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double get_lat(int size, int iters) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Get(local, size, MPI_BYTE, 1, target_disp, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
  }
  return (MPI_Wtime() - t0) * 1e6 / iters;
}

static int window_ops;
static double put_bw(int size, int iters) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    for (int k = 0; k < window_ops; ++k) MPI_Put(local, size, MPI_BYTE, 1, target_disp, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
  }
  return (double)size * window_ops * iters / (MPI_Wtime() - t0) / 1e9;
}

static double get_bw(int size, int iters) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    for (int k = 0; k < window_ops; ++k) MPI_Get(local, size, MPI_BYTE, 1, target_disp, size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
  }
  return (double)size * window_ops * iters / (MPI_Wtime() - t0) / 1e9;
}

static double acc_rate(int size, int iters) {
  (void)size;
  double one = 1.0;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    for (int k = 0; k < 64; ++k) MPI_Accumulate(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_flush(1, win);
  }
  return 64.0 * iters / (MPI_Wtime() - t0) / 1e6;
}

/* Rank 0 runs `trials` + 1 timed loops (the first is a warm-up) inside one
 * lock epoch; rank 1 waits in the barrier that ends it. */
static void measure(const char* name, trial_fn f, int size, int iters, int trials) {
  double samples[64];
  if (trials > 64) trials = 64;
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int t = 0; t < trials + 1; ++t) {
      double v = f(size, iters);
      if (t > 0) samples[t - 1] = v;
    }
    MPI_Win_unlock(1, win);
    printf("%s %d %.4f\n", name, size, median(samples, trials));
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "rma: needs 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const int trials = env_int("BENCH_TRIALS", 7);
  const int iters = env_int("BENCH_ITERS", 1000);
  const int max_size = 1 << 20;
  window_ops = env_int("BENCH_RMA_WINDOW", 32);
  void* base = NULL;
  MPI_Win_allocate(max_size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  local = malloc(max_size);
  memset(local, 1, max_size);
  const int lat_sizes[] = {8, 1024, 65536};
  for (int i = 0; i < 3; ++i) {
    measure("rma_put_lat", put_lat, lat_sizes[i], iters, trials);
    measure("rma_get_lat", get_lat, lat_sizes[i], iters, trials);
  }
  const int bw_sizes[] = {4096, 65536, 1 << 20};
  for (int i = 0; i < 3; ++i) {
    int n = iters / (bw_sizes[i] >= 65536 ? 100 : 10);
    measure("rma_put_bw", put_bw, bw_sizes[i], n > 0 ? n : 1, trials);
    measure("rma_get_bw", get_bw, bw_sizes[i], n > 0 ? n : 1, trials);
  }
  measure("rma_acc_rate", acc_rate, 8, iters / 10 > 0 ? iters / 10 : 1, trials);
  MPI_Win_free(&win);

  /* Dynamic window: rank 1 attaches memory of its own; its address is the
   * target displacement. */
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  char* attached = malloc(max_size);
  memset(attached, 0, max_size);
  if (rank == 1) {
    MPI_Win_attach(win, attached, max_size);
    MPI_Get_address(attached, &target_disp);
  }
  MPI_Bcast(&target_disp, 1, MPI_AINT, 1, MPI_COMM_WORLD);
  const int dyn_sizes[] = {8, 65536};
  for (int i = 0; i < 2; ++i) {
    measure("rma_dyn_put_lat", put_lat, dyn_sizes[i], iters, trials);
    measure("rma_dyn_get_lat", get_lat, dyn_sizes[i], iters, trials);
  }
  if (rank == 1) MPI_Win_detach(win, attached);
  MPI_Win_free(&win);
  free(attached);
  free(local);
  MPI_Finalize();
  return 0;
}
