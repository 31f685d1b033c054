/* The PERUSE_Query_* calls (spec 5.2.2 - 5.2.6).
 *
 *   queries supported_events      same arrays on every call, the constant
 *                                 names, ids and names consistent
 *   queries event_name_inverse    Query_event / Query_event_name are inverse
 *                                 for every supported event; unknown input
 *                                 gives PERUSE_ERR_EVENT (and
 *                                 PERUSE_EVENT_INVALID); both spellings of the
 *                                 unexpected-queue search events resolve
 *   queries environment [NAME=value ...]
 *                                 PERUSE_Query_environment returns exactly the
 *                                 given strings (none: size 0 and NULL),
 *                                 captured at MPI_Init
 *   queries scope                 Query_queue_event_scope is PERUSE_PER_COMM
 */
#include <limits.h>

#include "tests/peruse_api/ptest.h"

#define EV(name) {#name, name}
static const struct {
  const char* name;
  int id;
} kExpected[] = {
    EV(PERUSE_COMM_REQ_ACTIVATE),           EV(PERUSE_COMM_REQ_MATCH_UNEX),
    EV(PERUSE_COMM_REQ_INSERT_IN_POSTED_Q), EV(PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q),
    EV(PERUSE_COMM_REQ_XFER_BEGIN),         EV(PERUSE_COMM_REQ_XFER_END),
    EV(PERUSE_COMM_REQ_COMPLETE),           EV(PERUSE_COMM_REQ_NOTIFY),
    EV(PERUSE_COMM_MSG_ARRIVED),            EV(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q),
    EV(PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q), EV(PERUSE_COMM_MSG_MATCH_POSTED_REQ),
    EV(PERUSE_COMM_SEARCH_POSTED_Q_BEGIN),  EV(PERUSE_COMM_SEARCH_POSTED_Q_END),
    EV(PERUSE_COMM_SEARCH_UNEX_Q_BEGIN),    EV(PERUSE_COMM_SEARCH_UNEX_Q_END),
    EV(PERUSE_COMM_REQ_XFER_CONTINUE),
};
#define NUM_EXPECTED ((int)(sizeof kExpected / sizeof kExpected[0]))

static int supported_events(void) {
  int n = -1, *ids = NULL;
  char** names = NULL;
  CHECK_RC(PERUSE_Query_supported_events(&n, &names, &ids), PERUSE_SUCCESS);
  CHECK(n == NUM_EXPECTED, "%d supported events, want %d", n, NUM_EXPECTED);
  if (n <= 0 || !names || !ids) {
    CHECK(0, "no event tables (n %d names %p ids %p)", n, (void*)names, (void*)ids);
    return 1;
  }
  /* Names are the constant names, each with its constant's value; every
   * event of the header appears exactly once. */
  for (int k = 0; k < NUM_EXPECTED; ++k) {
    int seen = 0;
    for (int i = 0; i < n; ++i)
      if (names[i] && !strcmp(names[i], kExpected[k].name)) {
        ++seen;
        CHECK(ids[i] == kExpected[k].id, "%s listed with id %d, the constant is %d", kExpected[k].name, ids[i],
              kExpected[k].id);
      }
    CHECK(seen == 1, "%s appears %d times in the supported names", kExpected[k].name, seen);
  }
  for (int i = 0; i < n; ++i) {
    CHECK(ids[i] != PERUSE_EVENT_INVALID, "supported id %d at index %d", ids[i], i);
    for (int j = i + 1; j < n; ++j) CHECK(ids[i] != ids[j], "id %d listed twice", ids[i]);
    /* Consistent with the single-event queries. */
    char* name = NULL;
    CHECK_RC(PERUSE_Query_event_name(ids[i], &name), PERUSE_SUCCESS);
    CHECK(name && names[i] && !strcmp(name, names[i]), "Query_event_name(%d) = %s, the table says %s", ids[i],
          name ? name : "(null)", names[i] ? names[i] : "(null)");
    int ev = -1;
    CHECK_RC(PERUSE_Query_event(names[i], &ev), PERUSE_SUCCESS);
    CHECK(ev == ids[i], "Query_event(%s) = %d, the table says %d", names[i], ev, ids[i]);
  }
  /* The library's own arrays: the same pointers every time, contents intact
   * after traffic, valid until MPI_Finalize. */
  char* first_name = names[0];
  int first_id = ids[0];
  for (int round = 0; round < 3; ++round) {
    int n2 = -1, *ids2 = NULL;
    char** names2 = NULL;
    ptest_self_exchange(MPI_COMM_WORLD, round);
    CHECK_RC(PERUSE_Query_supported_events(&n2, &names2, &ids2), PERUSE_SUCCESS);
    CHECK(n2 == n && names2 == names && ids2 == ids, "round %d: (%d, %p, %p) differs from the first call (%d, %p, %p)",
          round, n2, (void*)names2, (void*)ids2, n, (void*)names, (void*)ids);
  }
  CHECK(names[0] == first_name && ids[0] == first_id, "the tables' contents changed");
  /* Missing output pointers are a parameter error, not a crash. */
  CHECK_RC(PERUSE_Query_supported_events(NULL, &names, &ids), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Query_supported_events(&n, NULL, &ids), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Query_supported_events(&n, &names, NULL), PERUSE_ERR_PARAMETER);
  return 0;
}

