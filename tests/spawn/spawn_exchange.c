/* MPI_Comm_spawn: the parents (1 or 2) spawn N children (argv[1]) of this
 * same program; both sides exchange data both ways over the
 * intercommunicator, run barrier, bcast and allreduce across it, merge it
 * (parents first) and disconnect. With argv[2], the transport the
 * connection wired last (the MPI_T cvar sonde_transports lists them in the
 * order they were added) must be that one, on both sides; with argv[3],
 * the children go to that host (the info key "host"); with argv[4] "die",
 * nothing is exchanged: the parents print "traffic flowing" and wait for a
 * message the children never send, and the children wait until they are
 * killed (the parents must then end with an error, not hang); with argv[4]
 * "refused", the spawn must fail with MPI_ERR_SPAWN (a host that is not the
 * job's) and the parents go on. Each child prints "spawn_exchange: child R
 * of N on HOST" (its processor name). argv[2] "any" checks no transport;
 * "HOST=T,...,child=T" expects T of a parent on HOST, of every child;
 * argv[3] "@FILE" gives the hostfile FILE (the info key "hostfile")
 * instead. */
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/spawn/last_transport.h"

/* The transport argv[2] expects of this process: the spec itself, or in a
 * "HOST=T,...,child=T" list the entry of "child" (children) or of this
 * process's host (parents); "any" where none applies. */
static const char* expected_transport(const char* spec, int child, char* buf, size_t size) {
  if (!strchr(spec, '=')) return spec;
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  MPI_Get_processor_name(host, &len);
  const char* key = child ? "child" : host;
  snprintf(buf, size, "any");
  for (const char* p = spec; *p;) {
    const char* eq = strchr(p, '=');
    const char* end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    if (eq && eq < end && (size_t)(eq - p) == strlen(key) && strncmp(p, key, (size_t)(eq - p)) == 0)
      snprintf(buf, size, "%.*s", (int)(end - eq - 1), eq + 1);
    p = *end ? end + 1 : end;
  }
  return buf;
}

