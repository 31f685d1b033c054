// The profiler as a QMPI tool named "sonde_residence" (docs/qmpi.md), for
// stacking beside other tools, PMPI ones included:
//
//   LD_PRELOAD=libsonde_residence_qmpi.so SONDE_QMPI_TOOLS=sonde_residence[:other...] ./app
//
// The same sources as the PMPI form, compiled (BUILD: QMPI_RENAMES) so that
// its six interceptors are plain functions (sonde_residence_Init, ...) and
// its calls of the PMPI_ form of those six go to the next tool in the chain
// (sonde_residence_next_Init, ...), defined here. Its other PMPI_ calls
// (the report's messages) enter the chain from the top, as any tool's.
#include <mpi.h>

namespace {

int g_tool_id = 0;
QMPI_Context g_context;  // of the call being intercepted (one MPI call at a time reaches these six)

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

}  // extern "C"
