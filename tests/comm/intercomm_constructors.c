/* Constructors on intercommunicators between the even and the odd world
 * ranks. 2..7 ranks (at 2 and 3 one side has a single process, so the
 * subgroup cases below give MPI_COMM_NULL everywhere).
 *   - MPI_Comm_create with each side's local ranks 1.. in reverse order:
 *     an intercommunicator between the two parts (ranks in group order,
 *     remote group, traffic both ways, dup of the result); MPI_COMM_NULL
 *     for local rank 0, and for everyone when either part is empty;
 *   - MPI_Comm_create with MPI_GROUP_EMPTY on one side only: MPI_COMM_NULL
 *     on both; a group naming remote processes: MPI_ERR_GROUP;
 *   - MPI_Comm_idup does not block: local rank 0 idups only after receiving
 *     what the remote side sends after its own idup (attributes are copied);
 *     several idups in flight with a blocking dup in between, waited in
 *     reverse order;
 *   - MPI_Comm_split_type on an intercommunicator: each type's local and
 *     remote parts, ranked by key. */
#include "tests/integration/itest.h"

static int nsize(int n, int color) { return color ? n / 2 : (n + 1) / 2; }
/* World rank of rank i of group `color`. */
static int world_of(int color, int i) { return 2 * i + color; }

/* Every process sends its world rank to every remote rank and checks what
 * arrives from each against `remote_world` (world rank by remote rank). */
static void traffic(MPI_Comm ic, const int* remote_world, int tag, const char* what) {
  int rsize = 0;
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Request reqs[8];
  for (int r = 0; r < rsize; ++r) CHECK_OK(MPI_Isend(&itest_rank, 1, MPI_INT, r, tag, ic, &reqs[r]));
  for (int r = 0; r < rsize; ++r) {
    int got = -1;
    MPI_Status st;
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, r, tag, ic, &st));
    CHECK(got == remote_world[r] && st.MPI_SOURCE == r, "%s: remote %d sent world %d (source %d), want %d", what,
          r, got, st.MPI_SOURCE, remote_world[r]);
  }
  CHECK_OK(MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE));
}