static void exchange(MPI_Comm inter, int parents_side) {
  int rank, size, remote;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &remote);
  /* Each side's rank 0 in turn sends a value to every remote rank, which
   * answers with twice the value. */
  for (int lead = 1; lead >= 0; --lead) {
    if (parents_side == lead) {
      if (rank == 0) {
        for (int r = 0; r < remote; ++r) {
          int v = (lead ? 1000 : 2000) + r, back = -1;
          CHECK_OK(MPI_Send(&v, 1, MPI_INT, r, 7, inter));
          CHECK_OK(MPI_Recv(&back, 1, MPI_INT, r, 8, inter, MPI_STATUS_IGNORE));
          CHECK(back == 2 * v, "answer %d from remote %d, want %d", back, r, 2 * v);
        }
      }
    } else {
      int got = -1;
      MPI_Status st;
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 0, 7, inter, &st));
      CHECK(got == (lead ? 1000 : 2000) + rank, "got %d", got);
      CHECK(st.MPI_SOURCE == 0, "source %d", st.MPI_SOURCE);
      got *= 2;
      CHECK_OK(MPI_Send(&got, 1, MPI_INT, 0, 8, inter));
    }
  }

  /* A larger message (rendezvous), parents' rank 0 to children's rank 0 and back. */
  enum { kBig = 1 << 20 };
  unsigned char* big = malloc(kBig);
  if (rank == 0) {
    if (parents_side) {
      itest_fill(big, kBig, 11);
      CHECK_OK(MPI_Send(big, kBig, MPI_BYTE, 0, 9, inter));
      CHECK_OK(MPI_Recv(big, kBig, MPI_BYTE, 0, 9, inter, MPI_STATUS_IGNORE));
      CHECK(itest_verify(big, kBig, 12) < 0, "big message back is wrong");
    } else {
      CHECK_OK(MPI_Recv(big, kBig, MPI_BYTE, 0, 9, inter, MPI_STATUS_IGNORE));
      CHECK(itest_verify(big, kBig, 11) < 0, "big message is wrong");
      itest_fill(big, kBig, 12);
      CHECK_OK(MPI_Send(big, kBig, MPI_BYTE, 0, 9, inter));
    }
  }
  free(big);

  CHECK_OK(MPI_Barrier(inter));
  /* Bcast from the parents' rank 0 to the children. */
  int b = parents_side ? (rank == 0 ? 4242 : -1) : -1;
  if (parents_side) {
    CHECK_OK(MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
  } else {
    CHECK_OK(MPI_Bcast(&b, 1, MPI_INT, 0, inter));
    CHECK(b == 4242, "bcast gave %d", b);
  }
  /* Allreduce: each side gets the sum over the other side. */
  int mine = (parents_side ? 100 : 1) * (rank + 1), sum = -1;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  int want = (parents_side ? 1 : 100) * remote * (remote + 1) / 2;
  CHECK(sum == want, "allreduce %d, want %d", sum, want);

  /* Merge, parents first. */
  MPI_Comm merged;
  CHECK_OK(MPI_Intercomm_merge(inter, parents_side ? 0 : 1, &merged));
  int mrank, msize;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  CHECK(msize == size + remote, "merged size %d", msize);
  CHECK(mrank == (parents_side ? rank : remote + rank), "merged rank %d", mrank);
  int one = 1, total = 0;
  CHECK_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
  CHECK(total == msize, "merged allreduce %d", total);
  CHECK_OK(MPI_Comm_free(&merged));
  CHECK_OK(MPI_Comm_disconnect(&inter));
  CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int provided = 0;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  if (parent == MPI_COMM_NULL) {
    int n = argc > 1 ? atoi(argv[1]) : 1;
    int* codes = malloc(sizeof(int) * (size_t)n);
    char* child_args[] = {"child", argc > 2 ? argv[2] : NULL, argc > 4 ? argv[4] : NULL, NULL};
    MPI_Comm inter;
    MPI_Info info = MPI_INFO_NULL;
    if (argc > 3) {
      CHECK_OK(MPI_Info_create(&info));
      if (argv[3][0] == '@')
        CHECK_OK(MPI_Info_set(info, "hostfile", argv[3] + 1));
      else
        CHECK_OK(MPI_Info_set(info, "host", argv[3]));
    }
    if (argc > 4 && strcmp(argv[4], "refused") == 0) {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      inter = MPI_COMM_WORLD;
      CHECK_CLASS(MPI_Comm_spawn(argv[0], child_args, n, info, 0, MPI_COMM_WORLD, &inter, codes), MPI_ERR_SPAWN);
      for (int i = 0; i < n; ++i) CHECK(codes[i] == MPI_ERR_SPAWN, "errcode[%d] = %d", i, codes[i]);
      CHECK(inter == MPI_COMM_NULL, "intercomm after a refused spawn");
      MPI_Info_free(&info);
      free(codes);
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      MPI_T_finalize();
      return itest_finish("spawn_exchange");
    }
    CHECK_OK(MPI_Comm_spawn(argv[0], child_args, n, info, 0, MPI_COMM_WORLD, &inter, codes));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    for (int i = 0; i < n; ++i) CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, codes[i]);
    free(codes);
    int remote = -1, is_inter = 0;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &remote);
    CHECK(is_inter && remote == n, "remote size %d, want %d", remote, n);
    char want[32];
    if (argc > 2) check_last_transport(expected_transport(argv[2], 0, want, sizeof want));
    if (argc > 4 && strcmp(argv[4], "die") == 0) {
      printf("traffic flowing\n");
      fflush(stdout);
      int v = 0;
      MPI_Recv(&v, 1, MPI_INT, 0, 99, inter, MPI_STATUS_IGNORE);
      CHECK(0, "a receive from a killed child returned");
    }
    exchange(inter, 1);
  } else {
    CHECK(argc > 1 && strcmp(argv[1], "child") == 0, "child argv");
    int is_inter = 0, remote = -1;
    MPI_Comm_test_inter(parent, &is_inter);
    MPI_Comm_remote_size(parent, &remote);
    CHECK(is_inter, "the parent communicator is not an intercommunicator");
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    CHECK_OK(MPI_Comm_get_name(parent, name, &len));
    CHECK(strcmp(name, "MPI_COMM_PARENT") == 0, "the parent communicator is named '%s'", name);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    CHECK_OK(MPI_Get_processor_name(host, &len));
    printf("spawn_exchange: child %d of %d on %s\n", itest_rank, itest_size, host);
    fflush(stdout);
    char want[32];
    if (argc > 2) check_last_transport(expected_transport(argv[2], 1, want, sizeof want));
    if (argc > 3 && strcmp(argv[3], "die") == 0)
      for (;;) sleep(1);
    exchange(parent, 0);
    MPI_Comm again;
    CHECK_OK(MPI_Comm_get_parent(&again));
    CHECK(again == MPI_COMM_NULL, "get_parent after disconnect");
    itest_rank += 100;  /* children report as 100+ */
  }
  MPI_T_finalize();
  return itest_finish("spawn_exchange");
}
