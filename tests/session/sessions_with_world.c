/* Sessions next to the World model (MPI 4.0 11.3): MPI_Init, then sessions
 * opened and closed repeatedly, each making a communicator from the WORLD
 * process set while MPI_COMM_WORLD carries its own traffic; an
 * intercommunicator from two groups (MPI_Intercomm_create_from_groups:
 * even and odd ranks) that carries messages both ways and can be
 * duplicated; and a session that outlives MPI_Finalize: its communicator
 * still works after it, and the job ends cleanly at MPI_Session_finalize.
 * At least 2 ranks. */
#include "tests/integration/itest.h"

/* A new session and a communicator over its WORLD process set (tagged
 * `tag`); the group is freed, the session stays open. */
static MPI_Comm world_of_new_session(MPI_Session* s, const char* tag) {
  MPI_Group g;
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s));
  CHECK_OK(MPI_Group_from_session_pset(*s, "mpi://WORLD", &g));
  CHECK_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
  CHECK_OK(MPI_Group_free(&g));
  return c;
}

static void repeated_sessions(void) {
  for (int round = 0; round < 3; ++round) {
    MPI_Session s;
    MPI_Comm c = world_of_new_session(&s, "org.sonde.test.round");
    /* WORLD traffic interleaved with the new communicator's. */
    int x = itest_rank, wsum = 0, csum = 0;
    CHECK_OK(MPI_Allreduce(&x, &wsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_OK(MPI_Allreduce(&x, &csum, 1, MPI_INT, MPI_SUM, c));
    CHECK(wsum == csum && csum == itest_size * (itest_size - 1) / 2, "round %d: sums %d %d", round, wsum, csum);
    int cmp = -1;
    CHECK_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "round %d: compare says %d", round, cmp);
    MPI_Errhandler eh;
    CHECK_OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the communicator did not get its error handler");
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Session_finalize(&s));
  }
}

static void intercomm_from_groups(void) {
  MPI_Group wg, evens, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int range_e[1][3] = {{0, itest_size - 1, 2}}, range_o[1][3] = {{1, itest_size - 1, 2}};
  MPI_Group_range_incl(wg, 1, range_e, &evens);
  MPI_Group_range_incl(wg, 1, range_o, &odds);
  int even = itest_rank % 2 == 0;
  MPI_Comm ic;
  CHECK_OK(MPI_Intercomm_create_from_groups(even ? evens : odds, 0, even ? odds : evens, 0, "org.sonde.test.ic",
                                            MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
  int inter = 0, lsize = 0, rsize = 0, lrank = -1;
  MPI_Comm_test_inter(ic, &inter);
  MPI_Comm_size(ic, &lsize);
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Comm_rank(ic, &lrank);
  int n_even = (itest_size + 1) / 2, n_odd = itest_size / 2;
  CHECK(inter && lsize == (even ? n_even : n_odd) && rsize == (even ? n_odd : n_even) && lrank == itest_rank / 2,
        "intercomm: inter %d sizes %d/%d rank %d", inter, lsize, rsize, lrank);
  /* Local rank i talks to remote rank i where both exist. */
  if (lrank < rsize) {
    int got = -1;
    CHECK_OK(MPI_Sendrecv(&itest_rank, 1, MPI_INT, lrank, 8, &got, 1, MPI_INT, lrank, 8, ic, MPI_STATUS_IGNORE));
    CHECK(got == (even ? itest_rank + 1 : itest_rank - 1), "across: got %d", got);
  }
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(ic, &dup));
  int dsize = 0;
  MPI_Comm_remote_size(dup, &dsize);
  CHECK(dsize == rsize, "dup of the intercommunicator: remote size %d", dsize);
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Comm_free(&ic));
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&wg);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  repeated_sessions();
  if (itest_size >= 2) intercomm_from_groups();

  /* A session that outlives the World model. */
  MPI_Session s;
  MPI_Comm c = world_of_new_session(&s, "org.sonde.test.after");
  CHECK_OK(MPI_Finalize());
  int finalized = 0;
  MPI_Finalized(&finalized);
  CHECK(finalized, "MPI_Finalized says false");
  int x = itest_rank, sum = -1;
  CHECK_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == itest_size * (itest_size - 1) / 2, "after MPI_Finalize: sum %d", sum);
  CHECK_OK(MPI_Comm_free(&c));
  CHECK_OK(MPI_Session_finalize(&s));
  if (itest_failures) {
    fprintf(stderr, "[rank %d] sessions_with_world: %d check(s) failed\n", itest_rank, itest_failures);
    return 1;
  }
  if (itest_rank == 0) printf("sessions_with_world: rank 0 passed (%d ranks)\n", itest_size);
  return 0;
}
