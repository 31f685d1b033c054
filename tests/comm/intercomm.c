/* Intercommunicators between the even and the odd world ranks (uneven
 * groups at odd sizes, a leader that is not local rank 0): queries,
 * point-to-point where ranks name the remote group (specific and
 * MPI_ANY_SOURCE receives, status.MPI_SOURCE a remote rank), dup (traffic
 * and attributes), merge in both orders, split, and error paths. 2..7 ranks. */
#include "tests/integration/itest.h"

static int nsize(int n, int color) { return color ? n / 2 : (n + 1) / 2; }
/* World rank of rank i of group `color`. */
static int world_of(int color, int i) { return 2 * i + color; }

/* Everyone sends (my world rank, destination) to every remote rank, then
 * receives one message from each remote rank: the first half by name, the
 * rest with MPI_ANY_SOURCE. */
static void all_to_remote(MPI_Comm ic, int remote_color, int tag, const char* what) {
  int rsize = 0;
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Request reqs[8];
  int out[8][2];
  for (int r = 0; r < rsize; ++r) {
    out[r][0] = itest_rank;
    out[r][1] = r;
    CHECK_OK(MPI_Isend(out[r], 2, MPI_INT, r, tag, ic, &reqs[r]));
  }
  int lrank;
  MPI_Comm_rank(ic, &lrank);
  char seen[8] = {0};
  for (int i = 0; i < rsize; ++i) {
    int in[2] = {-1, -1};
    MPI_Status st;
    int src = i < rsize / 2 ? i : MPI_ANY_SOURCE;
    CHECK_OK(MPI_Recv(in, 2, MPI_INT, src, tag, ic, &st));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "%s: source %d", what, st.MPI_SOURCE);
    if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= rsize) continue;
    CHECK(src == MPI_ANY_SOURCE || st.MPI_SOURCE == src, "%s: asked %d got %d", what, src, st.MPI_SOURCE);
    CHECK(!seen[st.MPI_SOURCE], "%s: twice from %d", what, st.MPI_SOURCE);
    seen[st.MPI_SOURCE] = 1;
    CHECK(in[0] == world_of(remote_color, st.MPI_SOURCE) && in[1] == lrank,
          "%s: from remote %d got (%d, %d), want (%d, %d)", what, st.MPI_SOURCE, in[0], in[1],
          world_of(remote_color, st.MPI_SOURCE), lrank);
  }
  CHECK_OK(MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE));
}

static void check_merged(MPI_Comm m, int first_color, int color, int lrank, const char* what) {
  int n = itest_size, r = -1, s = -1;
  MPI_Comm_rank(m, &r);
  MPI_Comm_size(m, &s);
  int want = color == first_color ? lrank : nsize(n, first_color) + lrank;
  CHECK(s == n && r == want, "%s: rank %d of %d, want %d of %d", what, r, s, want, n);
  int flag = 1;
  MPI_Comm_test_inter(m, &flag);
  CHECK(flag == 0, "%s: merged communicator is inter", what);
  /* A ring over the merged order checks its world mapping. */
  int next = (r + 1) % n, prev = (r + n - 1) % n, got = -1;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(&itest_rank, 1, MPI_INT, next, 3, &got, 1, MPI_INT, prev, 3, m, &st));
  int prev_color = prev < nsize(n, first_color) ? first_color : 1 - first_color;
  int prev_index = prev < nsize(n, first_color) ? prev : prev - nsize(n, first_color);
  CHECK(got == world_of(prev_color, prev_index), "%s: ring got %d from %d", what, got, prev);
  /* Collectives work on the merged intracommunicator. */
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&itest_rank, &sum, 1, MPI_INT, MPI_SUM, m));
  CHECK(sum == n * (n - 1) / 2, "%s: allreduce %d", what, sum);
}

