// The blocking MPI calls, intercepted for the timeline (trace.h): each one
// becomes a kEvCall event (enter, exit, which call) in the event buffer when
// the buffer is on; wait states are computed from them on rank 0 (late
// sender: a receive blocked while its request sat in the posted queue; late
// receiver: a blocking send from its start until the receiver posted the
// matching receive).
// MPI_Type_free is here too: the buffer's requests keep the size of a
// datatype freed after them.
#include "residence.h"
#include "trace.h"

namespace sonde::residence {
namespace {

void note_call(CallKind kind, uint64_t enter) {
  if (!g_buf.cap || !g_collecting.load(std::memory_order_relaxed)) return;
  uint64_t exit = now_ns();
  ToolLock lock;
  if (!g_collecting.load(std::memory_order_relaxed)) return;
  if (Event* e = record(kEvCall, enter)) {
    e->uid = exit;
    e->count = kind;
    e->comm = -1;
  }
  // Past the call's exit time: pair blocks the callbacks used up are
  // replaced here, outside any measured interval.
  if (g.warm_pairs - g.fresh_pairs < kWarmPairs / 2) warm_pairs(0);
}

}  // namespace
}  // namespace sonde::residence

using namespace sonde::residence;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  uint64_t t = now_ns();
  int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  note_call(kCallSend, t);
  return rc;
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  uint64_t t = now_ns();
  int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
  note_call(kCallSsend, t);
  return rc;
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  uint64_t t = now_ns();
  int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
  note_call(kCallRecv, t);
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  uint64_t t = now_ns();
  int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  note_call(kCallSendrecv, t);
  return rc;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  uint64_t t = now_ns();
  int rc = PMPI_Wait(request, status);
  note_call(kCallWait, t);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  uint64_t t = now_ns();
  int rc = PMPI_Waitany(count, requests, index, status);
  note_call(kCallWaitany, t);
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  uint64_t t = now_ns();
  int rc = PMPI_Waitall(count, requests, statuses);
  note_call(kCallWaitall, t);
  return rc;
}

// A derived datatype's size outlives its handle for the events that name it.
int MPI_Type_free(MPI_Datatype* type) {
  int size = -1;
  bool note =
      type && g_buf.cap && g_collecting.load(std::memory_order_relaxed) && PMPI_Type_size(*type, &size) == MPI_SUCCESS;
  MPI_Datatype handle = type ? *type : MPI_DATATYPE_NULL;
  int rc = PMPI_Type_free(type);
  if (note && rc == MPI_SUCCESS) {
    ToolLock lock;
    if (g_freed_types.size() < 65536) g_freed_types.push_back({static_cast<int32_t>(handle), size, g_buf.used});
  }
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  uint64_t t = now_ns();
  int rc = PMPI_Probe(source, tag, comm, status);
  note_call(kCallProbe, t);
  return rc;
}

}  // extern "C"
