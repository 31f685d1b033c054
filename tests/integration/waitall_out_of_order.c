/* MPI_Waitall over many requests that complete in reverse order of the
 * array (the sender sends to the last receive first), mixed with entries
 * that need no wait: every live request is retired exactly once, at its
 * own index, whichever order the completions come in.
 *
 * Rounds of N receives (N = 10, below the call's on-stack bound, and 300,
 * above it) where the array also holds MPI_REQUEST_NULL, an inactive
 * persistent receive, an active persistent receive, the same request
 * listed twice and a receive that truncates. Checked after each call:
 *  - MPI_ERR_IN_STATUS (one truncated receive) with MPI_ERR_TRUNCATE in
 *    that entry's MPI_ERROR and MPI_SUCCESS in every other one;
 *  - each receive's status (source, tag, count) and data at its index;
 *  - non-persistent handles nulled, persistent ones kept and inactive
 *    (a later MPI_Wait on them returns at once with an empty status);
 *  - null, inactive and the second listing of a request: empty statuses;
 *  - a second round reuses the same slots without trouble.
 * The receiver waits for all to be posted before the sender starts, so
 * every receive is matched from the posted queue, last index first.
 */
#include "tests/integration/itest.h"

#define MAXN 300

static int slots[MAXN + 2];

static void receiver(int n, int round) {
  MPI_Request r[MAXN + 8];
  MPI_Status st[MAXN + 8];
  MPI_Request pers_active, pers_idle;
  int extra_active = -1, extra_idle = -1;
  /* Receives 0..n-1 (tag i), the last one truncating (its buffer holds one
   * int, the message two). */
  for (int i = 0; i < n; ++i) {
    slots[i] = -1;
    CHECK_OK(MPI_Irecv(&slots[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &r[i]));
  }
  CHECK_OK(MPI_Recv_init(&extra_active, 1, MPI_INT, 0, n, MPI_COMM_WORLD, &pers_active));
  CHECK_OK(MPI_Recv_init(&extra_idle, 1, MPI_INT, 0, n + 1, MPI_COMM_WORLD, &pers_idle));
  CHECK_OK(MPI_Start(&pers_active));
  int k = n;
  const int i_null = k++, i_active = k++, i_idle = k++, i_twice = k++;
  r[i_null] = MPI_REQUEST_NULL;
  r[i_active] = pers_active;
  r[i_idle] = pers_idle;
  r[i_twice] = r[n / 2];
  const MPI_Request twice = r[i_twice];
  for (int i = 0; i < k; ++i) st[i].MPI_ERROR = -12345;
  MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD); /* all posted: go */
  int rc = MPI_Waitall(k, r, st);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_IN_STATUS, "round %d n %d: Waitall returned class %d, want MPI_ERR_IN_STATUS", round, n, cls);
  for (int i = 0; i < n; ++i) {
    char what[64];
    snprintf(what, sizeof what, "round %d n %d receive %d", round, n, i);
    const int truncated = i == n - 1;
    int ecls = -1;
    MPI_Error_class(st[i].MPI_ERROR, &ecls);
    CHECK(ecls == (truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "%s: MPI_ERROR class %d", what, ecls);
    CHECK(st[i].MPI_SOURCE == 0 && st[i].MPI_TAG == i, "%s: source %d tag %d", what, st[i].MPI_SOURCE,
          st[i].MPI_TAG);
    if (!truncated) CHECK_STATUS(&st[i], 0, i, (int)sizeof(int), what);
    CHECK(slots[i] == 1000 * round + i, "%s: data %d", what, slots[i]);
    CHECK(r[i] == MPI_REQUEST_NULL, "%s: handle not nulled", what);
  }
  CHECK(extra_active == 1000 * round + n, "round %d n %d: persistent receive data %d", round, n, extra_active);
  CHECK_STATUS(&st[i_active], 0, n, (int)sizeof(int), "active persistent");
  CHECK(st[i_active].MPI_ERROR == MPI_SUCCESS, "active persistent: MPI_ERROR %d", st[i_active].MPI_ERROR);
  CHECK(r[i_active] == pers_active, "active persistent: handle changed");
  CHECK_EMPTY_STATUS(&st[i_null], "null entry");
  CHECK_EMPTY_STATUS(&st[i_idle], "inactive persistent entry");
  CHECK_EMPTY_STATUS(&st[i_twice], "second listing of a request");
  CHECK(r[i_twice] == MPI_REQUEST_NULL || r[i_twice] == twice, "second listing: handle %d", (int)r[i_twice]);
  CHECK(extra_idle == -1, "inactive persistent receive got data");
  /* Both persistent requests are inactive now: a wait returns at once. */
  MPI_Status after;
  CHECK_OK(MPI_Wait(&pers_active, &after));
  CHECK_EMPTY_STATUS(&after, "persistent after Waitall");
  CHECK_OK(MPI_Request_free(&pers_active));
  CHECK_OK(MPI_Request_free(&pers_idle));
}

static void sender(int n, int round) {
  MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int v = 1000 * round + n;
  MPI_Send(&v, 1, MPI_INT, 1, n, MPI_COMM_WORLD); /* the active persistent receive */
  for (int i = n - 1; i >= 0; --i) {
    int two[2] = {1000 * round + i, -7};
    MPI_Send(two, i == n - 1 ? 2 : 1, MPI_INT, 1, i, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  static const int sizes[] = {10, MAXN};
  int round = 0;
  for (int s = 0; s < 2; ++s)
    for (int rep = 0; rep < 2; ++rep, ++round) {
      if (itest_rank == 1) receiver(sizes[s], round);
      else if (itest_rank == 0) sender(sizes[s], round);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  return itest_finish("waitall_out_of_order");
}
