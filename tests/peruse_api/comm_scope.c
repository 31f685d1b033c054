/* Handles belong to one communicator (spec 5.1.1, 5.2.6) unless propagated
 * to its duplicates (5.2.15). Two ranks.
 *
 *   comm_scope per_comm    events of traffic on a dup never reach WORLD's
 *                          handles and vice versa; each comm has its own
 *                          queues (PERUSE_PER_COMM is true)
 *   comm_scope propagate   PERUSE_Event_propagate(h, 1): dups and dups of
 *                          dups get twins with the same event, callback,
 *                          param and window state (dup, dup_with_info,
 *                          idup); not without it, not for MPI_Comm_split,
 *                          create, create_group, split_type; refused on an
 *                          active handle
 *   comm_scope dup_arrival (3 ranks) a message sent on a new dup by a rank
 *                          that finished MPI_Comm_dup first, arriving while
 *                          this rank is still inside MPI_Comm_dup, fires
 *                          MSG_ARRIVED on this rank's propagated handle
 */
#include "tests/peruse_api/ptest.h"

static MPI_Comm ctl; /* synchronisation, no handles on it */

/* ---------------------------------------------------------------- per_comm */

typedef struct {
  MPI_Comm comm;
  int count[PTEST_LAST_EVENT + 1];
  int wrong_comm;
} Watch;

static int watch_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  Watch* w = (Watch*)param;
  int ev = 0;
  PERUSE_Event_get(h, &ev);
  if (ev > 0 && ev <= PTEST_LAST_EVENT) ++w->count[ev];
  if (spec->comm != w->comm) ++w->wrong_comm;
  return MPI_SUCCESS;
}

static void watch_all(Watch* w, MPI_Comm comm, peruse_event_h* hs) {
  memset(w, 0, sizeof *w);
  w->comm = comm;
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
    CHECK_RC(PERUSE_Event_comm_register(e, comm, watch_cb, w, &hs[e]), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(hs[e]));
  }
}

static int total(const Watch* w) {
  int n = 0;
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) n += w->count[e];
  return n;
}

static void reset(Watch* w) {
  memset(w->count, 0, sizeof w->count);
  w->wrong_comm = 0;
}

