/* Event handles: registration, activation windows, callbacks, release, and
 * handles whose communicator was freed (spec 5.1.1, 5.1.2, 5.2.7 - 5.2.14).
 *
 *   handles multiple_handles   several handles per (event, comm), each with
 *                              its own window; every active one invoked
 *                              exactly once per event, with its own event_h
 *   handles callback_set_get   callback_set only while inactive; callback_get
 *                              on active and inactive handles; param passed
 *   handles register_bad_args  invalid event / comm / callback / out pointer
 *   handles release            released and garbage handle values answer
 *                              PERUSE_ERR_EVENT_HANDLE everywhere
 *   handles comm_free          (2 ranks) after MPI_Comm_free every call on
 *                              the handle is PERUSE_ERR_MPI_OBJECT, nothing
 *                              fires, release still frees it
 *   handles object_get         object_get gives the comm, Event_get the event
 */
#include <limits.h>

#include "tests/peruse_api/ptest.h"

/* What one handle's callback saw. */
typedef struct {
  peruse_event_h expect_h; /* the handle this record belongs to */
  int expect_event;
  int calls;
  int wrong_handle; /* calls with another event_h */
  int wrong_event;  /* PERUSE_Event_get(event_h) was not expect_event */
} Rec;

static int rec_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  Rec* r = (Rec*)param;
  ++r->calls;
  if (h != r->expect_h) ++r->wrong_handle;
  int ev = -1;
  if (PERUSE_Event_get(h, &ev) != PERUSE_SUCCESS || ev != r->expect_event) ++r->wrong_event;
  return MPI_SUCCESS;
}

static int other_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  ++((Rec*)param)->calls;
  return MPI_SUCCESS;
}

static peruse_event_h reg(int event, MPI_Comm comm, peruse_comm_callback_f* fn, Rec* rec) {
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(event, comm, fn, rec, &h), PERUSE_SUCCESS);
  CHECK(h != PERUSE_EVENT_HANDLE_NULL, "register returned the null handle");
  if (rec) {
    rec->expect_h = h;
    rec->expect_event = event;
  }
  return h;
}

static void check_recs(Rec* recs, int n, const int* want, const char* step) {
  for (int i = 0; i < n; ++i) {
    CHECK(recs[i].calls == want[i], "%s: handle %d called %d times, want %d", step, i, recs[i].calls, want[i]);
    CHECK(recs[i].wrong_handle == 0, "%s: handle %d's callback got another event_h %d times", step, i,
          recs[i].wrong_handle);
    CHECK(recs[i].wrong_event == 0, "%s: handle %d: Event_get(event_h) inside the callback was wrong %d times", step, i,
          recs[i].wrong_event);
  }
}

/* ------------------------------------------------------------------------ */

