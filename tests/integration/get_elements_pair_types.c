/* Regression test (an engine bug the integration tests found; fixed in
 * dea3d1a).
 *
 * MPI_Get_elements on a message of pair types counts two basic elements per
 * pair: 3 x MPI_DOUBLE_INT is 6 elements (Debian's MPICH says 6).
 *
 * A pair type's basic size is its padded struct (16 for double+int) while its
 * size is the packed 12 bytes, so counting elements as size / basic size
 * would answer 0 for MPI_DOUBLE_INT and MPI_SHORT_INT (and MPI_LONG_INT,
 * MPI_LONG_DOUBLE_INT); MPI_Get_elements must count each pair as 2.
 */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 1, "runs on 1 rank");
  struct {
    double d;
    int i;
  } in[3] = {{1, 1}, {2, 2}, {3, 3}}, out[3];
  MPI_Status st;
  int count = -1;
  MPI_Request r;
  CHECK_OK(MPI_Irecv(out, 3, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &r));
  CHECK_OK(MPI_Send(in, 3, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF));
  CHECK_OK(MPI_Wait(&r, &st));
  MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
  CHECK(count == 3, "Get_count(MPI_DOUBLE_INT) %d, want 3", count);
  MPI_Get_elements(&st, MPI_DOUBLE_INT, &count);
  CHECK(count == 6, "Get_elements(MPI_DOUBLE_INT) %d, want 6", count);
  return itest_finish("get_elements_pair_types");
}
