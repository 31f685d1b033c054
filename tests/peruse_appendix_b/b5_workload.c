/* An MPI program for the 9.2 profiler (examples/peruse_appendix_b/
 * b5_profiler.c) to measure: 2 ranks, point-to-point traffic whose user
 * requests and messages are known (check_b5.awk counts them), through the
 * profiler's MPI_Init, MPI_Comm_dup, MPI_Comm_free and MPI_Finalize.
 *
 *   A. 5 round trips rank 0 <-> rank 1 (MPI_Send / MPI_Recv), MPI_COMM_WORLD
 *   B. rank 0 posts 8 receives from rank 1, then lets rank 1 send the 8
 *      messages (a zero-byte "ready" first): rank 0's posted queue reaches 8
 *   C. each rank sends itself one message (MPI_Isend + MPI_Recv); the
 *      profiler ignores events whose peer is the rank itself
 *   D. rank 1 sends rank 0 one message of 1 MiB (Sonde's rendezvous path)
 *   E. on a duplicate of MPI_COMM_WORLD: rank 0 sends 3 messages, rank 1
 *      receives them with MPI_Irecv + MPI_Waitall; the duplicate is freed
 *
 * User requests: rank 0 sends 10 and receives 15, rank 1 sends 15 and
 * receives 10. Prints "b5 workload: done" when all of it completed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"

enum { kRoundTrips = 5, kPosted = 8, kOnDup = 3, kLarge = 1 << 20 };

int main(int argc, char **argv) {
  int rank, size, value = 0;
  int data[kPosted];
  MPI_Request reqs[kPosted];
  MPI_Comm dup;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "b5 workload: run on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int peer = 1 - rank;
  char *large = calloc(kLarge, 1);

  /* A */
  for (int i = 0; i < kRoundTrips; i++) {
    if (rank == 0) {
      MPI_Send(&value, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(&value, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&value, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
    }
  }
  /* B */
  if (rank == 0) {
    for (int i = 0; i < kPosted; i++) MPI_Irecv(&data[i], 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[i]);
    MPI_Send(NULL, 0, MPI_INT, peer, 3, MPI_COMM_WORLD);
    MPI_Waitall(kPosted, reqs, MPI_STATUSES_IGNORE);
  } else {
    MPI_Recv(NULL, 0, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < kPosted; i++) MPI_Send(&value, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
  }
  /* C */
  MPI_Isend(&value, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv(&data[0], 1, MPI_INT, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  /* D */
  if (rank == 1)
    MPI_Send(large, kLarge, MPI_BYTE, peer, 5, MPI_COMM_WORLD);
  else
    MPI_Recv(large, kLarge, MPI_BYTE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* E */
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    for (int i = 0; i < kOnDup; i++) MPI_Send(&value, 1, MPI_INT, peer, 6, dup);
  } else {
    for (int i = 0; i < kOnDup; i++) MPI_Irecv(&data[i], 1, MPI_INT, peer, 6, dup, &reqs[i]);
    MPI_Waitall(kOnDup, reqs, MPI_STATUSES_IGNORE);
  }
  MPI_Comm_free(&dup);

  free(large);
  printf("b5 workload: done\n");
  MPI_Finalize();
  return 0;
}
