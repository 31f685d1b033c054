/* MPI_Alloc_mem / MPI_Free_mem around rendezvous sends over ofi: rank 0
 * sends from memory of MPI_Alloc_mem (registered for RMA and cached by the
 * transport), frees it, allocates again (the allocator usually returns the
 * same addresses) with other contents and sends again, several rounds and
 * sizes; rank 1 checks every byte. MPI_Free_mem drops the transport's
 * cached registrations of that memory (Transport::forget_memory); the
 * transport test (ofi_rma_read_test) counts the registrations, this checks
 * the path through the MPI calls, on every round. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char byte_at(int round, size_t i) { return (unsigned char)(i * 131u + (unsigned)round * 17u + 3u); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static const size_t sizes[] = {300000, 1 << 20, 300000, 4 << 20};
  int bad = 0;
  for (int round = 0; round < 8; ++round) {
    size_t n = sizes[round % 4];
    unsigned char* buf = NULL;
    if (MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &buf) != MPI_SUCCESS) {
      fprintf(stderr, "MPI_Alloc_mem failed\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
      for (size_t i = 0; i < n; ++i) buf[i] = byte_at(round, i);
      MPI_Send(buf, (int)n, MPI_BYTE, 1, round, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(buf, (int)n, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (size_t i = 0; i < n; ++i) {
        if (buf[i] != byte_at(round, i)) {
          fprintf(stderr, "round %d: byte %zu is %u, expected %u\n", round, i, buf[i], byte_at(round, i));
          bad = 1;
          break;
        }
      }
    }
    if (MPI_Free_mem(buf) != MPI_SUCCESS) bad = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf(bad ? "free_mem_reuse: FAILED\n" : "free_mem_reuse: ok\n");
  MPI_Finalize();
  return bad;
}
