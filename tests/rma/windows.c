/* Windows as objects: the predefined attributes of each flavor, user
 * attributes with copy/delete callbacks, names, info hints, error handlers
 * (create/set/get/call, invoked with the window), MPI_Win_get_group;
 * dynamic windows (attach, put/get at absolute addresses, detach); shared
 * windows (one segment: direct loads and stores between the ranks,
 * MPI_Win_shared_query, contiguous parts). */
#include "tests/integration/itest.h"

static int handler_calls = 0, handler_code = 0;
static MPI_Win handler_win = MPI_WIN_NULL;
static void win_handler(MPI_Win* win, int* code, ...) {
  ++handler_calls;
  handler_win = *win;
  handler_code = *code;
}

static int deleted = 0;
static int del_fn(MPI_Win win, int key, void* val, void* extra) {
  (void)win, (void)key, (void)extra;
  deleted += (int)(intptr_t)val;
  return MPI_SUCCESS;
}

static void check_attrs(MPI_Win win, void* base, MPI_Aint size, int unit, int flavor) {
  void* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
  CHECK(flag && v == base, "MPI_WIN_BASE %p, want %p", v, base);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
  CHECK(flag && *(MPI_Aint*)v == size, "MPI_WIN_SIZE %ld, want %ld", (long)*(MPI_Aint*)v, (long)size);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
  CHECK(flag && *(int*)v == unit, "MPI_WIN_DISP_UNIT %d", *(int*)v);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
  CHECK(flag && *(int*)v == flavor, "MPI_WIN_CREATE_FLAVOR %d, want %d", *(int*)v, flavor);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
  CHECK(flag && *(int*)v == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *(int*)v);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  MPI_Win win;

  /* Flavors and their attributes. */
  int buf[8];
  CHECK_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_attrs(win, buf, sizeof buf, sizeof(int), MPI_WIN_FLAVOR_CREATE);

  /* Names. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_OK(MPI_Win_get_name(win, name, &len));
  CHECK(len == 0 && name[0] == 0, "unnamed window: '%s'", name);
  CHECK_OK(MPI_Win_set_name(win, "halo"));
  CHECK_OK(MPI_Win_get_name(win, name, &len));
  CHECK(len == 4 && strcmp(name, "halo") == 0, "name '%s'", name);

  /* Info. */
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  CHECK_OK(MPI_Win_set_info(win, info));
  CHECK_OK(MPI_Win_get_info(win, &used));
  char value[MPI_MAX_INFO_VAL];
  int flag = 0;
  MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL - 1, value, &flag);
  CHECK(flag && strcmp(value, "true") == 0, "info hint kept");
  MPI_Info_free(&used);
  MPI_Info_free(&info);

  /* User attributes: delete callback runs at free. */
  int key = MPI_KEYVAL_INVALID;
  CHECK_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL));
  CHECK_OK(MPI_Win_set_attr(win, key, (void*)(intptr_t)5));
  void* got = NULL;
  CHECK_OK(MPI_Win_get_attr(win, key, &got, &flag));
  CHECK(flag && got == (void*)(intptr_t)5, "user attribute");

  /* Group. */
  MPI_Group g, wg;
  int cmp = -1;
  CHECK_OK(MPI_Win_get_group(win, &g));
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_compare(g, wg, &cmp);
  CHECK(cmp == MPI_IDENT, "window group compares %d", cmp);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);

  /* Error handlers: the default is fatal; a user handler sees the window. */
  MPI_Errhandler eh, cur;
  CHECK_OK(MPI_Win_get_errhandler(win, &cur));
  CHECK(cur == MPI_ERRORS_ARE_FATAL, "default window handler %x", (unsigned)cur);
  CHECK_OK(MPI_Win_create_errhandler(win_handler, &eh));
  CHECK_OK(MPI_Win_set_errhandler(win, eh));
  int x = 0;
  int rc = MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* no epoch */
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_SYNC && handler_calls == 1 && handler_win == win, "handler: %d calls, class %d",
        handler_calls, cls);
  CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler: %d calls", handler_calls);
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK_OK(MPI_Errhandler_free(&cur));
  CHECK_OK(MPI_Win_free(&win));
  CHECK(deleted == 5, "delete callback ran: %d", deleted);
  CHECK_OK(MPI_Win_free_keyval(&key));

  /* Allocate. */
  int* mem = NULL;
  CHECK_OK(MPI_Win_allocate(0, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  CHECK_OK(MPI_Win_free(&win));
  CHECK_OK(MPI_Win_allocate(40, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  check_attrs(win, mem, 40, 4, MPI_WIN_FLAVOR_ALLOCATE);
  CHECK_OK(MPI_Win_free(&win));

  /* Dynamic: every rank attaches a buffer and shares its address. */
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int* dyn = calloc(16, sizeof(int));
  CHECK_OK(MPI_Win_attach(win, dyn, 16 * sizeof(int)));
  MPI_Aint mine, *addrs = malloc(n * sizeof(MPI_Aint));
  MPI_Get_address(dyn, &mine);
  MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  int t = (me + 1) % n, v = 70 + me, back = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, t, addrs[t] + 3 * sizeof(int), 1, MPI_INT, win));
  CHECK_OK(MPI_Get(&back, 1, MPI_INT, t, addrs[t] + 3 * sizeof(int), 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(t, win));
  CHECK(back == v, "dynamic get after put: %d", back);
  MPI_Barrier(MPI_COMM_WORLD);
  int from = (me + n - 1) % n;
  CHECK(dyn[3] == 70 + from, "dynamic put arrived: %d, want %d", dyn[3], 70 + from);
  CHECK_OK(MPI_Win_detach(win, dyn));
  CHECK_OK(MPI_Win_free(&win));
  free(dyn);
  free(addrs);

  /* Shared: parts of 2 + rank ints, contiguous; direct stores and loads. */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nr, nn;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &nn);
  int* part = NULL;
  CHECK_OK(MPI_Win_allocate_shared((2 + nr) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &part, &win));
  check_attrs(win, part, (2 + nr) * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_SHARED);
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < 2 + nr; ++i) part[i] = nr * 10 + i;
  CHECK_OK(MPI_Win_sync(win));
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_sync(win));
  for (int r = 0; r < nn; ++r) {
    MPI_Aint sz = -1;
    int du = -1;
    int* p = NULL;
    CHECK_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
    CHECK(sz == (MPI_Aint)((2 + r) * sizeof(int)) && du == sizeof(int), "shared_query %d: size %ld", r, (long)sz);
    for (int i = 0; i < 2 + r; ++i) CHECK(p && p[i] == r * 10 + i, "load from %d's part [%d]", r, i);
    if (r > 0) {
      int* prevp = NULL;
      MPI_Win_shared_query(win, r - 1, &sz, &du, &prevp);
      CHECK(prevp + (2 + r - 1) == p, "parts are contiguous");
    }
  }
  /* A put through RMA lands in the same memory (once everyone has read). */
  MPI_Barrier(node);
  int pv = -3;
  CHECK_OK(MPI_Put(&pv, 1, MPI_INT, (nr + 1) % nn, 0, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_flush_all(win));
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_sync(win));
  CHECK(part[0] == -3, "put into a shared window: %d", part[0]);
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK_OK(MPI_Win_free(&win));
  MPI_Comm_free(&node);
  return itest_finish("windows");
}