/* Eager, rendezvous, wildcard, probed and unexpected traffic on `comm`. */
static void traffic(MPI_Comm comm) {
  static char big[256 * 1024];
  char small[64] = {0};
  int peer = 1 - itest_rank;
  if (itest_rank == 0) {
    CHECK_OK(MPI_Send(small, 64, MPI_BYTE, peer, 1, comm));
    CHECK_OK(MPI_Send(big, (int)sizeof big, MPI_BYTE, peer, 2, comm));
    CHECK_OK(MPI_Recv(small, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE));
  } else {
    MPI_Status st;
    CHECK_OK(MPI_Probe(peer, 2, comm, &st)); /* message 1 is unexpected by then */
    CHECK_OK(MPI_Recv(small, 64, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(big, (int)sizeof big, MPI_BYTE, peer, 2, comm, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Send(small, 64, MPI_BYTE, peer, 3, comm));
  }
}

static void per_comm(void) {
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  Watch ww, wd;
  peruse_event_h hw[PTEST_LAST_EVENT + 1], hd[PTEST_LAST_EVENT + 1];
  watch_all(&ww, MPI_COMM_WORLD, hw);
  watch_all(&wd, d, hd);
  itest_barrier(ctl);

  /* Traffic on the dup only. */
  traffic(d);
  itest_barrier(ctl);
  CHECK(total(&ww) == 0, "traffic on a dup fired %d events on WORLD's handles", total(&ww));
  CHECK(total(&wd) > 0, "traffic on the dup fired nothing on its own handles");
  CHECK(wd.count[PERUSE_COMM_REQ_COMPLETE] == (itest_rank == 0 ? 3 : 3),
        "dup: %d REQ_COMPLETE, want 3 (two sends and a receive, or the reverse)", wd.count[PERUSE_COMM_REQ_COMPLETE]);
  CHECK(wd.wrong_comm == 0, "dup: %d callbacks got another comm in spec->comm", wd.wrong_comm);

  /* Traffic on WORLD only. Counters are reset before a barrier, so the
   * peer's next traffic cannot reach them earlier. */
  reset(&ww);
  reset(&wd);
  itest_barrier(ctl);
  traffic(MPI_COMM_WORLD);
  itest_barrier(ctl);
  CHECK(total(&wd) == 0, "traffic on WORLD fired %d events on the dup's handles", total(&wd));
  CHECK(ww.count[PERUSE_COMM_REQ_COMPLETE] == 3, "WORLD: %d REQ_COMPLETE, want 3", ww.count[PERUSE_COMM_REQ_COMPLETE]);
  CHECK(ww.wrong_comm == 0, "WORLD: %d callbacks got another comm in spec->comm", ww.wrong_comm);

  /* Separate queues: rank 1 sends the same envelope on WORLD and on the dup;
   * both wait unexpected at rank 0, each in its own comm's queue. A wildcard
   * receive on the dup takes the dup's message and only the dup's queue
   * events fire; WORLD's message stays in WORLD's queue. */
  reset(&ww);
  reset(&wd);
  itest_barrier(ctl);
  int vw = 111, vd = 222, got = 0;
  if (itest_rank == 1) {
    CHECK_OK(MPI_Send(&vw, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(&vd, 1, MPI_INT, 0, 7, d));
  }
  itest_barrier(ctl); /* both have arrived at rank 0 (ctl traffic follows them) */
  if (itest_rank == 0) {
    CHECK(ww.count[PERUSE_COMM_MSG_INSERT_IN_UNEX_Q] == 1 && wd.count[PERUSE_COMM_MSG_INSERT_IN_UNEX_Q] == 1,
          "unexpected inserts: WORLD %d, dup %d; want 1 and 1", ww.count[PERUSE_COMM_MSG_INSERT_IN_UNEX_Q],
          wd.count[PERUSE_COMM_MSG_INSERT_IN_UNEX_Q]);
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE));
    CHECK(got == vd, "a wildcard receive on the dup got %d, want the dup's %d", got, vd);
    CHECK(wd.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q] == 1 && ww.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q] == 0,
          "removal from the unexpected queue: dup %d, WORLD %d; want 1 and 0",
          wd.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q], ww.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q]);
    CHECK(wd.count[PERUSE_COMM_SEARCH_UNEX_Q_BEGIN] == 1 && ww.count[PERUSE_COMM_SEARCH_UNEX_Q_BEGIN] == 0,
          "unexpected-queue searches: dup %d, WORLD %d; want 1 and 0", wd.count[PERUSE_COMM_SEARCH_UNEX_Q_BEGIN],
          ww.count[PERUSE_COMM_SEARCH_UNEX_Q_BEGIN]);
    int flag = 0;
    CHECK_OK(MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "WORLD's message left WORLD's queue");
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == vw, "WORLD's message is %d, want %d", got, vw);
    CHECK(ww.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q] == 1 && wd.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q] == 1,
          "after both receives: removals WORLD %d, dup %d", ww.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q],
          wd.count[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q]);
  }
  CHECK(ww.wrong_comm == 0 && wd.wrong_comm == 0, "spec->comm wrong: WORLD %d, dup %d", ww.wrong_comm, wd.wrong_comm);
  itest_barrier(ctl);
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
    CHECK_PERUSE_OK(PERUSE_Event_release(&hw[e]));
    CHECK_PERUSE_OK(PERUSE_Event_release(&hd[e]));
  }
  CHECK_OK(MPI_Comm_free(&d));
}

/* ---------------------------------------------------------------- propagate */

typedef struct {
  peruse_event_h h;
  MPI_Comm spec_comm, obj_comm;
  int obj_rc, event, get_rc, cb_rc;
  peruse_comm_callback_f* fn;
  void* param;
} Call;

typedef struct {
  Call calls[64];
  int n;
} Log;

