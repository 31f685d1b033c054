/* MPI_T calls on one rank: initialization and its reference count, the
 * string convention, enumerations, cvars, categories, pvar and session
 * errors, event-type metadata and sources. argv[1] selects the behaviour. */
#include <peruse.h>

#include "tests/mpit/mtest.h"

static int provided;

/* ---- MPI_T_init_thread / MPI_T_finalize, before MPI_Init and after MPI_Finalize */
static void lifecycle(void) {
  int n = -1;
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_T(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_T(MPI_T_init_thread(MPI_THREAD_MULTIPLE + 1, &provided), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
  CHECK_T(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);  /* count 2 */
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
  CHECK(n > 0, "%d cvars", n);

  /* Before MPI_Init: cvars readable and the init-time ones writable;
   * nothing bound to a communicator is accessible. */
  MPI_T_cvar_handle ch;
  int count = 0;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_shm_fast_boxes"), NULL, &ch, &count), MPI_SUCCESS);
  int zero = 0, v = -1;
  CHECK_T(MPI_T_cvar_write(ch, &zero), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_read(ch, &v), MPI_SUCCESS);
  CHECK(v == 0, "fast boxes %d after writing 0", v);
  int state = -1;
  MPI_T_pvar_session s;
  CHECK_T(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  MPI_T_pvar_handle st = mtest_handle(s, "sonde_mpi_state", MPI_T_PVAR_CLASS_STATE, NULL, 0);
  CHECK_T(MPI_T_pvar_read(s, st, &state), MPI_SUCCESS);
  CHECK(state == 0, "mpi state %d before MPI_Init", state);
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_T_pvar_handle h;
  CHECK_T(MPI_T_pvar_handle_alloc(s, mtest_pvar("sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL), &world, &h,
                                  &count),
          MPI_T_ERR_NOT_ACCESSIBLE);
  MPI_T_event_registration reg;
  CHECK_T(MPI_T_event_handle_alloc(0, &world, MPI_INFO_NULL, &reg), MPI_T_ERR_NOT_ACCESSIBLE);
  char transports[64] = "x";
  MPI_T_cvar_handle th;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_transports"), NULL, &th, &count), MPI_SUCCESS);
  CHECK(count == 64, "transports count %d", count);
  CHECK_T(MPI_T_cvar_read(th, transports), MPI_SUCCESS);
  CHECK(strcmp(transports, "") == 0, "transports '%s' before MPI_Init", transports);

  itest_init(NULL, NULL);
  /* The write made before MPI_Init survived it (the environment did not override it). */
  CHECK_T(MPI_T_cvar_read(ch, &v), MPI_SUCCESS);
  CHECK(v == 0, "fast boxes %d after MPI_Init", v);
  CHECK_T(MPI_T_cvar_write(ch, &zero), MPI_T_ERR_CVAR_SET_NEVER);
  CHECK_T(MPI_T_pvar_read(s, st, &state), MPI_SUCCESS);
  CHECK(state == 1, "mpi state %d", state);
  CHECK_T(MPI_T_cvar_read(th, transports), MPI_SUCCESS);
  CHECK(strcmp(transports, "self,shm") == 0, "transports '%s'", transports);
  CHECK_T(MPI_T_pvar_handle_alloc(s, mtest_pvar("sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL), &world, &h,
                                  &count),
          MPI_SUCCESS);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS); /* count 1: still initialized */
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
  MPI_Finalize();
  /* After MPI_Finalize: still usable; comm-bound reads are not accessible. */
  CHECK_T(MPI_T_pvar_read(s, st, &state), MPI_SUCCESS);
  CHECK(state == 2, "mpi state %d after MPI_Finalize", state);
  unsigned long long len;
  CHECK_T(MPI_T_pvar_read(s, h, &len), MPI_T_ERR_NOT_ACCESSIBLE);
  MPI_T_cvar_handle eh;
  unsigned long long limit = 1;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_eager_limit"), NULL, &eh, &count), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_write(eh, &limit), MPI_T_ERR_CVAR_SET_NEVER);
  CHECK_T(MPI_T_cvar_handle_free(&eh), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS); /* count 0 */
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_T(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  /* Re-initialisable. */
  CHECK_T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  if (itest_failures) {
    fprintf(stderr, "lifecycle: %d check(s) failed\n", itest_failures);
    exit(1);
  }
  printf("lifecycle: passed\n");
  exit(0);
}

/* ---- section 15.3.3 */
static void strings(void) {
  int idx = mtest_cvar("sonde_eager_limit");
  const char* full = "sonde_eager_limit";
  int want = (int)strlen(full) + 1;
  char buf[64];
  int len = sizeof buf;
  CHECK_T(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(strcmp(buf, full) == 0 && len == want, "full: '%s' len %d", buf, len);
  len = 6; /* truncated to 5 characters and a terminator */
  memset(buf, 'x', sizeof buf);
  CHECK_T(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(strcmp(buf, "sonde") == 0 && len == want, "truncated: '%s' len %d", buf, len);
  len = want - 1; /* one short: the last character is cut */
  CHECK_T(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(strncmp(buf, full, (size_t)want - 2) == 0 && buf[want - 2] == '\0', "one short: '%s'", buf);
  len = 0; /* length only */
  memset(buf, 'x', sizeof buf);
  CHECK_T(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(len == want && buf[0] == 'x', "len 0: len %d, buffer touched %d", len, buf[0] != 'x');
  len = 10; /* null buffer: length only */
  CHECK_T(MPI_T_cvar_get_info(idx, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(len == want, "null buffer: len %d", len);
  memset(buf, 'x', sizeof buf); /* null length: buffer ignored */
  CHECK_T(MPI_T_cvar_get_info(idx, buf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(buf[0] == 'x', "buffer written without a length");
  /* Descriptions follow the same rule; every name has at least one character. */
  int n;
  MPI_T_pvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    len = 0;
    int dlen = 0;
    CHECK_T(MPI_T_pvar_get_info(i, NULL, &len, NULL, NULL, NULL, NULL, NULL, &dlen, NULL, NULL, NULL, NULL),
            MPI_SUCCESS);
    CHECK(len > 1 && dlen > 1, "pvar %d: name len %d desc len %d", i, len, dlen);
  }
}

/* ---- enumerations */
static void enums(void) {
  MPI_T_enum e = MPI_T_ENUM_NULL;
  MPI_Datatype type;
  int idx = mtest_cvar("sonde_thread_level");
  CHECK_T(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &type, &e, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK(type == MPI_INT && e != MPI_T_ENUM_NULL, "thread level type %d enum %p", type, (void*)e);
  int num = 0;
  char name[64];
  int len = sizeof name;
  CHECK_T(MPI_T_enum_get_info(e, &num, name, &len), MPI_SUCCESS);
  CHECK(num == 4 && strcmp(name, "sonde_thread_level") == 0, "enum %s with %d items", name, num);
  for (int i = 0; i < num; ++i) {
    int value = -1;
    len = sizeof name;
    CHECK_T(MPI_T_enum_get_item(e, i, &value, name, &len), MPI_SUCCESS);
    CHECK(value == i && len > 1, "item %d: value %d name %s", i, value, name);
  }
  len = sizeof name;
  CHECK_T(MPI_T_enum_get_item(e, 3, NULL, name, &len), MPI_SUCCESS);
  CHECK(strcmp(name, "MPI_THREAD_MULTIPLE") == 0, "item 3 is %s", name);
  CHECK_T(MPI_T_enum_get_item(e, num, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
  CHECK_T(MPI_T_enum_get_item(e, -1, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
  CHECK_T(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_enum_get_info((MPI_T_enum)(intptr_t)0x7777, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  /* Variables that are not MPI_INT have no enumeration. */
  CHECK_T(MPI_T_cvar_get_info(mtest_cvar("sonde_eager_limit"), NULL, NULL, NULL, &type, &e, NULL, NULL, NULL, NULL),
          MPI_SUCCESS);
  CHECK(e == MPI_T_ENUM_NULL && type == MPI_UNSIGNED_LONG_LONG, "eager limit enum %p", (void*)e);
}

/* ---- control variables */
static void cvars(void) {
  int n = 0;
  CHECK_T(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  int idx;
  CHECK_T(MPI_T_cvar_get_index("no_such_cvar", &idx), MPI_T_ERR_INVALID_NAME);
  CHECK_T(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID);
  /* Every cvar: get_info consistent with get_index; bind is NO_OBJECT and obj_handle ignored. */
  for (int i = 0; i < n; ++i) {
    char name[128];
    int len = sizeof name, verbosity, bind, scope, count;
    MPI_Datatype type;
    CHECK_T(MPI_T_cvar_get_info(i, name, &len, &verbosity, &type, NULL, NULL, NULL, &bind, &scope), MPI_SUCCESS);
    CHECK_T(MPI_T_cvar_get_index(name, &idx), MPI_SUCCESS);
    CHECK(idx == i, "%s: index %d, get_index %d", name, i, idx);
    CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL, "%s verbosity", name);
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s bind %d", name, bind);
    MPI_T_cvar_handle h;
    CHECK_T(MPI_T_cvar_handle_alloc(i, (void*)0x1234, &h, &count), MPI_SUCCESS);
    char value[128];
    CHECK_T(MPI_T_cvar_read(h, value), MPI_SUCCESS);
    if (scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY)
      CHECK_T(MPI_T_cvar_write(h, value), MPI_T_ERR_CVAR_SET_NEVER);
    CHECK_T(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");
  }
  /* Runtime knobs: written values read back. */
  MPI_T_cvar_handle h;
  int count;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_eager_limit"), NULL, &h, &count), MPI_SUCCESS);
  CHECK(count == 1, "count %d", count);
  unsigned long long limit = 12345, back = 0;
  CHECK_T(MPI_T_cvar_write(h, &limit), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_read(h, &back), MPI_SUCCESS);
  CHECK(back == 12345, "eager limit %llu", back);
  limit = ~0ull; /* any value of the type is accepted */
  CHECK_T(MPI_T_cvar_write(h, &limit), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_write(h, NULL), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_cvar_read(h, NULL), MPI_T_ERR_INVALID);
  MPI_T_cvar_handle stale = h;
  CHECK_T(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_read(stale, &back), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_write(stale, &limit), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &back), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_read((MPI_T_cvar_handle)(intptr_t)0x5555000000001ll, &back), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_cvar_handle_alloc(0, NULL, NULL, &count), MPI_T_ERR_INVALID);
  /* Enumerated booleans reject other values; init-time knobs are fixed now. */
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_shm_single_copy"), NULL, &h, &count), MPI_SUCCESS);
  int two = 2, one = 1, zero = 0;
  CHECK_T(MPI_T_cvar_write(h, &two), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_cvar_write(h, &zero), MPI_SUCCESS); /* off at run time is allowed */
  CHECK_T(MPI_T_cvar_write(h, &one), MPI_SUCCESS);  /* and back on: it was on at MPI_Init */
  MPI_T_cvar_handle_free(&h);
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_shm_ring_bytes"), NULL, &h, &count), MPI_SUCCESS);
  int ring = 4096;
  CHECK_T(MPI_T_cvar_write(h, &ring), MPI_T_ERR_CVAR_SET_NEVER);
  ring = 1000;
  CHECK_T(MPI_T_cvar_write(h, &ring), MPI_T_ERR_INVALID);
  MPI_T_cvar_handle_free(&h);
}

/* ---- categories: a tree rooted at "sonde" holding every variable and event once */
static int cat_seen[64];
static void walk(int cat, int depth) {
  CHECK(depth < 16, "category depth %d: a cycle?", depth);
  if (depth >= 16) return;
  cat_seen[cat]++;
  int ncv, npv, ncat, nev;
  CHECK_T(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &ncv, &npv, &ncat), MPI_SUCCESS);
  int sub[64];
  CHECK_T(MPI_T_category_get_categories(cat, 64, sub), MPI_SUCCESS);
  for (int i = 0; i < ncat; ++i) walk(sub[i], depth + 1);
  CHECK_T(MPI_T_category_get_num_events(cat, &nev), MPI_SUCCESS);
  (void)ncv, (void)npv, (void)nev;
}
static void categories(void) {
  int n = 0, root = -1;
  CHECK_T(MPI_T_category_get_num(&n), MPI_SUCCESS);
  CHECK(n > 5 && n <= 64, "%d categories", n);
  CHECK_T(MPI_T_category_get_index("sonde", &root), MPI_SUCCESS);
  CHECK_T(MPI_T_category_get_index("nope", &root), MPI_T_ERR_INVALID_NAME);
  CHECK_T(MPI_T_category_get_index("sonde", &root), MPI_SUCCESS);
  walk(root, 0);
  for (int i = 0; i < n; ++i) CHECK(cat_seen[i] == 1, "category %d reached %d times from the root", i, cat_seen[i]);
  int ncvar, npvar, nev;
  MPI_T_cvar_get_num(&ncvar);
  MPI_T_pvar_get_num(&npvar);
  MPI_T_event_get_num(&nev);
  int cv_seen[256] = {0}, pv_seen[256] = {0}, ev_seen[256] = {0};
  for (int c = 0; c < n; ++c) {
    int ncv, npv, ncat, ne, idx[256];
    char name[64];
    int len = sizeof name;
    CHECK_T(MPI_T_category_get_info(c, name, &len, NULL, NULL, &ncv, &npv, &ncat), MPI_SUCCESS);
    int back = -1;
    CHECK_T(MPI_T_category_get_index(name, &back), MPI_SUCCESS);
    CHECK(back == c, "category %s: %d vs %d", name, c, back);
    CHECK_T(MPI_T_category_get_cvars(c, 256, idx), MPI_SUCCESS);
    for (int i = 0; i < ncv; ++i) cv_seen[idx[i]]++;
    CHECK_T(MPI_T_category_get_pvars(c, 256, idx), MPI_SUCCESS);
    for (int i = 0; i < npv; ++i) pv_seen[idx[i]]++;
    CHECK_T(MPI_T_category_get_num_events(c, &ne), MPI_SUCCESS);
    CHECK_T(MPI_T_category_get_events(c, 256, idx), MPI_SUCCESS);
    for (int i = 0; i < ne; ++i) ev_seen[idx[i]]++;
    /* len limits what is written */
    idx[0] = -7;
    CHECK_T(MPI_T_category_get_pvars(c, 0, idx), MPI_SUCCESS);
    CHECK(idx[0] == -7, "len 0 wrote an entry");
  }
  for (int i = 0; i < ncvar; ++i) CHECK(cv_seen[i] == 1, "cvar %d in %d categories", i, cv_seen[i]);
  for (int i = 0; i < npvar; ++i) CHECK(pv_seen[i] == 1, "pvar %d in %d categories", i, pv_seen[i]);
  for (int i = 0; i < nev; ++i) CHECK(ev_seen[i] == 1, "event %d in %d categories", i, ev_seen[i]);
  int ncv;
  CHECK_T(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, &ncv, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_cvars(-1, 1, &ncv), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_pvars(n, 1, &ncv), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_categories(n, 1, &ncv), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_events(n, 1, &ncv), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_category_get_num_events(n, &ncv), MPI_T_ERR_INVALID_INDEX);
  int s1 = -1, s2 = -2;
  CHECK_T(MPI_T_category_changed(&s1), MPI_SUCCESS);
  CHECK_T(MPI_T_category_changed(&s2), MPI_SUCCESS);
  CHECK(s1 == s2, "category stamp changed without a change");
}

/* ---- pvars: metadata and every error path of sessions and handles */
static void pvar_errors(void) {
  int n = 0;
  CHECK_T(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
  for (int i = 0; i < n; ++i) {
    char name[128];
    int len = sizeof name, cls, ro, cont, atomic, bind, idx;
    MPI_Datatype type;
    CHECK_T(MPI_T_pvar_get_info(i, name, &len, NULL, &cls, &type, NULL, NULL, NULL, &bind, &ro, &cont, &atomic),
            MPI_SUCCESS);
    CHECK_T(MPI_T_pvar_get_index(name, cls, &idx), MPI_SUCCESS);
    CHECK(idx == i, "%s: %d vs %d", name, i, idx);
    /* Classes and datatypes as section 15.3.7 allows (MPI_UNSIGNED: the
     * compatibility aliases, as their implementations have them). */
    if (cls == MPI_T_PVAR_CLASS_TIMER) CHECK(type == MPI_DOUBLE, "%s timer type", name);
    if (cls == MPI_T_PVAR_CLASS_STATE) CHECK(type == MPI_INT, "%s state type", name);
    if (cls == MPI_T_PVAR_CLASS_COUNTER || cls == MPI_T_PVAR_CLASS_LEVEL || cls == MPI_T_PVAR_CLASS_SIZE ||
        cls == MPI_T_PVAR_CLASS_HIGHWATERMARK || cls == MPI_T_PVAR_CLASS_AGGREGATE)
      CHECK(type == MPI_UNSIGNED_LONG_LONG || type == MPI_UNSIGNED, "%s type", name);
    if (cls == MPI_T_PVAR_CLASS_LEVEL) CHECK(cont && ro, "%s level: continuous %d readonly %d", name, cont, ro);
    /* Counters: Sonde's own are started and written; the aliases are
     * continuous and read-only, as their implementations have them. */
    if (cls == MPI_T_PVAR_CLASS_COUNTER)
      CHECK((!cont && !ro && atomic) || (cont && ro && !atomic), "%s counter flags", name);
    CHECK(bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM, "%s bind %d", name, bind);
    CHECK_T(MPI_T_pvar_get_index(name, cls == MPI_T_PVAR_CLASS_GENERIC ? MPI_T_PVAR_CLASS_STATE
                                                                         : MPI_T_PVAR_CLASS_GENERIC, &idx),
            MPI_T_ERR_INVALID_NAME);
  }
  CHECK_T(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
  int idx;
  CHECK_T(MPI_T_pvar_get_index("sonde_posted_q_length", 999, &idx), MPI_T_ERR_INVALID);

  MPI_T_pvar_session s, other, dead;
  CHECK_T(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_create(&other), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_create(&dead), MPI_SUCCESS);
  MPI_T_pvar_session dead_copy = dead;
  CHECK_T(MPI_T_pvar_session_free(&dead), MPI_SUCCESS);
  CHECK(dead == MPI_T_PVAR_SESSION_NULL, "session not nulled");
  CHECK_T(MPI_T_pvar_session_free(&dead_copy), MPI_T_ERR_INVALID_SESSION);
  MPI_Comm world = MPI_COMM_WORLD, bad = (MPI_Comm)0x1abcdef;
  int count;
  MPI_T_pvar_handle h, level, t;
  int ulen = mtest_pvar("sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL);
  CHECK_T(MPI_T_pvar_handle_alloc(dead_copy, ulen, &world, &h, &count), MPI_T_ERR_INVALID_SESSION);
  CHECK_T(MPI_T_pvar_handle_alloc(s, n, &world, &h, &count), MPI_T_ERR_INVALID_INDEX);
  CHECK_T(MPI_T_pvar_handle_alloc(s, ulen, &bad, &h, &count), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_alloc(s, ulen, NULL, &h, &count), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_alloc(s, ulen, &world, NULL, &count), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_pvar_handle_alloc(s, ulen, &world, &level, &count), MPI_SUCCESS);
  CHECK(count == 1, "count %d", count);
  unsigned long long v;
  /* Levels are continuous and read-only. */
  CHECK_T(MPI_T_pvar_start(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK_T(MPI_T_pvar_stop(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK_T(MPI_T_pvar_write(s, level, &v), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_T(MPI_T_pvar_reset(s, level), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_T(MPI_T_pvar_readreset(s, level, &v), MPI_T_ERR_PVAR_NO_ATOMIC);
  CHECK_T(MPI_T_pvar_read(s, level, &v), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_read(s, level, NULL), MPI_T_ERR_INVALID);
  /* A handle belongs to its session. */
  CHECK_T(MPI_T_pvar_read(other, level, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_free(other, &level), MPI_T_ERR_INVALID_HANDLE);
  /* ALL_HANDLES: allowed for start/stop/reset, not for read/write/readreset/free. */
  CHECK_T(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  MPI_T_pvar_handle all = MPI_T_PVAR_ALL_HANDLES;
  CHECK_T(MPI_T_pvar_handle_free(s, &all), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_start(dead_copy, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
  /* Timers: started, stopped, written, reset; a negative value is refused. */
  t = mtest_handle(s, "sonde_total_unexpected_q_search_time", MPI_T_PVAR_CLASS_TIMER, NULL, 1);
  double d = 2.5, back = 0;
  CHECK_T(MPI_T_pvar_write(s, t, &d), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_stop(s, t), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_read(s, t, &back), MPI_SUCCESS);
  CHECK(back >= 2.5 && back < 3.0, "timer written 2.5 reads %g", back);
  d = -1;
  CHECK_T(MPI_T_pvar_write(s, t, &d), MPI_T_ERR_INVALID);
  CHECK_T(MPI_T_pvar_readreset(s, t, &back), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_read(s, t, &back), MPI_SUCCESS);
  CHECK(back == 0, "timer after readreset %g", back);
  /* Freed and garbage handles. */
  MPI_T_pvar_handle stale = t;
  CHECK_T(MPI_T_pvar_handle_free(s, &t), MPI_SUCCESS);
  CHECK(t == MPI_T_PVAR_HANDLE_NULL, "handle not nulled");
  CHECK_T(MPI_T_pvar_read(s, stale, &back), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_start(s, stale), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_free(s, &stale), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_read(s, (MPI_T_pvar_handle)(intptr_t)0x123456789ll, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_read((MPI_T_pvar_session)(intptr_t)0x42, level, &v), MPI_T_ERR_INVALID_SESSION);
  /* Freeing a session frees its handles. */
  MPI_T_pvar_session s_copy = s;
  CHECK_T(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_read(s_copy, level, &v), MPI_T_ERR_INVALID_SESSION);
  CHECK_T(MPI_T_pvar_session_free(&other), MPI_SUCCESS);
  /* A communicator freed under a handle: its reads fail cleanly. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK_T(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  h = mtest_handle(s, "sonde_posted_q_length", MPI_T_PVAR_CLASS_LEVEL, &dup, 0);
  MPI_T_pvar_handle hw = mtest_handle(s, "sonde_posted_q_matches", MPI_T_PVAR_CLASS_COUNTER, &dup, 1);
  MPI_Comm_free(&dup);
  CHECK_T(MPI_T_pvar_read(s, h, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_read(s, hw, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_pvar_handle_free(s, &h), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

/* ---- event types and sources */
static void events_meta(void) {
  int n = -1, supported = 0;
  char** names;
  int* ids;
  PERUSE_Init();
  PERUSE_Query_supported_events(&supported, &names, &ids);
  CHECK_T(MPI_T_event_get_num(&n), MPI_SUCCESS);
  CHECK(n == supported, "%d MPI_T event types for %d PERUSE events", n, supported);
  for (int i = 0; i < n; ++i) {
    char name[128];
    int len = sizeof name, verbosity, bind, nel = 0, idx = -1;
    MPI_Datatype types[16];
    MPI_Aint displ[16];
    MPI_T_enum e;
    MPI_Info info;
    CHECK_T(MPI_T_event_get_info(i, name, &len, &verbosity, NULL, NULL, &nel, NULL, NULL, NULL, NULL, NULL),
            MPI_SUCCESS);
    CHECK(nel == 7, "%d elements", nel);
    nel = 16;
    CHECK_T(MPI_T_event_get_info(i, NULL, NULL, NULL, types, displ, &nel, &e, &info, NULL, NULL, &bind), MPI_SUCCESS);
    CHECK(bind == MPI_T_BIND_MPI_COMM && nel == 7 && e != MPI_T_ENUM_NULL && info == MPI_INFO_NULL,
          "%s: bind %d nel %d", name, bind, nel);
    CHECK(types[0] == MPI_UNSIGNED_LONG_LONG && types[1] == MPI_INT && types[3] == MPI_COUNT && displ[0] == 0 &&
              displ[6] == 32,
          "%s element layout", name);
    /* Capacity 2: only two entries written. */
    nel = 2;
    types[2] = -5;
    CHECK_T(MPI_T_event_get_info(i, NULL, NULL, NULL, types, NULL, &nel, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
    CHECK(types[2] == -5 && nel == 7, "capacity 2 wrote past it");
    CHECK_T(MPI_T_event_get_index(name, &idx), MPI_SUCCESS);
    CHECK(idx == i, "%s index", name);
    int pev = -1;
    PERUSE_Query_event(name, &pev);
    CHECK(pev > 0, "%s is not a PERUSE event name", name);
  }
  CHECK_T(MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
  int idx;
  CHECK_T(MPI_T_event_get_index("PERUSE_NOPE", &idx), MPI_T_ERR_INVALID_NAME);
  /* Sources. */
  int ns = 0;
  CHECK_T(MPI_T_source_get_num(&ns), MPI_SUCCESS);
  CHECK(ns == 1, "%d sources", ns);
  MPI_T_source_order order;
  MPI_Count tps, max;
  char name[64];
  int len = sizeof name;
  CHECK_T(MPI_T_source_get_info(0, name, &len, NULL, NULL, &order, &tps, &max, NULL), MPI_SUCCESS);
  CHECK(order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0, "source info");
  CHECK_T(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  MPI_Count t1, t2;
  CHECK_T(MPI_T_source_get_timestamp(0, &t1), MPI_SUCCESS);
  CHECK_T(MPI_T_source_get_timestamp(0, &t2), MPI_SUCCESS);
  CHECK(t2 >= t1, "timestamps go back");
  CHECK_T(MPI_T_source_get_timestamp(-1, &t1), MPI_T_ERR_INVALID_INDEX);
  /* Registrations: bad arguments, freed and forged handles. */
  MPI_Comm world = MPI_COMM_WORLD, bad = (MPI_Comm)0x1234567;
  MPI_T_event_registration reg, stale;
  CHECK_T(MPI_T_event_handle_alloc(n, &world, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
  if (n == 0) {
    /* PERUSE compiled out (--config=noperuse): no event types, so nothing to
     * register; the instance calls below still answer as they must. */
    CHECK_T(MPI_T_event_handle_alloc(0, &world, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
  } else {
    CHECK_T(MPI_T_event_handle_alloc(0, &bad, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_event_handle_alloc(0, &world, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    CHECK_T(MPI_T_event_handle_alloc(0, &world, MPI_INFO_NULL, &reg), MPI_SUCCESS);
    MPI_Info used = 5;
    CHECK_T(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_T(MPI_T_event_handle_get_info(reg, &used), MPI_SUCCESS);
    CHECK(used == MPI_INFO_NULL, "info used");
    CHECK_T(MPI_T_event_register_callback(reg, (MPI_T_cb_safety)7, MPI_INFO_NULL, NULL, NULL), MPI_T_ERR_INVALID);
    CHECK_T(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_T(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_NONE, &used), MPI_SUCCESS);
    CHECK_T(MPI_T_event_callback_get_info(reg, (MPI_T_cb_safety)-1, &used), MPI_T_ERR_INVALID);
    CHECK_T(MPI_T_event_set_dropped_handler(reg, NULL), MPI_SUCCESS);
    stale = reg;
    CHECK_T(MPI_T_event_handle_free(reg, NULL, NULL), MPI_SUCCESS);
    CHECK_T(MPI_T_event_handle_free(stale, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_event_register_callback(stale, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL),
            MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_event_handle_set_info(stale, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_T(MPI_T_event_set_dropped_handler((MPI_T_event_registration)(intptr_t)77, NULL), MPI_T_ERR_INVALID_HANDLE);
  }
  /* Instance calls outside a callback: no instance is valid. */
  MPI_Count ts;
  int src;
  char buf[64];
  CHECK_T(MPI_T_event_read((MPI_T_event_instance)buf, 0, buf), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_copy(NULL, buf), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_get_timestamp((MPI_T_event_instance)buf, &ts), MPI_T_ERR_INVALID_HANDLE);
  CHECK_T(MPI_T_event_get_source((MPI_T_event_instance)buf, &src), MPI_T_ERR_INVALID_HANDLE);
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "lifecycle") == 0) lifecycle();
  itest_init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  if (strcmp(what, "strings") == 0) strings();
  else if (strcmp(what, "enums") == 0) enums();
  else if (strcmp(what, "cvars") == 0) cvars();
  else if (strcmp(what, "categories") == 0) categories();
  else if (strcmp(what, "pvar_errors") == 0) pvar_errors();
  else if (strcmp(what, "events_meta") == 0) events_meta();
  else CHECK(0, "unknown behaviour '%s'", what);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  return itest_finish(what);
}
