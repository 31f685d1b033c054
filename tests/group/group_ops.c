/* Group algebra against hand-computed expectations, on any number of ranks,
 * and every group call's error paths (freed/null handles, bad ranks). */
#include "tests/integration/itest.h"

static void expect_members(MPI_Group g, int n, const int* world_ranks, const char* what) {
  int size = -1;
  CHECK_OK(MPI_Group_size(g, &size));
  CHECK(size == n, "%s: size %d, want %d", what, size, n);
  if (size != n) return;
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ranks[64], out[64];
  for (int i = 0; i < n; ++i) ranks[i] = i;
  CHECK_OK(MPI_Group_translate_ranks(g, n, ranks, world, out));
  for (int i = 0; i < n; ++i) CHECK(out[i] == world_ranks[i], "%s: member %d is world %d, want %d", what, i, out[i], world_ranks[i]);
  MPI_Group_free(&world);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank;
  MPI_Group world, g, h, u;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int size, rank;
  CHECK_OK(MPI_Group_size(world, &size));
  CHECK_OK(MPI_Group_rank(world, &rank));
  CHECK(size == n && rank == me, "world group %d/%d", rank, size);

  /* incl in reverse order: my rank there is n-1-me. */
  int rev[64], exp[64];
  for (int i = 0; i < n; ++i) rev[i] = n - 1 - i;
  CHECK_OK(MPI_Group_incl(world, n, rev, &g));
  CHECK_OK(MPI_Group_rank(g, &rank));
  CHECK(rank == n - 1 - me, "reversed rank %d", rank);
  expect_members(g, n, rev, "incl reversed");
  int cmp;
  CHECK_OK(MPI_Group_compare(world, g, &cmp));
  CHECK(cmp == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare reversed: %d", cmp);
  CHECK_OK(MPI_Group_compare(world, world, &cmp));
  CHECK(cmp == MPI_IDENT, "compare self: %d", cmp);

  /* excl of the even ranks: the odd ones in order. */
  int evens[64], ne = 0, odds[64], no = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) evens[ne++] = i;
    else odds[no++] = i;
  }
  CHECK_OK(MPI_Group_excl(world, ne, evens, &h));
  expect_members(h, no, odds, "excl evens");
  CHECK_OK(MPI_Group_rank(h, &rank));
  CHECK(rank == (me % 2 ? me / 2 : MPI_UNDEFINED), "rank in odds: %d", rank);
  if (no == 0) CHECK(h == MPI_GROUP_EMPTY, "empty result is MPI_GROUP_EMPTY");
  CHECK_OK(MPI_Group_compare(world, h, &cmp));
  CHECK(cmp == MPI_UNEQUAL, "world vs odds: %d", cmp);

  /* range_incl (0, n-1, 2) == evens; range_excl of the same == odds. */
  int range[1][3] = {{0, n - 1, 2}};
  MPI_Group r1, r2;
  CHECK_OK(MPI_Group_range_incl(world, 1, range, &r1));
  expect_members(r1, ne, evens, "range_incl evens");
  CHECK_OK(MPI_Group_range_excl(world, 1, range, &r2));
  expect_members(r2, no, odds, "range_excl evens");
  /* Descending range: (n-1, 0, -1) is the reversed world. */
  int down[1][3] = {{n - 1, 0, -1}};
  MPI_Group r3;
  CHECK_OK(MPI_Group_range_incl(world, 1, down, &r3));
  expect_members(r3, n, rev, "range_incl descending");

  /* union(odds, evens) = odds then evens; intersection(world, odds) = odds;
   * difference(world, odds) = evens; difference(odds, world) = empty. */
  CHECK_OK(MPI_Group_union(h, r1, &u));
  for (int i = 0; i < no; ++i) exp[i] = odds[i];
  for (int i = 0; i < ne; ++i) exp[no + i] = evens[i];
  expect_members(u, n, exp, "union");
  MPI_Group x, d, e;
  CHECK_OK(MPI_Group_intersection(world, h, &x));
  expect_members(x, no, odds, "intersection");
  CHECK_OK(MPI_Group_difference(world, h, &d));
  expect_members(d, ne, evens, "difference");
  CHECK_OK(MPI_Group_difference(h, world, &e));
  CHECK(e == MPI_GROUP_EMPTY, "odds minus world is MPI_GROUP_EMPTY");
  CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &size));
  CHECK(size == 0, "empty size %d", size);
  CHECK_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &rank));
  CHECK(rank == MPI_UNDEFINED, "empty rank %d", rank);

  /* translate_ranks: MPI_PROC_NULL maps to itself, non-members to UNDEFINED. */
  int in[2] = {MPI_PROC_NULL, 0}, out[2] = {0, 0};
  CHECK_OK(MPI_Group_translate_ranks(world, 2, in, h, out));
  CHECK(out[0] == MPI_PROC_NULL, "PROC_NULL translated to %d", out[0]);
  CHECK(out[1] == MPI_UNDEFINED, "world 0 is not odd: %d", out[1]);

  /* Errors: never a crash. */
  MPI_Group bad = g;
  CHECK_OK(MPI_Group_free(&g));
  CHECK(g == MPI_GROUP_NULL, "free nulls the handle");
  CHECK_CLASS(MPI_Group_size(bad, &size), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Group_free(&bad), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Group_size(0x12345678, &size), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Group_size(world, NULL), MPI_ERR_ARG);
  int too_big = n;
  CHECK_CLASS(MPI_Group_incl(world, 1, &too_big, &g), MPI_ERR_RANK);
  int twice[2] = {0, 0};
  CHECK_CLASS(MPI_Group_incl(world, 2, twice, &g), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Group_excl(world, 2, twice, &g), MPI_ERR_RANK);
  int zero_stride[1][3] = {{0, n - 1, 0}};
  CHECK_CLASS(MPI_Group_range_incl(world, 1, zero_stride, &g), MPI_ERR_RANK);
  int out_of_range[1][3] = {{0, n, 1}};
  CHECK_CLASS(MPI_Group_range_excl(world, 1, out_of_range, &g), MPI_ERR_RANK);
  int bad_rank = n;
  CHECK_CLASS(MPI_Group_translate_ranks(world, 1, &bad_rank, h, out), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Group_compare(world, MPI_GROUP_NULL, &cmp), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);

  /* A freed slot reused by a new group does not revive the old handle. */
  MPI_Group fresh;
  CHECK_OK(MPI_Group_incl(world, n, rev, &fresh));
  CHECK_CLASS(MPI_Group_size(bad, &size), MPI_ERR_GROUP);

  /* MPI_GROUP_EMPTY may be freed (as results of empty operations are). */
  MPI_Group empty = MPI_GROUP_EMPTY;
  CHECK_OK(MPI_Group_free(&empty));
  CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &size));

  MPI_Group* all[] = {&world, &h, &u, &r1, &r2, &r3, &x, &d, &e, &fresh};
  for (unsigned i = 0; i < sizeof all / sizeof all[0]; ++i) CHECK_OK(MPI_Group_free(all[i]));
  return itest_finish("group_ops");
}
