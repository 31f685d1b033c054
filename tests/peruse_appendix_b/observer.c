/* A second PERUSE tool linked beside an Appendix B program, so its test can
 * tell what the program should have reported.
 *
 * Linked with -Wl,--wrap=... for PERUSE_Init, PERUSE_Event_comm_register,
 * _activate, _deactivate and _release (see OBSERVER_LINKOPTS in BUILD), it
 * sees the program's own PERUSE calls without any change to its source:
 *
 * - At the program's PERUSE_Init it registers its own handle for every
 *   supported event on MPI_COMM_WORLD, propagated to later duplicates, and
 *   activates them: it counts every event of the run ("user" traffic has a
 *   tag above -16; Sonde's internal traffic uses tags <= -16, see
 *   docs/engine.md).
 * - It follows the program's activation windows: an event that fires on a
 *   communicator where the program has an active handle for that event is
 *   also counted as "window" (in total and per peer), which is what the
 *   program's callbacks must have seen.
 * - Every callback the program registers is wrapped: "program" counts how
 *   often the program's callback really ran, per event.
 *
 * At exit each rank prints, after the program's own output:
 *   appb-observer rank=R event=NAME user=N internal=N window_user=N
 *       window_internal=N window_self=N program=N        (one line per event)
 *   appb-observer rank=R event=NAME peer=P window_user=N window_internal=N
 *                                  (per peer, only where a count is not 0)
 * window_self counts window events whose peer is the rank itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"
#include "peruse.h"

int __real_PERUSE_Init(void);
int __real_PERUSE_Event_comm_register(int event, MPI_Comm comm, peruse_comm_callback_f *callback_fn, void *param,
                                      peruse_event_h *event_h);
int __real_PERUSE_Event_activate(peruse_event_h event_h);
int __real_PERUSE_Event_deactivate(peruse_event_h event_h);
int __real_PERUSE_Event_release(peruse_event_h *event_h);

enum { kEvents = PERUSE_FIRST_CUSTOM_EVENT + 1, kPeers = 64, kComms = 64, kHandles = 4096 };

typedef struct {
  long user, internal, window_user, window_internal, window_self, program;
  long peer_user[kPeers], peer_internal[kPeers];
} counts_t;

/* One program handle: its event, communicator, and whether it is active. */
typedef struct {
  peruse_event_h h;
  int event;
  MPI_Comm comm;
  int active;
  struct wrapped *wrapped; /* kept reachable for leak checkers */
} tracked_t;

/* The program's callback and parameter, behind the wrapper callback. */
typedef struct wrapped {
  peruse_comm_callback_f *callback;
  void *param;
  int event;
} wrapped_t;

static int g_started, g_rank;
static char g_names[kEvents][64]; /* copied: the library's strings end with MPI */
static counts_t g_counts[kEvents];
static tracked_t g_handles[kHandles];
static int g_num_handles;
static MPI_Comm g_comms[kComms];
static int g_num_comms;
static int g_active[kEvents][kComms]; /* active program handles per (event, communicator) */

static int comm_slot(MPI_Comm c) {
  for (int i = 0; i < g_num_comms; i++)
    if (g_comms[i] == c) return i;
  if (g_num_comms == kComms) {
    fprintf(stderr, "appb-observer: more than %d communicators\n", kComms);
    abort();
  }
  g_comms[g_num_comms] = c;
  return g_num_comms++;
}

static int valid_event(int e) { return e > 0 && e < kEvents; }

static int observe(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t *spec, void *param) {
  (void)h;
  (void)id;
  int e = (int)(intptr_t)param;
  counts_t *c = &g_counts[e];
  int internal = spec->tag <= -16;
  if (internal)
    c->internal++;
  else
    c->user++;
  if (g_active[e][comm_slot(spec->comm)] > 0) {
    if (internal)
      c->window_internal++;
    else
      c->window_user++;
    if (spec->peer == g_rank) c->window_self++;
    if (spec->peer >= 0 && spec->peer < kPeers) {
      if (internal)
        c->peer_internal[spec->peer]++;
      else
        c->peer_user[spec->peer]++;
    }
  }
  return MPI_SUCCESS;
}

static int call_program(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t *spec, void *param) {
  wrapped_t *w = (wrapped_t *)param;
  g_counts[w->event].program++;
  return w->callback(h, id, spec, w->param);
}

