/* Communicators alive at once: far more than 4093 duplicates exist side by
 * side and work; when the context ids run out the dup fails with
 * MPI_ERR_NO_MEM (the standard's class for an exhausted resource), and after
 * freeing some, duplication works again.
 *
 *   dup_many many        (any ranks) 10000 duplicates of MPI_COMM_WORLD, a
 *                        message through the last, all freed
 *   dup_many exhaust     (1 rank) MPI_COMM_SELF duplicated until refused
 *   dup_many fragmented  (any ranks) each rank's free context ids made
 *                        different (self duplicates, a rank-dependent
 *                        number and pattern freed), then duplicates and
 *                        idups of MPI_COMM_WORLD agree and work
 */
#include "tests/integration/itest.h"

static int many(void) {
  enum { kMany = 10000 };
  MPI_Comm* d = malloc(sizeof(MPI_Comm) * kMany);
  int made = 0;
  for (; made < kMany; ++made) {
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &d[made]);
    if (rc != MPI_SUCCESS) {
      CHECK_OK(rc);
      break;
    }
  }
  CHECK(made == kMany, "only %d duplicates of %d", made, kMany);
  if (made > 0) {
    int sum = 0;
    CHECK_OK(MPI_Allreduce(&itest_rank, &sum, 1, MPI_INT, MPI_SUM, d[made - 1]));
    CHECK(sum == itest_size * (itest_size - 1) / 2, "allreduce on the last duplicate gave %d", sum);
  }
  for (int i = 0; i < made; ++i) CHECK_OK(MPI_Comm_free(&d[i]));
  free(d);
  return itest_finish("dup_many");
}

static int exhaust(void) {
  enum { kCap = 1 << 20 };
  MPI_Comm* d = malloc(sizeof(MPI_Comm) * kCap);
  int made = 0, rc = MPI_SUCCESS;
  while (made < kCap && (rc = MPI_Comm_dup(MPI_COMM_SELF, &d[made])) == MPI_SUCCESS) ++made;
  CHECK(made > 130000, "only %d duplicates before the first refusal", made);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_NO_MEM, "exhaustion reported as class %d (%s), want MPI_ERR_NO_MEM", cls, itest_errstr(rc));
  /* Free a few: duplication works again, and the duplicate works. */
  for (int i = 0; i < 10 && made > 0; ++i) CHECK_OK(MPI_Comm_free(&d[--made]));
  MPI_Comm again = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &again));
  int v = 3, w = 0;
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 0, &w, 1, MPI_INT, 0, 0, again, MPI_STATUS_IGNORE));
  CHECK(w == 3, "exchange on a new duplicate gave %d", w);
  CHECK_OK(MPI_Comm_free(&again));
  while (made > 0) MPI_Comm_free(&d[--made]);
  free(d);
  return itest_finish("dup_exhaust");
}

/* Rank r holds 3000 + 1500 r duplicates of MPI_COMM_SELF and frees those
 * whose index is not a multiple of r + 2: every rank's lowest free id and
 * its holes differ, far apart for the higher ranks. */
static int fragmented(void) {
  int held = 3000 + 1500 * itest_rank;
  MPI_Comm* self = malloc(sizeof(MPI_Comm) * (size_t)held);
  for (int i = 0; i < held; ++i) CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &self[i]));
  for (int i = 0; i < held; ++i)
    if (i % (itest_rank + 2) != 0) CHECK_OK(MPI_Comm_free(&self[i]));
  enum { kDups = 200 };
  MPI_Comm d[kDups];
  for (int i = 0; i < kDups; ++i) {
    if (i % 2) {
      MPI_Request q;
      CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &q));
      CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d[i]));
    }
  }
  /* Every duplicate is its own communicator: a message on each, tagged the
   * same, arrives on that one only. */
  for (int i = 0; i < kDups; ++i) {
    int v = itest_rank * 1000 + i, got = -1;
    int to = (itest_rank + 1) % itest_size, from = (itest_rank + itest_size - 1) % itest_size;
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, to, 7, &got, 1, MPI_INT, from, 7, d[kDups - 1 - i], MPI_STATUS_IGNORE));
    CHECK(got == from * 1000 + i, "duplicate %d carried %d, want %d", i, got, from * 1000 + i);
  }
  for (int i = 0; i < kDups; ++i) CHECK_OK(MPI_Comm_free(&d[i]));
  for (int i = 0; i < held; ++i)
    if (i % (itest_rank + 2) == 0) CHECK_OK(MPI_Comm_free(&self[i]));
  free(self);
  return itest_finish("dup_fragmented");
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "many")) return many();
  if (!strcmp(mode, "exhaust")) return exhaust();
  if (!strcmp(mode, "fragmented")) return fragmented();
  fprintf(stderr, "usage: dup_many many|exhaust|fragmented\n");
  return 2;
}
