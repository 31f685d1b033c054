/* MPI_Comm_idup does not block: programs that would deadlock with
 * MPI_Comm_dup complete. 2..7 ranks.
 *   - each rank idups the communicator it shares with its right neighbour,
 *     then the one it shares with its left neighbour, and only then waits
 *     (with blocking dups every rank would wait for its right neighbour);
 *   - rank 0 idups, then sends to rank 1, which receives before its idup;
 *   - rank 0 idups X and then dups Y, the others dup Y and then idup X;
 *   - several idups of one communicator outstanding, waited in reverse
 *     order, with a blocking dup and an Ibarrier in between: every result
 *     is a distinct working duplicate. */
#include "tests/integration/itest.h"

/* A ring exchange on `comm`; checks sources and payloads. */
static void exercise(MPI_Comm comm, int tag, const char* what) {
  int r, n;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  int got = -1, want = (r + n - 1) % n;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, tag, &got, 1, MPI_INT, want, tag, comm, &st));
  CHECK(got == want && st.MPI_SOURCE == want, "%s: got %d from %d, want %d", what, got, st.MPI_SOURCE, want);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank;
  CHECK(n >= 2, "needs 2 ranks");

  /* Pair communicators {i, i+1 mod n}: `right` is mine with me+1, `left`
   * with me-1 (for n == 2 they are two different communicators of the same
   * two ranks). */
  MPI_Comm right = MPI_COMM_NULL, left = MPI_COMM_NULL, tmp;
  for (int i = 0; i < n; ++i) {
    int a = i, b = (i + 1) % n;
    int color = me == a || me == b ? 0 : MPI_UNDEFINED;
    MPI_Comm_split(MPI_COMM_WORLD, color, me == a ? 0 : 1, &tmp);
    if (me == a) right = tmp;
    else if (me == b) left = tmp;
  }
  MPI_Comm rdup, ldup;
  MPI_Request req[2];
  CHECK_OK(MPI_Comm_idup(right, &rdup, &req[0]));
  CHECK_OK(MPI_Comm_idup(left, &ldup, &req[1]));
  CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  /* Both pairs at once (a blocking exchange on one would wait for a
   * neighbour busy with the other). */
  int out2[2] = {me, me}, in2[2] = {-1, -1};
  MPI_Request pr[4];
  MPI_Irecv(&in2[0], 1, MPI_INT, 1, 1, rdup, &pr[0]);
  MPI_Irecv(&in2[1], 1, MPI_INT, 0, 1, ldup, &pr[1]);
  MPI_Isend(&out2[0], 1, MPI_INT, 1, 1, rdup, &pr[2]);
  MPI_Isend(&out2[1], 1, MPI_INT, 0, 1, ldup, &pr[3]);
  CHECK_OK(MPI_Waitall(4, pr, MPI_STATUSES_IGNORE));
  CHECK(in2[0] == (me + 1) % n && in2[1] == (me + n - 1) % n, "pair dups carried %d and %d", in2[0], in2[1]);
  int cmp = -1;
  MPI_Comm_compare(rdup, right, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "right dup compares %d", cmp);
  MPI_Comm_free(&rdup);
  MPI_Comm_free(&ldup);
  MPI_Comm_free(&right);
  MPI_Comm_free(&left);

  /* Traffic that the other ranks send only before their own idup. */
  MPI_Comm d;
  MPI_Request r;
  int token = 0;
  if (me == 0) {
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
    token = 42;
    CHECK_OK(MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
  } else {
    if (me == 1) CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
  }
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(me != 1 || token == 42, "token %d", token);
  exercise(d, 3, "idup of world");

  /* An idup in flight on one rank while a blocking dup of another
   * communicator runs that the other ranks call before their idup: the
   * idup must not hold the ids the dup needs. */
  MPI_Comm x, y, xd, yd;
  MPI_Comm_dup(MPI_COMM_WORLD, &x);
  MPI_Comm_dup(MPI_COMM_WORLD, &y);
  if (me == 0) {
    CHECK_OK(MPI_Comm_idup(x, &xd, &r));
    CHECK_OK(MPI_Comm_dup(y, &yd));
  } else {
    CHECK_OK(MPI_Comm_dup(y, &yd));
    CHECK_OK(MPI_Comm_idup(x, &xd, &r));
  }
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  exercise(xd, 6, "idup racing a dup");
  exercise(yd, 7, "dup racing an idup");
  MPI_Comm* xs[] = {&x, &y, &xd, &yd};
  for (int i = 0; i < 4; ++i) MPI_Comm_free(xs[i]);

  /* Five outstanding idups of `d`, a blocking dup and an Ibarrier among
   * them, completed in reverse order. */
  MPI_Comm many[5], blocking;
  MPI_Request reqs[6];
  for (int i = 0; i < 5; ++i) {
    CHECK_OK(MPI_Comm_idup(d, &many[i], &reqs[i]));
    if (i == 2) CHECK_OK(MPI_Comm_dup(d, &blocking));
  }
  CHECK_OK(MPI_Ibarrier(d, &reqs[5]));
  for (int i = 5; i >= 0; --i) CHECK_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < i; ++j) {
      MPI_Comm_compare(many[i], many[j], &cmp);
      CHECK(cmp == MPI_CONGRUENT && many[i] != many[j], "idups %d and %d: compare %d", i, j, cmp);
    }
  }
  /* Same tag on every duplicate at once: each message stays on its own. */
  int out[6], in[6];
  MPI_Request tr[12];
  MPI_Comm all[6] = {many[0], many[1], many[2], many[3], many[4], blocking};
  for (int i = 0; i < 6; ++i) {
    out[i] = me * 10 + i;
    in[i] = -1;
    MPI_Irecv(&in[i], 1, MPI_INT, (me + n - 1) % n, 5, all[i], &tr[2 * i]);
    MPI_Isend(&out[i], 1, MPI_INT, (me + 1) % n, 5, all[i], &tr[2 * i + 1]);
  }
  CHECK_OK(MPI_Waitall(12, tr, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 6; ++i)
    CHECK(in[i] == ((me + n - 1) % n) * 10 + i, "duplicate %d carried %d", i, in[i]);
  for (int i = 0; i < 5; ++i) MPI_Comm_free(&many[i]);
  MPI_Comm_free(&blocking);
  MPI_Comm_free(&d);
  return itest_finish("idup_nonblocking");
}