static int log_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  Log* log = (Log*)param;
  if (spec->tag <= -16) return MPI_SUCCESS; /* internal traffic (docs/engine.md) */
  if (log->n >= 64) return MPI_SUCCESS;
  Call* c = &log->calls[log->n++];
  void* obj = NULL;
  c->h = h;
  c->spec_comm = spec->comm;
  c->obj_rc = PERUSE_Event_object_get(h, &obj);
  c->obj_comm = ptest_comm_of(obj);
  c->get_rc = PERUSE_Event_get(h, &c->event);
  c->cb_rc = PERUSE_Event_comm_callback_get(h, &c->fn, &c->param);
  return MPI_SUCCESS;
}

/* Calls of `log` for traffic on `comm`. */
static int calls_on(const Log* log, MPI_Comm comm) {
  int n = 0;
  for (int i = 0; i < log->n; ++i) n += log->calls[i].spec_comm == comm;
  return n;
}

/* One message each way on `comm`: two completions per rank. */
static void both_ways(MPI_Comm comm, int tag) {
  char x = 0;
  ptest_transfer(comm, 0, 1, &x, 1, tag);
  ptest_transfer(comm, 1, 0, &x, 1, tag);
}

/* Every call of `log` on `comm` came through one handle that is not
 * `original`, reports `comm` as its object, `event` as its event and
 * (log_cb, log) as its callback. Returns that handle. */
static peruse_event_h check_twin(const Log* log, MPI_Comm comm, peruse_event_h original, int event, const char* what) {
  peruse_event_h twin = PERUSE_EVENT_HANDLE_NULL;
  for (int i = 0; i < log->n; ++i) {
    const Call* c = &log->calls[i];
    if (c->spec_comm != comm) continue;
    if (twin == PERUSE_EVENT_HANDLE_NULL) twin = c->h;
    CHECK(c->h == twin, "%s: calls for one comm came through handles %ld and %ld", what, (long)twin, (long)c->h);
    CHECK(c->h != original, "%s: the callback saw the original handle %ld, want the dup's own", what, (long)original);
    CHECK(c->obj_rc == PERUSE_SUCCESS && c->obj_comm == comm,
          "%s: object_get(event_h) returned %s, comm 0x%x; want the dup 0x%x", what, ptest_rc_name(c->obj_rc),
          (unsigned)c->obj_comm, (unsigned)comm);
    CHECK(c->get_rc == PERUSE_SUCCESS && c->event == event, "%s: Event_get(event_h) returned %s, event %d; want %d",
          what, ptest_rc_name(c->get_rc), c->event, event);
    CHECK(c->cb_rc == PERUSE_SUCCESS && c->fn == log_cb && c->param == (void*)log,
          "%s: callback_get(event_h) returned %s, (%p, %p); want (log_cb, %p)", what, ptest_rc_name(c->cb_rc),
          (void*)(intptr_t)c->fn, c->param, (const void*)log);
  }
  return twin;
}

