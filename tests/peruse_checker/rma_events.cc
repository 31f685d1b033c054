// One-sided operations through the checker: with every event watched on
// MPI_COMM_WORLD and propagated (so the window's communicator, a duplicate,
// is watched too), a run of fence, lock and request-form operations of
// every kind must give zero violations, and exactly one ACTIVATE with the
// right operation (PERUSE_PUT, PERUSE_GET, PERUSE_ACC) per operation.
#include <mpi.h>

#include <cstdio>

#include "tests/peruse_checker/checker.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm quiet;  // never watched: the end of the run agrees on it
  MPI_Comm_dup(MPI_COMM_WORLD, &quiet);
  sonde::peruse_checker::Recorder recorder(1 << 18);
  long failures = recorder.watch(MPI_COMM_WORLD, true) != PERUSE_SUCCESS;

  int* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  const int t = (rank + 1) % n;
  int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8], old = 0, cmp = 0;
  int puts = 0, gets = 0, accs = 0;
  MPI_Win_fence(0, win);
  for (int i = 0; i < 5; ++i, ++puts) MPI_Put(v, 8, MPI_INT, t, 8 * (i % 4), 8, MPI_INT, win);
  for (int i = 0; i < 3; ++i, ++accs) MPI_Accumulate(v, 8, MPI_INT, t, 0, 8, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 4; ++i, ++gets) MPI_Get(r, 8, MPI_INT, t, 8, 8, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
  MPI_Get_accumulate(v, 1, MPI_INT, r, 1, MPI_INT, t, 40, 1, MPI_INT, MPI_SUM, win), ++accs;
  MPI_Fetch_and_op(v, &old, MPI_INT, t, 41, MPI_SUM, win), ++accs;
  MPI_Compare_and_swap(v, &cmp, &old, MPI_INT, t, 42, win), ++accs;
  MPI_Request req[2];
  MPI_Rget(r, 4, MPI_INT, t, 0, 4, MPI_INT, win, &req[0]), ++gets;
  MPI_Rput(v, 4, MPI_INT, t, 50, 4, MPI_INT, win, &req[1]), ++puts;
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  MPI_Win_unlock(t, win);
  MPI_Win_free(&win);

  int seen[3] = {0, 0, 0};
  const sonde::peruse_checker::Event* ev = recorder.events();
  for (size_t i = 0; i < recorder.size(); ++i)
    if (ev[i].event == PERUSE_COMM_REQ_ACTIVATE && ev[i].operation >= PERUSE_PUT && ev[i].operation <= PERUSE_ACC) {
      ++seen[ev[i].operation - PERUSE_PUT];
      if (ev[i].peer != t) ++failures;
    }
  if (seen[0] != puts || seen[1] != gets || seen[2] != accs) {
    std::fprintf(stderr, "[rank %d] ACTIVATEs put/get/acc %d/%d/%d, want %d/%d/%d\n", rank, seen[0], seen[1], seen[2],
                 puts, gets, accs);
    ++failures;
  }
  long bad = recorder.finish(quiet, rank, failures);
  std::printf("rma_events: rank %d: %ld violations and failures\n", rank, bad);
  std::fflush(stdout);
  MPI_Comm_free(&quiet);
  MPI_Finalize();
  return bad ? 1 : 0;
}
