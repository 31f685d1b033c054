/* User error handlers (invoked with the right communicator and code,
 * inherited by dup and split, kept while freed by the user), the MPI-1
 * names, Comm_call_errhandler, and user error classes, codes and strings. */
#include "tests/integration/itest.h"

static int calls = 0;
static MPI_Comm last_comm = MPI_COMM_NULL;
static int last_code = -1;

static void handler(MPI_Comm* comm, int* code, ...) {
  ++calls;
  last_comm = *comm;
  last_code = *code;
}

static void expect_call(MPI_Comm comm, int cls, const char* what) {
  int got_class = -1;
  if (calls == 1) MPI_Error_class(last_code, &got_class);
  CHECK(calls == 1 && last_comm == comm && got_class == cls, "%s: %d calls, comm %x (want %x), class %d (want %d)",
        what, calls, (unsigned)last_comm, (unsigned)comm, got_class, cls);
  calls = 0;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, x = 0;
  MPI_Errhandler eh, got;
  CHECK_OK(MPI_Comm_create_errhandler(handler, &eh));
  MPI_Comm c, d, s;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK_OK(MPI_Comm_set_errhandler(c, eh));
  int rc = MPI_Send(&x, 1, MPI_INT, n, 0, c);  /* no such rank */
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK, "the failing call still returns its code (class %d)", cls);
  expect_call(c, MPI_ERR_RANK, "send to a bad rank");

  /* Inherited by dup and split. */
  MPI_Comm_dup(c, &d);
  CHECK_OK(MPI_Comm_get_errhandler(d, &got));
  CHECK(got == eh, "dup inherits the handler");
  CHECK_OK(MPI_Errhandler_free(&got));
  MPI_Send(&x, -1, MPI_INT, 0, 0, d);
  expect_call(d, MPI_ERR_COUNT, "error on the dup");
  MPI_Comm_split(c, 0, 0, &s);
  MPI_Recv(&x, 1, MPI_DATATYPE_NULL, 0, 0, s, MPI_STATUS_IGNORE);
  expect_call(s, MPI_ERR_TYPE, "error on the split");

  /* Freed by the user, still used by the communicators. */
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL, "free nulls the handle");
  MPI_Send(&x, 1, MPI_INT, 0, -5, c);
  expect_call(c, MPI_ERR_TAG, "handler after free");
  CHECK_OK(MPI_Comm_get_errhandler(c, &got));  /* a new reference */
  MPI_Errhandler again = got;
  CHECK_OK(MPI_Errhandler_free(&got));
  CHECK_CLASS(MPI_Errhandler_free(&again), MPI_ERR_ARG);  /* no references left */
  CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, again), MPI_ERR_ARG);

  /* Comm_call_errhandler. */
  CHECK_OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
  expect_call(c, MPI_ERR_OTHER, "call_errhandler");
  rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
  CHECK(rc == MPI_SUCCESS, "call_errhandler with MPI_ERRORS_RETURN succeeds once the handler returned: %d", rc);

  /* MPI-1 names. */
  MPI_Errhandler old;
  CHECK_OK(MPI_Errhandler_create(handler, &old));
  CHECK_OK(MPI_Errhandler_set(d, old));
  CHECK_OK(MPI_Errhandler_get(d, &got));
  CHECK(got == old, "Errhandler_get");
  MPI_Errhandler_free(&got);
  MPI_Errhandler_free(&old);
  MPI_Barrier(MPI_COMM_NULL);  /* no communicator: MPI_COMM_WORLD's handler (RETURN) */
  CHECK(calls == 0, "world's handler is RETURN");
  MPI_Bcast(&x, 1, MPI_INT, n, d);
  expect_call(d, MPI_ERR_ROOT, "bcast bad root on d");

  /* User error classes, codes and strings. */
  int myclass, mycode, other_code, lastused, flag;
  CHECK_OK(MPI_Add_error_class(&myclass));
  CHECK(myclass > MPI_ERR_LASTCODE, "user class %d", myclass);
  CHECK_OK(MPI_Add_error_code(myclass, &mycode));
  CHECK_OK(MPI_Add_error_code(MPI_ERR_OTHER, &other_code));
  CHECK(mycode != myclass && other_code != mycode, "distinct codes");
  CHECK_OK(MPI_Error_class(mycode, &cls));
  CHECK(cls == myclass, "class of user code %d", cls);
  CHECK_OK(MPI_Error_class(other_code, &cls));
  CHECK(cls == MPI_ERR_OTHER, "class of user code in MPI_ERR_OTHER: %d", cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = -1;
  CHECK_OK(MPI_Error_string(mycode, text, &len));
  CHECK(len == 0, "no string yet: \"%s\"", text);
  CHECK_OK(MPI_Add_error_string(mycode, "sonde test: my own error"));
  CHECK_OK(MPI_Error_string(mycode, text, &len));
  CHECK(strcmp(text, "sonde test: my own error") == 0, "user string: %s", text);
  CHECK_CLASS(MPI_Add_error_string(MPI_ERR_TRUNCATE, "nope"), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Add_error_code(987654, &mycode), MPI_ERR_ARG);
  int* p = NULL;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
  lastused = p ? *p : -1;
  CHECK(flag && lastused >= other_code, "MPI_LASTUSEDCODE %d", lastused);
  CHECK_OK(MPI_Comm_call_errhandler(c, mycode));
  expect_call(c, myclass, "user code through the handler");

  /* MPI 4.1 removal: a class only without codes, predefined ones never. */
  CHECK_CLASS(MPI_Remove_error_class(myclass), MPI_ERR_ARG);  /* mycode is left */
  CHECK_OK(MPI_Remove_error_string(mycode));
  CHECK_OK(MPI_Error_string(mycode, text, &len));
  CHECK(len == 0, "string removed: \"%s\"", text);
  CHECK_OK(MPI_Remove_error_code(mycode));
  CHECK_CLASS(MPI_Error_class(mycode, &cls), MPI_ERR_ARG);
  CHECK_OK(MPI_Remove_error_class(myclass));
  CHECK_CLASS(MPI_Remove_error_code(MPI_ERR_OTHER), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Remove_error_class(MPI_ERR_OTHER), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Remove_error_string(MPI_ERR_OTHER), MPI_ERR_ARG);
  /* MPICH 4.0's names for the same calls, over many add/remove rounds. */
  for (int round = 0; round < 200; ++round) {
    int k, kc;
    CHECK_OK(MPI_Add_error_class(&k));
    CHECK_OK(MPI_Add_error_code(k, &kc));
    CHECK_OK(MPI_Add_error_string(kc, "sonde test: transient"));
    CHECK_CLASS(MPIX_Delete_error_class(k), MPI_ERR_ARG); /* kc is left */
    CHECK_OK(MPIX_Delete_error_string(kc));
    CHECK_OK(MPIX_Delete_error_code(kc));
    CHECK_CLASS(MPI_Error_class(kc, &cls), MPI_ERR_ARG);
    CHECK_OK(MPIX_Delete_error_class(k));
    CHECK_CLASS(MPI_Add_error_code(k, &kc), MPI_ERR_ARG);
  }
  CHECK_CLASS(MPIX_Delete_error_class(MPI_ERR_OTHER), MPI_ERR_ARG);

  /* Errors. */
  CHECK_CLASS(MPI_Comm_create_errhandler(NULL, &got), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_set_errhandler(c, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM);

  MPI_Comm_free(&s);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  return itest_finish("errhandlers");
}
