/* MPI_T events against PERUSE. argv[1]:
 *   same_stream: every event type registered through MPI_T and every PERUSE
 *     event activated on WORLD during mixed traffic (eager, rendezvous,
 *     probe, self, nonblocking); both streams must be identical in order
 *     and data (event, unique id, peer, tag, count, datatype, operation),
 *     with MPI_T timestamps non-decreasing and event_copy agreeing with
 *     event_read.
 *   none_at_return: every event type registered with only an
 *     MPI_T_CB_REQUIRE_NONE callback; after each MPI call of a loop of sends
 *     and receives (no MPI_T call in between) the tool has seen exactly the
 *     events PERUSE saw so far, in the same order and data, on the thread
 *     that made the call, told MPI_T_CB_REQUIRE_NONE, able to call MPI.
 *   dropped: a registration whose only callback needs MPI_T_CB_REQUIRE_NONE
 *     gets its instances when the raising call returns, at most the
 *     buffer's size per call; the dropped handler is told how many were lost
 *     at the same point, the sonde_mpit_events_dropped counter agrees, and
 *     the free callback runs. */
#include <pthread.h>
#include <peruse.h>

#include "tests/mpit/mtest.h"

#define MAX_EVENTS 20000
typedef struct {
  int event;
  unsigned long long uid;
  int peer, tag;
  long long count;
  int datatype, operation;
} Rec;

static Rec peruse_log[MAX_EVENTS], mpit_log[MAX_EVENTS];
static int n_peruse, n_mpit;
static int mpit_to_peruse[64];
static long long last_ts = -1;
static int ts_backwards, copy_mismatch, bad_source;
static MPI_T_event_instance saved_instance;

static int on_peruse(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t* spec, void* param) {
  if (n_peruse < MAX_EVENTS)
    peruse_log[n_peruse++] = (Rec){(int)(intptr_t)param, (unsigned long long)uid, spec->peer, spec->tag,
                                   spec->count, spec->datatype, spec->operation};
  return MPI_SUCCESS;
}

typedef struct {
  unsigned long long unique_id;
  int peer, tag;
  long long count;
  int datatype, operation;
  long long timestamp;
} Record;

static void on_mpit(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety, void* user) {
  Rec r;
  r.event = mpit_to_peruse[(int)(intptr_t)user];
  MPI_T_event_read(inst, 0, &r.uid);
  MPI_T_event_read(inst, 1, &r.peer);
  MPI_T_event_read(inst, 2, &r.tag);
  MPI_T_event_read(inst, 3, &r.count);
  MPI_T_event_read(inst, 4, &r.datatype);
  MPI_T_event_read(inst, 5, &r.operation);
  Record whole;
  MPI_T_event_copy(inst, &whole);
  MPI_Count ts;
  MPI_T_event_get_timestamp(inst, &ts);
  int source = -1;
  MPI_T_event_get_source(inst, &source);
  if (source != 0) bad_source++;
  if (whole.unique_id != r.uid || whole.peer != r.peer || whole.tag != r.tag || whole.count != r.count ||
      whole.timestamp != ts || safety != MPI_T_CB_REQUIRE_MPI_RESTRICTED)
    copy_mismatch++;
  if (ts < last_ts) ts_backwards++;
  last_ts = ts;
  saved_instance = inst;
  if (n_mpit < MAX_EVENTS) mpit_log[n_mpit++] = r;
}

