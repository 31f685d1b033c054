/* MPI_Comm_spawn twice in a row from the same parents, both
 * intercommunicators in use at once: the parents spawn job A, then job B,
 * exchange with both (B first), disconnect A, use B again, spawn job C after
 * A is gone and use C and B together, then disconnect both. With argv[1]
 * "self", every parent does all that alone over MPI_COMM_SELF, so the
 * parents' spawns and connections run at the same time. Children of every
 * job run this program with argv[1] naming their job. */
#include "tests/integration/itest.h"

enum { kChildren = 2 };

/* The parents' rank 0 sends each child `base + its rank`; every child
 * answers twice the value; then an allreduce across the intercommunicator
 * gives each side the other side's sum, and the children check that the
 * parents' side has the parents' size. */
static void exchange(MPI_Comm inter, int parents_side, int base) {
  int rank, remote;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_remote_size(inter, &remote);
  if (parents_side) {
    if (rank == 0) {
      for (int r = 0; r < remote; ++r) {
        int v = base + r;
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, r, base, inter));
      }
      for (int r = 0; r < remote; ++r) {
        int back = -1;
        CHECK_OK(MPI_Recv(&back, 1, MPI_INT, r, base + 1, inter, MPI_STATUS_IGNORE));
        CHECK(back == 2 * (base + r), "base %d: answer %d from child %d, want %d", base, back, r, 2 * (base + r));
      }
    }
  } else {
    int got = -1;
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 0, base, inter, MPI_STATUS_IGNORE));
    CHECK(got == base + rank, "base %d: got %d", base, got);
    got *= 2;
    CHECK_OK(MPI_Send(&got, 1, MPI_INT, 0, base + 1, inter));
  }
  int mine = parents_side ? 1000 : base + rank, sum = -1;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  int want = parents_side ? remote * base + remote * (remote - 1) / 2 : 1000 * remote;
  CHECK(sum == want, "base %d: allreduce %d, want %d", base, sum, want);
}

static MPI_Comm spawn_job(const char* prog, const char* job, MPI_Comm over) {
  char* args[] = {(char*)job, NULL};
  int codes[kChildren];
  MPI_Comm inter = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_spawn(prog, args, kChildren, MPI_INFO_NULL, 0, over, &inter, codes));
  for (int i = 0; i < kChildren; ++i) CHECK(codes[i] == MPI_SUCCESS, "job %s: errcode[%d] = %d", job, i, codes[i]);
  int remote = -1;
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == kChildren, "job %s: remote size %d", job, remote);
  return inter;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  if (parent != MPI_COMM_NULL) {
    CHECK(argc > 1, "child argv");
    const char job = argc > 1 ? argv[1][0] : '?';
    int base = job == 'a' ? 100 : job == 'b' ? 200 : 300;
    exchange(parent, 0, base);
    if (job == 'b') {
      exchange(parent, 0, 250); /* after A is disconnected */
      exchange(parent, 0, 270); /* beside C */
    }
    CHECK_OK(MPI_Comm_disconnect(&parent));
    itest_rank += 100; /* children report as 100+ */
    return itest_finish("spawn_twice");
  }
  MPI_Comm over = argc > 1 && strcmp(argv[1], "self") == 0 ? MPI_COMM_SELF : MPI_COMM_WORLD;
  MPI_Comm a = spawn_job(argv[0], "a", over);
  MPI_Comm b = spawn_job(argv[0], "b", over);
  exchange(b, 1, 200);
  exchange(a, 1, 100);
  CHECK_OK(MPI_Comm_disconnect(&a));
  exchange(b, 1, 250);
  MPI_Comm c = spawn_job(argv[0], "c", over);
  exchange(c, 1, 300);
  exchange(b, 1, 270);
  CHECK_OK(MPI_Comm_disconnect(&c));
  CHECK_OK(MPI_Comm_disconnect(&b));
  return itest_finish("spawn_twice");
}
