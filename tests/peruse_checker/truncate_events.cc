// Truncated receives under the checker: every matched receive transfers
// (REQ_XFER_BEGIN, REQ_XFER_END) before REQ_COMPLETE, even when the
// receive buffer takes fewer bytes than the message carries.
//
// Rank 0 sends rank 1, in order: 100 B (eager) and 100000 B (rendezvous),
// each into a receive of 0 bytes, then the same two into receives of 10
// bytes. Every receive reports MPI_ERR_TRUNCATE; the checker must report
// zero violations. (Found by the checker: a rendezvous receive truncated to
// 0 bytes completes straight from "matched", without XFER_BEGIN/END, in
// Engine::pull's n == 0 branch, while a 0-byte eager receive does transfer.)
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "tests/peruse_checker/checker.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm quiet;  // never watched: the shutdown runs on it
  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &quiet);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  sonde::peruse_checker::Recorder recorder(1 << 16);
  int failures = recorder.watch(MPI_COMM_WORLD, true) != PERUSE_SUCCESS;
  MPI_Barrier(quiet);  // both watch before any traffic

  const int sizes[] = {100, 100000};
  std::vector<char> big(100000, 7), small(16);
  int tag = 0;
  for (int keep : {0, 10}) {
    for (int n : sizes) {
      ++tag;
      if (rank == 0) {
        failures += MPI_Send(big.data(), n, MPI_BYTE, 1, tag, MPI_COMM_WORLD) != MPI_SUCCESS;
      } else if (rank == 1) {
        int rc = MPI_Recv(small.data(), keep, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), cls = -1;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) {
          std::fprintf(stderr, "[rank 1] %d B into %d B: error class %d, expected MPI_ERR_TRUNCATE\n", n, keep, cls);
          ++failures;
        }
      }
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  long all = recorder.finish(quiet, rank, failures);
  if (rank == 0) std::printf("truncate_events: %ld violations and failures on %d ranks\n", all, size);
  std::fflush(stdout);
  MPI_Comm_free(&quiet);
  MPI_Finalize();
  return all ? 1 : 0;
}