static void traffic(int rank, MPI_Comm ctl) {
  static char big[200000], small[64];
  int peer = 1 - rank;
  MPI_Status st;
  MPI_Request rq;
  if (rank == 0) {
    MPI_Send(small, 10, MPI_BYTE, peer, 1, MPI_COMM_WORLD);          /* eager */
    MPI_Send(big, sizeof big, MPI_BYTE, peer, 2, MPI_COMM_WORLD);    /* rendezvous */
    MPI_Recv(small, 64, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st);
    MPI_Isend(small, 5, MPI_INT, peer, 4, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    MPI_Sendrecv(small, 3, MPI_BYTE, 0, 5, small + 8, 3, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st); /* self */
  } else {
    MPI_Probe(peer, 1, MPI_COMM_WORLD, &st);
    MPI_Recv(small, 64, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
    MPI_Irecv(big, sizeof big, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    MPI_Send(small, 7, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    MPI_Recv(small, 5, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  }
  MPI_Barrier(ctl);
}

static void same_stream(MPI_Comm ctl) {
  int n_events = 0, n_supported;
  char** names;
  int* ids;
  PERUSE_Init();
  PERUSE_Query_supported_events(&n_supported, &names, &ids);
  MPI_T_event_get_num(&n_events);
  CHECK(n_events == n_supported && n_events > 0 && n_events < 64, "%d event types", n_events);
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_T_event_registration regs[64];
  peruse_event_h ph[64];
  for (int i = 0; i < n_events; ++i) {
    char name[64];
    int len = sizeof name;
    MPI_T_event_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    PERUSE_Query_event(name, &mpit_to_peruse[i]);
    CHECK_T(MPI_T_event_handle_alloc(i, &world, MPI_INFO_NULL, &regs[i]), MPI_SUCCESS);
    /* Two levels: the library must pick the restricted one (the least demanding that fits). */
    CHECK_T(MPI_T_event_register_callback(regs[i], MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL,
                                          (void*)(intptr_t)i, on_mpit),
            MPI_SUCCESS);
    CHECK_T(MPI_T_event_register_callback(regs[i], MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL,
                                          (void*)(intptr_t)i, on_mpit),
            MPI_SUCCESS);
  }
  for (int i = 0; i < n_supported; ++i) {
    PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, on_peruse, (void*)(intptr_t)ids[i], &ph[i]);
    PERUSE_Event_activate(ph[i]);
  }
  MPI_Barrier(ctl);
  traffic(itest_rank, ctl);
  for (int i = 0; i < n_supported; ++i) PERUSE_Event_release(&ph[i]);
  for (int i = 0; i < n_events; ++i) CHECK_T(MPI_T_event_handle_free(regs[i], NULL, NULL), MPI_SUCCESS);

  CHECK(n_peruse > 20 && n_peruse < MAX_EVENTS, "%d PERUSE events", n_peruse);
  CHECK(n_mpit == n_peruse, "%d MPI_T events, %d PERUSE events", n_mpit, n_peruse);
  int shown = 0;
  for (int i = 0; i < n_mpit && i < n_peruse; ++i) {
    Rec a = peruse_log[i], b = mpit_log[i];
    int same = a.event == b.event && a.uid == b.uid && a.peer == b.peer && a.tag == b.tag && a.count == b.count &&
               a.datatype == b.datatype && a.operation == b.operation;
    if (!same && shown++ < 3)
      CHECK(same, "event %d: PERUSE (%d uid %llx peer %d tag %d count %lld) vs MPI_T (%d uid %llx peer %d tag %d count %lld)",
            i, a.event, a.uid, a.peer, a.tag, a.count, b.event, b.uid, b.peer, b.tag, b.count);
  }
  CHECK(ts_backwards == 0, "%d timestamps went back", ts_backwards);
  CHECK(copy_mismatch == 0, "%d event_copy/read/safety mismatches", copy_mismatch);
  CHECK(bad_source == 0, "%d wrong sources", bad_source);
  long long dummy;
  CHECK_T(MPI_T_event_read(saved_instance, 0, &dummy), MPI_T_ERR_INVALID_HANDLE); /* outside its callback */
  /* Nothing fires after handle_free. */
  int before = n_mpit;
  char c = 0;
  MPI_Sendrecv(&c, 1, MPI_BYTE, itest_rank, 0, &c, 1, MPI_BYTE, itest_rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(n_mpit == before, "events after handle_free");
}

/* ---- NONE callbacks at the return of the raising call */
static pthread_t main_thread;
static int wrong_thread, none_stream_bad;
static void on_none_stream(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety,
                           void* user) {
  Rec r;
  r.event = mpit_to_peruse[(int)(intptr_t)user];
  MPI_T_event_read(inst, 0, &r.uid);
  MPI_T_event_read(inst, 1, &r.peer);
  MPI_T_event_read(inst, 2, &r.tag);
  MPI_T_event_read(inst, 3, &r.count);
  MPI_T_event_read(inst, 4, &r.datatype);
  MPI_T_event_read(inst, 5, &r.operation);
  if (!pthread_equal(pthread_self(), main_thread)) wrong_thread++;
  int rank = -1; /* may call MPI here */
  if (safety != MPI_T_CB_REQUIRE_NONE || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank != itest_rank)
    none_stream_bad++;
  if (n_mpit < MAX_EVENTS) mpit_log[n_mpit++] = r;
}

static int calls_checked, calls_behind;
/* After `call` returns, the tool has seen every event PERUSE saw. */
#define THEN_CAUGHT_UP(call)                                                                        \
  do {                                                                                              \
    call;                                                                                           \
    calls_checked++;                                                                                \
    if (n_mpit != n_peruse && calls_behind++ < 3)                                                   \
      CHECK(0, "after %s: %d events seen by the tool, %d raised", #call, n_mpit, n_peruse);         \
  } while (0)

static void none_at_return(MPI_Comm ctl) {
  int n_events = 0, n_supported;
  char** names;
  int* ids;
  main_thread = pthread_self();
  PERUSE_Init();
  PERUSE_Query_supported_events(&n_supported, &names, &ids);
  MPI_T_event_get_num(&n_events);
  CHECK(n_events == n_supported && n_events > 0 && n_events < 64, "%d event types", n_events);
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_T_event_registration regs[64];
  peruse_event_h ph[64];
  MPI_T_cvar_handle ch;
  int count;
  unsigned cap = 4096;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_mpit_event_buffer"), NULL, &ch, &count), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_write(ch, &cap), MPI_SUCCESS);
  /* PERUSE first: its callbacks run at the instrumentation point, before the tool's. */
  for (int i = 0; i < n_supported; ++i) {
    PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, on_peruse, (void*)(intptr_t)ids[i], &ph[i]);
    PERUSE_Event_activate(ph[i]);
  }
  for (int i = 0; i < n_events; ++i) {
    char name[64];
    int len = sizeof name;
    MPI_T_event_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    PERUSE_Query_event(name, &mpit_to_peruse[i]);
    CHECK_T(MPI_T_event_handle_alloc(i, &world, MPI_INFO_NULL, &regs[i]), MPI_SUCCESS);
    CHECK_T(MPI_T_event_register_callback(regs[i], MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, (void*)(intptr_t)i,
                                          on_none_stream),
            MPI_SUCCESS);
  }
  int rank = itest_rank, peer = 1 - itest_rank;
  static char big[200000];
  char small[64] = {0};
  MPI_Status st;
  MPI_Request rq;
  THEN_CAUGHT_UP(MPI_Barrier(ctl));
  for (int i = 0; i < 10; ++i) {
    if (rank == 0) {
      THEN_CAUGHT_UP(MPI_Send(small, 10, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
      THEN_CAUGHT_UP(MPI_Recv(small, 64, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st));
      THEN_CAUGHT_UP(MPI_Isend(big, sizeof big, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq));
      THEN_CAUGHT_UP(MPI_Wait(&rq, &st));
    } else {
      THEN_CAUGHT_UP(MPI_Recv(small, 64, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st));
      THEN_CAUGHT_UP(MPI_Send(small, 10, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
      THEN_CAUGHT_UP(MPI_Irecv(big, sizeof big, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq));
      THEN_CAUGHT_UP(MPI_Wait(&rq, &st));
    }
    THEN_CAUGHT_UP(MPI_Sendrecv(small, 3, MPI_BYTE, rank, 5, small + 8, 3, MPI_BYTE, rank, 5, MPI_COMM_WORLD, &st));
  }
  THEN_CAUGHT_UP(MPI_Barrier(ctl));
  CHECK(calls_checked == 52 && n_peruse > 100 && n_peruse < MAX_EVENTS, "%d calls, %d events", calls_checked,
        n_peruse);
  int shown = 0;
  for (int i = 0; i < n_mpit && i < n_peruse; ++i) {
    Rec a = peruse_log[i], b = mpit_log[i];
    int same = a.event == b.event && a.uid == b.uid && a.peer == b.peer && a.tag == b.tag && a.count == b.count &&
               a.datatype == b.datatype && a.operation == b.operation;
    if (!same && shown++ < 3) CHECK(same, "event %d: PERUSE event %d uid %llx, tool event %d uid %llx", i, a.event,
                                    a.uid, b.event, b.uid);
  }
  CHECK(wrong_thread == 0 && none_stream_bad == 0, "%d on another thread, %d with a wrong safety or failing MPI",
        wrong_thread, none_stream_bad);
  for (int i = 0; i < n_supported; ++i) PERUSE_Event_release(&ph[i]);
  for (int i = 0; i < n_events; ++i) CHECK_T(MPI_T_event_handle_free(regs[i], NULL, NULL), MPI_SUCCESS);
  MPI_T_cvar_handle_free(&ch);
}

/* ---- dropped instances */
static int none_calls, none_bad_safety, none_mpi_ok, dropped_calls, free_calls;
static long long dropped_count;
static void on_none(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety, void* user) {
  none_calls++;
  if (safety != MPI_T_CB_REQUIRE_NONE) none_bad_safety++;
  int rank = -1; /* may call MPI here */
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == itest_rank) none_mpi_ok++;
}
static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety safety,
                       void* user) {
  dropped_calls++;
  dropped_count += count;
  CHECK(source == 0 && user == (void*)&none_calls, "dropped handler: source %d user %p", source, user);
}
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void* user) {
  free_calls++;
  CHECK(user == (void*)&free_calls, "free callback user data");
}

static void dropped(MPI_Comm ctl) {
  if (itest_rank != 0) return;
  MPI_Comm world = MPI_COMM_WORLD;
  int idx, count;
  CHECK_T(MPI_T_event_get_index("PERUSE_COMM_REQ_ACTIVATE", &idx), MPI_SUCCESS);
  MPI_T_cvar_handle ch;
  unsigned cap = 1;
  CHECK_T(MPI_T_cvar_handle_alloc(mtest_cvar("sonde_mpit_event_buffer"), NULL, &ch, &count), MPI_SUCCESS);
  CHECK_T(MPI_T_cvar_write(ch, &cap), MPI_SUCCESS);
  MPI_T_pvar_session s;
  MPI_T_pvar_session_create(&s);
  MPI_T_pvar_handle lost = mtest_handle(s, "sonde_mpit_events_dropped", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
  MPI_T_event_registration reg;
  CHECK_T(MPI_T_event_handle_alloc(idx, &world, MPI_INFO_NULL, &reg), MPI_SUCCESS);
  CHECK_T(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &none_calls, on_none), MPI_SUCCESS);
  CHECK_T(MPI_T_event_set_dropped_handler(reg, on_dropped), MPI_SUCCESS);
  /* 10 self exchanges, each raising 2 REQ_ACTIVATE (send and receive) in
   * one call: with room for 1, each call delivers 1 and reports 1 lost. */
  for (int i = 0; i < 10; ++i) {
    char c = 0;
    MPI_Sendrecv(&c, 1, MPI_BYTE, 0, 0, &c, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(none_calls == i + 1 && dropped_calls == i + 1 && dropped_count == i + 1,
          "after exchange %d: %d delivered, dropped handler %d calls for %lld", i, none_calls, dropped_calls,
          dropped_count);
  }
  CHECK(none_bad_safety == 0 && none_mpi_ok == 10, "safety %d, MPI calls %d", none_bad_safety, none_mpi_ok);
  CHECK(mtest_read_ull(s, lost) == 10, "dropped counter %llu", mtest_read_ull(s, lost));
  int n;
  CHECK_T(MPI_T_event_get_num(&n), MPI_SUCCESS); /* delivery point: nothing left */
  CHECK(none_calls == 10 && dropped_calls == 10, "delivered twice");
  CHECK_T(MPI_T_event_handle_free(reg, &free_calls, on_free), MPI_SUCCESS);
  CHECK(free_calls == 1, "free callback ran %d times", free_calls);
  MPI_T_pvar_session_free(&s);
  MPI_T_cvar_handle_free(&ch);
}

int main(int argc, char** argv) {
  int provided;
  const char* what = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Comm ctl;
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  if (strcmp(what, "same_stream") == 0) same_stream(ctl);
  else if (strcmp(what, "none_at_return") == 0) none_at_return(ctl);
  else if (strcmp(what, "dropped") == 0) dropped(ctl);
  else CHECK(0, "unknown behaviour '%s'", what);
  MPI_Barrier(ctl);
  MPI_Comm_free(&ctl);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  return itest_finish(what);
}
