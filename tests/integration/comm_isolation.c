/* Communicator isolation: Comm_dup and Comm_split give each communicator its
 * own matching context.
 *
 * Identical (source, tag) traffic runs at once on WORLD, two dups of WORLD, a
 * dup of a dup, and a split (odd/even, ranks reversed by key); every payload
 * names the communicator it was sent on, and every receive (specific and
 * MPI_ANY_SOURCE/MPI_ANY_TAG) must get only its own communicator's messages,
 * eager and rendezvous. Also: traffic on a fresh dup that reaches a rank
 * before that rank has created the dup; names; MPI_UNDEFINED color; and a
 * freed communicator answers MPI_ERR_COMM (with MPI_ERRORS_RETURN on WORLD).
 */
#include "tests/integration/itest.h"

#define NCOMM 5
#define ROUNDS 6
static const int kSizes[] = {4, 2000, 16385, 120000};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])
#define MAXB 120000

static void fill(unsigned char* b, int n, int comm_id, int src, int round) {
  itest_fill(b, (size_t)n, (uint32_t)(comm_id * 100000 + src * 1000 + round));
  if (n >= 4) memcpy(b, &comm_id, 4);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size >= 2, "needs 2+ ranks");
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm comms[NCOMM];
  comms[0] = MPI_COMM_WORLD;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]));
  CHECK_OK(MPI_Comm_dup(comms[1], &comms[3]));
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, itest_rank % 2, -itest_rank, &comms[4]));
  MPI_Comm ctl; /* syncs and barriers, so wildcard receives never see them */
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));

  /* Sizes, ranks, names, error handlers. */
  int size, rank;
  CHECK_OK(MPI_Comm_size(comms[4], &size));
  CHECK_OK(MPI_Comm_rank(comms[4], &rank));
  int want_size = (itest_size + 1 - itest_rank % 2) / 2;
  CHECK(size == want_size, "split size %d, want %d", size, want_size);
  /* Key -rank reverses the order: the highest world rank of my color is 0. */
  int want_rank = 0;
  for (int r = itest_rank + 2; r < itest_size; r += 2) ++want_rank;
  CHECK(rank == want_rank, "split rank %d, want %d", rank, want_rank);
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "WORLD is named '%s'", name);
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "SELF is named '%s'", name);
  CHECK_OK(MPI_Comm_set_name(comms[2], "second dup"));
  CHECK_OK(MPI_Comm_get_name(comms[2], name, &len));
  CHECK(strcmp(name, "second dup") == 0 && len == 10, "dup name '%s' (%d)", name, len);
  CHECK_OK(MPI_Comm_get_name(comms[1], name, &len));
  CHECK(strcmp(name, "second dup") != 0, "naming one dup renamed another");
  MPI_Errhandler eh;
  CHECK_OK(MPI_Comm_get_errhandler(comms[1], &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "Comm_dup did not copy the error handler");
  MPI_Comm none = MPI_COMM_WORLD;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, itest_rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
  CHECK((itest_rank == 0) == (none == MPI_COMM_NULL), "MPI_UNDEFINED color gave %#x", (unsigned)none);
  if (none != MPI_COMM_NULL) {
    CHECK_OK(MPI_Comm_size(none, &size));
    CHECK(size == itest_size - 1, "split without rank 0 has size %d", size);
    CHECK_OK(MPI_Comm_free(&none));
  }

  /* Concurrent identical traffic: to the right neighbour in each comm, tag 5. */
  unsigned char* sbuf = malloc((size_t)NCOMM * MAXB);
  unsigned char* rbuf = malloc((size_t)NCOMM * MAXB);
  for (int round = 0; round < ROUNDS; ++round) {
    int n = kSizes[round % NSIZES];
    MPI_Request rr[NCOMM], sr[NCOMM];
    int right[NCOMM], left[NCOMM];
    for (int c = 0; c < NCOMM; ++c) {
      int csize, crank;
      MPI_Comm_size(comms[c], &csize);
      MPI_Comm_rank(comms[c], &crank);
      right[c] = (crank + 1) % csize;
      left[c] = (crank + csize - 1) % csize;
    }
    /* Receives posted in one order (some wildcard), sends in the reverse. */
    for (int c = 0; c < NCOMM; ++c) {
      int wild = (c + round) % 2;
      CHECK_OK(MPI_Irecv(rbuf + (size_t)c * MAXB, MAXB, MPI_BYTE, wild ? MPI_ANY_SOURCE : left[c],
                         wild ? MPI_ANY_TAG : 5, comms[c], &rr[c]));
    }
    for (int c = NCOMM - 1; c >= 0; --c) {
      int crank;
      MPI_Comm_rank(comms[c], &crank);
      fill(sbuf + (size_t)c * MAXB, n, c, crank, round);
      CHECK_OK(MPI_Isend(sbuf + (size_t)c * MAXB, n, MPI_BYTE, right[c], 5, comms[c], &sr[c]));
    }
    MPI_Status st[NCOMM];
    CHECK_OK(MPI_Waitall(NCOMM, rr, st));
    CHECK_OK(MPI_Waitall(NCOMM, sr, MPI_STATUSES_IGNORE));
    for (int c = 0; c < NCOMM; ++c) {
      int got = -1, count = -1;
      MPI_Get_count(&st[c], MPI_BYTE, &count);
      memcpy(&got, rbuf + (size_t)c * MAXB, 4);
      CHECK(got == c, "round %d: a receive on comm %d got a message sent on comm %d", round, c, got);
      CHECK(st[c].MPI_SOURCE == left[c] && st[c].MPI_TAG == 5 && count == n,
            "round %d comm %d: source %d tag %d count %d", round, c, st[c].MPI_SOURCE, st[c].MPI_TAG, count);
      unsigned char* expect = malloc((size_t)n);
      fill(expect, n, c, left[c], round);
      CHECK(memcmp(expect, rbuf + (size_t)c * MAXB, (size_t)n) == 0, "round %d comm %d: payload differs", round, c);
      free(expect);
    }
  }
  itest_barrier(ctl);

  /* Unexpected messages stay on their communicator: rank 0 sends the same
   * (tag) on every comm to rank 1 before rank 1 receives anything; rank 1
   * receives in a scrambled order; a probe on one comm never sees another's. */
  if (itest_rank == 0) {
    MPI_Request sr[4];
    int vals[4] = {0, 1, 2, 3};
    for (int c = 0; c < 4; ++c) CHECK_OK(MPI_Isend(&vals[c], 1, MPI_INT, 1, 9, comms[c], &sr[c]));
    itest_sync(1, ctl);
    CHECK_OK(MPI_Waitall(4, sr, MPI_STATUSES_IGNORE));
  } else if (itest_rank == 1) {
    itest_sync(0, ctl);
    const int order[4] = {2, 0, 3, 1};
    for (int k = 0; k < 4; ++k) {
      int c = order[k], v = -1;
      MPI_Status st;
      CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &st));
      CHECK(st.MPI_TAG == 9 && st.MPI_SOURCE == 0, "Probe on comm %d: source %d tag %d", c, st.MPI_SOURCE,
            st.MPI_TAG);
      CHECK_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &st));
      CHECK(v == c, "unexpected message on comm %d came from comm %d", c, v);
    }
  }

  /* Traffic on a new dup may arrive before the receiver created it. */
  MPI_Comm late;
  if (itest_rank == 1) itest_sleep(0.2);
  CHECK_OK(MPI_Comm_dup(comms[3], &late));
  int token = 1000 + itest_rank, got = -1;
  int right0 = (itest_rank + 1) % itest_size, left0 = (itest_rank + itest_size - 1) % itest_size;
  CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, right0, 1, &got, 1, MPI_INT, left0, 1, late, MPI_STATUS_IGNORE));
  CHECK(got == 1000 + left0, "on a fresh dup got %d", got);

  /* Freed communicators are gone: MPI_ERR_COMM, not a crash. Context ids
   * are reused, and the reuse is isolated too. */
  MPI_Comm saved = comms[3];
  CHECK_OK(MPI_Comm_free(&comms[3]));
  CHECK(comms[3] == MPI_COMM_NULL, "Comm_free left handle %#x", (unsigned)comms[3]);
  CHECK_CLASS(MPI_Comm_size(saved, &size), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Send(&token, 1, MPI_INT, 0, 1, saved), MPI_ERR_COMM);
  MPI_Request dead;
  CHECK_CLASS(MPI_Irecv(&got, 1, MPI_INT, 0, 1, saved, &dead), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_dup(saved, &late), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_free(&saved), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &size), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_free(&comms[0]), MPI_ERR_COMM); /* WORLD cannot be freed */
  /* Sonde-specific: index+generation handles keep a stale handle invalid
   * after its slot is reused (MPICH hands out the same value again). */
  MPI_Comm again;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &again));
  CHECK(again != saved, "a new communicator reuses the freed handle %#x exactly", (unsigned)saved);
  CHECK_CLASS(MPI_Comm_size(saved, &size), MPI_ERR_COMM);
  CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, right0, 1, &got, 1, MPI_INT, left0, 1, again, MPI_STATUS_IGNORE));
  CHECK(got == 1000 + left0, "on a reused context got %d", got);

  /* Asymmetric history: the halves of the split create different numbers of
   * communicators, so their next free context ids differ; a communicator
   * over everybody created afterwards must still get one context on all
   * ranks, and its traffic must not leak into the halves' (same tags). */
  MPI_Comm extra[3];
  int nextra = itest_rank % 2 ? 1 : 3;
  for (int i = 0; i < nextra; ++i) CHECK_OK(MPI_Comm_dup(comms[4], &extra[i]));
  MPI_Comm all;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &all));
  {
    int hsize, hrank, hright, hleft, a = -1, b = -1;
    MPI_Comm_size(extra[nextra - 1], &hsize);
    MPI_Comm_rank(extra[nextra - 1], &hrank);
    hright = (hrank + 1) % hsize;
    hleft = (hrank + hsize - 1) % hsize;
    int mark_all = 5000 + itest_rank, mark_half = 6000 + itest_rank;
    MPI_Request q[4];
    CHECK_OK(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 4, all, &q[0]));
    CHECK_OK(MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 4, extra[nextra - 1], &q[1]));
    CHECK_OK(MPI_Isend(&mark_half, 1, MPI_INT, hright, 4, extra[nextra - 1], &q[2]));
    CHECK_OK(MPI_Isend(&mark_all, 1, MPI_INT, right0, 4, all, &q[3]));
    CHECK_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    /* The split orders a parity class by descending world rank. */
    int world_of_hleft = itest_rank + 2 * (hrank - hleft);
    CHECK(a == 5000 + left0, "comm over all after asymmetric dups got %d, want %d", a, 5000 + left0);
    CHECK(b == 6000 + world_of_hleft, "half comm after asymmetric dups got %d, want %d", b, 6000 + world_of_hleft);
  }
  CHECK_OK(MPI_Comm_free(&all));
  for (int i = 0; i < nextra; ++i) CHECK_OK(MPI_Comm_free(&extra[i]));

  itest_barrier(ctl);
  CHECK_OK(MPI_Comm_free(&ctl));
  CHECK_OK(MPI_Comm_free(&again));
  CHECK_OK(MPI_Comm_free(&late));
  for (int c = 1; c < NCOMM; ++c)
    if (c != 3) CHECK_OK(MPI_Comm_free(&comms[c]));
  free(sbuf);
  free(rbuf);
  return itest_finish("comm_isolation");
}
