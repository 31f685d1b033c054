/* QMPI tools stacked in the configured order beside a PMPI tool, in one
 * program. Two QMPI tools, "tool_a" and "tool_b", each intercept MPI_Send,
 * MPI_Recv and MPI_Barrier and log their name; the program's own MPI_Send
 * is a PMPI wrapper that logs "pmpi" and calls PMPI_Send. The first argument
 * names the configuration the test runs with (SONDE_QMPI_TOOLS, or MPICH's
 * MPIR_CVAR_QMPI_TOOL_LIST) and what the log must show:
 *   ab       "tool_a:tool_b": a Send logs pmpi, a1, b2; a Recv logs a1, b2
 *   ba       "tool_b:tool_a": pmpi, b1, a2
 *   aa       "tool_a:tool_a": the one registration fills both slots: a1, a2
 *   none     no list: registration succeeds, nothing but pmpi runs
 *   unknown  "other": registering tool_a fails with MPI_ERR_ARG
 * Also: each tool sees its own storage, a non-null calling address, and
 * QMPI_Get_function's next ids; bad arguments are MPI_ERR_ARG. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "tests/integration/itest.h"

static char log_[64][8];
static int n_log;
static void note(const char* who, int id) {
  if (n_log < 64) snprintf(log_[n_log++], sizeof log_[0], "%s%d", who, id);
}
static int reg_a = -1, reg_b = -1, inits;
static int storage[3];
static int bad_storage, bad_address;

static void check_context(QMPI_Context ctx, int id) {
  void* s = NULL;
  void* addr = NULL;
  if (QMPI_Get_tool_storage(ctx, id, &s) != MPI_SUCCESS || s != &storage[id]) bad_storage++;
  if (QMPI_Get_calling_address(ctx, &addr) != MPI_SUCCESS || !addr) bad_address++;
}

#define NEXT(type, e, id, ...)                                 \
  do {                                                         \
    void (*f)(void);                                           \
    int next_id;                                               \
    QMPI_Get_function(id, e, &f, &next_id);                    \
    return ((type*)f)(ctx, next_id, __VA_ARGS__);              \
  } while (0)

static int t_send(const char* who, QMPI_Context ctx, int id, const void* buf, int count, MPI_Datatype dt, int dest,
                  int tag, MPI_Comm comm) {
  note(who, id);
  check_context(ctx, id);
  NEXT(QMPI_Send_t, MPI_SEND_T, id, buf, count, dt, dest, tag, comm);
}
static int t_recv(const char* who, QMPI_Context ctx, int id, void* buf, int count, MPI_Datatype dt, int src, int tag,
                  MPI_Comm comm, MPI_Status* st) {
  note(who, id);
  check_context(ctx, id);
  NEXT(QMPI_Recv_t, MPI_RECV_T, id, buf, count, dt, src, tag, comm, st);
}
static int a_send(QMPI_Context c, int id, const void* b, int n, MPI_Datatype d, int p, int t, MPI_Comm m) {
  return t_send("a", c, id, b, n, d, p, t, m);
}
static int b_send(QMPI_Context c, int id, const void* b, int n, MPI_Datatype d, int p, int t, MPI_Comm m) {
  return t_send("b", c, id, b, n, d, p, t, m);
}
static int a_recv(QMPI_Context c, int id, void* b, int n, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status* s) {
  return t_recv("a", c, id, b, n, d, p, t, m, s);
}
static int b_recv(QMPI_Context c, int id, void* b, int n, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status* s) {
  return t_recv("b", c, id, b, n, d, p, t, m, s);
}

static void init_a(int id) {
  inits++;
  QMPI_Register_tool_storage(id, &storage[id]);
  QMPI_Register_function(id, MPI_SEND_T, (void (*)(void))a_send);
  QMPI_Register_function(id, MPI_RECV_T, (void (*)(void))a_recv);
}
static void init_b(int id) {
  inits++;
  QMPI_Register_tool_storage(id, &storage[id]);
  QMPI_Register_function(id, MPI_SEND_T, (void (*)(void))b_send);
  QMPI_Register_function(id, MPI_RECV_T, (void (*)(void))b_recv);
}

__attribute__((constructor)) static void register_tools(void) {
  reg_a = QMPI_Register_tool_name("tool_a", init_a);
  reg_b = QMPI_Register_tool_name("tool_b", init_b);
}

/* The PMPI tool. */
int MPI_Send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  note("pmpi", 0);
  return PMPI_Send(buf, count, dt, dest, tag, comm);
}

