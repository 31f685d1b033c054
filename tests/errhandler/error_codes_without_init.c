/* MPI 4.1 section 12.4.1: user error classes, codes and strings can be
 * added before MPI_Init and removed after MPI_Finalize, and MPI knows them
 * in between; MPI_Errhandler_free works outside MPI too. 1..2 ranks. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  int cls = -1, code = -1, got = -1, len = -1;
  char text[MPI_MAX_ERROR_STRING];
  CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS && cls > MPI_ERR_LASTCODE, "class before init: %d", cls);
  CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS && code != cls, "code before init: %d", code);
  CHECK(MPI_Add_error_string(code, "sonde test: made before init") == MPI_SUCCESS, "string before init");
  MPI_Errhandler eh = MPI_ERRORS_RETURN;
  CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL, "errhandler_free before init");

  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Error_class(code, &got));
  CHECK(got == cls, "class of the code %d, want %d", got, cls);
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK(strcmp(text, "sonde test: made before init") == 0, "string \"%s\"", text);
  int* last = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  CHECK(flag && last && *last >= code, "MPI_LASTUSEDCODE %d below %d", last ? *last : -1, code);
  /* A class made during MPI, removed after it. */
  int during = -1;
  CHECK_OK(MPI_Add_error_class(&during));
  MPI_Finalize();

  CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS, "remove string after finalize");
  CHECK(MPI_Remove_error_code(code) == MPI_SUCCESS, "remove code after finalize");
  CHECK(MPI_Remove_error_class(cls) == MPI_SUCCESS, "remove class after finalize");
  CHECK(MPI_Remove_error_class(during) == MPI_SUCCESS, "remove class made during MPI");
  if (itest_failures) {
    fprintf(stderr, "[rank %d] error_codes_without_init: %d check(s) failed\n", itest_rank, itest_failures);
    return 1;
  }
  if (itest_rank == 0) printf("error_codes_without_init: rank 0 passed\n");
  return 0;
}
