/* MPI_Sendrecv_replace with count 0 is legal and must not touch memory.
 *
 * PMPI_Sendrecv_replace (binding/c/abi_sendrecv.cc) packs into a buffer of
 * count * size bytes, which is empty here; pack() (datatype/pack.cc) must not
 * pass its null data pointer to memcpy. Under --config=ubsan a memcpy from or
 * to a null pointer ends the rank, so this test fails there if it does.
 */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int v = 7;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv_replace(&v, 0, MPI_INT, 0, 1, 0, 1, MPI_COMM_SELF, &st));
  CHECK_STATUS(&st, 0, 1, 0, "Sendrecv_replace of 0 ints to self");
  CHECK(v == 7, "a 0-count Sendrecv_replace changed the buffer to %d", v);
  return itest_finish("sendrecv_replace_zero_count");
}
