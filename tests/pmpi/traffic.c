/* An ordinary MPI program with a known number of calls of each kind, for the
 * PMPI tool tests. Every rank makes, in total:
 *
 *   Init=1 Send=3 Recv=3 Isend=2 Irecv=2 Wait=2 Waitall=1 Sendrecv=1
 *   Barrier=2 Bcast=1 Allreduce=1 Comm_dup=1 Comm_split=1 Comm_free=2
 *   Finalize=1
 *
 * (plus Comm_rank/Comm_size, which the tool does not count). It checks its
 * own results too, so a tool that broke forwarding would fail the job.
 * Needs an even number of ranks.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size % 2) {
    fprintf(stderr, "traffic: needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int peer = rank ^ 1;
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);                  /* internal traffic */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half); /* internal traffic */

  /* 3 blocking messages each way, on the dup; the lower rank sends first. */
  for (int i = 0; i < 3; ++i) {
    int out = rank * 10 + i, in = -1;
    if (rank < peer) {
      MPI_Send(&out, 1, MPI_INT, peer, i, dup);
      MPI_Recv(&in, 1, MPI_INT, peer, i, dup, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&in, 1, MPI_INT, peer, i, dup, MPI_STATUS_IGNORE);
      MPI_Send(&out, 1, MPI_INT, peer, i, dup);
    }
    bad |= in != peer * 10 + i;
  }
  /* 2 non-blocking each way: one Wait each for the sends, Waitall for the receives. */
  int outs[2] = {rank, -rank}, ins[2] = {-1, -1};
  MPI_Request rr[2], sr[2];
  for (int i = 0; i < 2; ++i) MPI_Irecv(&ins[i], 1, MPI_INT, peer, 100 + i, MPI_COMM_WORLD, &rr[i]);
  for (int i = 0; i < 2; ++i) MPI_Isend(&outs[i], 1, MPI_INT, peer, 100 + i, MPI_COMM_WORLD, &sr[i]);
  MPI_Wait(&sr[0], MPI_STATUS_IGNORE);
  MPI_Wait(&sr[1], MPI_STATUS_IGNORE);
  MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
  bad |= ins[0] != peer || ins[1] != -peer;
  /* Sendrecv: one call, not a Send plus a Recv. */
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, peer, 7, &got, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  bad |= got != peer;
  /* Collectives (their messages are internal). */
  MPI_Barrier(MPI_COMM_WORLD);
  int root_value = rank == 0 ? 4242 : 0;
  MPI_Bcast(&root_value, 1, MPI_INT, 0, half);
  bad |= root_value != (rank % 2 == 0 ? 4242 : 0);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
  bad |= sum != size;
  MPI_Barrier(half);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  if (bad) fprintf(stderr, "traffic: rank %d got wrong data\n", rank);
  if (rank == 0) printf("traffic: done\n");
  MPI_Finalize();
  return bad;
}
