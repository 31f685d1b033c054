// The profiler as a QMPI tool named "sonde_residence" (docs/qmpi.md), for
// stacking beside other tools, PMPI ones included:
//
//   LD_PRELOAD=libsonde_residence_qmpi.so SONDE_QMPI_TOOLS=sonde_residence[:other...] ./app
//
// The same sources as the PMPI form, compiled (BUILD: QMPI_RENAMES) so that
// its interceptors are plain functions (sonde_residence_Init, ...) and its
// calls of the PMPI_ form of those go to the next tool in the chain
// (sonde_residence_next_Init, ...), defined here. Its other PMPI_ calls
// (the report's messages) enter the chain from the top, as any tool's.
#include <mpi.h>

namespace {

int g_tool_id = 0;
QMPI_Context g_context;  // of the call being intercepted (one MPI call at a time reaches them)

template <class F>
F* next(enum QMPI_Functions_enum f, int* next_id) {
  void (*p)(void) = nullptr;
  QMPI_Get_function(g_tool_id, f, &p, next_id);
  return reinterpret_cast<F*>(p);
}

int q_init(QMPI_Context c, int, int* argc, char*** argv) {
  g_context = c;
  return sonde_residence_Init(argc, argv);
}
int q_init_thread(QMPI_Context c, int, int* argc, char*** argv, int required, int* provided) {
  g_context = c;
  return sonde_residence_Init_thread(argc, argv, required, provided);
}
int q_comm_dup(QMPI_Context c, int, MPI_Comm comm, MPI_Comm* newcomm) {
  g_context = c;
  return sonde_residence_Comm_dup(comm, newcomm);
}
int q_comm_split(QMPI_Context c, int, MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  g_context = c;
  return sonde_residence_Comm_split(comm, color, key, newcomm);
}
int q_comm_free(QMPI_Context c, int, MPI_Comm* comm) {
  g_context = c;
  return sonde_residence_Comm_free(comm);
}
int q_finalize(QMPI_Context c, int) {
  g_context = c;
  return sonde_residence_Finalize();
}

int q_send(QMPI_Context c, int, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  g_context = c;
  return sonde_residence_Send(buf, count, type, dest, tag, comm);
}
int q_ssend(QMPI_Context c, int, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  g_context = c;
  return sonde_residence_Ssend(buf, count, type, dest, tag, comm);
}
int q_recv(QMPI_Context c, int, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
           MPI_Status* status) {
  g_context = c;
  return sonde_residence_Recv(buf, count, type, source, tag, comm, status);
}
int q_sendrecv(QMPI_Context c, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
               MPI_Status* status) {
  g_context = c;
  return sonde_residence_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                  recvtag, comm, status);
}
int q_wait(QMPI_Context c, int, MPI_Request* request, MPI_Status* status) {
  g_context = c;
  return sonde_residence_Wait(request, status);
}
int q_waitany(QMPI_Context c, int, int count, MPI_Request requests[], int* index, MPI_Status* status) {
  g_context = c;
  return sonde_residence_Waitany(count, requests, index, status);
}
int q_waitall(QMPI_Context c, int, int count, MPI_Request requests[], MPI_Status statuses[]) {
  g_context = c;
  return sonde_residence_Waitall(count, requests, statuses);
}
int q_type_free(QMPI_Context c, int, MPI_Datatype* type) {
  g_context = c;
  return sonde_residence_Type_free(type);
}
int q_probe(QMPI_Context c, int, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  g_context = c;
  return sonde_residence_Probe(source, tag, comm, status);
}

