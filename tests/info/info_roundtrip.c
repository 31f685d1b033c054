/* MPI_Info round trips (order of keys, replacement, deletion, dup
 * independence, value lengths, truncation), MPI_INFO_ENV, and every info
 * call's error paths. */
#include "tests/integration/itest.h"

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Info info, copy;
  CHECK_OK(MPI_Info_create(&info));
  int nkeys = -1, flag = -1, len = -1;
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 0, "new info has %d keys", nkeys);
  CHECK_OK(MPI_Info_set(info, "alpha", "1"));
  CHECK_OK(MPI_Info_set(info, "beta", "two"));
  CHECK_OK(MPI_Info_set(info, "gamma", "three3"));
  CHECK_OK(MPI_Info_set(info, "alpha", "one"));  /* replaced in place */
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 3, "3 keys, got %d", nkeys);
  const char* order[] = {"alpha", "beta", "gamma"};
  for (int i = 0; i < 3; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    CHECK_OK(MPI_Info_get_nthkey(info, i, key));
    CHECK(strcmp(key, order[i]) == 0, "key %d is %s, want %s", i, key, order[i]);
  }
  char value[MPI_MAX_INFO_VAL + 1];
  CHECK_OK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "one") == 0, "alpha = %s", value);
  CHECK_OK(MPI_Info_get_valuelen(info, "gamma", &len, &flag));
  CHECK(flag && len == 6, "gamma length %d", len);
  CHECK_OK(MPI_Info_get(info, "gamma", 3, value, &flag));
  CHECK(flag && strcmp(value, "thr") == 0, "truncated gamma = %s", value);
  CHECK_OK(MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag == 0, "missing key found");
  CHECK_OK(MPI_Info_get_valuelen(info, "missing", &len, &flag));
  CHECK(flag == 0, "missing key has a length");

  /* MPI 4 get_string: buflen in/out includes the NUL. */
  int buflen = 0;
  CHECK_OK(MPI_Info_get_string(info, "beta", &buflen, NULL, &flag));
  CHECK(flag && buflen == 4, "beta buflen %d", buflen);
  char small[3];
  buflen = 3;
  CHECK_OK(MPI_Info_get_string(info, "beta", &buflen, small, &flag));
  CHECK(flag && strcmp(small, "tw") == 0 && buflen == 4, "beta in 3 bytes: %s (%d)", small, buflen);

  /* dup is independent of the original. */
  CHECK_OK(MPI_Info_dup(info, &copy));
  CHECK_OK(MPI_Info_delete(info, "beta"));
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 2, "after delete %d keys", nkeys);
  CHECK_OK(MPI_Info_get_nkeys(copy, &nkeys));
  CHECK(nkeys == 3, "copy has %d keys", nkeys);
  CHECK_OK(MPI_Info_get(copy, "beta", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "two") == 0, "copy beta = %s", value);

  /* MPI_INFO_ENV: read-only, knows the command and maxprocs. */
  CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strstr(value, "info_roundtrip") != NULL, "command = %s", flag ? value : "(none)");
  CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && atoi(value) == itest_size, "maxprocs = %s", flag ? value : "(none)");
  const char* env_keys[] = {"argv", "host", "arch", "wdir", "thread_level"};
  for (int i = 0; i < 5; ++i) {
    CHECK_OK(MPI_Info_get_valuelen(MPI_INFO_ENV, env_keys[i], &len, &flag));
    CHECK(flag, "MPI_INFO_ENV lacks %s", env_keys[i]);
  }
  CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "argv", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "alpha beta") == 0, "argv = %s", value);
  CHECK_CLASS(MPI_Info_set(MPI_INFO_ENV, "x", "y"), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Info_free(&(MPI_Info){MPI_INFO_ENV}), MPI_ERR_INFO);

  /* Errors. */
  char long_key[MPI_MAX_INFO_KEY + 2];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = '\0';
  CHECK_CLASS(MPI_Info_set(info, long_key, "v"), MPI_ERR_INFO_KEY);
  CHECK_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
  static char long_value[MPI_MAX_INFO_VAL + 2];
  memset(long_value, 'v', sizeof long_value - 1);
  CHECK_CLASS(MPI_Info_set(info, "k", long_value), MPI_ERR_INFO_VALUE);
  CHECK_CLASS(MPI_Info_delete(info, "beta"), MPI_ERR_INFO_NOKEY);
  CHECK_CLASS(MPI_Info_get_nthkey(info, 2, value), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Info_get_nthkey(info, -1, value), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Info_get(info, "alpha", -1, value, &flag), MPI_ERR_ARG);
  MPI_Info stale = copy;
  CHECK_OK(MPI_Info_free(&copy));
  CHECK(copy == MPI_INFO_NULL, "free nulls the handle");
  CHECK_CLASS(MPI_Info_get_nkeys(stale, &nkeys), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Info_free(&stale), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO);
  CHECK_CLASS(MPI_Info_dup(0x7000abcd, &copy), MPI_ERR_INFO);
  CHECK_OK(MPI_Info_free(&info));
  return itest_finish("info_roundtrip");
}