static void propagate(void) {
  MPI_Comm base;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
  static Log lp, lq, ln, ls; /* zeroed */
  peruse_event_h hp, hq, hn, hs;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, base, log_cb, &lp, &hp), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_ACTIVATE, base, log_cb, &lq, &hq), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, base, log_cb, &ln, &hn), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, base, log_cb, &ls, &hs), PERUSE_SUCCESS);
  /* Propagation is set on inactive handles... */
  CHECK_RC(PERUSE_Event_propagate(hp, 1), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_propagate(hq, 1), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_propagate(hs, 1), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_propagate(hs, 0), PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_activate(hp));
  CHECK_PERUSE_OK(PERUSE_Event_activate(hn));
  CHECK_PERUSE_OK(PERUSE_Event_activate(hs));
  /* ...and refused on active ones (5.2.15), which keep their mode. */
  CHECK_RC(PERUSE_Event_propagate(hp, 0), PERUSE_ERR_EVENT_HANDLE);
  CHECK_RC(PERUSE_Event_propagate(hn, 1), PERUSE_ERR_EVENT_HANDLE);

  /* A dup, a dup of the dup, and a split (which is not a duplicate). */
  MPI_Comm d1, d2, s;
  CHECK_OK(MPI_Comm_dup(base, &d1));
  CHECK_OK(MPI_Comm_dup(d1, &d2));
  CHECK_OK(MPI_Comm_split(base, 0, itest_rank, &s));
  /* The other duplicating calls (dup_with_info, idup -- also of a
   * dup_with_info) give twins exactly as dup does; the other constructors
   * (create, create_group, split_type) make communicators that are not
   * duplicates and get no handles (spec 5.2.15). */
  MPI_Comm w1, i1, i2, c1, c2, t1c;
  MPI_Request req;
  MPI_Group g;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "sonde_hint", "1");
  CHECK_OK(MPI_Comm_dup_with_info(base, info, &w1));
  CHECK_OK(MPI_Comm_idup(base, &i1, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Comm_idup(w1, &i2, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  MPI_Comm_group(base, &g);
  CHECK_OK(MPI_Comm_create(base, g, &c1));
  CHECK_OK(MPI_Comm_create_group(base, g, 3, &c2));
  CHECK_OK(MPI_Comm_split_type(base, MPI_COMM_TYPE_SHARED, itest_rank, MPI_INFO_NULL, &t1c));
  MPI_Group_free(&g);
  MPI_Info_free(&info);
  itest_barrier(ctl);
  both_ways(base, 1);
  both_ways(d1, 2);
  both_ways(d2, 3);
  both_ways(s, 4);
  both_ways(w1, 10);
  both_ways(i1, 11);
  both_ways(i2, 12);
  both_ways(c1, 13);
  both_ways(c2, 14);
  both_ways(t1c, 15);
  itest_barrier(ctl);
  CHECK(calls_on(&lp, w1) == 2, "propagated handle: %d calls on a dup_with_info, want 2", calls_on(&lp, w1));
  CHECK(calls_on(&lp, i1) == 2, "propagated handle: %d calls on an idup, want 2", calls_on(&lp, i1));
  CHECK(calls_on(&lp, i2) == 2, "propagated handle: %d calls on an idup of a dup_with_info, want 2",
        calls_on(&lp, i2));
  CHECK(calls_on(&lp, c1) == 0 && calls_on(&lp, c2) == 0 && calls_on(&lp, t1c) == 0,
        "propagated handle: %d/%d/%d calls on create/create_group/split_type, want 0", calls_on(&lp, c1),
        calls_on(&lp, c2), calls_on(&lp, t1c));
  CHECK(calls_on(&ln, w1) == 0 && calls_on(&ln, i1) == 0 && calls_on(&ln, i2) == 0,
        "non-propagated handle: %d/%d/%d calls on dup_with_info/idup/idup, want 0", calls_on(&ln, w1),
        calls_on(&ln, i1), calls_on(&ln, i2));
  peruse_event_h tw = check_twin(&lp, w1, hp, PERUSE_COMM_REQ_COMPLETE, "dup_with_info");
  peruse_event_h ti = check_twin(&lp, i1, hp, PERUSE_COMM_REQ_COMPLETE, "idup");
  peruse_event_h ti2 = check_twin(&lp, i2, hp, PERUSE_COMM_REQ_COMPLETE, "idup of dup_with_info");
  CHECK(tw != ti && ti != ti2 && tw != ti2, "twins of different duplicates share a handle");
  MPI_Comm* extra[] = {&w1, &i1, &i2, &c1, &c2, &t1c};
  for (unsigned k = 0; k < sizeof extra / sizeof extra[0]; ++k) CHECK_OK(MPI_Comm_free(extra[k]));
  lp.n = 0;
  ln.n = 0;
  ls.n = 0;
  itest_barrier(ctl);
  both_ways(base, 1);
  both_ways(d1, 2);
  both_ways(d2, 3);
  both_ways(s, 4);
  itest_barrier(ctl);

  CHECK(calls_on(&lp, base) == 2, "propagated handle: %d calls on its own comm, want 2", calls_on(&lp, base));
  CHECK(calls_on(&lp, d1) == 2, "propagated handle: %d calls on the dup, want 2", calls_on(&lp, d1));
  CHECK(calls_on(&lp, d2) == 2, "propagated handle: %d calls on the dup of the dup, want 2", calls_on(&lp, d2));
  CHECK(calls_on(&lp, s) == 0, "propagated handle: %d calls on a split comm, want 0", calls_on(&lp, s));
  for (int i = 0; i < lp.n; ++i)
    if (lp.calls[i].spec_comm == base)
      CHECK(lp.calls[i].h == hp, "calls on the original comm came with handle %ld, want %ld", (long)lp.calls[i].h,
            (long)hp);
  peruse_event_h t1 = check_twin(&lp, d1, hp, PERUSE_COMM_REQ_COMPLETE, "dup");
  peruse_event_h t2 = check_twin(&lp, d2, hp, PERUSE_COMM_REQ_COMPLETE, "dup of the dup");
  CHECK(t1 != t2 || t1 == PERUSE_EVENT_HANDLE_NULL, "the dup and the dup of the dup share handle %ld", (long)t1);
  /* An inactive propagated handle gives inactive twins. */
  CHECK(lq.n == 0, "a propagated but inactive handle fired %d times", lq.n);
  /* Without propagation the dups get nothing. */
  CHECK(calls_on(&ln, base) == 2 && calls_on(&ln, d1) == 0 && calls_on(&ln, d2) == 0 && calls_on(&ln, s) == 0,
        "non-propagated handle: %d calls on its comm (want 2), %d/%d/%d on dups and split (want 0)", calls_on(&ln, base),
        calls_on(&ln, d1), calls_on(&ln, d2), calls_on(&ln, s));
  CHECK(calls_on(&ls, base) == 2 && calls_on(&ls, d1) == 0 && calls_on(&ls, d2) == 0,
        "propagate(1) then propagate(0): %d calls on its comm (want 2), %d/%d on dups (want 0)", calls_on(&ls, base),
        calls_on(&ls, d1), calls_on(&ls, d2));

  /* The twins are handles of their own: the dup's can be closed without
   * touching the original or the other dup's. */
  if (t1 != PERUSE_EVENT_HANDLE_NULL && t2 != PERUSE_EVENT_HANDLE_NULL) {
    int ev = 0;
    CHECK_RC(PERUSE_Event_get(t1, &ev), PERUSE_SUCCESS);
    CHECK_RC(PERUSE_Event_deactivate(t1), PERUSE_SUCCESS);
    lp.n = 0;
    itest_barrier(ctl);
    both_ways(base, 5);
    both_ways(d1, 6);
    both_ways(d2, 7);
    itest_barrier(ctl);
    CHECK(calls_on(&lp, base) == 2 && calls_on(&lp, d1) == 0 && calls_on(&lp, d2) == 2,
          "after closing the dup's twin: %d/%d/%d calls on base/dup/dup-of-dup, want 2/0/2", calls_on(&lp, base),
          calls_on(&lp, d1), calls_on(&lp, d2));
    CHECK_RC(PERUSE_Event_activate(t1), PERUSE_SUCCESS);
  }

  /* Freeing a dup ends its twin; the original and the other dup go on. */
  CHECK_OK(MPI_Comm_free(&d1));
  lp.n = 0;
  itest_barrier(ctl);
  both_ways(base, 8);
  both_ways(d2, 9);
  itest_barrier(ctl);
  CHECK(calls_on(&lp, base) == 2 && calls_on(&lp, d2) == 2,
        "after freeing the dup: %d/%d calls on base/dup-of-dup, want 2/2", calls_on(&lp, base), calls_on(&lp, d2));
  if (t1 != PERUSE_EVENT_HANDLE_NULL) CHECK_ERR(PERUSE_Event_activate(t1));

  CHECK_OK(MPI_Comm_free(&d2));
  CHECK_OK(MPI_Comm_free(&s));
  CHECK_PERUSE_OK(PERUSE_Event_release(&hp));
  CHECK_PERUSE_OK(PERUSE_Event_release(&hq));
  CHECK_PERUSE_OK(PERUSE_Event_release(&hn));
  CHECK_PERUSE_OK(PERUSE_Event_release(&hs));
  CHECK_OK(MPI_Comm_free(&base));
}

/* ------------------------------------------------------------- dup_arrival */

static volatile int delay_armed;

/* Rank 0 only: when the root of the new communicator's context agreement
 * hands rank 1 its result (internal tag), hold rank 0 there for a while, so
 * rank 1 finishes MPI_Comm_dup and sends on the new comm to rank 2 while
 * rank 2 still waits for its own result inside MPI_Comm_dup. */
static int delay_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  if (delay_armed && spec->operation == PERUSE_SEND && spec->peer == 1 && spec->tag <= -16) {
    delay_armed = 0;
    itest_sleep(0.3);
  }
  return MPI_SUCCESS;
}

typedef struct {
  MPI_Comm comm;       /* the communicator those events named */
  int user_tag_calls;  /* events with the user's tag */
} Arrivals;

/* These events fire inside MPI_Comm_dup, before the program knows the new
 * handle: record which communicator they name and compare afterwards. */
static int arrival_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  Arrivals* a = (Arrivals*)param;
  if (spec->tag == 5) {
    ++a->user_tag_calls;
    a->comm = spec->comm;
  }
  return MPI_SUCCESS;
}

