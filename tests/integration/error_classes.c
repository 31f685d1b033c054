/* Bad arguments with MPI_ERRORS_RETURN: each call fails with the right error
 * class, nothing is sent, and the job carries on. MPI_Error_class and
 * MPI_Error_string work for every class.
 */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  int peer = 1 - itest_rank;
  int v = 1, flag, cls = -1;
  MPI_Request r;
  MPI_Status st;
  MPI_Message m;

  /* The default handler on WORLD is MPI_ERRORS_ARE_FATAL. */
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "WORLD's default error handler is %#x", (unsigned)eh);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "set_errhandler did not stick");

  /* Ranks. */
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, itest_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, itest_size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Irecv(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Iprobe(itest_size, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
  /* SELF has rank 0 only; its errors go to SELF's own handler. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
  /* Tags. */
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, peer, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Isend(&v, 1, MPI_INT, peer, -100, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Probe(peer, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Improbe(peer, -20, MPI_COMM_WORLD, &flag, &m, &st), MPI_ERR_TAG);
  /* Counts. */
  CHECK_CLASS(MPI_Send(&v, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Irecv(&v, -2, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  /* Datatypes. */
  CHECK_CLASS(MPI_Send(&v, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(&v, 1, (MPI_Datatype)0x12345, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(&v, 1, MPI_COMM_WORLD /* a handle of another kind */, peer, 0, MPI_COMM_WORLD),
              MPI_ERR_TYPE);
  MPI_Datatype vec;
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
  CHECK_CLASS(MPI_Send(&v, 1, vec, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
  MPI_Datatype stale_type = vec;
  CHECK_OK(MPI_Type_free(&vec));
  CHECK_CLASS(MPI_Send(&v, 1, stale_type, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* freed */
  CHECK_CLASS(MPI_Type_commit(&stale_type), MPI_ERR_TYPE);
  MPI_Datatype predefined = MPI_INT;
  CHECK_CLASS(MPI_Type_free(&predefined), MPI_ERR_TYPE);
  /* Communicators. */
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, peer, 0, (MPI_Comm)0x10000777), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, peer, 0, MPI_INT /* another kind */, &st), MPI_ERR_COMM);
  int size;
  CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &size), MPI_ERR_COMM);
  /* Requests. */
  MPI_Request bogus = (MPI_Request)0x40000999;
  CHECK_CLASS(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Test(&bogus, &flag, &st), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
  MPI_Request arr[2] = {MPI_REQUEST_NULL, (MPI_Request)MPI_COMM_WORLD};
  CHECK_CLASS(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  MPI_Request null_req = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Start(&null_req), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Request_free(&null_req), MPI_ERR_REQUEST);
  /* A request handle that was valid and has been freed (stale generation;
   * Sonde's index+generation handles detect it, see ARCHITECTURE.md). */
  CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, &r));
  MPI_Request stale = r;
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_CLASS(MPI_Wait(&stale, &st), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Cancel(&stale), MPI_ERR_REQUEST);
  /* Error handler argument: MPI 4.1 has MPI_ERR_ERRHANDLER; MPI_ERR_ARG is
   * what older implementations say. */
  int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)0x60000999);
  MPI_Error_class(rc, &cls);
#ifndef MPI_ERR_ERRHANDLER
#define MPI_ERR_ERRHANDLER MPI_ERR_ARG
#endif
  CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_ERRHANDLER || cls == MPI_ERR_ARG), "bad errhandler: class %d", cls);

  /* A dup inherits ERRORS_RETURN; errors on it go to its own handler. */
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 99, 0, dup), MPI_ERR_RANK);

  /* Error classes and strings. */
  char s1[MPI_MAX_ERROR_STRING], s2[MPI_MAX_ERROR_STRING];
  int len1 = -1, len2 = -1;
  const int classes[] = {MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM,
                         MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
                         MPI_ERR_IN_STATUS, MPI_ERR_ARG};
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; ++i) {
    CHECK_OK(MPI_Error_class(classes[i], &cls));
    CHECK(cls == classes[i], "Error_class(%d) = %d", classes[i], cls);
    CHECK_OK(MPI_Error_string(classes[i], s1, &len1));
    CHECK(len1 > 0 && len1 < MPI_MAX_ERROR_STRING && (int)strlen(s1) == len1, "Error_string(%d): len %d '%s'",
          classes[i], len1, s1);
    if (i > 0) {
      CHECK_OK(MPI_Error_string(classes[i - 1], s2, &len2));
      CHECK(strcmp(s1, s2) != 0, "classes %d and %d share the string '%s'", classes[i - 1], classes[i], s1);
    }
  }
  MPI_Error_string(MPI_ERR_TRUNCATE, s1, &len1);
  CHECK(strstr(s1, "runcat") != NULL, "MPI_ERR_TRUNCATE string is '%s'", s1);

  /* Nothing was sent by the failed calls, and the job still works. */
  int token = 100 + itest_rank, got = -1;
  CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, peer, 3, &got, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &st));
  CHECK(got == 100 + peer, "exchange after errors got %d", got);
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(!flag, "a failed call sent a message (tag %d)", st.MPI_TAG);
  CHECK_OK(MPI_Comm_free(&dup));

  /* Calls outside Init/Finalize are answered by the fatal handler; only the
   * ones MPI allows are tried here. */
  int fin = 1;
  CHECK_OK(MPI_Finalized(&fin));
  CHECK(fin == 0, "Finalized says %d before MPI_Finalize", fin);
  return itest_finish("error_classes");
}
