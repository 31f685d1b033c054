/* A message longer than a non-contiguous receive: MPI_ERR_TRUNCATE, the
 * part that fits lands in the typemap exactly, and neither the gaps nor
 * anything past the receive's last block is written. Sizes cover eager and
 * rendezvous; the BUILD file repeats it on each transport path.
 */
#include "tests/integration/itest.h"

static void one(int blocks, int send_ints, int tag) {
  MPI_Datatype v; /* blocks of 2 ints, stride 3 ints */
  CHECK_OK(MPI_Type_vector(blocks, 2, 3, MPI_INT, &v));
  CHECK_OK(MPI_Type_commit(&v));
  if (itest_rank == 0) {
    int* src = malloc(sizeof(int) * (size_t)send_ints);
    for (int i = 0; i < send_ints; ++i) src[i] = i + 1;
    CHECK_OK(MPI_Send(src, send_ints, MPI_INT, 1, tag, MPI_COMM_WORLD));
    free(src);
  } else {
    int span = blocks * 3 + 16;
    int* dst = malloc(sizeof(int) * (size_t)span);
    for (int i = 0; i < span; ++i) dst[i] = -7;
    MPI_Status st;
    int rc = MPI_Recv(dst, 1, v, 0, tag, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "blocks %d: class %d, want MPI_ERR_TRUNCATE", blocks, cls);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(got == 2 * blocks, "blocks %d: received %d ints, want %d", blocks, got, 2 * blocks);
    int bad = 0;
    for (int i = 0; i < span; ++i) {
      int b = i / 3, j = i % 3;
      int want = (b < blocks && j < 2) ? b * 2 + j + 1 : -7;
      if (dst[i] != want && bad++ < 3) fprintf(stderr, "dst[%d] = %d, want %d\n", i, dst[i], want);
    }
    CHECK(bad == 0, "blocks %d: %d wrong ints", blocks, bad);
    free(dst);
  }
  MPI_Type_free(&v);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  one(10, 21, 1);         /* eager, one int too many */
  one(100, 400, 2);       /* eager, twice too many */
  one(40000, 80001, 3);   /* rendezvous */
  one(40000, 200000, 4);  /* rendezvous, far too many */
  return itest_finish("truncate_noncontig");
}
