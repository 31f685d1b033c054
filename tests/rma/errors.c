/* Erroneous one-sided calls answer an error class and lose nothing (with
 * MPI_ERRORS_RETURN on the window): an invalid or freed window, operations
 * outside any epoch, displacements past the target's window
 * (MPI_ERR_RMA_RANGE), a negative displacement, a bad target rank, a bad
 * lock type, unlocking what is not locked, a user-defined operation in an
 * accumulate, mismatched basic types (accepted when no byte moves), a
 * dynamic-window access to memory the target never attached (reported by
 * the flush), freeing a window inside an epoch. The window still works
 * afterwards. */
#include "tests/integration/itest.h"

static void my_sum(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)in, (void)inout, (void)len, (void)t;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int me = itest_rank, n = itest_size;
  int x = 1, y = 0;
  CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Win_fence(0, (MPI_Win)12345), MPI_ERR_WIN);

  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < 8; ++i) base[i] = i;
  int t = (me + 1) % n;

  /* No epoch yet. */
  CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Get(&y, 1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_unlock(t, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_lock(12, t, 0, win), MPI_ERR_LOCKTYPE);
  CHECK_CLASS(MPI_Win_fence(1 << 30, win), MPI_ERR_ASSERT);

  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win), MPI_ERR_RMA_SYNC);
  /* Out of range: past the end, straddling the end, negative. */
  CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, t, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  int two[2] = {5, 6};
  CHECK_CLASS(MPI_Put(two, 2, MPI_INT, t, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_CLASS(MPI_Get(&y, 1, MPI_INT, t, -1, 1, MPI_INT, win), MPI_ERR_DISP);
  CHECK_CLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 1000000, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
  CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, n, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Put(&x, -1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Put(&x, 1, MPI_DATATYPE_NULL, t, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
  /* Operations. */
  MPI_Op user;
  MPI_Op_create(my_sum, 1, &user);
  CHECK_CLASS(MPI_Accumulate(&x, 1, MPI_INT, t, 0, 1, MPI_INT, user, win), MPI_ERR_OP);
  MPI_Op_free(&user);
  double d = 1.0;
  CHECK_CLASS(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 0, 2, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Accumulate(&x, 1, MPI_BYTE, t, 0, 1, MPI_BYTE, MPI_SUM, win), MPI_ERR_TYPE);
  /* No bytes, no element to combine: any predefined types and op pass
     (a zero count, or a zero-size type), null buffers included. */
  char none[1] = {0};
  int result = -1;
  CHECK_OK(MPI_Get_accumulate(none, 0, MPI_BYTE, none, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_SUM, win));
  CHECK_OK(MPI_Accumulate(none, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_PROD, win));
  CHECK_OK(MPI_Accumulate(NULL, 0, MPI_INT, t, 0, 0, MPI_DOUBLE, MPI_SUM, win));
  CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, NULL, 0, MPI_DOUBLE, t, 0, 0, MPI_INT, MPI_MAX, win));
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  CHECK_OK(MPI_Accumulate(NULL, 2, empty, t, 0, 1, empty, MPI_SUM, win));
  CHECK_OK(MPI_Get_accumulate(NULL, 1, empty, &result, 0, MPI_INT, t, 0, 3, empty, MPI_SUM, win));
  CHECK(result == -1, "a zero-byte Get_accumulate wrote its result buffer: %d", result);
  MPI_Type_free(&empty);
  /* MPI_PROC_NULL: nothing happens, successfully. */
  CHECK_OK(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 1000, 1, MPI_INT, win));
  /* Freeing inside an epoch. */
  CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
  CHECK(win != MPI_WIN_NULL, "the window stays");
  /* Nothing was lost: a valid put still works. */
  int v = 100 + me;
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, t, 2, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(t, win));
  MPI_Barrier(MPI_COMM_WORLD);
  int from = (me + n - 1) % n;
  CHECK(base[2] == 100 + from && base[7] == 7, "window after errors: [2] = %d, [7] = %d", base[2], base[7]);
  CHECK_OK(MPI_Win_free(&win));
  CHECK_CLASS(MPI_Win_fence(0, win), MPI_ERR_WIN);

  /* Dynamic window: an address the target never attached. */
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int local[4] = {0};
  CHECK_OK(MPI_Win_attach(win, local, sizeof local));
  CHECK_CLASS(MPI_Win_attach(win, local + 1, sizeof(int)), MPI_ERR_RMA_ATTACH);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
  CHECK_OK(MPI_Put(&x, 1, MPI_INT, t, (MPI_Aint)16, 1, MPI_INT, win));
  CHECK_CLASS(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
  int g = -1;
  CHECK_OK(MPI_Get(&g, 1, MPI_INT, t, (MPI_Aint)16, 1, MPI_INT, win));
  CHECK_CLASS(MPI_Win_unlock(t, win), MPI_ERR_RMA_RANGE);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_detach(win, local));
  CHECK_CLASS(MPI_Win_detach(win, local), MPI_ERR_RMA_ATTACH);
  CHECK_OK(MPI_Win_free(&win));

  /* Shared query on a window of another flavor. */
  CHECK_OK(MPI_Win_allocate(4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Aint sz;
  int du;
  void* p;
  CHECK_CLASS(MPI_Win_shared_query(win, 0, &sz, &du, &p), MPI_ERR_RMA_FLAVOR);
  CHECK_OK(MPI_Win_free(&win));
  return itest_finish("errors");
}
