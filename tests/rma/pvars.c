/* MPI_T's RMA performance variables count what the program did:
 * sonde_rma_operations, sonde_rma_bytes and sonde_rma_epochs read through a
 * started handle move by exactly the operations, bytes and epochs issued
 * between start and read. */
#include "tests/integration/itest.h"

static MPI_T_pvar_handle start_pvar(MPI_T_pvar_session s, const char* name, int var_class) {
  int index = -1, count = 0;
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  CHECK_OK(MPI_T_pvar_get_index(name, var_class, &index));
  CHECK_OK(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count));
  CHECK_OK(MPI_T_pvar_start(s, h));
  return h;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int provided = 0, me = itest_rank, n = itest_size;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_T_pvar_session s;
  CHECK_OK(MPI_T_pvar_session_create(&s));
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  MPI_T_pvar_handle ops = start_pvar(s, "sonde_rma_operations", MPI_T_PVAR_CLASS_COUNTER);
  MPI_T_pvar_handle bytes = start_pvar(s, "sonde_rma_bytes", MPI_T_PVAR_CLASS_AGGREGATE);
  MPI_T_pvar_handle epochs = start_pvar(s, "sonde_rma_epochs", MPI_T_PVAR_CLASS_COUNTER);
  int v[4] = {1, 2, 3, 4}, r[4];
  int t = (me + 1) % n;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(v, 4, MPI_INT, t, 0, 4, MPI_INT, win));
  CHECK_OK(MPI_Accumulate(v, 2, MPI_INT, t, 4, 2, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Get(r, 3, MPI_INT, t, 0, 3, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
  CHECK_OK(MPI_Put(v, 1, MPI_INT, t, 8, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(t, win));
  unsigned long long got_ops = 0, got_bytes = 0, got_epochs = 0;
  CHECK_OK(MPI_T_pvar_read(s, ops, &got_ops));
  CHECK_OK(MPI_T_pvar_read(s, bytes, &got_bytes));
  CHECK_OK(MPI_T_pvar_read(s, epochs, &got_epochs));
  CHECK(got_ops == 4, "sonde_rma_operations %llu, want 4", got_ops);
  CHECK(got_bytes == (4 + 2 + 3 + 1) * sizeof(int), "sonde_rma_bytes %llu, want %zu", got_bytes,
        (4 + 2 + 3 + 1) * sizeof(int));
  /* Two fences that closed an epoch (the first opened one) and one unlock. */
  CHECK(got_epochs == 3, "sonde_rma_epochs %llu, want 3", got_epochs);
  MPI_T_pvar_handle_free(s, &ops);
  MPI_T_pvar_handle_free(s, &bytes);
  MPI_T_pvar_handle_free(s, &epochs);
  MPI_T_pvar_session_free(&s);
  CHECK_OK(MPI_Win_free(&win));
  MPI_T_finalize();
  return itest_finish("pvars");
}