static void multiple_handles(void) {
  enum { N = 4 };
  Rec rec[N + 2];
  memset(rec, 0, sizeof rec);
  peruse_event_h h[N + 2];
  /* N handles for the same (event, comm), all with the same callback. */
  for (int i = 0; i < N; ++i) h[i] = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &rec[i]);
  /* The same callback for another event on the same comm, and another
   * callback for the same event. */
  h[N] = reg(PERUSE_COMM_REQ_ACTIVATE, MPI_COMM_WORLD, rec_cb, &rec[N]);
  h[N + 1] = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, other_cb, &rec[N + 1]);
  for (int i = 0; i < N + 2; ++i)
    for (int j = i + 1; j < N + 2; ++j) CHECK(h[i] != h[j], "handles %d and %d are both %ld", i, j, (long)h[i]);

  /* Registered handles are inactive: nothing fires. */
  ptest_self_exchange(MPI_COMM_WORLD, 1);
  int w0[N + 2] = {0, 0, 0, 0, 0, 0};
  check_recs(rec, N + 2, w0, "nothing active");

  /* Windows of 0 and 1 open. A self exchange completes two requests. */
  CHECK_PERUSE_OK(PERUSE_Event_activate(h[0]));
  CHECK_PERUSE_OK(PERUSE_Event_activate(h[1]));
  ptest_self_exchange(MPI_COMM_WORLD, 2);
  int w1[N + 2] = {2, 2, 0, 0, 0, 0};
  check_recs(rec, N + 2, w1, "0 and 1 active");

  /* Activating an active handle again changes nothing (no double calls). */
  CHECK_RC(PERUSE_Event_activate(h[1]), PERUSE_SUCCESS);
  ptest_self_exchange(MPI_COMM_WORLD, 3);
  int w2[N + 2] = {4, 4, 0, 0, 0, 0};
  check_recs(rec, N + 2, w2, "1 activated twice");

  /* Close 0's window, open 2, 3 and the other two. */
  CHECK_PERUSE_OK(PERUSE_Event_deactivate(h[0]));
  CHECK_RC(PERUSE_Event_deactivate(h[0]), PERUSE_SUCCESS); /* inactive already: no effect */
  for (int i = 2; i < N + 2; ++i) CHECK_PERUSE_OK(PERUSE_Event_activate(h[i]));
  ptest_self_exchange(MPI_COMM_WORLD, 4);
  int w3[N + 2] = {4, 6, 2, 2, 2, 2};
  check_recs(rec, N + 2, w3, "0 closed, the rest open");

  /* Close everything but 3. */
  for (int i = 0; i < N + 2; ++i)
    if (i != 3) CHECK_PERUSE_OK(PERUSE_Event_deactivate(h[i]));
  ptest_self_exchange(MPI_COMM_WORLD, 5);
  int w4[N + 2] = {4, 6, 2, 4, 2, 2};
  check_recs(rec, N + 2, w4, "only 3 open");
  for (int i = 0; i < N + 2; ++i) CHECK_PERUSE_OK(PERUSE_Event_release(&h[i]));

  /* Many handles, one callback: each invoked exactly once per event. */
  enum { M = 64 };
  static Rec many[M];
  peruse_event_h mh[M];
  memset(many, 0, sizeof many);
  for (int i = 0; i < M; ++i) {
    mh[i] = reg(PERUSE_COMM_REQ_NOTIFY, MPI_COMM_WORLD, rec_cb, &many[i]);
    CHECK_PERUSE_OK(PERUSE_Event_activate(mh[i]));
  }
  ptest_self_exchange(MPI_COMM_WORLD, 6);
  for (int i = 0; i < M; i += 2) CHECK_PERUSE_OK(PERUSE_Event_deactivate(mh[i]));
  ptest_self_exchange(MPI_COMM_WORLD, 7);
  for (int i = 0; i < M; ++i) {
    int want = i % 2 ? 4 : 2;
    CHECK(many[i].calls == want, "handle %d of %d: %d calls, want %d", i, M, many[i].calls, want);
    CHECK(many[i].wrong_handle == 0 && many[i].wrong_event == 0, "handle %d of %d: wrong event_h or event", i, M);
  }
  for (int i = 0; i < M; ++i) CHECK_PERUSE_OK(PERUSE_Event_release(&mh[i]));
}

/* ------------------------------------------------------------------------ */

