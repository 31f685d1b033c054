/* PERUSE_Init and the state every other call needs (spec 5.2.1).
 *
 *   init_state requires_mpi      PERUSE_Init before MPI_Init and after
 *                                MPI_Finalize returns PERUSE_ERR_MPI_INIT; so
 *                                does every other call then, without crashing
 *   init_state repeated          PERUSE_Init again and again is harmless:
 *                                handles survive, nothing fires twice, the
 *                                event tables stay the same
 *   init_state before_init       after MPI_Init but before PERUSE_Init every
 *                                call returns an error, not a crash
 *   init_state lock_before_init  PERUSE_Lock/Unlock before PERUSE_Init
 *                                return an error like every other call
 *   init_state lock_without_mpi  PERUSE_Lock before MPI_Init and after
 *                                MPI_Finalize returns PERUSE_ERR_MPI_INIT,
 *                                as every other call does then
 */
#include "tests/peruse_api/ptest.h"

static int count_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  ++*(int*)param;
  return MPI_SUCCESS;
}

/* Every call but PERUSE_Init, with plausible arguments; each must return an
 * error (and `want` exactly when want >= 0). */
static void every_call_fails(int want, const char* when) {
  int n = -7, ev = -7, scope = -7, env_size = -7;
  char** names = NULL;
  int* ids = NULL;
  char* name = NULL;
  char** env = NULL;
  peruse_event_h h = 0x100000001L; /* looks like slot 1, generation 1 */
  peruse_comm_callback_f* fn = NULL;
  void* param = NULL;
  void* obj = NULL;
  int rcs[14];
  const char* what[14] = {"Query_supported_events", "Query_event",    "Query_event_name", "Query_environment",
                          "Query_queue_event_scope", "comm_register", "activate",         "deactivate",
                          "release",                "callback_set",   "callback_get",     "Event_get",
                          "object_get",             "propagate"};
  rcs[0] = PERUSE_Query_supported_events(&n, &names, &ids);
  rcs[1] = PERUSE_Query_event("PERUSE_COMM_REQ_COMPLETE", &ev);
  rcs[2] = PERUSE_Query_event_name(PERUSE_COMM_REQ_COMPLETE, &name);
  rcs[3] = PERUSE_Query_environment(&env_size, &env);
  rcs[4] = PERUSE_Query_queue_event_scope(&scope);
  /* MPI_COMM_WORLD is a constant handle: fine to pass before MPI_Init. */
  rcs[5] = PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, count_cb, NULL, &h);
  rcs[6] = PERUSE_Event_activate(h);
  rcs[7] = PERUSE_Event_deactivate(h);
  peruse_event_h h2 = h;
  rcs[8] = PERUSE_Event_release(&h2);
  rcs[9] = PERUSE_Event_comm_callback_set(h, count_cb, NULL);
  rcs[10] = PERUSE_Event_comm_callback_get(h, &fn, &param);
  rcs[11] = PERUSE_Event_get(h, &ev);
  rcs[12] = PERUSE_Event_object_get(h, &obj);
  rcs[13] = PERUSE_Event_propagate(h, 1);
  for (int i = 0; i < 14; ++i) {
    CHECK(rcs[i] != PERUSE_SUCCESS, "%s: PERUSE_%s returned PERUSE_SUCCESS", when, what[i]);
    if (want >= 0)
      CHECK(rcs[i] == want, "%s: PERUSE_%s returned %d (%s), want %s", when, what[i], rcs[i],
            ptest_rc_name(rcs[i]), ptest_rc_name(want));
  }
}

static int requires_mpi(int argc, char** argv) {
  /* Before MPI_Init: no MPI, so no PERUSE either. */
  CHECK_RC(PERUSE_Init(), PERUSE_ERR_MPI_INIT);
  every_call_fails(PERUSE_ERR_MPI_INIT, "before MPI_Init");
  itest_init(&argc, &argv);
  /* The failed early call must not poison the real initialisation. */
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  int scope = -1;
  CHECK_RC(PERUSE_Query_queue_event_scope(&scope), PERUSE_SUCCESS);
  int hits = 0;
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_SELF, count_cb, &hits, &h), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_activate(h), PERUSE_SUCCESS);
  ptest_self_exchange(MPI_COMM_SELF, 3);
  CHECK(hits == 2, "REQ_COMPLETE fired %d times for a self send and receive, want 2", hits);
  MPI_Finalize();
  /* After MPI_Finalize: PERUSE is over too. */
  CHECK_RC(PERUSE_Init(), PERUSE_ERR_MPI_INIT);
  every_call_fails(PERUSE_ERR_MPI_INIT, "after MPI_Finalize");
  /* Even the handle that was live. */
  CHECK_ERR(PERUSE_Event_deactivate(h));
  CHECK_ERR(PERUSE_Event_release(&h));
  if (itest_failures) {
    fprintf(stderr, "init_requires_mpi: %d check(s) failed\n", itest_failures);
    return 1;
  }
  printf("init_requires_mpi: passed\n");
  return 0;
}

