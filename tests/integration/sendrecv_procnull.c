/* Sendrecv, Sendrecv_replace, and MPI_PROC_NULL as a peer.
 *
 * A ring shift over all ranks with Sendrecv and Sendrecv_replace (eager and
 * rendezvous sizes, a strided datatype for the replace), every rank checking
 * what its left neighbour sent. Communication with MPI_PROC_NULL succeeds at
 * once and does nothing: the receive's status is source MPI_PROC_NULL, tag
 * MPI_ANY_TAG, count 0, and its buffer is untouched.
 */
#include "tests/integration/itest.h"

static const int kSizes[] = {0, 1, 100, 16384, 70000, 1 << 20};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  int maxn = 1 << 20;
  unsigned char* out = malloc((size_t)maxn);
  unsigned char* in = malloc((size_t)maxn);
  MPI_Status st;
  int count;

  for (int k = 0; k < NSIZES; ++k) {
    int n = kSizes[k];
    itest_fill(out, (size_t)n, (uint32_t)(1000 * itest_rank + k));
    memset(in, 0, (size_t)n);
    CHECK_OK(MPI_Sendrecv(out, n, MPI_BYTE, right, k, in, maxn, MPI_BYTE, left, k, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == k && count == n, "Sendrecv %d: source %d tag %d count %d", n,
          st.MPI_SOURCE, st.MPI_TAG, count);
    long bad = itest_verify(in, (size_t)n, (uint32_t)(1000 * left + k));
    CHECK(bad < 0, "Sendrecv %d bytes: byte %ld wrong", n, bad);

    /* Replace in place, with wildcards on the receive side. */
    itest_fill(out, (size_t)n, (uint32_t)(2000 * itest_rank + k));
    CHECK_OK(MPI_Sendrecv_replace(out, n, MPI_BYTE, right, 100 + k, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                  &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 100 + k && count == n,
          "Sendrecv_replace %d: source %d tag %d count %d", n, st.MPI_SOURCE, st.MPI_TAG, count);
    bad = itest_verify(out, (size_t)n, (uint32_t)(2000 * left + k));
    CHECK(bad < 0, "Sendrecv_replace %d bytes: byte %ld wrong", n, bad);
  }

  /* Sendrecv_replace with a strided type: every other int of 2 * m. */
  for (int m = 8; m <= 64 * 1024; m *= 32) {
    MPI_Datatype every_other;
    CHECK_OK(MPI_Type_vector(m, 1, 2, MPI_INT, &every_other));
    CHECK_OK(MPI_Type_commit(&every_other));
    int* v = malloc(sizeof(int) * 2 * (size_t)m);
    for (int i = 0; i < 2 * m; ++i) v[i] = i % 2 ? -7 : itest_rank * 1000000 + i;
    CHECK_OK(MPI_Sendrecv_replace(v, 1, every_other, right, 7, left, 7, MPI_COMM_WORLD, &st));
    int bad = -1;
    for (int i = 0; i < 2 * m; ++i)
      if (v[i] != (i % 2 ? -7 : left * 1000000 + i)) {
        bad = i;
        break;
      }
    CHECK(bad < 0, "strided Sendrecv_replace of %d ints: int %d is %d", m, bad, bad >= 0 ? v[bad] : 0);
    MPI_Get_elements(&st, MPI_INT, &count);
    CHECK(count == m, "strided Sendrecv_replace: Get_elements(MPI_INT) %d, want %d", count, m);
    free(v);
    MPI_Type_free(&every_other);
  }

  /* MPI_PROC_NULL everywhere. */
  memset(in, 0x5A, 64);
  CHECK_OK(MPI_Send(out, 10, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  CHECK_OK(MPI_Ssend(out, 10, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  CHECK_OK(MPI_Rsend(out, 10, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  st.MPI_SOURCE = 1234;
  CHECK_OK(MPI_Recv(in, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
  CHECK_PROC_NULL_STATUS(&st, "Recv(PROC_NULL)");
  MPI_Request r[3];
  CHECK_OK(MPI_Isend(out, 10, MPI_BYTE, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Irecv(in, 64, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Issend(out, 10, MPI_BYTE, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[2]));
  MPI_Status sts[3];
  int flag = 0;
  CHECK_OK(MPI_Testall(3, r, &flag, sts));
  CHECK(flag == 1, "PROC_NULL requests not complete at once");
  if (!flag) CHECK_OK(MPI_Waitall(3, r, sts));
  CHECK_PROC_NULL_STATUS(&sts[1], "Irecv(PROC_NULL)");
  /* Regression: see persistent_status_after_completion.c. */
  MPI_Request pr;
  CHECK_OK(MPI_Recv_init(in, 64, MPI_BYTE, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &pr));
  CHECK_OK(MPI_Start(&pr));
  CHECK_OK(MPI_Wait(&pr, &st));
  CHECK_PROC_NULL_STATUS(&st, "persistent Recv(PROC_NULL)");
  CHECK_OK(MPI_Request_free(&pr));
  /* Half of a Sendrecv to PROC_NULL: the other half still happens. */
  int token = itest_rank, got = -1;
  int to = itest_rank % 2 == 0 && right != itest_rank ? right : MPI_PROC_NULL;
  int from = itest_rank % 2 == 1 ? left : MPI_PROC_NULL;
  if (itest_size % 2 == 1 && itest_rank == itest_size - 1) to = MPI_PROC_NULL;
  CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, to, 9, &got, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &st));
  if (from == MPI_PROC_NULL) {
    CHECK_PROC_NULL_STATUS(&st, "Sendrecv from PROC_NULL");
    CHECK(got == -1, "Sendrecv from PROC_NULL wrote %d", got);
  } else {
    CHECK(got == left && st.MPI_SOURCE == left, "Sendrecv half: got %d from %d", got, st.MPI_SOURCE);
  }
  for (int i = 0; i < 64; ++i)
    if (in[i] != 0x5A) {
      CHECK(0, "a PROC_NULL receive wrote byte %d", i);
      break;
    }
  CHECK_OK(MPI_Sendrecv_replace(&token, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
  CHECK(token == itest_rank, "Sendrecv_replace with PROC_NULL changed the buffer to %d", token);
  CHECK_PROC_NULL_STATUS(&st, "Sendrecv_replace(PROC_NULL)");

  free(out);
  free(in);
  return itest_finish("sendrecv_procnull");
}
