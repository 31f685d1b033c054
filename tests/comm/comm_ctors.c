/* Communicator constructors and queries: dup_with_info, idup, create,
 * create_group, split_type, compare, test_inter, set_info/get_info -- each
 * new communicator carries traffic (a ring exchange) -- and their error
 * paths. Any number of ranks. */
#include "tests/integration/itest.h"

/* Every rank sends its world rank to the next one in `comm`'s order and
 * checks what arrives from the previous one. */
static void ring(MPI_Comm comm, const char* what) {
  int r, n;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  MPI_Group g, world;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int prev = (r + n - 1) % n, prev_world = -1;
  MPI_Group_translate_ranks(g, 1, &prev, world, &prev_world);
  int got = -1;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(&itest_rank, 1, MPI_INT, (r + 1) % n, 7, &got, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm, &st));
  CHECK(got == prev_world && st.MPI_SOURCE == prev, "%s: got %d from %d, want %d from %d", what, got, st.MPI_SOURCE,
        prev_world, prev);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank, cmp = -1, flag = -1;

  /* dup_with_info: the new communicator has the given hints, not the parent's. */
  MPI_Info info, got;
  MPI_Info_create(&info);
  MPI_Info_set(info, "sonde_test_hint", "yes");
  MPI_Comm a, b, c;
  CHECK_OK(MPI_Comm_set_info(MPI_COMM_WORLD, info));
  MPI_Info_set(info, "sonde_test_hint", "dup");
  CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a));
  char value[64];
  CHECK_OK(MPI_Comm_get_info(a, &got));
  CHECK_OK(MPI_Info_get(got, "sonde_test_hint", 63, value, &flag));
  CHECK(flag && strcmp(value, "dup") == 0, "dup_with_info hint: %s", flag ? value : "(none)");
  MPI_Info_free(&got);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, a, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "world vs its dup: %d", cmp);
  CHECK_OK(MPI_Comm_compare(a, a, &cmp));
  CHECK(cmp == MPI_IDENT, "a vs a: %d", cmp);
  ring(a, "dup_with_info");

  /* dup keeps the parent's hints. */
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
  CHECK_OK(MPI_Comm_get_info(b, &got));
  CHECK_OK(MPI_Info_get(got, "sonde_test_hint", 63, value, &flag));
  CHECK(flag && strcmp(value, "yes") == 0, "dup inherits hints: %s", flag ? value : "(none)");
  MPI_Info_free(&got);
  MPI_Comm_free(&b);

  /* idup: a request Wait and Test accept. */
  MPI_Request req;
  CHECK_OK(MPI_Comm_idup(a, &b, &req));
  CHECK(req != MPI_REQUEST_NULL, "idup gives a request");
  MPI_Status st;
  CHECK_OK(MPI_Wait(&req, &st));
  CHECK(req == MPI_REQUEST_NULL, "wait retires the idup request");
  ring(b, "idup");
  CHECK_OK(MPI_Comm_idup(b, &c, &req));
  flag = 0;
  while (!flag) CHECK_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
  ring(c, "idup of idup");
  CHECK_OK(MPI_Comm_compare(b, c, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "idup vs idup: %d", cmp);
  MPI_Comm_free(&c);
  MPI_Comm_free(&b);

  /* split_type SHARED: this job runs on one host, so all ranks share a node. */
  MPI_Comm node;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n - me, MPI_INFO_NULL, &node));
  int nr = -1, ns = -1;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  CHECK(ns == n && nr == n - 1 - me, "shared split: rank %d of %d", nr, ns);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, node, &cmp));
  CHECK(cmp == (n == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "world vs reversed node comm: %d", cmp);
  ring(node, "split_type");
  MPI_Comm_free(&node);
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
  CHECK(node == MPI_COMM_NULL, "split_type UNDEFINED gives MPI_COMM_NULL");
  /* HW_UNGUIDED: the node is not strictly smaller than WORLD here. */
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &node));
  CHECK(node == MPI_COMM_NULL, "HW_UNGUIDED on one node gives MPI_COMM_NULL");
  MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &node));
  CHECK(node != MPI_COMM_NULL, "HW_GUIDED shared memory gives a communicator");
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);

  /* create: the odd world ranks, reversed; evens get MPI_COMM_NULL. */
  MPI_Group world, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int list[64], k = 0;
  for (int r = n - 1; r >= 0; --r)
    if (r % 2) list[k++] = r;
  MPI_Group_incl(world, k, list, &odds);
  MPI_Comm oc;
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, odds, &oc));
  if (me % 2) {
    int r = -1;
    CHECK(oc != MPI_COMM_NULL, "odd rank got no communicator");
    if (oc != MPI_COMM_NULL) {
      MPI_Comm_rank(oc, &r);
      int want = 0;
      for (int i = 0; i < k; ++i)
        if (list[i] == me) want = i;
      CHECK(r == want, "rank in created comm %d, want %d", r, want);
      ring(oc, "create");
      MPI_Comm_free(&oc);
    }
  } else {
    CHECK(oc == MPI_COMM_NULL, "even rank got a communicator");
  }

  /* create_group: only the odd ranks call. */
  if (me % 2) {
    CHECK_OK(MPI_Comm_create_group(a, odds, 5, &oc));
    CHECK(oc != MPI_COMM_NULL, "create_group member got nothing");
    if (oc != MPI_COMM_NULL) {
      ring(oc, "create_group");
      MPI_Comm_free(&oc);
    }
  }
  /* Not a member: local, MPI_COMM_NULL. */
  CHECK_OK(MPI_Comm_create_group(a, MPI_GROUP_EMPTY, 5, &oc));
  CHECK(oc == MPI_COMM_NULL, "create_group of the empty group");

  /* test_inter / remote_size on an intracommunicator. */
  CHECK_OK(MPI_Comm_test_inter(a, &flag));
  CHECK(flag == 0, "intracomm reported as inter");
  int rs;
  CHECK_CLASS(MPI_Comm_remote_size(a, &rs), MPI_ERR_COMM);

  /* compare: unrelated communicators are UNEQUAL (n > 1), SELF vs WORLD. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  CHECK_OK(MPI_Comm_compare(half, MPI_COMM_WORLD, &cmp));
  CHECK(cmp == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "half vs world: %d", cmp);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &cmp));
  CHECK(cmp == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "self vs world: %d", cmp);
  MPI_Comm_free(&half);

  /* Errors. */
  MPI_Comm dead;
  MPI_Comm_dup(MPI_COMM_WORLD, &dead);
  MPI_Comm stale = dead;
  MPI_Comm_free(&dead);
  CHECK_CLASS(MPI_Comm_dup_with_info(stale, info, &b), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_dup_with_info(a, 0x7000beef, &b), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Comm_idup(MPI_COMM_NULL, &b, &req), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_idup(a, &b, NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_create(a, MPI_GROUP_NULL, &b), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Comm_create_group(a, odds, -1, &b), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Comm_split_type(a, 12345, 0, MPI_INFO_NULL, &b), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_compare(stale, a, &cmp), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_compare(a, a, NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_test_inter(stale, &flag), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_set_info(a, MPI_INFO_NULL), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Comm_get_info(stale, &got), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_free(&stale), MPI_ERR_COMM);
  /* Group with a process outside the communicator. */
  if (n > 1) {
    MPI_Group self_group;
    MPI_Comm_group(MPI_COMM_SELF, &self_group);
    MPI_Group two;
    int both[2] = {0, 1};
    MPI_Group_incl(world, 2, both, &two);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_SELF, two, &b), MPI_ERR_GROUP);
    MPI_Group_free(&two);
    MPI_Group_free(&self_group);
  }

  MPI_Group_free(&odds);
  MPI_Group_free(&world);
  MPI_Info_free(&info);
  MPI_Comm_free(&a);
  return itest_finish("comm_ctors");
}
