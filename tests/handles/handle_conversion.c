/* C <-> Fortran handle conversions: defined before MPI_Init, and a handle
 * that went through MPI_Fint still works in every call (a duplicated
 * communicator, a datatype, a pending request, a message from MPI_Mprobe).
 * Every handle value, predefined or made at run time, of every kind, is
 * non-negative, so bindings that read it as a signed integer (ctypes) get
 * the same value back. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  /* Legal before MPI_Init (MPI 4.1 section 19.3.4). */
  MPI_Fint fw = MPI_Comm_c2f(MPI_COMM_WORLD);
  MPI_Comm back = MPI_Comm_f2c(fw);
  itest_init(&argc, &argv);
  CHECK(back == MPI_COMM_WORLD, "world did not survive a round trip before init");
  int n = itest_size, me = itest_rank;

  MPI_Comm dup, dup_back;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  dup_back = MPI_Comm_f2c(PMPI_Comm_c2f(dup));
  int size = -1;
  CHECK_OK(MPI_Comm_size(dup_back, &size));
  CHECK(size == n, "size through a converted handle: %d", size);

  MPI_Datatype t = MPI_Type_f2c(MPI_Type_c2f(MPI_INT));
  MPI_Group g;
  CHECK_OK(MPI_Comm_group(dup, &g));
  MPI_Group gb = MPI_Group_f2c(MPI_Group_c2f(g));
  int gsize = -1;
  CHECK_OK(MPI_Group_size(gb, &gsize));
  CHECK(gsize == n, "group size through a converted handle: %d", gsize);
  MPI_Group_free(&g);

  /* A pending receive completed through its converted handle. */
  int right = (me + 1) % n, left = (me + n - 1) % n, got = -1;
  MPI_Request r;
  CHECK_OK(MPI_Irecv(&got, 1, t, left, 3, dup_back, &r));
  MPI_Request rb = PMPI_Request_f2c(MPI_Request_c2f(r));
  CHECK_OK(MPI_Send(&me, 1, MPI_INT, right, 3, dup));
  CHECK_OK(MPI_Wait(&rb, MPI_STATUS_IGNORE));
  CHECK(got == left && rb == MPI_REQUEST_NULL, "receive through a converted request: got %d", got);

  /* A matched message received through its converted handle. */
  MPI_Message m;
  CHECK_OK(MPI_Send(&me, 1, MPI_INT, right, 4, dup));
  CHECK_OK(MPI_Mprobe(left, 4, dup, &m, MPI_STATUS_IGNORE));
  CHECK(m >= 0, "a message handle is negative: %d", m);
  MPI_Message mb = MPI_Message_f2c(PMPI_Message_c2f(m));
  got = -1;
  CHECK_OK(MPI_Mrecv(&got, 1, MPI_INT, &mb, MPI_STATUS_IGNORE));
  CHECK(got == left, "Mrecv through a converted message: got %d", got);
  CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL changed");

  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "MPI_SUM changed");
  CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "MPI_INFO_NULL changed");
  CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
        "MPI_ERRORS_RETURN changed");
  CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL changed");
  int predefined[] = {MPI_COMM_NULL,       MPI_COMM_WORLD,      MPI_COMM_SELF,    MPI_GROUP_NULL,
                      MPI_GROUP_EMPTY,     MPI_DATATYPE_NULL,   MPI_INT,          MPI_DOUBLE_COMPLEX,
                      MPI_REQUEST_NULL,    MPI_OP_NULL,         MPI_SUM,          MPI_REPLACE,
                      MPI_ERRHANDLER_NULL, MPI_ERRORS_RETURN,   MPI_ERRORS_ABORT, MPI_INFO_NULL,
                      MPI_INFO_ENV,        MPI_MESSAGE_NULL,    MPI_MESSAGE_NO_PROC, MPI_WIN_NULL,
                      MPI_SESSION_NULL};
  for (unsigned i = 0; i < sizeof predefined / sizeof predefined[0]; ++i)
    CHECK(predefined[i] >= 0, "predefined handle %u is negative: %d", i, predefined[i]);
  MPI_Session session;
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
  MPI_Info info;
  CHECK_OK(MPI_Info_create(&info));
  MPI_Errhandler eh;
  CHECK_OK(MPI_Comm_get_errhandler(dup, &eh));
  MPI_Datatype pair;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  int made[] = {dup, session, info, eh, pair, r};
  for (unsigned i = 0; i < sizeof made / sizeof made[0]; ++i)
    CHECK(made[i] >= 0, "handle %u made at run time is negative: %d", i, made[i]);
  CHECK(MPI_Session_f2c(MPI_Session_c2f(session)) == session, "a session handle changed");
  MPI_Type_free(&pair);
  MPI_Errhandler_free(&eh);
  MPI_Info_free(&info);
  CHECK_OK(MPI_Session_finalize(&session));
  MPI_Comm_free(&dup);
  return itest_finish("handle_conversion");
}
