/* A keyval freed while attributes still use it stays alive for them, and
 * freeing it again meanwhile (through another copy of the handle, or from
 * its own delete callback) succeeds without effect; once its last attribute
 * is deleted it is gone and a free answers MPI_ERR_KEYVAL. Communicator and
 * datatype keyvals, MPI-1 names too. 1..2 ranks (all local). */
#include "tests/integration/itest.h"

static int g_deletes = 0;     /* delete callbacks run */
static int g_free_rc = -1;    /* what the callback's own free returned */

static int comm_delete(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)c, (void)value, (void)extra;
  ++g_deletes;
  g_free_rc = MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

static int old_delete(MPI_Comm c, int keyval, void* value, void* extra) {
  (void)c, (void)value, (void)extra;
  ++g_deletes;
  g_free_rc = MPI_Keyval_free(&keyval);
  return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)t, (void)value, (void)extra;
  ++g_deletes;
  g_free_rc = MPI_Type_free_keyval(&keyval);
  return MPI_SUCCESS;
}

/* The keyval_double_free pattern on communicators: a keyval whose delete
 * callback frees it. */
static void comm_case(int use_old_names) {
  const char* what = use_old_names ? "Keyval_free" : "Comm_free_keyval";
  MPI_Comm dup;
  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_dup(MPI_COMM_SELF, &dup);
  if (use_old_names) CHECK_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, old_delete, &key, NULL));
  else CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &key, NULL));
  int copy1 = key, copy2 = key, copy3 = key;
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, key, (void*)1));
  CHECK_OK(MPI_Comm_set_attr(dup, key, (void*)2));
  g_deletes = 0;
  g_free_rc = -1;
  CHECK_OK(MPI_Comm_free(&dup)); /* the callback frees the keyval: the first free */
  CHECK(g_deletes == 1 && g_free_rc == MPI_SUCCESS, "%s: %d deletes, free in callback gave %d", what, g_deletes,
        g_free_rc);
  /* Freed, but MPI_COMM_SELF's attribute still uses it. */
  void* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_SELF, copy1, &v, &flag));
  CHECK(flag && v == (void*)1, "%s: attribute of a freed keyval lost (flag %d)", what, flag);
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_SELF, copy1, (void*)3), MPI_ERR_KEYVAL); /* no new attributes */
  CHECK_OK(use_old_names ? MPI_Keyval_free(&key) : MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID, "%s: second free left the handle %d", what, key);
  CHECK_OK(use_old_names ? MPI_Keyval_free(&copy1) : MPI_Comm_free_keyval(&copy1));
  CHECK(copy1 == MPI_KEYVAL_INVALID, "%s: third free left the handle %d", what, copy1);
  /* The last attribute goes: its callback's free still succeeds, then the keyval is gone. */
  g_deletes = 0;
  g_free_rc = -1;
  CHECK_OK(MPI_Comm_delete_attr(MPI_COMM_SELF, copy2));
  CHECK(g_deletes == 1 && g_free_rc == MPI_SUCCESS, "%s: last delete: %d deletes, free gave %d", what, g_deletes,
        g_free_rc);
  CHECK_CLASS(use_old_names ? MPI_Keyval_free(&copy3) : MPI_Comm_free_keyval(&copy3), MPI_ERR_KEYVAL);
  CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_SELF, copy3, &v, &flag), MPI_ERR_KEYVAL);
}

static void type_case(void) {
  MPI_Datatype t1, t2;
  MPI_Type_contiguous(2, MPI_INT, &t1);
  MPI_Type_dup(MPI_INT, &t2);
  int key = MPI_KEYVAL_INVALID;
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &key, NULL));
  int copy1 = key, copy2 = key;
  CHECK_OK(MPI_Type_set_attr(t1, key, NULL));
  CHECK_OK(MPI_Type_set_attr(t2, key, NULL));
  g_deletes = 0;
  g_free_rc = -1;
  CHECK_OK(MPI_Type_free(&t2));
  CHECK(g_deletes == 1 && g_free_rc == MPI_SUCCESS, "type: %d deletes, free in callback gave %d", g_deletes,
        g_free_rc);
  CHECK_OK(MPI_Type_free_keyval(&key));
  CHECK_OK(MPI_Type_free_keyval(&copy1));
  CHECK(key == MPI_KEYVAL_INVALID && copy1 == MPI_KEYVAL_INVALID, "type: handles left %d %d", key, copy1);
  g_deletes = 0;
  CHECK_OK(MPI_Type_free(&t1));
  CHECK(g_deletes == 1 && g_free_rc == MPI_SUCCESS, "type: last delete: %d deletes, free gave %d", g_deletes,
        g_free_rc);
  CHECK_CLASS(MPI_Type_free_keyval(&copy2), MPI_ERR_KEYVAL);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  comm_case(0);
  comm_case(1);
  type_case();
  return itest_finish("keyval_free_in_use");
}
