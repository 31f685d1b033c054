/* Attribute caching on communicators and datatypes: copy callbacks on
 * dup/dup_with_info/idup, delete callbacks on replace/delete/free (newest
 * first) and on MPI_COMM_SELF first at MPI_Finalize, keyvals freed while
 * attached, failing callbacks, predefined attributes of MPI_COMM_WORLD, the
 * MPI-1 names, and the error paths. */
#include "tests/integration/itest.h"

/* Every callback appends one event "<c|d><keyval tag>:<value>" here. */
static char events[4096];
static void record(char kind, int tag, long value) {
  size_t n = strlen(events);
  snprintf(events + n, sizeof events - n, "%s%c%d:%ld", n ? " " : "", kind, tag, value);
}
static void expect_events(const char* want, const char* what) {
  CHECK(strcmp(events, want) == 0, "%s: events \"%s\", want \"%s\"", what, events, want);
  events[0] = '\0';
}

/* extra_state carries the keyval's tag (1, 2, 3...) so events name it. */
static int copy_times10(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  record('c', (int)(intptr_t)extra, (long)(intptr_t)in);
  *(void**)out = (void*)((intptr_t)in * 10);
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_record(MPI_Comm comm, int keyval, void* value, void* extra) {
  record('d', (int)(intptr_t)extra, (long)(intptr_t)value);
  return MPI_SUCCESS;
}
static int copy_fails(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  record('c', (int)(intptr_t)extra, (long)(intptr_t)in);
  return MPI_ERR_OTHER;
}
static int delete_fails(MPI_Comm comm, int keyval, void* value, void* extra) {
  record('d', (int)(intptr_t)extra, (long)(intptr_t)value);
  return MPI_ERR_OTHER;
}
static int type_delete_record(MPI_Datatype t, int keyval, void* value, void* extra) {
  record('t', (int)(intptr_t)extra, (long)(intptr_t)value);
  return MPI_SUCCESS;
}

/* Finalize: MPI_COMM_SELF's callbacks run first and MPI is still usable. */
static int finalize_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  int finalized = 1;
  MPI_Finalized(&finalized);
  record(comm == MPI_COMM_SELF ? 's' : 'w', (int)(intptr_t)extra, finalized);
  return MPI_SUCCESS;
}