void init_tool(int tool_id) {
  g_tool_id = tool_id;
  auto reg = [&](enum QMPI_Functions_enum f, auto* fn) {
    QMPI_Register_function(tool_id, f, reinterpret_cast<void (*)(void)>(fn));
  };
  reg(MPI_INIT_T, &q_init);
  reg(MPI_INIT_THREAD_T, &q_init_thread);
  reg(MPI_COMM_DUP_T, &q_comm_dup);
  reg(MPI_COMM_SPLIT_T, &q_comm_split);
  reg(MPI_COMM_FREE_T, &q_comm_free);
  reg(MPI_FINALIZE_T, &q_finalize);
  reg(MPI_SEND_T, &q_send);
  reg(MPI_SSEND_T, &q_ssend);
  reg(MPI_RECV_T, &q_recv);
  reg(MPI_SENDRECV_T, &q_sendrecv);
  reg(MPI_WAIT_T, &q_wait);
  reg(MPI_WAITANY_T, &q_waitany);
  reg(MPI_WAITALL_T, &q_waitall);
  reg(MPI_TYPE_FREE_T, &q_type_free);
  reg(MPI_PROBE_T, &q_probe);
}

[[gnu::constructor]] void register_tool() { QMPI_Register_tool_name("sonde_residence", init_tool); }

}  // namespace

extern "C" {

int sonde_residence_next_Init(int* argc, char*** argv) {
  int id;
  return next<QMPI_Init_t>(MPI_INIT_T, &id)(g_context, id, argc, argv);
}
int sonde_residence_next_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int id;
  return next<QMPI_Init_thread_t>(MPI_INIT_THREAD_T, &id)(g_context, id, argc, argv, required, provided);
}
int sonde_residence_next_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int id;
  return next<QMPI_Comm_dup_t>(MPI_COMM_DUP_T, &id)(g_context, id, comm, newcomm);
}
int sonde_residence_next_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int id;
  return next<QMPI_Comm_split_t>(MPI_COMM_SPLIT_T, &id)(g_context, id, comm, color, key, newcomm);
}
int sonde_residence_next_Comm_free(MPI_Comm* comm) {
  int id;
  return next<QMPI_Comm_free_t>(MPI_COMM_FREE_T, &id)(g_context, id, comm);
}
int sonde_residence_next_Finalize(void) {
  int id;
  return next<QMPI_Finalize_t>(MPI_FINALIZE_T, &id)(g_context, id);
}

int sonde_residence_next_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  int id;
  return next<QMPI_Send_t>(MPI_SEND_T, &id)(g_context, id, buf, count, type, dest, tag, comm);
}
int sonde_residence_next_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  int id;
  return next<QMPI_Ssend_t>(MPI_SSEND_T, &id)(g_context, id, buf, count, type, dest, tag, comm);
}
int sonde_residence_next_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                              MPI_Status* status) {
  int id;
  return next<QMPI_Recv_t>(MPI_RECV_T, &id)(g_context, id, buf, count, type, source, tag, comm, status);
}
int sonde_residence_next_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                  MPI_Comm comm, MPI_Status* status) {
  int id;
  return next<QMPI_Sendrecv_t>(MPI_SENDRECV_T, &id)(g_context, id, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                                    recvcount, recvtype, source, recvtag, comm, status);
}
int sonde_residence_next_Wait(MPI_Request* request, MPI_Status* status) {
  int id;
  return next<QMPI_Wait_t>(MPI_WAIT_T, &id)(g_context, id, request, status);
}
int sonde_residence_next_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  int id;
  return next<QMPI_Waitany_t>(MPI_WAITANY_T, &id)(g_context, id, count, requests, index, status);
}
int sonde_residence_next_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  int id;
  return next<QMPI_Waitall_t>(MPI_WAITALL_T, &id)(g_context, id, count, requests, statuses);
}
int sonde_residence_next_Type_free(MPI_Datatype* type) {
  int id;
  return next<QMPI_Type_free_t>(MPI_TYPE_FREE_T, &id)(g_context, id, type);
}
int sonde_residence_next_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  int id;
  return next<QMPI_Probe_t>(MPI_PROBE_T, &id)(g_context, id, source, tag, comm, status);
}
}  // extern "C"