static int repeated(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  int n1 = 0, *ids1 = NULL;
  char** names1 = NULL;
  CHECK_RC(PERUSE_Query_supported_events(&n1, &names1, &ids1), PERUSE_SUCCESS);
  int hits = 0;
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_ACTIVATE, MPI_COMM_WORLD, count_cb, &hits, &h), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_activate(h), PERUSE_SUCCESS);
  /* Another tool (or layer) initialises too; then once more. */
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  int n2 = 0, *ids2 = NULL;
  char** names2 = NULL;
  CHECK_RC(PERUSE_Query_supported_events(&n2, &names2, &ids2), PERUSE_SUCCESS);
  CHECK(n1 == n2 && names1 == names2 && ids1 == ids2, "the event tables changed after a second PERUSE_Init");
  /* The handle registered before is still live and active, and fires once. */
  int ev = 0;
  CHECK_RC(PERUSE_Event_get(h, &ev), PERUSE_SUCCESS);
  CHECK(ev == PERUSE_COMM_REQ_ACTIVATE, "Event_get says %d after re-init", ev);
  ptest_self_exchange(MPI_COMM_WORLD, 4);
  CHECK(hits == 2, "REQ_ACTIVATE fired %d times for one send and one receive after re-init, want 2", hits);
  /* A handle registered after the repeated init works alongside. */
  int hits2 = 0;
  peruse_event_h h2 = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_ACTIVATE, MPI_COMM_WORLD, count_cb, &hits2, &h2), PERUSE_SUCCESS);
  CHECK(h2 != h, "a new registration returned the live handle %ld again", (long)h);
  CHECK_RC(PERUSE_Event_activate(h2), PERUSE_SUCCESS);
  ptest_self_exchange(MPI_COMM_WORLD, 5);
  CHECK(hits == 4 && hits2 == 2, "after a second exchange: counts %d and %d, want 4 and 2", hits, hits2);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_release(&h), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_release(&h2), PERUSE_SUCCESS);
  return itest_finish("init_repeated_is_harmless");
}

static int before_init(int argc, char** argv) {
  itest_init(&argc, &argv);
  /* MPI is running but this process never called PERUSE_Init yet. */
  every_call_fails(-1, "before PERUSE_Init");
  /* NULL and garbage arguments too: still an error, not a crash. */
  CHECK_ERR(PERUSE_Query_supported_events(NULL, NULL, NULL));
  CHECK_ERR(PERUSE_Query_event(NULL, NULL));
  CHECK_ERR(PERUSE_Query_event_name(-1, NULL));
  CHECK_ERR(PERUSE_Query_environment(NULL, NULL));
  CHECK_ERR(PERUSE_Query_queue_event_scope(NULL));
  CHECK_ERR(PERUSE_Event_comm_register(-5, (MPI_Comm)12345, NULL, NULL, NULL));
  CHECK_ERR(PERUSE_Event_activate(-1));
  CHECK_ERR(PERUSE_Event_release(NULL));
  /* Then PERUSE_Init, and everything works. */
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  int hits = 0;
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_NOTIFY, MPI_COMM_WORLD, count_cb, &hits, &h), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_activate(h), PERUSE_SUCCESS);
  ptest_self_exchange(MPI_COMM_WORLD, 6);
  CHECK(hits == 2, "REQ_NOTIFY fired %d times, want 2", hits);
  CHECK_RC(PERUSE_Event_release(&h), PERUSE_SUCCESS);
  return itest_finish("calls_before_peruse_init_return_errors");
}

static int lock_before_init(int argc, char** argv) {
  itest_init(&argc, &argv);
  int rc = PERUSE_Lock();
  CHECK(rc != PERUSE_SUCCESS, "PERUSE_Lock before PERUSE_Init returned PERUSE_SUCCESS, want an error "
                              "(every other call returns PERUSE_ERR_INIT then)");
  if (rc == PERUSE_SUCCESS) PERUSE_Unlock();
  /* The unlock error would be right for a lock nobody holds anyway; what
   * matters is that it is an error. */
  CHECK_ERR(PERUSE_Unlock());
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  return itest_finish("lock_before_peruse_init_returns_error");
}

static int lock_without_mpi(int argc, char** argv) {
  CHECK_RC(PERUSE_Lock(), PERUSE_ERR_MPI_INIT);
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK); /* nothing was locked */
  itest_init(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  MPI_Finalize();
  CHECK_RC(PERUSE_Lock(), PERUSE_ERR_MPI_INIT);
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
  if (itest_failures) {
    fprintf(stderr, "lock_without_mpi: %d check(s) failed\n", itest_failures);
    return 1;
  }
  printf("lock_without_mpi: passed\n");
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "requires_mpi")) return requires_mpi(argc, argv);
  if (!strcmp(mode, "repeated")) return repeated(argc, argv);
  if (!strcmp(mode, "before_init")) return before_init(argc, argv);
  if (!strcmp(mode, "lock_before_init")) return lock_before_init(argc, argv);
  if (!strcmp(mode, "lock_without_mpi")) return lock_without_mpi(argc, argv);
  fprintf(stderr, "usage: init_state requires_mpi|repeated|before_init|lock_before_init|lock_without_mpi\n");
  return 2;
}