static void dup_arrival(void) {
  MPI_Comm base, d1;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL, hi = PERUSE_EVENT_HANDLE_NULL;
  static Arrivals arrived, inserted;
  arrived.comm = inserted.comm = MPI_COMM_NULL;
  if (itest_rank == 0) {
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, base, delay_cb, NULL, &h), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(h));
    delay_armed = 1;
  }
  if (itest_rank == 2) {
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_MSG_ARRIVED, base, arrival_cb, &arrived, &h), PERUSE_SUCCESS);
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, base, arrival_cb, &inserted, &hi),
             PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_propagate(h, 1));
    CHECK_PERUSE_OK(PERUSE_Event_propagate(hi, 1));
    CHECK_PERUSE_OK(PERUSE_Event_activate(h));
    CHECK_PERUSE_OK(PERUSE_Event_activate(hi));
  }
  itest_barrier(ctl);
  CHECK_OK(MPI_Comm_dup(base, &d1));
  int v = 77, got = 0;
  if (itest_rank == 1) CHECK_OK(MPI_Send(&v, 1, MPI_INT, 2, 5, d1));
  if (itest_rank == 2) {
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 1, 5, d1, MPI_STATUS_IGNORE));
    CHECK(got == v, "received %d, want %d", got, v);
    CHECK(arrived.user_tag_calls == 1,
          "the message that reached this rank while it was still inside MPI_Comm_dup fired MSG_ARRIVED %d times on "
          "the dup's propagated handle, want 1",
          arrived.user_tag_calls);
    CHECK(arrived.comm == d1, "MSG_ARRIVED named communicator 0x%x, want the dup 0x%x", (unsigned)arrived.comm,
          (unsigned)d1);
    CHECK(inserted.user_tag_calls <= 1, "MSG_INSERT_IN_UNEX_Q fired %d times", inserted.user_tag_calls);
  }
  itest_barrier(ctl);
  if (h != PERUSE_EVENT_HANDLE_NULL) CHECK_PERUSE_OK(PERUSE_Event_release(&h));
  if (hi != PERUSE_EVENT_HANDLE_NULL) CHECK_PERUSE_OK(PERUSE_Event_release(&hi));
  CHECK_OK(MPI_Comm_free(&d1));
  CHECK_OK(MPI_Comm_free(&base));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv);
  CHECK(itest_size == (strcmp(mode, "dup_arrival") ? 2 : 3), "wrong number of ranks");
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));
  if (!strcmp(mode, "per_comm")) per_comm();
  else if (!strcmp(mode, "propagate")) propagate();
  else if (!strcmp(mode, "dup_arrival")) dup_arrival();
  else CHECK(0, "unknown mode \"%s\"", mode);
  itest_barrier(ctl);
  CHECK_OK(MPI_Comm_free(&ctl));
  char name[64];
  snprintf(name, sizeof name, "comm_scope %s", mode);
  return itest_finish(name);
}