static void callback_set_get(void) {
  Rec a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  peruse_event_h h = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &a);
  b.expect_h = h;
  b.expect_event = PERUSE_COMM_REQ_COMPLETE;
  peruse_comm_callback_f* fn = NULL;
  void* param = NULL;

  /* Inactive: get returns what register set. */
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == rec_cb && param == &a, "inactive: callback_get gave (%p, %p), want (rec_cb, &a)", (void*)(intptr_t)fn,
        param);
  /* Active: get still works (5.1.2) and gives the same. */
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  fn = NULL;
  param = NULL;
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == rec_cb && param == &a, "active: callback_get gave (%p, %p), want (rec_cb, &a)", (void*)(intptr_t)fn,
        param);
  /* Active: set is refused and changes nothing. */
  CHECK_RC(PERUSE_Event_comm_callback_set(h, other_cb, &b), PERUSE_ERR_EVENT_HANDLE);
  CHECK_ERR(PERUSE_Event_comm_callback_set(h, NULL, &b));
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == rec_cb && param == &a, "a refused callback_set changed the callback to (%p, %p)", (void*)(intptr_t)fn,
        param);
  ptest_self_exchange(MPI_COMM_WORLD, 1);
  CHECK(a.calls == 2 && b.calls == 0, "after a refused set: old callback %d calls, new %d; want 2 and 0", a.calls,
        b.calls);

  /* Inactive: NULL is a parameter error and changes nothing. */
  CHECK_PERUSE_OK(PERUSE_Event_deactivate(h));
  CHECK_RC(PERUSE_Event_comm_callback_set(h, NULL, &b), PERUSE_ERR_PARAMETER);
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == rec_cb && param == &a, "callback_set(NULL) changed the callback to (%p, %p)", (void*)(intptr_t)fn,
        param);

  /* Inactive: set works; the old callback is lost, the new param passed. */
  CHECK_RC(PERUSE_Event_comm_callback_set(h, other_cb, &b), PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == other_cb && param == &b, "after set: callback_get gave (%p, %p), want (other_cb, &b)",
        (void*)(intptr_t)fn, param);
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  ptest_self_exchange(MPI_COMM_WORLD, 2);
  CHECK(a.calls == 2 && b.calls == 2, "after set: old callback %d calls, new %d; want 2 and 2", a.calls, b.calls);
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == other_cb && param == &b, "active after set: callback_get gave (%p, %p)", (void*)(intptr_t)fn, param);

  /* Back to the first callback with a NULL param: NULL is passed through. */
  CHECK_PERUSE_OK(PERUSE_Event_deactivate(h));
  CHECK_RC(PERUSE_Event_comm_callback_set(h, rec_cb, &a), PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  ptest_self_exchange(MPI_COMM_WORLD, 3);
  CHECK(a.calls == 4 && b.calls == 2 && a.wrong_handle == 0 && a.wrong_event == 0,
        "after setting back: %d and %d calls (want 4 and 2), %d wrong handles, %d wrong events", a.calls, b.calls,
        a.wrong_handle, a.wrong_event);
  CHECK_PERUSE_OK(PERUSE_Event_deactivate(h));
  CHECK_RC(PERUSE_Event_comm_callback_set(h, rec_cb, NULL), PERUSE_SUCCESS);
  fn = NULL;
  param = &a;
  CHECK_PERUSE_OK(PERUSE_Event_comm_callback_get(h, &fn, &param));
  CHECK(fn == rec_cb && param == NULL, "NULL param: callback_get gave (%p, %p)", (void*)(intptr_t)fn, param);

  /* Missing outputs. */
  CHECK_RC(PERUSE_Event_comm_callback_get(h, NULL, &param), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Event_comm_callback_get(h, &fn, NULL), PERUSE_ERR_PARAMETER);
  CHECK_PERUSE_OK(PERUSE_Event_release(&h));
}

/* ------------------------------------------------------------------------ */

static void register_bad_args(void) {
  Rec rec;
  memset(&rec, 0, sizeof rec);
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;

  int bad_events[] = {PERUSE_EVENT_INVALID, -1, PERUSE_COMM_REQ_XFER_CONTINUE + 1, 1000, INT_MIN, INT_MAX};
  for (size_t i = 0; i < sizeof bad_events / sizeof bad_events[0]; ++i) {
    int rc = PERUSE_Event_comm_register(bad_events[i], MPI_COMM_WORLD, rec_cb, &rec, &h);
    CHECK(rc == PERUSE_ERR_EVENT, "register(event %d) returned %d (%s), want PERUSE_ERR_EVENT", bad_events[i], rc,
          ptest_rc_name(rc));
  }

  /* Communicators MPI would reject with MPI_ERR_COMM. */
  MPI_Comm freed, reused, pending;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
  MPI_Comm freed_value = freed;
  CHECK_OK(MPI_Comm_free(&freed));
  /* A new communicator likely takes the freed one's slot (new generation). */
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &reused));
  /* A freed communicator that still has a posted receive (kept alive inside
   * the engine until it completes). */
  CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &pending));
  MPI_Comm pending_value = pending;
  char buf[4];
  MPI_Request rq;
  CHECK_OK(MPI_Irecv(buf, 4, MPI_BYTE, 0, 9, pending, &rq));
  CHECK_OK(MPI_Comm_free(&pending));
  MPI_Comm bad_comms[] = {MPI_COMM_NULL, freed_value, pending_value, (MPI_Comm)12345, (MPI_Comm)-1,
                          (MPI_Comm)MPI_INT /* a handle of another kind */};
  for (size_t i = 0; i < sizeof bad_comms / sizeof bad_comms[0]; ++i) {
    int rc = PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, bad_comms[i], rec_cb, &rec, &h);
    CHECK(rc == PERUSE_ERR_COMM, "register on comm 0x%x (case %zu) returned %d (%s), want PERUSE_ERR_COMM",
          (unsigned)bad_comms[i], i, rc, ptest_rc_name(rc));
  }
  CHECK_OK(MPI_Cancel(&rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

  /* NULL callback, NULL output. */
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, NULL, &rec, &h), PERUSE_ERR_PARAMETER);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &rec, NULL),
           PERUSE_ERR_PARAMETER);

  /* And the good cases still work: WORLD, SELF, the reused slot's comm, a
   * NULL param. */
  MPI_Comm good[] = {MPI_COMM_WORLD, MPI_COMM_SELF, reused};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
    h = PERUSE_EVENT_HANDLE_NULL;
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, good[i], rec_cb, NULL, &h), PERUSE_SUCCESS);
    CHECK_RC(PERUSE_Event_release(&h), PERUSE_SUCCESS);
  }
  CHECK_OK(MPI_Comm_free(&reused));
}

