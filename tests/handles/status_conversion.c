/* MPI_Status_c2f / MPI_Status_f2c: legal before MPI_Init; a status converted
 * to MPI_Fints has its source, tag and error at MPI_F_SOURCE, MPI_F_TAG and
 * MPI_F_ERROR, and converted back it still answers MPI_Get_count and
 * MPI_Test_cancelled as the original did. The IGNORE sentinels and null
 * pointers are refused with MPI_ERR_ARG. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  /* Before MPI_Init. */
  MPI_Status before = {0};
  before.MPI_SOURCE = 5;
  before.MPI_TAG = 6;
  before.MPI_ERROR = MPI_ERR_TAG;
  MPI_Fint fb[MPI_F_STATUS_SIZE];
  int rc_before = MPI_Status_c2f(&before, fb);
  itest_init(&argc, &argv);
  CHECK(rc_before == MPI_SUCCESS, "MPI_Status_c2f before MPI_Init returned %d", rc_before);
  CHECK(fb[MPI_F_SOURCE] == 5 && fb[MPI_F_TAG] == 6 && fb[MPI_F_ERROR] == MPI_ERR_TAG,
        "fields before init: %d %d %d", (int)fb[MPI_F_SOURCE], (int)fb[MPI_F_TAG], (int)fb[MPI_F_ERROR]);
  CHECK(MPI_F_SOURCE != MPI_F_TAG && MPI_F_TAG != MPI_F_ERROR && MPI_F_ERROR < MPI_F_STATUS_SIZE,
        "field indexes overlap or exceed MPI_F_STATUS_SIZE");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank;
  int right = (me + 1) % n, left = (me + n - 1) % n;

  /* A real receive's status: 3 ints from the left neighbour, tag 40 + rank. */
  int out[3] = {me, me, me}, in[4] = {-1, -1, -1, -1};
  MPI_Request sr;
  CHECK_OK(MPI_Isend(out, 3, MPI_INT, right, 40 + me, MPI_COMM_WORLD, &sr));
  MPI_Status st;
  CHECK_OK(MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  MPI_Fint f[MPI_F_STATUS_SIZE];
  for (int i = 0; i < MPI_F_STATUS_SIZE; ++i) f[i] = -7;
  CHECK_OK(MPI_Status_c2f(&st, f));
  CHECK(f[MPI_F_SOURCE] == left && f[MPI_F_TAG] == 40 + left, "Fortran status says source %d tag %d, want %d %d",
        (int)f[MPI_F_SOURCE], (int)f[MPI_F_TAG], left, 40 + left);
  MPI_Status back;
  memset(&back, 0xff, sizeof back);
  CHECK_OK(PMPI_Status_f2c(f, &back));
  CHECK_STATUS(&back, left, 40 + left, 3 * (int)sizeof(int), "status after c2f and f2c");
  int cancelled = -1;
  CHECK_OK(MPI_Test_cancelled(&back, &cancelled));
  CHECK(cancelled == 0, "a received message reads as cancelled after the round trip");

  /* A cancelled receive's status keeps saying so. */
  MPI_Request rr;
  CHECK_OK(MPI_Irecv(in, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &rr));
  CHECK_OK(MPI_Cancel(&rr));
  MPI_Status cst;
  CHECK_OK(MPI_Wait(&rr, &cst));
  CHECK_OK(MPI_Status_c2f(&cst, f));
  CHECK_OK(MPI_Status_f2c(f, &back));
  cancelled = -1;
  CHECK_OK(MPI_Test_cancelled(&back, &cancelled));
  CHECK(cancelled == 1, "a cancelled receive's status lost its flag in the round trip");

  /* Refused: the IGNORE sentinels and null pointers. */
  CHECK_CLASS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_c2f(NULL, f), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_f2c(MPI_F_STATUSES_IGNORE, &back), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_f2c(f, MPI_STATUS_IGNORE), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Status_f2c(f, NULL), MPI_ERR_ARG);
  return itest_finish("status_conversion");
}
