/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0): every rank exchanges
 * with both ring neighbours, contiguous and strided data, eager and
 * rendezvous sizes; the calls return before the partner has posted anything
 * (the request is progressed by the engine); _replace sends what the buffer
 * held and receives in its place, through a non-contiguous type; status,
 * MPI_PROC_NULL, MPI_Request_free and argument errors. */
#include "tests/integration/itest.h"

enum { kSmall = 100, kLarge = 100000 }; /* ints: eager and rendezvous */

static int value(int rank, int i) { return rank * 1000003 + i; }

static void ring_exchange(int n) {
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  int* out = malloc(sizeof(int) * (size_t)n);
  int* in = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    out[i] = value(itest_rank, i);
    in[i] = -1;
  }
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Isendrecv(out, n, MPI_INT, right, 7, in, n, MPI_INT, left, 7, MPI_COMM_WORLD, &r));
  CHECK(r != MPI_REQUEST_NULL, "Isendrecv gave a null request");
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL, "Wait left the request");
  CHECK_STATUS(&st, left, 7, (int)(n * sizeof(int)), "Isendrecv status");
  int bad = -1;
  for (int i = 0; i < n && bad < 0; ++i)
    if (in[i] != value(left, i)) bad = i;
  CHECK(bad < 0, "n=%d: element %d is %d, want %d", n, bad, bad < 0 ? 0 : in[bad], value(left, bad));
  free(out);
  free(in);
}

/* A stride-2 vector of doubles: the odd slots must stay untouched. */
static void replace_strided(int n) {
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  MPI_Datatype vec;
  MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  double* buf = malloc(sizeof(double) * 2 * (size_t)n);
  for (int i = 0; i < 2 * n; ++i) buf[i] = i % 2 ? -7.0 : (double)value(itest_rank, i / 2);
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Isendrecv_replace(buf, 1, vec, right, 9, left, 9, MPI_COMM_WORLD, &r));
  MPI_Type_free(&vec); /* the request keeps the type alive */
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK_STATUS(&st, left, 9, (int)(n * sizeof(double)), "Isendrecv_replace status");
  int bad = -1;
  for (int i = 0; i < 2 * n && bad < 0; ++i) {
    double want = i % 2 ? -7.0 : (double)value(left, i / 2);
    if (buf[i] != want) bad = i;
  }
  CHECK(bad < 0, "n=%d: replace slot %d wrong", n, bad);
  free(buf);
}

/* Rank 0 starts the exchange before rank 1 posts anything and meets it in
 * a barrier first: a blocking implementation would deadlock here. */
static void returns_before_partner_posts(void) {
  if (itest_size < 2 || itest_rank > 1) return;
  int peer = 1 - itest_rank;
  int* out = malloc(sizeof(int) * kLarge);
  int* in = malloc(sizeof(int) * kLarge);
  for (int i = 0; i < kLarge; ++i) out[i] = value(itest_rank, i);
  MPI_Request r = MPI_REQUEST_NULL;
  if (itest_rank == 0) CHECK_OK(MPI_Isendrecv(out, kLarge, MPI_INT, peer, 3, in, kLarge, MPI_INT, peer, 4,
                                              MPI_COMM_WORLD, &r));
  itest_sync(peer, MPI_COMM_WORLD);
  if (itest_rank == 1) CHECK_OK(MPI_Isendrecv(out, kLarge, MPI_INT, peer, 4, in, kLarge, MPI_INT, peer, 3,
                                              MPI_COMM_WORLD, &r));
  MPI_Status st;
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_STATUS(&st, peer, itest_rank == 0 ? 4 : 3, (int)(kLarge * sizeof(int)), "early start status");
  CHECK(in[kLarge - 1] == value(peer, kLarge - 1), "early start: wrong data");
  free(out);
  free(in);
}

static void proc_null_and_free(void) {
  int x = 5, y = 6;
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_PROC_NULL_STATUS(&st, "Isendrecv with MPI_PROC_NULL");
  CHECK(y == 6, "PROC_NULL receive wrote the buffer");
  CHECK_OK(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(x == 5, "PROC_NULL replace changed the buffer");

  /* Freed while in flight: the exchange still happens. */
  int right = (itest_rank + 1) % itest_size, left = (itest_rank + itest_size - 1) % itest_size;
  int out = value(itest_rank, 0), in = -1;
  CHECK_OK(MPI_Isendrecv(&out, 1, MPI_INT, right, 11, &in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Request_free(&r));
  CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
  int probe_in = -1;
  CHECK_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 12, &probe_in, 1, MPI_INT, left, 12, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  /* Tag 12 from `left` arrived after tag 11 from `left` (non-overtaking),
   * but only progress makes it land: poll until it does. */
  int flag;
  while (in == -1) MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(in == value(left, 0), "freed Isendrecv delivered %d", in);
}

static void errors(void) {
  int x = 0;
  MPI_Request r;
  CHECK_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, itest_size, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, 0, -5, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Isendrecv(&x, -1, MPI_INT, 0, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Isendrecv_replace(&x, 1, MPI_DATATYPE_NULL, 0, 0, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ring_exchange(0);
  ring_exchange(kSmall);
  ring_exchange(kLarge);
  replace_strided(kSmall);
  replace_strided(kLarge);
  returns_before_partner_posts();
  proc_null_and_free();
  errors();
  return itest_finish("isendrecv");
}
