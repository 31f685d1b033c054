/* Minimal reproducer (ENGINE BUG, visible under --config=ubsan only).
 *
 * MPI_Sendrecv_replace with count 0 is legal and must not touch memory.
 *
 * Sonde today: PMPI_Sendrecv_replace (engine/abi_p2p.cc) packs into
 * std::vector<uint8_t> copy(count * size), whose data() is nullptr when the
 * size is 0, and pack() (engine/datatype.cc, contiguous branch) then calls
 * memcpy(nullptr, ..., 0): undefined behaviour that UBSan reports as "null
 * pointer passed as argument 1" and, with -fno-sanitize-recover, ends the
 * rank. An ordinary build passes. Suspected fix: return early from
 * pack()/unpack() when n == 0.
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
