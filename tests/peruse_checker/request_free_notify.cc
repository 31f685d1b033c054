// Regression test (the checker found it; fixed in 89967c6): a request freed with MPI_Request_free after it has
// already completed must still end with REQ_NOTIFY (every ACTIVATE ends in
// NOTIFY; the id must not be reused while its object is live).
//
// Two cases, one rank each (any number of ranks run them on themselves):
//  1. MPI_Isend of 4 bytes to itself (eager, handed over at once: the request
//     is complete when MPI_Isend returns), then MPI_Request_free;
//  2. MPI_Ibsend (the user's request completes at once), then MPI_Request_free.
// Then a receive takes each message. Expected: zero checker violations.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "tests/peruse_checker/checker.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  sonde::peruse_checker::Recorder recorder(1 << 16);
  int failures = recorder.watch(MPI_COMM_WORLD, true) != PERUSE_SUCCESS;

  char out[4] = {1, 2, 3, 4}, in[4];
  MPI_Request req;
  MPI_Isend(out, 4, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &req);
  MPI_Request_free(&req);
  MPI_Recv(in, 4, MPI_BYTE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  std::vector<char> buffer(1024);
  MPI_Buffer_attach(buffer.data(), int(buffer.size()));
  MPI_Ibsend(out, 4, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &req);
  MPI_Request_free(&req);
  MPI_Recv(in, 4, MPI_BYTE, rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  void* detached;
  int size;
  MPI_Buffer_detach(&detached, &size);

  MPI_Barrier(MPI_COMM_WORLD);
  long bad = recorder.finish(MPI_COMM_SELF, rank, failures);  // each rank on its own
  std::printf("request_free_notify: rank %d: %ld violations and failures\n", rank, bad);
  std::fflush(stdout);
  MPI_Finalize();
  return bad ? 1 : 0;
}
