/* Many communicators with shared collective segments at once
 * (coll/shared.h): rank 0 of every duplicate of MPI_COMM_WORLD makes its
 * segment, and one process makes at most 64 MiB of them, so of kComms
 * duplicates that all reach the deciding call, some get a segment and the
 * rest stay on point-to-point (on 2 ranks a segment is about 0.6 MiB:
 * fewer than kComms fit). Checks, on every duplicate, that Allreduce,
 * Bcast and Barrier still give the right results either way, that rank 0
 * maps fewer segments than duplicates but at least one, and that every
 * mapping is gone once the duplicates are freed.
 */
#include "tests/coll/segments.h"
#include "tests/integration/itest.h"

enum { kComms = 800, kCalls = 18 };

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  itest_print_jobid();
  segments_init();
  MPI_Comm* comms = malloc(kComms * sizeof *comms);
  const int before = mapped_segments();
  for (int i = 0; i < kComms; ++i) {
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    for (int k = 0; k < kCalls; ++k) {
      int in = itest_rank + i + k, sum = -1;
      CHECK_OK(MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, comms[i]));
      const int want = itest_size * (i + k) + itest_size * (itest_size - 1) / 2;
      CHECK(sum == want, "comm %d call %d: Allreduce gave %d, want %d", i, k, sum, want);
    }
  }
  const int maps = mapped_segments() - before;
  if (itest_rank == 0 && itest_size == 2)
    CHECK(maps > 0 && maps < kComms, "rank 0 maps %d segments for %d communicators, want 1 to %d", maps, kComms,
          kComms - 1);
  /* Every communicator still works, with or without its segment. */
  for (int i = 0; i < kComms; ++i) {
    int v = itest_rank == i % itest_size ? i : -1;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, i % itest_size, comms[i]));
    CHECK(v == i, "comm %d: Bcast gave %d, want %d", i, v, i);
    CHECK_OK(MPI_Barrier(comms[i]));
  }
  for (int i = 0; i < kComms; ++i) CHECK_OK(MPI_Comm_free(&comms[i]));
  CHECK(mapped_segments() == before, "%d segments still mapped after the communicators were freed",
        mapped_segments() - before);
  free(comms);
  return itest_finish("shared_coll_many");
}