static void unknown_name(const char* name) {
  int ev = 4242;
  CHECK_RC(PERUSE_Query_event(name, &ev), PERUSE_ERR_EVENT);
  CHECK(ev == PERUSE_EVENT_INVALID, "Query_event(\"%s\") left *event = %d, want PERUSE_EVENT_INVALID",
        name ? name : "(null)", ev);
}

static int event_name_inverse(void) {
  int n = 0, *ids = NULL;
  char** names = NULL;
  CHECK_RC(PERUSE_Query_supported_events(&n, &names, &ids), PERUSE_SUCCESS);
  for (int i = 0; i < n; ++i) {
    char* name = NULL;
    int ev = -1;
    CHECK_RC(PERUSE_Query_event_name(ids[i], &name), PERUSE_SUCCESS);
    if (!name) continue;
    CHECK_RC(PERUSE_Query_event(name, &ev), PERUSE_SUCCESS);
    CHECK(ev == ids[i], "Query_event(Query_event_name(%d) = %s) = %d", ids[i], name, ev);
    /* The name pointer is the library's and stable. */
    char* again = NULL;
    PERUSE_Query_event_name(ids[i], &again);
    CHECK(again == name, "Query_event_name(%d) returned %p then %p", ids[i], (void*)name, (void*)again);
  }
  /* And name -> id -> name for every constant of the header. */
  for (int k = 0; k < NUM_EXPECTED; ++k) {
    int ev = -1;
    char* name = NULL;
    CHECK_RC(PERUSE_Query_event(kExpected[k].name, &ev), PERUSE_SUCCESS);
    CHECK(ev == kExpected[k].id, "Query_event(%s) = %d, want %d", kExpected[k].name, ev, kExpected[k].id);
    CHECK_RC(PERUSE_Query_event_name(ev, &name), PERUSE_SUCCESS);
    CHECK(name && !strcmp(name, kExpected[k].name), "Query_event_name(%d) = %s, want %s", ev, name ? name : "(null)",
          kExpected[k].name);
  }
  /* Both spellings of the unexpected-queue search (the spec uses both). */
  int a = -1, b = -1, c = -1, d = -1;
  CHECK_RC(PERUSE_Query_event("PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN", &a), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Query_event("PERUSE_COMM_SEARCH_UNEX_Q_BEGIN", &b), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Query_event("PERUSE_COMM_SEARCH_UNEX_QUEUE_END", &c), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Query_event("PERUSE_COMM_SEARCH_UNEX_Q_END", &d), PERUSE_SUCCESS);
  CHECK(a == PERUSE_COMM_SEARCH_UNEX_Q_BEGIN && b == a, "UNEX search BEGIN spellings resolve to %d and %d", a, b);
  CHECK(c == PERUSE_COMM_SEARCH_UNEX_Q_END && d == c, "UNEX search END spellings resolve to %d and %d", c, d);
  CHECK(PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN == PERUSE_COMM_SEARCH_UNEX_Q_BEGIN, "the header's two constants differ");
  /* Unknown names. */
  const char* bad[] = {"",
                       "PERUSE_COMM_REQ",
                       "peruse_comm_req_complete",
                       "PERUSE_COMM_REQ_COMPLETE ",
                       " PERUSE_COMM_REQ_COMPLETE",
                       "PERUSE_COMM_REQ_COMPLETEX",
                       "PERUSE_EVENT_INVALID",
                       "PERUSE_FIRST_CUSTOM_EVENT",
                       "PERUSE_COMM_SEARCH_UNEX_QUEUE",
                       "MPI_COMM_WORLD"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) unknown_name(bad[i]);
  unknown_name(NULL);
  /* Unknown ids. */
  int bad_ids[] = {PERUSE_EVENT_INVALID, -1, -17, PERUSE_COMM_REQ_XFER_CONTINUE + 1, 64, 1000, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; ++i) {
    char* name = (char*)"untouched";
    CHECK_RC(PERUSE_Query_event_name(bad_ids[i], &name), PERUSE_ERR_EVENT);
  }
  /* Missing outputs. */
  CHECK_RC(PERUSE_Query_event("PERUSE_COMM_REQ_COMPLETE", NULL), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Query_event_name(PERUSE_COMM_REQ_COMPLETE, NULL), PERUSE_ERR_PARAMETER);
  return 0;
}