static long get_long(MPI_Comm comm, int keyval, int* flag) {
  void* v = NULL;
  *flag = -1;
  CHECK_OK(MPI_Comm_get_attr(comm, keyval, &v, flag));
  return (long)(intptr_t)v;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm c, d;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);

  int k1, k2, k3;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_record, &k1, (void*)1));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_record, &k2, (void*)2));
  CHECK_OK(MPI_Comm_create_keyval(copy_times10, delete_record, &k3, (void*)3));
  CHECK(k1 != k2 && k2 != k3 && k1 != MPI_KEYVAL_INVALID, "distinct keyvals");
  CHECK_OK(MPI_Comm_set_attr(c, k3, (void*)7));
  CHECK_OK(MPI_Comm_set_attr(c, k1, (void*)5));
  CHECK_OK(MPI_Comm_set_attr(c, k2, (void*)6));
  int flag;
  CHECK(get_long(c, k3, &flag) == 7 && flag == 1, "k3 on c");
  expect_events("", "set calls nothing");

  /* Replacing runs the old value's delete callback. */
  CHECK_OK(MPI_Comm_set_attr(c, k3, (void*)8));
  expect_events("d3:7", "replace");

  /* dup: copies in set order; k2 (null copy) stays behind. */
  CHECK_OK(MPI_Comm_dup(c, &d));
  expect_events("c3:8", "dup");
  CHECK(get_long(d, k1, &flag) == 5 && flag, "k1 copied by MPI_COMM_DUP_FN");
  get_long(d, k2, &flag);
  CHECK(flag == 0, "k2 not copied");
  CHECK(get_long(d, k3, &flag) == 80 && flag, "k3 copied by callback");
  /* Free: newest first (k3 was set after k1 on the copy: k3's copy came first
   * in set order k3, k1 -> newest is k1). */
  CHECK_OK(MPI_Comm_free(&d));
  expect_events("d1:5 d3:80", "free of dup");

  /* dup_with_info and idup copy too. */
  CHECK_OK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d));
  expect_events("c3:8", "dup_with_info");
  CHECK_OK(MPI_Comm_free(&d));
  expect_events("d1:5 d3:80", "free of dup_with_info");
  MPI_Request req;
  CHECK_OK(MPI_Comm_idup(c, &d, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  expect_events("c3:8", "idup");
  CHECK(get_long(d, k3, &flag) == 80 && flag, "k3 on idup");
  CHECK_OK(MPI_Comm_free(&d));
  expect_events("d1:5 d3:80", "free of idup");

  /* split does not copy attributes. */
  CHECK_OK(MPI_Comm_split(c, 0, 0, &d));
  get_long(d, k1, &flag);
  CHECK(flag == 0, "split copied an attribute");
  CHECK_OK(MPI_Comm_free(&d));
  expect_events("", "split/free");

  /* delete_attr. */
  CHECK_OK(MPI_Comm_delete_attr(c, k2));
  expect_events("d2:6", "delete_attr");
  get_long(c, k2, &flag);
  CHECK(flag == 0, "deleted attribute still there");
  CHECK_CLASS(MPI_Comm_delete_attr(c, k2), MPI_ERR_KEYVAL);

  /* A keyval freed while attached stays valid for that attribute. */
  int k3_copy = k3;
  CHECK_OK(MPI_Comm_free_keyval(&k3));
  CHECK(k3 == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
  CHECK_CLASS(MPI_Comm_set_attr(c, k3_copy, (void*)1), MPI_ERR_KEYVAL);
  CHECK_OK(MPI_Comm_dup(c, &d));  /* the freed keyval's copy callback still runs */
  expect_events("c3:8", "dup after keyval free");
  CHECK_OK(MPI_Comm_free(&d));
  expect_events("d1:5 d3:80", "free after keyval free");

  /* Failing callbacks: the dup fails and leaves nothing; the delete error
   * reaches the caller. */
  int kf, kd;
  CHECK_OK(MPI_Comm_create_keyval(copy_fails, delete_record, &kf, (void*)4));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fails, &kd, (void*)5));
  CHECK_OK(MPI_Comm_set_attr(c, kf, (void*)9));
  d = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(c, &d);
  CHECK(rc != MPI_SUCCESS && d == MPI_COMM_NULL, "dup with failing copy: rc %d", rc);
  expect_events("c3:8 c4:9 d1:5 d3:80", "failed dup cleans up");
  CHECK_OK(MPI_Comm_delete_attr(c, kf));
  expect_events("d4:9", "delete kf");
  CHECK_OK(MPI_Comm_set_attr(c, kd, (void*)11));
  rc = MPI_Comm_delete_attr(c, kd);
  CHECK(rc != MPI_SUCCESS, "failing delete callback reported");
  expect_events("d5:11", "failing delete");

  /* Predefined attributes of MPI_COMM_WORLD. */
  int* p = NULL;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
  CHECK(flag && p && *p >= 32767, "MPI_TAG_UB");
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
  CHECK(flag && p && (*p == MPI_PROC_NULL || (*p >= 0 && *p < itest_size)), "MPI_HOST");
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag));
  CHECK(flag && p && (*p == MPI_ANY_SOURCE || *p == MPI_PROC_NULL || (*p >= 0 && *p < itest_size)), "MPI_IO");
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
  CHECK(flag && p && (*p == 0 || *p == 1), "MPI_WTIME_IS_GLOBAL");
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
  CHECK(flag && p && *p >= itest_size, "MPI_UNIVERSE_SIZE");
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
  CHECK(!flag || (p && *p == 0), "MPI_APPNUM of a single-app job");
  CHECK_OK(MPI_Comm_get_attr(c, MPI_TAG_UB, &p, &flag));
  CHECK(flag == 0, "MPI_TAG_UB on a duplicate");
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void*)1), MPI_ERR_KEYVAL);
  CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);

  /* The MPI-1 names. */
  int old;
  CHECK_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &old, NULL));
  CHECK_OK(MPI_Attr_put(c, old, (void*)42));
  void* v = NULL;
  CHECK_OK(MPI_Attr_get(c, old, &v, &flag));
  CHECK(flag && v == (void*)42, "Attr_get");
  CHECK_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
  CHECK(flag && *p >= 32767, "Attr_get MPI_TAG_UB");
  CHECK_OK(MPI_Attr_delete(c, old));
  CHECK_OK(MPI_Keyval_free(&old));
  CHECK(old == MPI_KEYVAL_INVALID, "Keyval_free");

  /* Datatype attributes. */
  int tk;
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete_record, &tk, (void*)6));
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_INT, &t);
  CHECK_OK(MPI_Type_set_attr(t, tk, (void*)12));
  CHECK_OK(MPI_Type_get_attr(t, tk, &v, &flag));
  CHECK(flag && v == (void*)12, "type attribute");
  CHECK_OK(MPI_Type_set_attr(MPI_DOUBLE, tk, (void*)13));
  CHECK_OK(MPI_Type_delete_attr(MPI_DOUBLE, tk));
  expect_events("t6:13", "type delete_attr");
  /* Type_dup runs the copy callbacks: MPI_TYPE_DUP_FN copies, null copy not. */
  int tk2;
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_record, &tk2, (void*)7));
  CHECK_OK(MPI_Type_set_attr(t, tk2, (void*)14));
  MPI_Datatype t2;
  CHECK_OK(MPI_Type_dup(t, &t2));
  CHECK_OK(MPI_Type_get_attr(t2, tk2, &v, &flag));
  CHECK(flag && v == (void*)14, "Type_dup copied with MPI_TYPE_DUP_FN");
  CHECK_OK(MPI_Type_get_attr(t2, tk, &v, &flag));
  CHECK(flag == 0, "Type_dup copied a null-copy attribute");
  CHECK_OK(MPI_Type_free(&t2));
  expect_events("t7:14", "free of the dup type");
  CHECK_OK(MPI_Type_free(&t));
  expect_events("t7:14 t6:12", "type free");
  CHECK_OK(MPI_Type_free_keyval(&tk2));
  CHECK_CLASS(MPI_Type_set_attr(MPI_INT, k1, (void*)1), MPI_ERR_KEYVAL);  /* a comm keyval */
  CHECK_CLASS(MPI_Comm_set_attr(c, tk, (void*)1), MPI_ERR_KEYVAL);        /* a type keyval */
  CHECK_CLASS(MPI_Type_get_attr(MPI_DATATYPE_NULL, tk, &v, &flag), MPI_ERR_TYPE);
  CHECK_OK(MPI_Type_free_keyval(&tk));

  /* Errors. */
  CHECK_CLASS(MPI_Comm_get_attr(c, 987654, &v, &flag), MPI_ERR_KEYVAL);
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, k1, (void*)1), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_get_attr(c, k1, NULL, &flag), MPI_ERR_ARG);
  /* k3 is freed but c's attribute still uses it: another free is a no-op. */
  CHECK_OK(MPI_Comm_free_keyval(&k3_copy));
  CHECK(k3_copy == MPI_KEYVAL_INVALID, "second free_keyval resets the handle");
  CHECK_CLASS(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL), MPI_ERR_ARG);

  /* kd's failing delete callback (the newest attribute) fails the free,
   * which keeps the communicator usable. */
  rc = MPI_Comm_free(&c);
  CHECK(rc != MPI_SUCCESS && c != MPI_COMM_NULL, "free with a failing delete callback: rc %d", rc);
  expect_events("d5:11", "failed free");
  int size = 0;
  CHECK_OK(MPI_Comm_size(c, &size));
  CHECK(size == itest_size, "communicator kept");

  /* Finalize order: SELF's attributes (newest first), then WORLD's. */
  int s1, s2, w1;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &s1, (void*)1);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &s2, (void*)2);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &w1, (void*)3);
  MPI_Comm_set_attr(MPI_COMM_WORLD, w1, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, s1, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, s2, NULL);
  MPI_Comm_free_keyval(&s1);  /* still runs at finalize */
  int failures = itest_failures;
  MPI_Finalize();
  if (strcmp(events, "s2:0 s1:0 w3:0") != 0) {
    fprintf(stderr, "[rank %d] finalize events \"%s\", want \"s2:0 s1:0 w3:0\"\n", itest_rank, events);
    ++failures;
  }
  if (failures) {
    fprintf(stderr, "[rank %d] attr_callbacks: %d check(s) failed\n", itest_rank, failures);
    return 1;
  }
  if (itest_rank == 0) printf("attr_callbacks: rank 0 passed (%d ranks)\n", itest_size);
  return 0;
}