static void expect_log(const char* step, const char* const* want, int n) {
  int same = n_log == n;
  for (int i = 0; same && i < n; ++i) same = strcmp(log_[i], want[i]) == 0;
  if (!same) {
    char got[64 * 9 + 1] = "";
    size_t len = 0;
    for (int i = 0; i < n_log; ++i) len += (size_t)snprintf(got + len, sizeof got - len, "%s ", log_[i]);
    CHECK(same, "%s: log '%s', want %d entries starting '%s'", step, got, n, n ? want[0] : "");
  }
  n_log = 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv); /* MPI_Init: the tools initialize here */
  int x = itest_rank, peer = 1 - itest_rank;
  const char* send_ab[] = {"pmpi0", "a1", "b2"};
  const char* recv_ab[] = {"a1", "b2"};
  const char* send_ba[] = {"pmpi0", "b1", "a2"};
  const char* recv_ba[] = {"b1", "a2"};
  const char* send_aa[] = {"pmpi0", "a1", "a2"};
  const char* recv_aa[] = {"a1", "a2"};
  const char* send_none[] = {"pmpi0"};
  const char* const *ws = send_none, *const *wr = NULL;
  int ns = 1, nr = 0, want_inits = 0, want_a = MPI_SUCCESS, want_b = MPI_SUCCESS;
  if (!strcmp(mode, "ab")) ws = send_ab, wr = recv_ab, ns = 3, nr = 2, want_inits = 2;
  else if (!strcmp(mode, "ba")) ws = send_ba, wr = recv_ba, ns = 3, nr = 2, want_inits = 2;
  else if (!strcmp(mode, "aa")) ws = send_aa, wr = recv_aa, ns = 3, nr = 2, want_inits = 2, want_b = MPI_ERR_ARG;
  else if (!strcmp(mode, "unknown")) want_a = want_b = MPI_ERR_ARG;
  else CHECK(!strcmp(mode, "none"), "unknown mode '%s'", mode);
  CHECK(reg_a == want_a && reg_b == want_b, "registration: tool_a %d, tool_b %d", reg_a, reg_b);
  CHECK(inits == want_inits, "%d init functions ran, want %d", inits, want_inits);
  n_log = 0;
  for (int i = 0; i < 3; ++i) {
    if (itest_rank == 0) {
      MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
      expect_log("send", ws, ns);
      MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect_log("recv", wr, nr);
    } else {
      MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect_log("recv", wr, nr);
      MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
      expect_log("send", ws, ns);
    }
  }
  /* An uncovered call goes straight to the library; the data went through. */
  MPI_Barrier(MPI_COMM_WORLD);
  expect_log("barrier", NULL, 0);
  CHECK(bad_storage == 0 && bad_address == 0, "%d wrong storage, %d null calling addresses", bad_storage,
        bad_address);
  /* Bad arguments. */
  void (*f)(void);
  int id;
  CHECK(QMPI_Get_function(0, MPI_LAST_FUNC_T, &f, &id) == MPI_ERR_ARG, "Get_function of MPI_LAST_FUNC_T");
  CHECK(QMPI_Get_function(99, MPI_SEND_T, &f, &id) == MPI_ERR_ARG, "Get_function of tool 99");
  CHECK(QMPI_Register_function(0, MPI_SEND_T, NULL) == MPI_ERR_ARG, "Register_function for tool 0");
  CHECK(QMPI_Register_tool_storage(99, NULL) == MPI_ERR_ARG, "Register_tool_storage for tool 99");
  CHECK(QMPI_Register_tool_name(NULL, init_a) == MPI_ERR_ARG, "Register_tool_name(NULL)");
  /* The library is tool 0 after the last tool. */
  CHECK(QMPI_Get_function(want_inits, MPI_BARRIER_T, &f, &id) == MPI_SUCCESS && id == 0 && f,
        "Get_function after the last tool: id %d", id);
  return itest_finish(mode);
}
