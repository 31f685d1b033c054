/* The production library (spec 6.3; Sonde: --define=peruse=off) and the
 * instrumented one, told apart by PERUSE_Query_supported_events.
 *
 * Compiled out: zero supported events with NULL arrays, every event unknown
 * to Query_event / Query_event_name / register (PERUSE_ERR_EVENT), the other
 * calls still there, and MPI works. Compiled in: all 17 events, and a
 * registered handle fires. Either way the program links and runs.
 *
 *   bazel test --define=peruse=off //tests/peruse_api:production_build_reports_no_events_and_runs
 */
#include "tests/peruse_api/ptest.h"

static int calls;
static int count_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  ++calls;
  return MPI_SUCCESS;
}

static const char* kNames[] = {"PERUSE_COMM_REQ_ACTIVATE", "PERUSE_COMM_REQ_COMPLETE", "PERUSE_COMM_MSG_ARRIVED",
                               "PERUSE_COMM_SEARCH_UNEX_Q_BEGIN", "PERUSE_COMM_SEARCH_UNEX_QUEUE_BEGIN",
                               "PERUSE_COMM_REQ_XFER_CONTINUE"};

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  int n = -1, *ids = (int*)1;
  char** names = (char**)1;
  CHECK_RC(PERUSE_Query_supported_events(&n, &names, &ids), PERUSE_SUCCESS);
  int off = n == 0;
  if (itest_rank == 0) printf("PERUSE compiled %s: %d supported events\n", off ? "out" : "in", n);

  if (off) {
    CHECK(names == NULL && ids == NULL, "no events, but names %p and ids %p (spec 5.2.2: NULL)", (void*)names,
          (void*)ids);
    for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
      int ev = 4242;
      CHECK_RC(PERUSE_Query_event(kNames[i], &ev), PERUSE_ERR_EVENT);
      CHECK(ev == PERUSE_EVENT_INVALID, "Query_event(%s) gave %d", kNames[i], ev);
    }
    for (int e = PERUSE_EVENT_INVALID; e <= PTEST_LAST_EVENT + 1; ++e) {
      char* name = NULL;
      peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
      CHECK_RC(PERUSE_Query_event_name(e, &name), PERUSE_ERR_EVENT);
      int rc = PERUSE_Event_comm_register(e, MPI_COMM_WORLD, count_cb, NULL, &h);
      CHECK(rc == PERUSE_ERR_EVENT, "register(event %d) returned %d (%s), want PERUSE_ERR_EVENT", e, rc,
            ptest_rc_name(rc));
    }
    /* The rest of the API is there and answers sensibly. */
    CHECK_RC(PERUSE_Event_activate(0x100000001L), PERUSE_ERR_EVENT_HANDLE);
    int scope = -1;
    CHECK_RC(PERUSE_Query_queue_event_scope(&scope), PERUSE_SUCCESS);
    int env_size = -1;
    char** env = NULL;
    CHECK_RC(PERUSE_Query_environment(&env_size, &env), PERUSE_SUCCESS);
    CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
    CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  } else {
    CHECK(n == PTEST_LAST_EVENT && names && ids, "%d events (want %d), names %p, ids %p", n, PTEST_LAST_EVENT,
          (void*)names, (void*)ids);
    peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_SELF, count_cb, NULL, &h), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(h));
    ptest_self_exchange(MPI_COMM_SELF, 1);
    CHECK(calls == 2, "REQ_COMPLETE fired %d times for a self send and receive, want 2", calls);
    CHECK_PERUSE_OK(PERUSE_Event_release(&h));
  }

  /* MPI itself is unaffected: a ring of verified messages. */
  unsigned char out[1000], in[1000];
  int next = (itest_rank + 1) % itest_size, prev = (itest_rank + itest_size - 1) % itest_size;
  itest_fill(out, sizeof out, (uint32_t)itest_rank);
  CHECK_OK(MPI_Sendrecv(out, (int)sizeof out, MPI_BYTE, next, 5, in, (int)sizeof in, MPI_BYTE, prev, 5, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  long bad = itest_verify(in, sizeof in, (uint32_t)prev);
  CHECK(bad < 0, "ring message from rank %d wrong at byte %ld", prev, bad);
  return itest_finish(off ? "production_build (PERUSE compiled out)" : "production_build (PERUSE compiled in)");
}
