/* Generalized requests: query then free on Wait/Test/Waitall, query alone
 * on Request_get_status, cancel_fn with the completion state, Request_free
 * before completion, errors from query_fn; the status setters; Alloc_mem. */
#include "tests/integration/itest.h"

static char events[512];
static void record(const char* what) {
  size_t n = strlen(events);
  snprintf(events + n, sizeof events - n, "%s%s", n ? " " : "", what);
}
static void expect_events(const char* want, const char* what) {
  CHECK(strcmp(events, want) == 0, "%s: events \"%s\", want \"%s\"", what, events, want);
  events[0] = '\0';
}

struct state {
  int query_rc;
  int cancelled;
};

static int query(void* extra, MPI_Status* status) {
  struct state* s = extra;
  record("query");
  MPI_Status_set_elements(status, MPI_INT, 3);
  MPI_Status_set_cancelled(status, s->cancelled);
  status->MPI_SOURCE = 4;
  status->MPI_TAG = 9;
  return s->query_rc;
}
static int free_fn(void* extra) {
  record("free");
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  struct state* s = extra;
  record(complete ? "cancel(complete)" : "cancel(pending)");
  if (!complete) s->cancelled = 1;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  struct state st = {MPI_SUCCESS, 0};
  MPI_Request r;
  MPI_Status status;
  int flag = -1, count = -1;

  /* Test before and after completion. */
  CHECK_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &st, &r));
  CHECK_OK(MPI_Test(&r, &flag, &status));
  CHECK(flag == 0, "incomplete grequest tested complete");
  expect_events("", "test of a pending grequest");
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_OK(MPI_Request_get_status(r, &flag, &status));
  CHECK(flag == 1, "get_status after complete");
  expect_events("query", "get_status queries only");
  CHECK_OK(MPI_Test(&r, &flag, &status));
  CHECK(flag == 1 && r == MPI_REQUEST_NULL, "test retires it");
  expect_events("query free", "test");
  CHECK_OK(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 3 && status.MPI_SOURCE == 4 && status.MPI_TAG == 9, "status from query: %d %d %d", count,
        status.MPI_SOURCE, status.MPI_TAG);
  CHECK_OK(MPI_Get_elements(&status, MPI_INT, &count));
  CHECK(count == 3, "elements %d", count);

  /* Cancel while pending, then Wait. */
  CHECK_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &st, &r));
  CHECK_OK(MPI_Cancel(&r));
  expect_events("cancel(pending)", "cancel");
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_OK(MPI_Wait(&r, &status));
  expect_events("query free", "wait");
  CHECK_OK(MPI_Test_cancelled(&status, &flag));
  CHECK(flag == 1, "query set cancelled");
  st.cancelled = 0;

  /* Waitall with a grequest and an ordinary receive from ourselves. */
  MPI_Request two[2];
  int x = 5, y = 0;
  CHECK_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &st, &two[0]));
  CHECK_OK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_SELF, &two[1]));
  CHECK_OK(MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_SELF));
  CHECK_OK(MPI_Grequest_complete(two[0]));
  MPI_Status sts[2];
  CHECK_OK(MPI_Waitall(2, two, sts));
  expect_events("query free", "waitall");
  CHECK(y == 5 && two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL, "waitall");

  /* Request_free before completion: free_fn runs at completion. */
  CHECK_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &st, &r));
  MPI_Request keep = r;
  CHECK_OK(MPI_Request_free(&r));
  expect_events("", "request_free of a pending grequest");
  CHECK_OK(MPI_Grequest_complete(keep));
  expect_events("free", "complete after free");

  /* An error from query_fn is the wait's error. */
  st.query_rc = MPI_ERR_OTHER;
  CHECK_OK(MPI_Grequest_start(query, free_fn, cancel_fn, &st, &r));
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_CLASS(MPI_Wait(&r, &status), MPI_ERR_OTHER);
  expect_events("query free", "failing query");
  st.query_rc = MPI_SUCCESS;

  /* Errors. */
  CHECK_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Grequest_complete(keep), MPI_ERR_REQUEST);  /* gone */
  CHECK_CLASS(MPI_Grequest_start(query, free_fn, cancel_fn, &st, NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_set_elements(&status, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_set_elements(&status, MPI_INT, -1), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Status_set_cancelled(NULL, 1), MPI_ERR_ARG);
  MPI_Count big = -1;
  CHECK_OK(MPI_Status_set_elements_x(&status, MPI_DOUBLE, (MPI_Count)1 << 33));
  CHECK_OK(MPI_Get_elements_x(&status, MPI_DOUBLE, &big));
  CHECK(big == (MPI_Count)1 << 33, "elements_x %lld", big);

  /* Alloc_mem / Free_mem. */
  unsigned char* mem = NULL;
  CHECK_OK(MPI_Alloc_mem(1000, MPI_INFO_NULL, &mem));
  CHECK(mem != NULL && ((uintptr_t)mem % 64) == 0, "aligned allocation");
  if (mem) {
    itest_fill(mem, 1000, 3);
    CHECK(itest_verify(mem, 1000, 3) < 0, "memory usable");
    CHECK_OK(MPI_Free_mem(mem));
  }
  CHECK_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &mem), MPI_ERR_SIZE);
  return itest_finish("grequest");
}