/* ------------------------------------------------------------------------ */

/* Every handle call on `h` must return `want`. */
static void all_calls(peruse_event_h h, int want, const char* what) {
  int ev = -1;
  void* obj = NULL;
  peruse_comm_callback_f* fn = NULL;
  void* param = NULL;
  peruse_event_h copy = h;
  int rc[9];
  const char* name[9] = {"activate",     "deactivate", "Event_get",   "object_get", "callback_set",
                         "callback_get", "propagate(1)", "propagate(0)", "release"};
  rc[0] = PERUSE_Event_activate(h);
  rc[1] = PERUSE_Event_deactivate(h);
  rc[2] = PERUSE_Event_get(h, &ev);
  rc[3] = PERUSE_Event_object_get(h, &obj);
  rc[4] = PERUSE_Event_comm_callback_set(h, rec_cb, NULL);
  rc[5] = PERUSE_Event_comm_callback_get(h, &fn, &param);
  rc[6] = PERUSE_Event_propagate(h, 1);
  rc[7] = PERUSE_Event_propagate(h, 0);
  rc[8] = want == PERUSE_ERR_EVENT_HANDLE ? PERUSE_Event_release(&copy) : want; /* release frees: test it last */
  for (int i = 0; i < 9; ++i)
    CHECK(rc[i] == want, "%s: %s(%ld) returned %d (%s), want %s", what, name[i], (long)h, rc[i], ptest_rc_name(rc[i]),
          ptest_rc_name(want));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { return ptest_rng(&rng_state); }

static void release(void) {
  Rec a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  peruse_event_h h = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &a);
  peruse_event_h keep = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &b);
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  CHECK_PERUSE_OK(PERUSE_Event_activate(keep));
  ptest_self_exchange(MPI_COMM_WORLD, 1);

  /* Release an active handle: *h becomes PERUSE_EVENT_HANDLE_NULL, it no
   * longer fires, the other handle of the same event still does. */
  peruse_event_h old = h;
  CHECK_RC(PERUSE_Event_release(&h), PERUSE_SUCCESS);
  CHECK(h == PERUSE_EVENT_HANDLE_NULL, "release left *event_h = %ld, want PERUSE_EVENT_HANDLE_NULL", (long)h);
  ptest_self_exchange(MPI_COMM_WORLD, 2);
  CHECK(a.calls == 2 && b.calls == 4, "after release: released handle %d calls (want 2), kept %d (want 4)", a.calls,
        b.calls);
  all_calls(old, PERUSE_ERR_EVENT_HANDLE, "released handle");
  all_calls(PERUSE_EVENT_HANDLE_NULL, PERUSE_ERR_EVENT_HANDLE, "PERUSE_EVENT_HANDLE_NULL");
  CHECK_RC(PERUSE_Event_release(NULL), PERUSE_ERR_PARAMETER);

  /* A handle value of a previous generation: the slot is reused by a new
   * registration, the old value stays dead. */
  Rec c;
  memset(&c, 0, sizeof c);
  peruse_event_h newer = reg(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, rec_cb, &c);
  CHECK(newer != old, "a new registration returned the released value %ld again", (long)old);
  all_calls(old, PERUSE_ERR_EVENT_HANDLE, "previous generation");
  CHECK_RC(PERUSE_Event_activate(newer), PERUSE_SUCCESS);
  ptest_self_exchange(MPI_COMM_WORLD, 3);
  CHECK(a.calls == 2 && c.calls == 2, "old generation %d calls (want 2), new %d (want 2)", a.calls, c.calls);
  /* The same slot with the next generation (not issued yet) is not valid
   * either. */
  all_calls((peruse_event_h)((uint64_t)newer + (1ull << 32)), PERUSE_ERR_EVENT_HANDLE, "next generation");

  /* Garbage. */
  peruse_event_h live[2] = {keep, newer};
  long fixed[] = {-1, 1, 2, 3, 0xffffffffL, 1L << 32, (1L << 32) | 0xffffffffL, LONG_MIN, LONG_MAX, -2,
                  (long)0x8000000000000001ull};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
    if (fixed[i] != live[0] && fixed[i] != live[1]) all_calls(fixed[i], PERUSE_ERR_EVENT_HANDLE, "fixed garbage");
  for (int i = 0; i < 20000; ++i) {
    peruse_event_h g = (peruse_event_h)rng();
    if (i % 2) g = (peruse_event_h)((rng() % 0x7fffffff) << 32 | (rng() % 16)); /* small index, any generation */
    if (i % 5 == 0) g = (peruse_event_h)(rng() % 4096);                         /* generation 0 */
    if (g == live[0] || g == live[1] || g == PERUSE_EVENT_HANDLE_NULL) continue;
    all_calls(g, PERUSE_ERR_EVENT_HANDLE, "random garbage");
    if (itest_failures > 20) break;
  }
  /* The live handles survived all that. */
  ptest_self_exchange(MPI_COMM_WORLD, 4);
  CHECK(b.calls == 8 && c.calls == 4, "live handles after the garbage: %d and %d calls, want 8 and 4", b.calls,
        c.calls);
  CHECK_PERUSE_OK(PERUSE_Event_release(&keep));
  CHECK_PERUSE_OK(PERUSE_Event_release(&newer));
  /* Release twice through a copy. */
  CHECK_RC(PERUSE_Event_release(&old), PERUSE_ERR_EVENT_HANDLE);
}

