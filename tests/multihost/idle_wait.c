/* A receive waiting on a peer with nothing in flight.
 *
 *   idle_wait SECONDS [cold|cold-wait|any-source|waitall|test-loop|busy]
 *
 * Rank 0 blocks in MPI_Recv from rank 1; rank 1 stays inside MPI (polling
 * MPI_Iprobe) for SECONDS, then sends 42. Every rank prints
 * "idle_wait: rank N waiting" once the wait has begun (the link-down test
 * cuts the link then). With the link up and SECONDS longer than
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
 * (Engine::waiting_on), so a link cut then ends the job from its side.
 *
 * "any-source": cold-wait with the receive from MPI_ANY_SOURCE (the wait
 * watches every rank of the communicator). "waitall": no barrier; rank 0
 * posts one receive from every other rank, in rank order, and waits for
 * all with MPI_Waitall; the others send after SECONDS (run with rank 1 on
 * rank 0's host and the last rank across the link: going idle must watch
 * every pending receive's peer, not only the first one's). "test-loop":
 * cold-wait, but rank 0 polls its MPI_Irecv with MPI_Test (and a short
 * sleep) instead of waiting: the engine never goes idle inside MPI, and
 * must watch the peer after enough fruitless tests all the same.
 *
 * "busy": a peer that computes outside MPI. After a barrier rank 1 sends
 * 42, then sleeps SECONDS without calling MPI while rank 0 keeps sending
 * it 16 messages of 64 KiB (more than the transport's credits: rank 0's
 * sends wait for a consumer that does not consume) and waits for its
 * reply; then rank 1 receives them (checked) and answers 43. The job must
 * succeed however long SECONDS is against SONDE_OFI_STALL_TIMEOUT while
 * rank 1's host answers (TCP liveness). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kBusyMessages = 16, kBusyInts = 16384 }; /* 64 KiB each */

static void waiting(int rank) {
  printf("idle_wait: rank %d waiting\n", rank);
  fflush(stdout);
}

static void check(int got, int want) {
  if (got != want) {
    fprintf(stderr, "idle_wait: got %d, expected %d\n", got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* Inside MPI for `seconds`, finding nothing. */
static void poll_for(double seconds) {
  double t0 = MPI_Wtime();
  int flag;
  while (MPI_Wtime() - t0 < seconds) {
    MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    usleep(1000);
  }
}

static void busy(int rank, double seconds) {
  static int data[kBusyMessages][kBusyInts];
  int value = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  waiting(rank);
  double t0 = MPI_Wtime();
  if (rank == 0) {
    MPI_Recv(&value, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(value, 42);
    MPI_Request sends[kBusyMessages];
    for (int m = 0; m < kBusyMessages; ++m) {
      for (int i = 0; i < kBusyInts; ++i) data[m][i] = m * 1000003 + i;
      MPI_Isend(data[m], kBusyInts, MPI_INT, 1, 6, MPI_COMM_WORLD, &sends[m]);
    }
    MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(value, 43);
    MPI_Waitall(kBusyMessages, sends, MPI_STATUSES_IGNORE);
    printf("idle_wait: received after %.0f s\n", MPI_Wtime() - t0);
  } else if (rank == 1) {
    value = 42;
    MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    sleep((unsigned)seconds); /* computing: no MPI at all */
    for (int m = 0; m < kBusyMessages; ++m) {
      MPI_Recv(data[m], kBusyInts, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < kBusyInts; ++i) check(data[m][i], m * 1000003 + i);
    }
    value = 43;
    MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
}

static void waitall(int rank, int size, double seconds) {
  waiting(rank);
  double t0 = MPI_Wtime();
  if (rank == 0) {
    int values[64];
    MPI_Request reqs[64];
    if (size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int r = 1; r < size; ++r) MPI_Irecv(&values[r], 1, MPI_INT, r, 5, MPI_COMM_WORLD, &reqs[r]);
    MPI_Waitall(size - 1, &reqs[1], MPI_STATUSES_IGNORE);
    for (int r = 1; r < size; ++r) check(values[r], 42 + r);
    printf("idle_wait: received after %.0f s\n", MPI_Wtime() - t0);
  } else {
    poll_for(seconds);
    int value = 42 + rank;
    MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double seconds = argc > 1 ? atof(argv[1]) : 10;
  const char* mode = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "busy") == 0) {
    busy(rank, seconds);
  } else if (strcmp(mode, "waitall") == 0) {
    waitall(rank, size, seconds);
  } else {
    int cold = strcmp(mode, "cold") == 0;
    int any_source = strcmp(mode, "any-source") == 0;
    int no_barrier = cold || any_source || strcmp(mode, "cold-wait") == 0 || strcmp(mode, "test-loop") == 0;
    if (!no_barrier) MPI_Barrier(MPI_COMM_WORLD); /* the connection exists; from here nothing is in flight */
    waiting(rank);
    double t0 = MPI_Wtime();
    int value = 0;
    int receiver = cold ? 1 : 0, sender = 1 - receiver;
    if (rank == receiver) {
      if (strcmp(mode, "test-loop") == 0) {
        MPI_Request req;
        int done = 0;
        MPI_Irecv(&value, 1, MPI_INT, sender, 5, MPI_COMM_WORLD, &req);
        while (!done) {
          MPI_Test(&req, &done, MPI_STATUS_IGNORE);
          if (!done) usleep(100);
        }
      } else {
        MPI_Recv(&value, 1, MPI_INT, any_source ? MPI_ANY_SOURCE : sender, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      check(value, 42);
      printf("idle_wait: received after %.0f s\n", MPI_Wtime() - t0);
    } else if (rank == sender) {
      poll_for(seconds);
      value = 42;
      MPI_Send(&value, 1, MPI_INT, receiver, 5, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
