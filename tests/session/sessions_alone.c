/* MPI 4.0 sessions without MPI_Init: a session starts MPI by itself, offers
 * the process sets mpi://WORLD and mpi://SELF (names compare without case),
 * and makes communicators from their groups with no parent communicator
 * (MPI_Comm_create_from_group), several at once with different stringtags;
 * they carry point-to-point and collective traffic; MPI_Initialized stays
 * false; bad arguments get their error classes through the session's
 * MPI_ERRORS_RETURN. The program ends after MPI_Session_finalize without
 * MPI_Finalize, and the job must end cleanly. Any number of ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int failures = 0;
static int me = -1;
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      ++failures;                                                               \
      fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", me, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                             \
      fputc('\n', stderr);                                                      \
    }                                                                           \
  } while (0)

static int info_int(MPI_Info info, const char* key) {
  char v[64] = "";
  int flag = 0;
  MPI_Info_get(info, key, sizeof v - 1, v, &flag);
  return flag ? atoi(v) : -1;
}

int main(void) {
  MPI_Session s, s2;
  int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "MPI_Session_init failed: %d\n", rc);
    return 1;
  }
  int flag = 1;
  MPI_Initialized(&flag);
  CHECK(!flag, "MPI_Initialized says true with only a session");

  /* A second session asking for MPI_THREAD_MULTIPLE: its info names the
   * level the process provides (MPI_Query_thread's). */
  MPI_Info want, got;
  MPI_Info_create(&want);
  MPI_Info_set(want, "thread_level", "MPI_THREAD_MULTIPLE");
  CHECK(MPI_Session_init(want, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "second session");
  MPI_Info_free(&want);
  CHECK(MPI_Session_get_info(s2, &got) == MPI_SUCCESS, "get_info");
  char level[64] = "";
  int provided = -1;
  const char* names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
  MPI_Query_thread(&provided);
  MPI_Info_get(got, "thread_level", sizeof level - 1, level, &flag);
  CHECK(flag && provided >= 0 && provided <= 3 && strcmp(level, names[provided]) == 0,
        "thread_level is '%s', MPI_Query_thread says %d", level, provided);
  MPI_Info_free(&got);
  CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS, "finalize of the second session");
  CHECK(s2 == MPI_SESSION_NULL, "Session_finalize left the handle");
  int cls = -1;

  /* Process sets: both names, with their sizes. */
  int n = 0, world_size = -1;
  MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
  CHECK(n >= 2, "%d process sets", n);
  int saw_world = 0, saw_self = 0;
  for (int i = 0; i < n; ++i) {
    int len = 0;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
    char* name = malloc((size_t)len);
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
    CHECK((int)strlen(name) + 1 == len, "pset %d: length %d for '%s'", i, len, name);
    MPI_Info pi;
    MPI_Session_get_pset_info(s, name, &pi);
    int size = info_int(pi, "mpi_size");
    MPI_Info_free(&pi);
    if (strcmp(name, "mpi://WORLD") == 0) {
      saw_world = 1;
      world_size = size;
    }
    if (strcmp(name, "mpi://SELF") == 0) {
      saw_self = 1;
      CHECK(size == 1, "SELF has mpi_size %d", size);
    }
    free(name);
  }
  CHECK(saw_world && saw_self && world_size > 0, "psets: world %d self %d", saw_world, saw_self);

  /* A communicator over WORLD. */
  MPI_Group wg, sg;
  CHECK(MPI_Group_from_session_pset(s, "mpi://world", &wg) == MPI_SUCCESS, "group of mpi://world");
  MPI_Comm comm;
  CHECK(MPI_Comm_create_from_group(wg, "org.sonde.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) ==
            MPI_SUCCESS, "create_from_group(WORLD)");
  int size = -1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  CHECK(size == world_size, "size %d, WORLD pset says %d", size, world_size);

  /* Two more at once: the even ranks' and the odd ranks' (disjoint groups,
   * one stringtag), then the whole world again with another tag. */
  int parity = me % 2, half_n = 0;
  int* half = malloc(sizeof(int) * (size_t)size);
  for (int r = parity; r < size; r += 2) half[half_n++] = r;
  MPI_Group hg;
  MPI_Group_incl(wg, half_n, half, &hg);
  MPI_Comm hcomm, again;
  CHECK(MPI_Comm_create_from_group(hg, "org.sonde.test.half", MPI_INFO_NULL, MPI_ERRORS_RETURN, &hcomm) ==
            MPI_SUCCESS, "create_from_group(half)");
  CHECK(MPI_Comm_create_from_group(wg, "org.sonde.test.again", MPI_INFO_NULL, MPI_ERRORS_RETURN, &again) ==
            MPI_SUCCESS, "create_from_group(WORLD again)");

  /* Traffic: a ring on comm, sums on all three. */
  int right = (me + 1) % size, left = (me + size - 1) % size, from = -1;
  MPI_Sendrecv(&me, 1, MPI_INT, right, 5, &from, 1, MPI_INT, left, 5, comm, MPI_STATUS_IGNORE);
  CHECK(from == left, "ring gave %d, want %d", from, left);
  int sum = -1, hsum = -1, asum = -1, hrank = -1;
  MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
  CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
  MPI_Comm_rank(hcomm, &hrank);
  CHECK(hrank == me / 2, "rank %d in the half communicator", hrank);
  MPI_Allreduce(&me, &hsum, 1, MPI_INT, MPI_SUM, hcomm);
  int hwant = 0;
  for (int i = 0; i < half_n; ++i) hwant += half[i];
  CHECK(hsum == hwant, "half sum %d, want %d", hsum, hwant);
  MPI_Allreduce(&me, &asum, 1, MPI_INT, MPI_SUM, again);
  CHECK(asum == sum, "again: sum %d", asum);

  /* SELF: a communicator of one. */
  MPI_Comm self;
  CHECK(MPI_Group_from_session_pset(s, "mpi://SELF", &sg) == MPI_SUCCESS, "group of SELF");
  CHECK(MPI_Comm_create_from_group(sg, "org.sonde.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self) ==
            MPI_SUCCESS, "create_from_group(SELF)");
  int one = 0;
  MPI_Comm_size(self, &one);
  CHECK(one == 1, "SELF communicator of size %d", one);

  /* Errors come back through MPI_ERRORS_RETURN. */
  MPI_Group bad;
  rc = MPI_Group_from_session_pset(s, "mpi://nowhere", &bad);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ARG, "unknown pset: class %d", cls);
  MPI_Comm nc;
  rc = MPI_Comm_create_from_group(wg, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ARG, "null stringtag: class %d", cls);
  int len = 0;
  rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ARG, "pset index %d: class %d", n, cls);

  MPI_Comm_free(&self);
  MPI_Comm_free(&again);
  MPI_Comm_free(&hcomm);
  MPI_Comm_free(&comm);
  MPI_Group_free(&hg);
  MPI_Group_free(&sg);
  MPI_Group_free(&wg);
  free(half);
  CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS && s == MPI_SESSION_NULL, "Session_finalize");
  if (failures) return 1;
  if (me == 0) printf("sessions_alone: passed (%d ranks)\n", size);
  return 0;
}
