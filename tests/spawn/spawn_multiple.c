/* MPI_Comm_spawn_multiple with two commands (this program with argv "a",
 * 1 process, and with argv "b", 2 processes): the children form one world
 * of 3 with MPI_APPNUM 0 and 1, see the parents as one intercommunicator
 * and report their command back. MPI_UNIVERSE_SIZE is set, in the children
 * at least parents plus children. Then a spawn of
 * a program that does not exist fails with MPI_ERR_SPAWN in every error
 * code, and the job goes on. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  if (parent == MPI_COMM_NULL) {
    int* usize = NULL;
    int flag = 0;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize >= itest_size, "MPI_UNIVERSE_SIZE flag %d value %d", flag, flag ? *usize : -1);

    char* cmds[2] = {argv[0], argv[0]};
    char* args_a[] = {"a", NULL};
    char* args_b[] = {"b", NULL};
    char** args[2] = {args_a, args_b};
    int procs[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    int codes[3] = {-1, -1, -1};
    MPI_Comm inter;
    CHECK_OK(MPI_Comm_spawn_multiple(2, cmds, args, procs, infos, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < 3; ++i) CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, codes[i]);
    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    CHECK(remote == 3, "remote size %d", remote);
    if (itest_rank == 0) {
      for (int r = 0; r < 3; ++r) {
        int got[2] = {-1, -1};
        CHECK_OK(MPI_Recv(got, 2, MPI_INT, r, 0, inter, MPI_STATUS_IGNORE));
        CHECK(got[0] == (r == 0 ? 'a' : 'b') && got[1] == (r == 0 ? 0 : 1), "child %d says %c appnum %d", r,
              got[0], got[1]);
      }
    }
    CHECK_OK(MPI_Comm_disconnect(&inter));

    /* A program that does not exist: an error, no children, no hang. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {-1, -1};
    MPI_Comm none = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_spawn("/nonexistent/sonde-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                               MPI_COMM_WORLD, &none, bad),
                MPI_ERR_SPAWN);
    CHECK(bad[0] == MPI_ERR_SPAWN && bad[1] == MPI_ERR_SPAWN, "errcodes %d %d", bad[0], bad[1]);
    CHECK(none == MPI_COMM_NULL, "intercomm after a failed spawn");
    /* MPI_ERRCODES_IGNORE is accepted. */
    CHECK_CLASS(MPI_Comm_spawn("/nonexistent/sonde-no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                               MPI_COMM_WORLD, &none, MPI_ERRCODES_IGNORE),
                MPI_ERR_SPAWN);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  } else {
    int* appnum = NULL;
    int flag = 0;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(itest_size == 3, "children's world has %d", itest_size);
    /* The universe holds the parents and the children at least. */
    int parents = 0, *usize = NULL, uflag = 0;
    MPI_Comm_remote_size(parent, &parents);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &uflag));
    CHECK(uflag && *usize >= itest_size + parents, "children's MPI_UNIVERSE_SIZE %d, %d parents", uflag ? *usize : -1,
          parents);
    int mine[2] = {argc > 1 ? argv[1][0] : '?', flag ? *appnum : -1};
    CHECK_OK(MPI_Send(mine, 2, MPI_INT, 0, 0, parent));
    CHECK_OK(MPI_Comm_disconnect(&parent));
    itest_rank += 100;
  }
  return itest_finish("spawn_multiple");
}
