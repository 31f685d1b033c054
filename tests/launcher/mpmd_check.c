/* One program of an MPMD job (`mpiexec -n 2 mpmd_a SPEC : -n 3 mpmd_b SPEC`).
 * Built twice, as mpmd_a and mpmd_b (-DMPMD_ROLE_B).
 *
 *   SPEC: the blocks in command-line order, e.g. "a:2,b:3,a:1" (the program
 *   and rank count of each).
 *
 * Every rank checks: MPI_COMM_WORLD spans all blocks; it runs the program its
 * block names; MPI_APPNUM is its block's index, and every rank's (gathered)
 * agrees with SPEC; splitting by MPI_APPNUM gives each block its own
 * communicator. Then data crosses the blocks: a ring through every rank
 * (4 KiB, eager) and 1 MiB (rendezvous) from rank 0 to the last rank and
 * back. Rank 0 prints "mpmd_check: ok". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/itest.h"

#ifdef MPMD_ROLE_B
#define MPMD_ROLE 'b'
#else
#define MPMD_ROLE 'a'
#endif

#define MAX_BLOCKS 16

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int rank = itest_rank, size = itest_size;
  if (argc < 2) {
    fprintf(stderr, "usage: %s SPEC\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char role[MAX_BLOCKS];
  int first[MAX_BLOCKS], count[MAX_BLOCKS], blocks = 0, total = 0;
  for (const char* p = argv[1]; *p != '\0' && blocks < MAX_BLOCKS; ++blocks) {
    role[blocks] = *p;
    count[blocks] = atoi(p + 2);
    first[blocks] = total;
    total += count[blocks];
    p = strchr(p, ',');
    if (p == NULL) {
      ++blocks;
      break;
    }
    ++p;
  }
  CHECK(total == size, "MPI_COMM_WORLD has %d ranks, the blocks %d", size, total);
  int mine = 0;
  while (mine + 1 < blocks && rank >= first[mine + 1]) ++mine;
  CHECK(role[mine] == MPMD_ROLE, "rank %d runs program %c, its block %d names %c", rank, MPMD_ROLE,
        mine, role[mine]);

  int* appnum = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
  CHECK(flag && appnum != NULL, "MPI_APPNUM is not set");
  int my_app = flag && appnum != NULL ? *appnum : -1;
  CHECK(my_app == mine, "MPI_APPNUM %d, block %d", my_app, mine);

  int me[2] = {my_app, MPMD_ROLE}, *all = malloc(sizeof(int) * 2 * (size_t)size);
  CHECK_OK(MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < size; ++r) {
    int b = 0;
    while (b + 1 < blocks && r >= first[b + 1]) ++b;
    CHECK(all[2 * r] == b && all[2 * r + 1] == role[b], "rank %d reports app %d program %c", r,
          all[2 * r], all[2 * r + 1]);
  }
  free(all);

  MPI_Comm app_comm;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, my_app < 0 ? 0 : my_app, rank, &app_comm));
  int app_rank = -1, app_size = -1;
  MPI_Comm_rank(app_comm, &app_rank);
  MPI_Comm_size(app_comm, &app_size);
  CHECK(app_size == count[mine] && app_rank == rank - first[mine],
        "own block's communicator: rank %d of %d, want %d of %d", app_rank, app_size,
        rank - first[mine], count[mine]);
  MPI_Comm_free(&app_comm);

  /* A ring through every rank, so every block boundary is crossed. */
  enum { kRing = 4096, kBig = 1 << 20 };
  unsigned char* out = malloc(kBig);
  unsigned char* in = malloc(kBig);
  itest_fill(out, kRing, (uint32_t)rank);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK_OK(MPI_Sendrecv(out, kRing, MPI_BYTE, next, 1, in, kRing, MPI_BYTE, prev, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  CHECK(itest_verify(in, kRing, (uint32_t)prev) < 0, "ring data from rank %d corrupted", prev);
  /* 1 MiB from the first block's first rank to the last block's last rank and back. */
  if (size > 1 && (rank == 0 || rank == size - 1)) {
    int peer = rank == 0 ? size - 1 : 0;
    if (rank == 0) {
      itest_fill(out, kBig, 1000);
      CHECK_OK(MPI_Send(out, kBig, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
      CHECK_OK(MPI_Recv(in, kBig, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(itest_verify(in, kBig, 1001) < 0, "1 MiB back from rank %d corrupted", peer);
    } else {
      CHECK_OK(MPI_Recv(in, kBig, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(itest_verify(in, kBig, 1000) < 0, "1 MiB from rank 0 corrupted");
      itest_fill(out, kBig, 1001);
      CHECK_OK(MPI_Send(out, kBig, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
    }
  }
  free(out);
  free(in);
  int failures = itest_failures, any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && any == 0) printf("mpmd_check: ok (%d ranks in %d blocks)\n", size, blocks);
  return itest_finish("mpmd_check");
}
