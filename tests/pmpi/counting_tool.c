/* A PMPI tool: counts the application's MPI calls and forwards each to its
 * PMPI_ twin (MPI 4.1 section 15.2). At MPI_Finalize it prints one line per
 * rank:
 *
 *   pmpi-tool: rank R: Init=1 Send=... Finalize=1
 *
 * The same source is linked into a program (counting_tool_linked) and built
 * as a shared library injected with LD_PRELOAD (libcounting_tool.so). Calls
 * the library makes internally (collectives, Comm_dup, Sendrecv) must reach
 * the engine without passing through these MPI_ symbols, so they never show
 * up as MPI_Send/MPI_Recv here.
 */
#include <mpi.h>
#include <stdio.h>

enum {
  kInit, kFinalize, kSend, kRecv, kIsend, kIrecv, kWait, kWaitall, kSendrecv, kBarrier, kBcast, kAllreduce,
  kCommDup, kCommSplit, kCommFree, kCount
};
static const char* const kNames[kCount] = {"Init",     "Finalize", "Send",    "Recv",      "Isend",
                                           "Irecv",    "Wait",     "Waitall", "Sendrecv",  "Barrier",
                                           "Bcast",    "Allreduce", "Comm_dup", "Comm_split", "Comm_free"};
static long calls[kCount];

int MPI_Init(int* argc, char*** argv) {
  ++calls[kInit];
  return PMPI_Init(argc, argv);
}

int MPI_Finalize(void) {
  ++calls[kFinalize];
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char line[1024];
  int n = snprintf(line, sizeof line, "pmpi-tool: rank %d:", rank);
  for (int i = 0; i < kCount; ++i) n += snprintf(line + n, sizeof line - (size_t)n, " %s=%ld", kNames[i], calls[i]);
  printf("%s\n", line);
  fflush(stdout);
  return PMPI_Finalize();
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  ++calls[kSend];
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  ++calls[kRecv];
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  ++calls[kIsend];
  return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  ++calls[kIrecv];
  return PMPI_Irecv(buf, count, type, source, tag, comm, req);
}

int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  ++calls[kWait];
  return PMPI_Wait(req, status);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  ++calls[kWaitall];
  return PMPI_Waitall(count, reqs, statuses);
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  ++calls[kSendrecv];
  return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

int MPI_Barrier(MPI_Comm comm) {
  ++calls[kBarrier];
  return PMPI_Barrier(comm);
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ++calls[kBcast];
  return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++calls[kAllreduce];
  return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  ++calls[kCommDup];
  return PMPI_Comm_dup(comm, out);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  ++calls[kCommSplit];
  return PMPI_Comm_split(comm, color, key, out);
}

int MPI_Comm_free(MPI_Comm* comm) {
  ++calls[kCommFree];
  return PMPI_Comm_free(comm);
}