/* ------------------------------------------------------------------------ */

static void comm_free(void) {
  Rec a, b, c;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  memset(&c, 0, sizeof c);
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  peruse_event_h ha = reg(PERUSE_COMM_REQ_COMPLETE, d, rec_cb, &a); /* active */
  peruse_event_h hb = reg(PERUSE_COMM_MSG_ARRIVED, d, rec_cb, &b);  /* active */
  peruse_event_h hc = reg(PERUSE_COMM_REQ_ACTIVATE, d, rec_cb, &c); /* inactive, propagating */
  CHECK_PERUSE_OK(PERUSE_Event_propagate(hc, 1));
  CHECK_PERUSE_OK(PERUSE_Event_activate(ha));
  CHECK_PERUSE_OK(PERUSE_Event_activate(hb));
  itest_barrier(MPI_COMM_WORLD); /* both ranks watch before anything is sent */
  char x = 1;
  ptest_transfer(d, 0, 1, &x, 1, 1);
  CHECK(a.calls == 1 && b.calls == itest_rank, "before the free: %d completions, %d arrivals", a.calls, b.calls);

  /* Rank 0 posts a receive on d and frees d; only then does rank 1 send on
   * it. The receive still completes (MPI 6.4.3), but nothing may fire for
   * the freed comm's handles. */
  char in = 0;
  MPI_Request rq = MPI_REQUEST_NULL;
  int a0 = 0, b0 = 0;
  if (itest_rank == 0) {
    CHECK_OK(MPI_Irecv(&in, 1, MPI_BYTE, 1, 2, d, &rq));
    CHECK_OK(MPI_Comm_free(&d));
    a0 = a.calls;
    b0 = b.calls;
    itest_barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(in == 42, "the receive posted before the free got %d, want 42", in);
  } else {
    itest_barrier(MPI_COMM_WORLD);
    x = 42;
    CHECK_OK(MPI_Send(&x, 1, MPI_BYTE, 0, 2, d));
    CHECK_OK(MPI_Comm_free(&d));
    a0 = a.calls;
    b0 = b.calls;
  }

  /* Every call on the handles: PERUSE_ERR_MPI_OBJECT. */
  all_calls(ha, PERUSE_ERR_MPI_OBJECT, "active handle of a freed comm");
  all_calls(hb, PERUSE_ERR_MPI_OBJECT, "second active handle of a freed comm");
  all_calls(hc, PERUSE_ERR_MPI_OBJECT, "inactive handle of a freed comm");

  /* New communicators (one may reuse the freed one's slot) and traffic on
   * them and on WORLD: nothing fires for the dead handles. */
  MPI_Comm e, f;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
  CHECK_OK(MPI_Comm_dup(e, &f)); /* hc propagated from d, not from e */
  for (int i = 0; i < 3; ++i) {
    ptest_transfer(e, 0, 1, &x, 1, 3);
    ptest_transfer(f, 1, 0, &x, 1, 3);
    ptest_transfer(MPI_COMM_WORLD, 0, 1, &x, 1, 3);
  }
  if (itest_rank == 0) ptest_self_exchange(e, 4);
  CHECK(a.calls == a0 && b.calls == b0 && c.calls == 0,
        "handles of the freed comm fired afterwards: completions %d (was %d), arrivals %d (was %d), activations %d",
        a.calls, a0, b.calls, b0, c.calls);

  /* Release still frees them: it reports PERUSE_ERR_MPI_OBJECT, nulls the
   * handle, and the value is dead afterwards. */
  peruse_event_h ha_value = ha, hb_value = hb;
  CHECK_RC(PERUSE_Event_release(&ha), PERUSE_ERR_MPI_OBJECT);
  CHECK(ha == PERUSE_EVENT_HANDLE_NULL, "release of a freed comm's handle left %ld", (long)ha);
  CHECK_RC(PERUSE_Event_release(&hb), PERUSE_ERR_MPI_OBJECT);
  CHECK_RC(PERUSE_Event_release(&hc), PERUSE_ERR_MPI_OBJECT);
  all_calls(ha_value, PERUSE_ERR_EVENT_HANDLE, "released handle of a freed comm");
  all_calls(hb_value, PERUSE_ERR_EVENT_HANDLE, "released handle of a freed comm");
  CHECK_OK(MPI_Comm_free(&f));
  CHECK_OK(MPI_Comm_free(&e));

  /* Freed handles' slots are reused: 200 rounds of dup, register, free,
   * release use only a handful of slots (the handle's low 32 bits are its
   * slot, include/peruse.h). */
  unsigned slots[8];
  int nslots = 0, overflow = 0;
  for (int i = 0; i < 200; ++i) {
    MPI_Comm g;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &g));
    peruse_event_h h = reg(PERUSE_COMM_REQ_COMPLETE, g, rec_cb, &a);
    CHECK_PERUSE_OK(PERUSE_Event_activate(h));
    unsigned slot = (unsigned)((uint64_t)h & 0xffffffffu);
    int known = 0;
    for (int k = 0; k < nslots; ++k) known |= slots[k] == slot;
    if (!known) {
      if (nslots < 8) slots[nslots++] = slot;
      else ++overflow;
    }
    CHECK_OK(MPI_Comm_free(&g));
    CHECK_RC(PERUSE_Event_release(&h), PERUSE_ERR_MPI_OBJECT);
  }
  CHECK(overflow == 0, "200 register/free/release rounds used more than 8 handle slots: released handles of "
                       "freed communicators are not freed");
}