static void report(void) {
  fflush(stdout);
  for (int e = 1; e < kEvents; e++) {
    counts_t *c = &g_counts[e];
    const char *name = g_names[e];
    if (!name[0]) continue;
    printf("appb-observer rank=%d event=%s user=%ld internal=%ld window_user=%ld window_internal=%ld "
           "window_self=%ld program=%ld\n",
           g_rank, name, c->user, c->internal, c->window_user, c->window_internal, c->window_self, c->program);
    for (int p = 0; p < kPeers; p++)
      if (c->peer_user[p] || c->peer_internal[p])
        printf("appb-observer rank=%d event=%s peer=%d window_user=%ld window_internal=%ld\n", g_rank, name, p,
               c->peer_user[p], c->peer_internal[p]);
  }
  fflush(stdout);
}

static void start(void) {
  int n, *ids;
  char **names;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (PERUSE_Query_supported_events(&n, &names, &ids) != PERUSE_SUCCESS) {
    fprintf(stderr, "appb-observer: PERUSE_Query_supported_events failed\n");
    abort();
  }
  for (int i = 0; i < n; i++) {
    int e = ids[i];
    peruse_event_h h;
    if (!valid_event(e)) continue;
    snprintf(g_names[e], sizeof g_names[e], "%s", names[i]);
    if (__real_PERUSE_Event_comm_register(e, MPI_COMM_WORLD, observe, (void *)(intptr_t)e, &h) != PERUSE_SUCCESS ||
        PERUSE_Event_propagate(h, 1) != PERUSE_SUCCESS || __real_PERUSE_Event_activate(h) != PERUSE_SUCCESS) {
      fprintf(stderr, "appb-observer: cannot watch event %s\n", names[i]);
      abort();
    }
  }
  atexit(report);
}

static tracked_t *find(peruse_event_h h) {
  for (int i = 0; i < g_num_handles; i++)
    if (g_handles[i].h == h && h != PERUSE_EVENT_HANDLE_NULL) return &g_handles[i];
  return NULL;
}

static void set_active(tracked_t *t, int active) {
  if (t->active == active) return;
  t->active = active;
  g_active[t->event][comm_slot(t->comm)] += active ? 1 : -1;
}

int __wrap_PERUSE_Init(void) {
  int rv = __real_PERUSE_Init();
  if (rv == PERUSE_SUCCESS && !g_started) {
    g_started = 1;
    start();
  }
  return rv;
}

int __wrap_PERUSE_Event_comm_register(int event, MPI_Comm comm, peruse_comm_callback_f *callback_fn, void *param,
                                      peruse_event_h *event_h) {
  wrapped_t *w;
  int rv;
  if (!callback_fn || !valid_event(event)) /* let PERUSE answer bad input itself */
    return __real_PERUSE_Event_comm_register(event, comm, callback_fn, param, event_h);
  w = (wrapped_t *)malloc(sizeof *w);
  w->callback = callback_fn;
  w->param = param;
  w->event = event;
  rv = __real_PERUSE_Event_comm_register(event, comm, call_program, w, event_h);
  if (rv != PERUSE_SUCCESS) {
    free(w);
    return rv;
  }
  if (g_num_handles == kHandles) {
    fprintf(stderr, "appb-observer: more than %d handles\n", kHandles);
    abort();
  }
  g_handles[g_num_handles++] = (tracked_t){*event_h, event, comm, 0, w};
  return rv;
}

int __wrap_PERUSE_Event_activate(peruse_event_h event_h) {
  int rv = __real_PERUSE_Event_activate(event_h);
  tracked_t *t = find(event_h);
  if (t && rv == PERUSE_SUCCESS) set_active(t, 1);
  return rv;
}

/* A failed deactivate or release also ends the window: the handle is gone
 * or its communicator was freed, and neither fires again. */
int __wrap_PERUSE_Event_deactivate(peruse_event_h event_h) {
  int rv = __real_PERUSE_Event_deactivate(event_h);
  tracked_t *t = find(event_h);
  if (t) set_active(t, 0);
  return rv;
}

int __wrap_PERUSE_Event_release(peruse_event_h *event_h) {
  tracked_t *t = event_h ? find(*event_h) : NULL;
  int rv = __real_PERUSE_Event_release(event_h);
  if (t) {
    set_active(t, 0);
    t->h = PERUSE_EVENT_HANDLE_NULL; /* the value may come back for a new handle */
  }
  return rv;
}
