// Regression test (the checker found it; fixed in 89967c6): traffic on a duplicate that reaches a rank before that
// rank has finished MPI_Comm_dup. The engine holds such a message and fires
// MSG_ARRIVED + MSG_INSERT_IN_UNEX_Q when the communicator is created (S5);
// a handle propagated from the parent (PERUSE_Event_propagate) must see both,
// since it sees the MSG_REMOVE_FROM_UNEX_Q that follows.
//
// 40 times: dup MPI_COMM_WORLD (MPI_Comm_dup, _dup_with_info, _idup in turn), at once pass a token around a ring on the
// duplicate (ranks that finish the dup first send before their neighbour has
// it), free it. Expected: zero checker violations on every rank.
#include <mpi.h>

#include <cstdio>

#include "tests/peruse_checker/checker.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  sonde::peruse_checker::Recorder recorder(1 << 18);
  int failures = recorder.watch(MPI_COMM_WORLD, true) != PERUSE_SUCCESS;
  MPI_Comm quiet;  // never watched: the shutdown runs on it
  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &quiet);

  for (int i = 0; i < 40; ++i) {
    // The three duplicating calls in turn: each must hand its propagated
    // handles the messages that arrived early.
    MPI_Comm dup;
    if (i % 3 == 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    } else if (i % 3 == 1) {
      MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup);
    } else {
      MPI_Request dup_req;
      MPI_Comm_idup(MPI_COMM_WORLD, &dup, &dup_req);
      MPI_Wait(&dup_req, MPI_STATUS_IGNORE);
    }
    int token = rank * 1000 + i, got = -1;
    MPI_Request req;
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 5, dup, &req);
    MPI_Recv(&got, 1, MPI_INT, (rank + size - 1) % size, 5, dup, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    failures += got != ((rank + size - 1) % size) * 1000 + i;
    MPI_Comm_free(&dup);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  long all = recorder.finish(quiet, rank, failures);
  if (rank == 0) std::printf("dup_adoption: %ld violations and failures on %d ranks\n", all, size);
  std::fflush(stdout);
  MPI_Comm_free(&quiet);
  MPI_Finalize();
  return all ? 1 : 0;
}
