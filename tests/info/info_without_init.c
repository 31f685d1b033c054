/* MPI 4.1 section 12.4.1: the MPI_Info calls work before MPI_Init and after
 * MPI_Finalize, and objects made before MPI_Init live on through it.
 * MPI_Info_create_env gives the same keys and values before, during and
 * after (command and argv from its arguments). 1..2 ranks. */
#include "tests/integration/itest.h"

static const char* const kEnvKeys[] = {"command", "argv", "maxprocs", "soft", "host", "arch", "wdir"};
enum { kNumEnvKeys = sizeof kEnvKeys / sizeof kEnvKeys[0] };

/* Value of `key` in `info` ("" with *flag 0 when absent). */
static const char* value_of(MPI_Info info, const char* key, int* flag) {
  static char buf[4][MPI_MAX_INFO_VAL + 1];
  static int next = 0;
  char* v = buf[next++ % 4];
  v[0] = '\0';
  int len = MPI_MAX_INFO_VAL + 1;
  CHECK_OK(MPI_Info_get_string(info, key, &len, v, flag));
  return v;
}

static void same_env(MPI_Info a, MPI_Info b, const char* when) {
  for (int i = 0; i < kNumEnvKeys; ++i) {
    int fa = 0, fb = 0;
    const char* va = value_of(a, kEnvKeys[i], &fa);
    const char* vb = value_of(b, kEnvKeys[i], &fb);
    CHECK(fa == fb && strcmp(va, vb) == 0, "%s: %s is \"%s\" (%d), before init \"%s\" (%d)", when, kEnvKeys[i], vb,
          fb, va, fa);
  }
}

/* A key/value round trip, a dup and a delete on `info`. */
static void exercise(MPI_Info info, const char* key, const char* when) {
  int flag = 0, n = -1;
  CHECK_OK(MPI_Info_set(info, key, when));
  CHECK(strcmp(value_of(info, key, &flag), when) == 0 && flag, "%s: set/get", when);
  MPI_Info dup;
  CHECK_OK(MPI_Info_dup(info, &dup));
  CHECK(strcmp(value_of(dup, key, &flag), when) == 0 && flag, "%s: dup", when);
  CHECK_OK(MPI_Info_delete(dup, key));
  value_of(dup, key, &flag);
  CHECK(!flag, "%s: deleted key still there", when);
  int len = -1;
  CHECK_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
  CHECK(flag && len == (int)strlen(when), "%s: valuelen %d", when, len);
  CHECK_OK(MPI_Info_get_nkeys(info, &n));
  char k[MPI_MAX_INFO_KEY + 1] = "";
  CHECK_OK(MPI_Info_get_nthkey(info, n - 1, k));
  CHECK(strcmp(k, key) == 0, "%s: last key \"%s\"", when, k);
  char old[MPI_MAX_INFO_VAL + 1] = "";
  CHECK_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, old, &flag));
  CHECK(flag && strcmp(old, when) == 0, "%s: MPI_Info_get", when);
  CHECK_OK(MPI_Info_free(&dup));
  CHECK(dup == MPI_INFO_NULL, "%s: free left the handle", when);
}

int main(int argc, char** argv) {
  MPI_Info kept, env_before, env_args;
  CHECK(MPI_Info_create(&kept) == MPI_SUCCESS, "create before init");
  exercise(kept, "before", "before");
  CHECK(MPI_Info_create_env(argc, argv, &env_before) == MPI_SUCCESS, "create_env before init");
  CHECK(MPI_Info_create_env(0, NULL, &env_args) == MPI_SUCCESS, "create_env(0, NULL) before init");
  int flag = 0;
  CHECK(strcmp(value_of(env_before, "command", &flag), argv[0]) == 0 && flag, "command is \"%s\"",
        value_of(env_before, "command", &flag));
  char joined[256] = ""; /* the arguments, space separated */
  for (int i = 1; i < argc; ++i) {
    if (i > 1) strncat(joined, " ", sizeof joined - strlen(joined) - 1);
    strncat(joined, argv[i], sizeof joined - strlen(joined) - 1);
  }
  CHECK(strcmp(value_of(env_before, "argv", &flag), joined) == 0, "argv is \"%s\", want \"%s\"",
        value_of(env_before, "argv", &flag), joined);
  same_env(env_before, env_args, "create_env(0, NULL)");
  MPI_Info_free(&env_args);

  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char v[MPI_MAX_INFO_VAL + 1];
  CHECK(strcmp(value_of(kept, "before", &flag), "before") == 0 && flag, "object from before init lost its key");
  exercise(kept, "during", "during");
  MPI_Info env_during;
  CHECK_OK(MPI_Info_create_env(argc, argv, &env_during));
  same_env(env_before, env_during, "during");
  /* MPI_INFO_ENV agrees with it. */
  same_env(env_before, MPI_INFO_ENV, "MPI_INFO_ENV");
  CHECK_OK(MPI_Info_get(env_during, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
  CHECK(flag && atoi(v) == itest_size, "maxprocs %s, want %d", flag ? v : "(none)", itest_size);
  CHECK_CLASS(MPI_Info_create_env(-1, NULL, &env_args), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Info_create_env(argc, argv, NULL), MPI_ERR_ARG);
  MPI_Finalize();

  exercise(kept, "after", "after");
  CHECK(strcmp(value_of(kept, "during", &flag), "during") == 0 && flag, "key set during MPI lost");
  MPI_Info env_after;
  CHECK(MPI_Info_create_env(argc, argv, &env_after) == MPI_SUCCESS, "create_env after finalize");
  same_env(env_before, env_after, "after");
  MPI_Info_free(&env_after);
  MPI_Info_free(&env_during);
  MPI_Info_free(&env_before);
  CHECK(MPI_Info_free(&kept) == MPI_SUCCESS && kept == MPI_INFO_NULL, "free after finalize");
  if (itest_failures) {
    fprintf(stderr, "[rank %d] info_without_init: %d check(s) failed\n", itest_rank, itest_failures);
    return 1;
  }
  if (itest_rank == 0) printf("info_without_init: rank 0 passed\n");
  return 0;
}
