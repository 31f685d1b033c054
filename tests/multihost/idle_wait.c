/* A receive waiting on a peer with nothing in flight.
 *
 *   idle_wait SECONDS [cold|cold-wait]
 *
 * Rank 0 blocks in MPI_Recv from rank 1; rank 1 stays inside MPI (polling
 * MPI_Iprobe) for SECONDS, then sends 42. Both print
 * "idle_wait: waiting" once the wait has begun (the link-down test cuts the
 * link then). With the link up and SECONDS longer than
 * SONDE_OFI_STALL_TIMEOUT, the receive must still complete: the ofi
 * keepalives show that a quiet peer is alive. With the link cut, neither
 * side may wait forever. With "cold", there is no barrier first: the two
 * ranks have exchanged nothing (MPI_Init sends nothing over ofi), so the
 * receiver's liveness check does not watch the peer; the sender finds the
 * link gone when it tries to reach the receiver. The roles swap then
 * (rank 1 receives, rank 0 sends): the sender's error must come from the
 * launcher's host, the one whose output still reaches the test. With
 * "cold-wait", also no barrier, and rank 0 receives as usual: its wait,
 * once long, makes its transport watch the peer it has never heard from
 * (Engine::waiting_on), so a link cut then ends the job from its side. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double seconds = argc > 1 ? atof(argv[1]) : 10;
  int cold = argc > 2 && strcmp(argv[2], "cold") == 0;
  int cold_wait = argc > 2 && strcmp(argv[2], "cold-wait") == 0;
  if (!cold && !cold_wait) MPI_Barrier(MPI_COMM_WORLD); /* the connection exists; from here nothing is in flight */
  printf("idle_wait: rank %d waiting\n", rank);
  fflush(stdout);
  double t0 = MPI_Wtime();
  int value = 0;
  int receiver = cold ? 1 : 0, sender = 1 - receiver;
  if (rank == receiver) {
    MPI_Recv(&value, 1, MPI_INT, sender, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (value != 42) {
      fprintf(stderr, "idle_wait: got %d\n", value);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    printf("idle_wait: received after %.0f s\n", MPI_Wtime() - t0);
  } else if (rank == sender) {
    int flag;
    while (MPI_Wtime() - t0 < seconds) {
      MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      usleep(1000);
    }
    value = 42;
    MPI_Send(&value, 1, MPI_INT, receiver, 5, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