static int copy_plus1(MPI_Comm c, int k, void* extra, void* in, void* out, int* flag) {
  *(void**)out = (void*)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, color = itest_rank % 2, lrank = itest_rank / 2;
  CHECK(n >= 2, "needs 2 ranks");
  MPI_Comm local, ic, ic2, merged;
  MPI_Comm_split(MPI_COMM_WORLD, color, itest_rank, &local);
  int lsize = nsize(n, color), rsize = nsize(n, 1 - color);
  int leader = lsize - 1;                          /* not rank 0 when lsize > 1 */
  int remote_leader = world_of(1 - color, rsize - 1);
  CHECK_OK(MPI_Intercomm_create(local, leader, MPI_COMM_WORLD, remote_leader, 77, &ic));
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);

  int flag = 0, v = -1;
  CHECK_OK(MPI_Comm_test_inter(ic, &flag));
  CHECK(flag == 1, "test_inter");
  MPI_Comm_size(ic, &v);
  CHECK(v == lsize, "local size %d want %d", v, lsize);
  MPI_Comm_rank(ic, &v);
  CHECK(v == lrank, "local rank %d want %d", v, lrank);
  CHECK_OK(MPI_Comm_remote_size(ic, &v));
  CHECK(v == rsize, "remote size %d want %d", v, rsize);
  MPI_Group rg, lg, wg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  CHECK_OK(MPI_Comm_remote_group(ic, &rg));
  CHECK_OK(MPI_Comm_group(ic, &lg));
  for (int i = 0; i < rsize; ++i) {
    int w = -1;
    MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
    CHECK(w == world_of(1 - color, i), "remote group member %d is world %d", i, w);
  }
  for (int i = 0; i < lsize; ++i) {
    int w = -1;
    MPI_Group_translate_ranks(lg, 1, &i, wg, &w);
    CHECK(w == world_of(color, i), "local group member %d is world %d", i, w);
  }
  MPI_Group_free(&rg);
  MPI_Group_free(&lg);
  MPI_Group_free(&wg);

  all_to_remote(ic, 1 - color, 11, "intercomm");
  /* A rank outside the remote group is an error. */
  CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, rsize, 0, ic), MPI_ERR_RANK);
  /* MPI_PROC_NULL works as anywhere. */
  CHECK_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, ic));

  /* dup: congruent, own traffic, attributes copied. */
  int key;
  MPI_Comm_create_keyval(copy_plus1, MPI_COMM_NULL_DELETE_FN, &key, NULL);
  MPI_Comm_set_attr(ic, key, (void*)40);
  CHECK_OK(MPI_Comm_dup(ic, &ic2));
  int cmp = -1;
  CHECK_OK(MPI_Comm_compare(ic, ic2, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "intercomm vs its dup: %d", cmp);
  CHECK_OK(MPI_Comm_compare(ic, local, &cmp));
  CHECK(cmp == MPI_UNEQUAL, "inter vs intra: %d", cmp);
  void* val = NULL;
  MPI_Comm_get_attr(ic2, key, &val, &flag);
  CHECK(flag && val == (void*)41, "attribute copied on intercomm dup");
  CHECK_OK(MPI_Comm_test_inter(ic2, &flag));
  CHECK(flag == 1, "dup of an intercomm is inter");
  /* Interleave: the same tag on both communicators must not mix. */
  all_to_remote(ic2, 1 - color, 11, "dup of intercomm");
  all_to_remote(ic, 1 - color, 12, "intercomm after dup");

  /* Merge: odds high -> evens first; then the other way round. */
  CHECK_OK(MPI_Intercomm_merge(ic, color == 1, &merged));
  check_merged(merged, 0, color, lrank, "merge odds high");
  MPI_Comm_free(&merged);
  CHECK_OK(MPI_Intercomm_merge(ic2, color == 0, &merged));
  check_merged(merged, 1, color, lrank, "merge evens high");
  MPI_Comm_free(&merged);
  /* Equal `high`: the group with the lower leader (evens, world 0) first. */
  CHECK_OK(MPI_Intercomm_merge(ic, 0, &merged));
  check_merged(merged, 0, color, lrank, "merge equal high");
  MPI_Comm_free(&merged);

  /* An intercomm built from an intercomm's merged halves: the dup still works
   * after the original is freed. */
  CHECK_OK(MPI_Comm_free(&ic));
  all_to_remote(ic2, 1 - color, 13, "dup after original freed");
  MPI_Comm ic3;
  MPI_Request req;
  CHECK_OK(MPI_Comm_idup(ic2, &ic3, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  all_to_remote(ic3, 1 - color, 14, "idup of intercomm");
  MPI_Comm_free(&ic3);

  /* Split of an intercommunicator: color = world rank % 3, keys reverse
   * the order. Each color's local and remote parts form an
   * intercommunicator; a color missing on the other side gives
   * MPI_COMM_NULL. */
  MPI_Comm sic;
  int scolor = itest_rank % 3;
  CHECK_OK(MPI_Comm_split(ic2, scolor, -itest_rank, &sic));
  int want_local[8], nl = 0, want_remote[8], nr = 0;
  for (int w = n - 1; w >= 0; --w) {
    if (w % 3 != scolor) continue;
    if (w % 2 == color) want_local[nl++] = w;
    else want_remote[nr++] = w;
  }
  if (nr == 0) {
    CHECK(sic == MPI_COMM_NULL, "split: no remote process of color %d, yet a communicator", scolor);
  } else if (sic == MPI_COMM_NULL) {
    CHECK(0, "split: color %d gave MPI_COMM_NULL", scolor);
  } else {
    int sr = -1, ss = -1, srs = -1;
    MPI_Comm_rank(sic, &sr);
    MPI_Comm_size(sic, &ss);
    MPI_Comm_remote_size(sic, &srs);
    CHECK(ss == nl && srs == nr && sr >= 0 && sr < nl && want_local[sr] == itest_rank,
          "split: rank %d size %d remote %d, want size %d remote %d", sr, ss, srs, nl, nr);
    MPI_Group srg, wg2;
    MPI_Comm_remote_group(sic, &srg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg2);
    int idx[8], wr[8];
    for (int i = 0; i < srs && i < 8; ++i) idx[i] = i;
    MPI_Group_translate_ranks(srg, srs, idx, wg2, wr);
    for (int i = 0; i < srs && i < nr; ++i) CHECK(wr[i] == want_remote[i], "split remote %d is world %d", i, wr[i]);
    /* Everyone sends its world rank to every remote process. */
    MPI_Request sr8[8];
    for (int i = 0; i < srs; ++i) MPI_Isend(&itest_rank, 1, MPI_INT, i, 21, sic, &sr8[i]);
    for (int i = 0; i < srs; ++i) {
      int got = -1;
      MPI_Status st;
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 21, sic, &st));
      CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr && got == want_remote[st.MPI_SOURCE],
            "split traffic: %d from remote %d", got, st.MPI_SOURCE);
    }
    MPI_Waitall(srs, sr8, MPI_STATUSES_IGNORE);
    MPI_Group_free(&srg);
    MPI_Group_free(&wg2);
    MPI_Comm_free(&sic);
  }
  CHECK_OK(MPI_Comm_split(ic2, MPI_UNDEFINED, 0, &sic));
  CHECK(sic == MPI_COMM_NULL, "split with MPI_UNDEFINED");

  /* Errors. */
  MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Intercomm_merge(local, 0, &merged), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &merged), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 0, -1, &merged), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Intercomm_create(ic2, 0, MPI_COMM_WORLD, 0, 1, &merged), MPI_ERR_COMM);
  MPI_Comm_free(&ic2);
  MPI_Comm_free_keyval(&key);
  MPI_Comm_free(&local);
  return itest_finish("intercomm");
}
