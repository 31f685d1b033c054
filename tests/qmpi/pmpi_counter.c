/* A PMPI tool to preload beside a QMPI one: counts MPI_Send and MPI_Recv
 * and prints "pmpi-counter: rank R: S sends, V receives" at MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>

static long sends, receives;

int MPI_Send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  sends++;
  return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status* st) {
  receives++;
  return PMPI_Recv(buf, count, dt, src, tag, comm, st);
}

int MPI_Finalize(void) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pmpi-counter: rank %d: %ld sends, %ld receives\n", rank, sends, receives);
  return PMPI_Finalize();
}
