/* MPI_Free_mem accepts only what MPI_Alloc_mem returned: a stack address,
 * a malloc'd block, an address inside an allocated block and a block freed
 * already are MPI_ERR_BASE (nothing freed, no crash), and the blocks that
 * are MPI_Alloc_mem's still free normally afterwards. Null is a no-op. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char* a = NULL;
  double* b = NULL;
  CHECK_OK(MPI_Alloc_mem(100, MPI_INFO_NULL, &a));
  CHECK_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &b));
  memset(a, 7, 100);

  int on_stack[4];
  CHECK_CLASS(MPI_Free_mem(on_stack), MPI_ERR_BASE);
  void* from_malloc = malloc(64);
  CHECK_CLASS(MPI_Free_mem(from_malloc), MPI_ERR_BASE);
  free(from_malloc); /* still the program's to free: MPI did not */
  CHECK_CLASS(MPI_Free_mem(a + 16), MPI_ERR_BASE);
  CHECK(a[99] == 7, "a refused MPI_Free_mem touched the block");

  CHECK_OK(MPI_Free_mem(a));
  CHECK_CLASS(MPI_Free_mem(a), MPI_ERR_BASE); /* twice */
  CHECK_OK(MPI_Free_mem(b));
  CHECK_OK(MPI_Free_mem(NULL));

  /* A fresh block at the same address is MPI's again. */
  char* c = NULL;
  CHECK_OK(MPI_Alloc_mem(100, MPI_INFO_NULL, &c));
  CHECK_OK(MPI_Free_mem(c));
  return itest_finish("free_mem_foreign_pointer");
}