/* ------------------------------------------------------------------------ */

static void object_get(void) {
  MPI_Comm d, s;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &s));
  MPI_Comm comms[] = {MPI_COMM_WORLD, MPI_COMM_SELF, d, s};
  for (size_t c = 0; c < sizeof comms / sizeof comms[0]; ++c) {
    for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
      peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
      CHECK_RC(PERUSE_Event_comm_register(e, comms[c], rec_cb, NULL, &h), PERUSE_SUCCESS);
      for (int active = 0; active < 2; ++active) {
        int ev = -1;
        void* obj = (void*)&ev;
        CHECK_PERUSE_OK(PERUSE_Event_get(h, &ev));
        CHECK(ev == e, "Event_get gave %d for a handle of event %d", ev, e);
        CHECK_PERUSE_OK(PERUSE_Event_object_get(h, &obj));
        CHECK(ptest_comm_of(obj) == comms[c], "object_get gave comm 0x%x, registered on 0x%x (event %d)",
              (unsigned)ptest_comm_of(obj), (unsigned)comms[c], e);
        if (!active) CHECK_PERUSE_OK(PERUSE_Event_activate(h));
      }
      CHECK_RC(PERUSE_Event_get(h, NULL), PERUSE_ERR_PARAMETER);
      CHECK_RC(PERUSE_Event_object_get(h, NULL), PERUSE_ERR_PARAMETER);
      CHECK_PERUSE_OK(PERUSE_Event_release(&h));
    }
  }
  CHECK_OK(MPI_Comm_free(&s));
  CHECK_OK(MPI_Comm_free(&d));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  if (!strcmp(mode, "multiple_handles")) multiple_handles();
  else if (!strcmp(mode, "callback_set_get")) callback_set_get();
  else if (!strcmp(mode, "register_bad_args")) register_bad_args();
  else if (!strcmp(mode, "release")) release();
  else if (!strcmp(mode, "comm_free")) comm_free();
  else if (!strcmp(mode, "object_get")) object_get();
  else CHECK(0, "unknown mode \"%s\"", mode);
  char name[64];
  snprintf(name, sizeof name, "handles %s", mode);
  return itest_finish(name);
}