static int environment(int argc, char** argv) {
  /* argv[2..]: the exact NAME=value strings expected. */
  int want = argc - 2;
  int size = -1;
  char** env = (char**)1;
  CHECK_RC(PERUSE_Query_environment(&size, &env), PERUSE_SUCCESS);
  CHECK(size == want, "Query_environment reports %d strings, want %d", size, want);
  if (want == 0) CHECK(env == NULL, "no variables used, but env is %p (spec 5.2.5: NULL)", (void*)env);
  for (int i = 0; i < size && env; ++i) {
    CHECK(env[i] && strchr(env[i], '='), "entry %d is \"%s\", not NAME=value", i, env[i] ? env[i] : "(null)");
    fprintf(stderr, "  reported: %s\n", env[i] ? env[i] : "(null)");
  }
  for (int k = 2; k < argc; ++k) {
    int seen = 0;
    for (int i = 0; i < size && env; ++i) seen += env[i] && !strcmp(env[i], argv[k]);
    CHECK(seen == 1, "\"%s\" appears %d times in Query_environment", argv[k], seen);
  }
  /* Captured at MPI_Init: changing the environment now changes nothing, and
   * the strings stay where they are. */
  setenv("SONDE_SPIN", "12345", 1);
  setenv("SONDE_EAGER_LIMIT", "999", 1);
  int size2 = -1;
  char** env2 = NULL;
  CHECK_RC(PERUSE_Query_environment(&size2, &env2), PERUSE_SUCCESS);
  CHECK(size2 == size && env2 == env, "a second call returned (%d, %p), the first (%d, %p)", size2, (void*)env2, size,
        (void*)env);
  for (int i = 0; i < size2 && env2; ++i) {
    CHECK(env2[i] && !strstr(env2[i], "12345") && !strstr(env2[i], "=999"),
          "entry %d changed after MPI_Init: \"%s\"", i, env2[i] ? env2[i] : "(null)");
  }
  CHECK_RC(PERUSE_Query_environment(NULL, &env2), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Query_environment(&size2, NULL), PERUSE_ERR_PARAMETER);
  return 0;
}

static int scope(void) {
  int s = -1;
  CHECK_RC(PERUSE_Query_queue_event_scope(&s), PERUSE_SUCCESS);
  CHECK(s == PERUSE_PER_COMM, "queue event scope %d, want PERUSE_PER_COMM (%d)", s, PERUSE_PER_COMM);
  CHECK_RC(PERUSE_Query_queue_event_scope(NULL), PERUSE_ERR_PARAMETER);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  if (!strcmp(mode, "supported_events")) {
    supported_events();
  } else if (!strcmp(mode, "event_name_inverse")) {
    event_name_inverse();
  } else if (!strcmp(mode, "environment")) {
    environment(argc, argv);
  } else if (!strcmp(mode, "scope")) {
    scope();
  } else {
    CHECK(0, "unknown mode \"%s\"", mode);
  }
  char name[64];
  snprintf(name, sizeof name, "queries %s", mode);
  return itest_finish(name);
}