/* World ranks of a communicator's remote group. */
static void remote_world_ranks(MPI_Comm ic, int* out, int* count) {
  MPI_Group g, wg;
  MPI_Comm_remote_group(ic, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(g, count);
  int ranks[8];
  for (int i = 0; i < *count; ++i) ranks[i] = i;
  MPI_Group_translate_ranks(g, *count, ranks, wg, out);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, color = itest_rank % 2, lrank = itest_rank / 2;
  CHECK(n >= 2 && n <= 8, "needs 2..8 ranks");
  int lsize = nsize(n, color), rsize = nsize(n, 1 - color);
  MPI_Comm local, ic;
  MPI_Comm_split(MPI_COMM_WORLD, color, itest_rank, &local);
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &ic));
  MPI_Group lgroup;
  MPI_Comm_group(ic, &lgroup);

  /* Local ranks lsize-1 .. 1 on each side. */
  int ranks[8], k = 0;
  for (int r = lsize - 1; r >= 1; --r) ranks[k++] = r;
  MPI_Group part;
  CHECK_OK(MPI_Group_incl(lgroup, k, ranks, &part));
  MPI_Comm sub = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_create(ic, part, &sub));
  int want_null = lrank == 0 || lsize < 2 || rsize < 2;
  CHECK((sub == MPI_COMM_NULL) == want_null, "create: got %s, want %s", sub == MPI_COMM_NULL ? "null" : "a comm",
        want_null ? "null" : "a comm");
  if (sub != MPI_COMM_NULL) {
    int flag = 0, size = -1, rank = -1, rs = -1;
    MPI_Comm_test_inter(sub, &flag);
    MPI_Comm_size(sub, &size);
    MPI_Comm_rank(sub, &rank);
    MPI_Comm_remote_size(sub, &rs);
    CHECK(flag && size == lsize - 1 && rank == lsize - 1 - lrank && rs == rsize - 1,
          "create: inter %d size %d rank %d remote %d, want 1 %d %d %d", flag, size, rank, rs, lsize - 1,
          lsize - 1 - lrank, rsize - 1);
    int want[8], got[8], count = 0;
    for (int i = 0; i < rsize - 1; ++i) want[i] = world_of(1 - color, rsize - 1 - i);
    remote_world_ranks(sub, got, &count);
    CHECK(count == rsize - 1, "create: remote group of %d", count);
    for (int i = 0; i < count && i < rsize - 1; ++i)
      CHECK(got[i] == want[i], "create: remote rank %d is world %d, want %d", i, got[i], want[i]);
    traffic(sub, want, 11, "create");
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(sub, &dup));
    traffic(dup, want, 12, "dup of created");
    MPI_Comm_free(&dup);
    CHECK_OK(MPI_Comm_free(&sub));
  }
  MPI_Group_free(&part);

  /* One side empty: null on both. */
  MPI_Comm none = ic;
  CHECK_OK(MPI_Comm_create(ic, color == 0 ? MPI_GROUP_EMPTY : lgroup, &none));
  CHECK(none == MPI_COMM_NULL, "create with one side empty gave a communicator");
  /* The remote group is not part of the local group. */
  MPI_Group rgroup;
  MPI_Comm_remote_group(ic, &rgroup);
  CHECK_CLASS(MPI_Comm_create(ic, rgroup, &none), MPI_ERR_GROUP);
  MPI_Group_free(&rgroup);
  /* The whole local group: a congruent intercommunicator. */
  MPI_Comm whole = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_create(ic, lgroup, &whole));
  if (whole != MPI_COMM_NULL) {
    int cmp = -1, want[8];
    MPI_Comm_compare(whole, ic, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "create of whole groups compares %d", cmp);
    for (int i = 0; i < rsize; ++i) want[i] = world_of(1 - color, i);
    traffic(whole, want, 13, "create of whole groups");
    MPI_Comm_free(&whole);
  } else {
    CHECK(0, "create of whole groups gave MPI_COMM_NULL");
  }

  /* Idup does not block: remote ranks 1.. send to local rank 0 only after
   * starting their own idup; local rank 0 receives them all first. */
  int want_remote[8];
  for (int i = 0; i < rsize; ++i) want_remote[i] = world_of(1 - color, i);
  /* An attribute with MPI_COMM_DUP_FN follows the idup, with the hints. */
  int key;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
  MPI_Comm_set_attr(ic, key, (void*)(intptr_t)(100 + itest_rank));
  MPI_Comm d;
  MPI_Request req;
  int token = lrank;
  if (lrank == 0) {
    for (int r = 1; r < rsize; ++r) {
      int got = -1;
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, r, 21, ic, MPI_STATUS_IGNORE));
      CHECK(got == r, "before idup: %d from remote %d", got, r);
    }
    CHECK_OK(MPI_Comm_idup(ic, &d, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Comm_idup(ic, &d, &req));
    CHECK_OK(MPI_Ssend(&token, 1, MPI_INT, 0, 21, ic));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  }
  int cmp = -1;
  MPI_Comm_compare(d, ic, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "idup compares %d", cmp);
  void* val = NULL;
  int found = 0;
  CHECK_OK(MPI_Comm_get_attr(d, key, &val, &found));
  CHECK(found && val == (void*)(intptr_t)(100 + itest_rank), "idup: attribute %s", found ? "changed" : "not copied");
  MPI_Comm_delete_attr(ic, key);
  MPI_Comm_free_keyval(&key);
  traffic(d, want_remote, 22, "idup");
  MPI_Comm_free(&d);

  /* Several in flight, a blocking dup in between, waited in reverse. */
  MPI_Comm ds[3], mid;
  MPI_Request rs[3];
  CHECK_OK(MPI_Comm_idup(ic, &ds[0], &rs[0]));
  CHECK_OK(MPI_Comm_idup(ic, &ds[1], &rs[1]));
  CHECK_OK(MPI_Comm_dup(ic, &mid));
  CHECK_OK(MPI_Comm_idup(mid, &ds[2], &rs[2]));
  for (int i = 2; i >= 0; --i) CHECK_OK(MPI_Wait(&rs[i], MPI_STATUS_IGNORE));
  for (int i = 0; i < 3; ++i) {
    CHECK(ds[i] != ic && ds[i] != mid && (i == 0 || ds[i] != ds[i - 1]), "idup %d not a new handle", i);
    traffic(ds[i], want_remote, 30 + i, "idups in flight");
  }
  /* Messages stay on their own duplicate. */
  int a = itest_rank, b = -itest_rank - 1, ga = -5, gb = -5;
  if (lrank == 0) {
    MPI_Request q[4];
    MPI_Isend(&a, 1, MPI_INT, 0, 40, ds[0], &q[0]);
    MPI_Isend(&b, 1, MPI_INT, 0, 40, ds[1], &q[1]);
    MPI_Irecv(&gb, 1, MPI_INT, 0, 40, ds[1], &q[2]);
    MPI_Irecv(&ga, 1, MPI_INT, 0, 40, ds[0], &q[3]);
    CHECK_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    int ra = world_of(1 - color, 0);
    CHECK(ga == ra && gb == -ra - 1, "duplicates mixed messages: %d %d", ga, gb);
  }
  for (int i = 0; i < 3; ++i) MPI_Comm_free(&ds[i]);
  MPI_Comm_free(&mid);

  /* Split_type: processes of a node form an intercommunicator with the
   * remote processes of the same node, ranked by key (here reversed). */
  MPI_Comm node_world, st;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_world);
  int node_n = 0;
  MPI_Comm_size(node_world, &node_n);
  MPI_Comm_free(&node_world);
  CHECK_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, -lrank, MPI_INFO_NULL, &st));
  if (node_n == n) { /* one node: everyone in one intercommunicator */
    int flag = 0, size = -1, rank = -1, rsz = -1;
    CHECK(st != MPI_COMM_NULL, "split_type on one node gave MPI_COMM_NULL");
    if (st != MPI_COMM_NULL) {
      MPI_Comm_test_inter(st, &flag);
      MPI_Comm_size(st, &size);
      MPI_Comm_rank(st, &rank);
      MPI_Comm_remote_size(st, &rsz);
      CHECK(flag && size == lsize && rank == lsize - 1 - lrank && rsz == rsize,
            "split_type: inter %d size %d rank %d remote %d", flag, size, rank, rsz);
      int want[8];
      for (int i = 0; i < rsize; ++i) want[i] = world_of(1 - color, rsize - 1 - i);
      traffic(st, want, 50, "split_type");
    }
  }
  if (st != MPI_COMM_NULL) MPI_Comm_free(&st);
  CHECK_OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &st));
  CHECK(st == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");

  MPI_Group_free(&lgroup);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  return itest_finish("intercomm_constructors");
}
