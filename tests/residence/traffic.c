/* Traffic with known queue behaviour for the profiler's timeline tests
 * (trace_outputs_test.sh runs it under `mpiexec --profile`, then checks the
 * outputs with check_outputs.py). Two modes:
 *
 *   traffic OUT --queues     on a duplicate of MPI_COMM_WORLD (2 ranks):
 *     unexpected messages, posted receives (one wildcard), a rendezvous
 *     message, a synchronous send. The program registers its own PERUSE
 *     handles on that communicator and writes every queue and send event it
 *     saw to OUT/peruse<R>.log; at quiet moments rank 1 reads the MPI_T
 *     queue-length pvars and writes them, with the time, to OUT/pvars1.log.
 *
 *   traffic OUT --fidelity   for D = 2, 10, 50 ms: a sender that starts
 *     D ms after the receive is posted (rank 1 blocked in MPI_Wait), and a
 *     receiver that posts D ms after a rendezvous send's message arrived
 *     (rank 0 blocked in MPI_Send; rank 1 meanwhile probes, so its MPI takes
 *     the message in and it waits in the unexpected queue). The delays are
 *     spun on CLOCK_MONOTONIC, not slept. Handshakes, not a barrier, order
 *     the two sides, so each wait happens however the ranks are scheduled.
 *     Each attempt runs on its own communicator (late_sender_<D>ms_<A> /
 *     late_receiver_<D>ms_<A>); OUT/truth.log has, per attempt, what the
 *     program measured itself (one host, one clock): for the late sender
 *     rank 1's time from just before it tells rank 0 to go until its
 *     MPI_Wait returns (never shorter than D); for the late receiver the time from
 *     rank 0's MPI_Send to rank 1's MPI_Recv, and the message's time
 *     between rank 1 seeing it and receiving it. A descheduled rank
 *     stretches a wait beyond D, so a case is tried again (up to
 *     FIDELITY_ATTEMPTS times) until the program measured D within half
 *     of the checker's tolerance; check_outputs.py holds the
 *     profiler to D and to the program's own figures in that attempt.
 */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void fail(const char *what) {
  fprintf(stderr, "traffic: FAILED: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---------------------------------------------------------------- PERUSE log */

enum { kMaxLog = 4096 };
struct LogEntry {
  long long t;
  long long uid;
  int event, peer, tag, count, op;
};
static struct LogEntry g_log[kMaxLog];
static int g_logged;

static int log_event(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t *s, void *param) {
  (void)h;
  if (s->tag <= -16 || g_logged >= kMaxLog) return MPI_SUCCESS; /* internal traffic */
  struct LogEntry *e = &g_log[g_logged++];
  e->t = now_ns();
  e->uid = (long long)uid;
  e->event = (int)(long)param;
  e->peer = s->peer;
  e->tag = s->tag;
  e->count = s->count;
  e->op = s->operation;
  return MPI_SUCCESS;
}

static const int kLogged[] = {
    PERUSE_COMM_REQ_ACTIVATE,         PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
    PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q, PERUSE_COMM_MSG_MATCH_POSTED_REQ};
enum { kNumLogged = sizeof kLogged / sizeof kLogged[0] };
static peruse_event_h g_handles[kNumLogged];

static void watch(MPI_Comm comm) {
  char name[64];
  for (int i = 0; i < kNumLogged; ++i) {
    if (PERUSE_Event_comm_register(kLogged[i], comm, log_event, (void *)(long)kLogged[i], &g_handles[i]) !=
            PERUSE_SUCCESS ||
        PERUSE_Event_activate(g_handles[i]) != PERUSE_SUCCESS) {
      snprintf(name, sizeof name, "PERUSE registration of event %d", kLogged[i]);
      fail(name);
    }
  }
}

static void write_log(const char *out, int rank) {
  for (int i = 0; i < kNumLogged; ++i) PERUSE_Event_release(&g_handles[i]);
  char path[4096];
  snprintf(path, sizeof path, "%s/peruse%d.log", out, rank);
  FILE *f = fopen(path, "w");
  if (!f) fail("cannot write the PERUSE log");
  const char *names[64] = {0};
  names[PERUSE_COMM_REQ_ACTIVATE] = "REQ_ACTIVATE";
  names[PERUSE_COMM_REQ_INSERT_IN_POSTED_Q] = "REQ_INSERT_IN_POSTED_Q";
  names[PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q] = "REQ_REMOVE_FROM_POSTED_Q";
  names[PERUSE_COMM_MSG_INSERT_IN_UNEX_Q] = "MSG_INSERT_IN_UNEX_Q";
  names[PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q] = "MSG_REMOVE_FROM_UNEX_Q";
  names[PERUSE_COMM_MSG_MATCH_POSTED_REQ] = "MSG_MATCH_POSTED_REQ";
  for (int i = 0; i < g_logged; ++i) {
    const struct LogEntry *e = &g_log[i];
    fprintf(f, "%lld %s 0x%llx %d %d %d %s\n", e->t, names[e->event], (unsigned long long)e->uid, e->peer, e->tag,
            e->count, e->op == PERUSE_SEND ? "send" : "recv");
  }
  fclose(f);
}

/* ---------------------------------------------------------------- MPI_T queue lengths */

static MPI_T_pvar_session g_session;
static MPI_T_pvar_handle g_len[2];

static void pvars_open(MPI_Comm comm) {
  int provided, count;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) fail("MPI_T_init_thread");
  if (MPI_T_pvar_session_create(&g_session) != MPI_SUCCESS) fail("MPI_T_pvar_session_create");
  const char *names[2] = {"sonde_posted_q_length", "sonde_unexpected_q_length"};
  for (int q = 0; q < 2; ++q) {
    int idx;
    if (MPI_T_pvar_get_index(names[q], MPI_T_PVAR_CLASS_LEVEL, &idx) != MPI_SUCCESS) fail(names[q]);
    if (MPI_T_pvar_handle_alloc(g_session, idx, &comm, &g_len[q], &count) != MPI_SUCCESS) fail("pvar handle");
  }
}

/* Reads both lengths in a quiet moment (nothing in flight for 20 ms either
 * side) and appends "t posted unexpected" to f. */
static void pvars_read(FILE *f) {
  unsigned long long v[2];
  sleep_ms(20);
  long long t = now_ns();
  for (int q = 0; q < 2; ++q)
    if (MPI_T_pvar_read(g_session, g_len[q], &v[q]) != MPI_SUCCESS) fail("MPI_T_pvar_read");
  fprintf(f, "%lld %llu %llu\n", t, v[0], v[1]);
  sleep_ms(20);
}

/* ---------------------------------------------------------------- the modes */

static void queues(const char *out, int rank) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  watch(c);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank logs before any traffic */
  FILE *pv = NULL;
  if (rank == 1) {
    char path[4096];
    snprintf(path, sizeof path, "%s/pvars1.log", out);
    pv = fopen(path, "w");
    if (!pv) fail("cannot write pvars1.log");
    pvars_open(c);
  }
  char small[64] = {0};
  static char big[100000];
  MPI_Request req[4];
  if (rank == 0) {
    for (int tag = 1; tag <= 5; ++tag) MPI_Send(small, sizeof small, MPI_BYTE, 1, tag, c); /* unexpected at 1 */
    MPI_Barrier(MPI_COMM_WORLD);                                                           /* 1 posts 11..14 */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int tag = 11; tag <= 14; ++tag) MPI_Send(small, sizeof small, MPI_BYTE, 1, tag, c);
    MPI_Send(big, sizeof big, MPI_BYTE, 1, 20, c); /* rendezvous: waits in 1's unexpected queue */
    MPI_Ssend(small, 8, MPI_BYTE, 1, 21, c);
    MPI_Recv(small, sizeof small, MPI_BYTE, 1, 22, c, MPI_STATUS_IGNORE); /* posted before 1 sends */
  } else if (rank == 1) {
    MPI_Barrier(MPI_COMM_WORLD);
    pvars_read(pv); /* 0 posted, 5 unexpected */
    for (int i = 0; i < 3; ++i) MPI_Irecv(small, sizeof small, MPI_BYTE, 0, 11 + i, c, &req[i]);
    MPI_Irecv(small, sizeof small, MPI_BYTE, MPI_ANY_SOURCE, 14, c, &req[3]);
    pvars_read(pv); /* 4 posted, 5 unexpected */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    for (int tag = 1; tag <= 5; ++tag) MPI_Recv(small, sizeof small, MPI_BYTE, 0, tag, c, MPI_STATUS_IGNORE);
    /* The rendezvous message may arrive after the Waitall returned; the
     * probe takes it in, so it waits in the unexpected queue whatever the
     * timing. */
    MPI_Probe(0, 20, c, MPI_STATUS_IGNORE);
    sleep_ms(5);
    MPI_Recv(big, sizeof big, MPI_BYTE, 0, 20, c, MPI_STATUS_IGNORE);
    MPI_Recv(small, sizeof small, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, MPI_STATUS_IGNORE);
    sleep_ms(5);
    MPI_Send(small, 8, MPI_BYTE, 0, 22, c);
    pvars_read(pv); /* both empty */
    fclose(pv);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  write_log(out, rank);
  MPI_Comm_free(&c);
}

enum { FIDELITY_ATTEMPTS = 20 };

/* Spins until `ns` have passed on CLOCK_MONOTONIC (sleeping would overshoot). */
static void spin_ns(long long ns) {
  long long until = now_ns() + ns;
  while (now_ns() < until) {
  }
}

/* Whether the program measured the injected delay faithfully: within half
 * the checker's tolerance, max(2 % of D, 50 us). */
static int faithful(long long measured, int d_ms) {
  long long d = d_ms * 1000000LL, tol = d / 50 > 50000 ? d / 50 : 50000;
  return measured - d <= tol / 2 && d - measured <= tol / 2;
}

/* Late sender, one attempt on a fresh communicator: 1 posts its receive,
 * tells 0, and blocks in MPI_Wait until 0, D ms after hearing, sends.
 * Returns (on both ranks) whether the wait rank 1 measured was faithful. */
static int late_sender(FILE *truth, int rank, int d, int attempt, char *big) {
  char name[64];
  long long t[2] = {0, 0};
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  snprintf(name, sizeof name, "late_sender_%dms_%d", d, attempt);
  MPI_Comm_set_name(c, name);
  if (rank == 0) {
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 5, c, MPI_STATUS_IGNORE);
    spin_ns(d * 1000000LL);
    MPI_Send(big, 8, MPI_BYTE, 1, 1, c);
    MPI_Recv(&t[1], 1, MPI_LONG_LONG, 1, 2, c, MPI_STATUS_IGNORE);
    fprintf(truth, "late_sender %d %s %lld %lld\n", d, name, t[1], t[1]); /* the wait is its queue time */
  } else if (rank == 1) {
    MPI_Request r;
    MPI_Irecv(big, 8, MPI_BYTE, 0, 1, c, &r);
    /* Read before the send that starts 0's delay, so the measurement can
     * never come out shorter than D; it is longer by the 0-byte send. */
    t[0] = now_ns();
    MPI_Send(NULL, 0, MPI_BYTE, 0, 5, c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    t[1] = now_ns() - t[0]; /* blocked in MPI_Send and MPI_Wait */
    MPI_Send(&t[1], 1, MPI_LONG_LONG, 0, 2, c);
  }
  int ok = rank == 0 ? faithful(t[1], d) : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, c);
  return ok; /* c stays: see fidelity() */
}

/* Late receiver, one attempt: 0 blocks in a rendezvous MPI_Send; 1 sees
 * its message arrive (MPI_Iprobe), stays busy D ms more, then receives. */
static int late_receiver(FILE *truth, int rank, int d, int attempt, char *big, int big_bytes) {
  char name[64];
  long long t[3] = {0, 0, 0};
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  snprintf(name, sizeof name, "late_receiver_%dms_%d", d, attempt);
  MPI_Comm_set_name(c, name);
  int ok = 0;
  if (rank == 0) {
    t[0] = now_ns();
    MPI_Send(big, big_bytes, MPI_BYTE, 1, 1, c);
    MPI_Recv(&t[1], 2, MPI_LONG_LONG, 1, 2, c, MPI_STATUS_IGNORE); /* t[1], t[2] travel together */
    /* blocked from the send's start until the receive was posted; the
     * message unexpected from when 1 first saw it until then */
    fprintf(truth, "late_receiver %d %s %lld %lld\n", d, name, t[1] - t[0], t[1] - t[2]);
    ok = faithful(t[1] - t[0], d) && faithful(t[1] - t[2], d);
  } else if (rank == 1) {
    int flag = 0;
    while (!flag) MPI_Iprobe(0, 1, c, &flag, MPI_STATUS_IGNORE);
    t[2] = now_ns();
    long long until = now_ns() + d * 1000000LL;
    while (now_ns() < until) /* busy elsewhere, but in MPI now and then */
      MPI_Iprobe(0, 99, c, &flag, MPI_STATUS_IGNORE);
    t[1] = now_ns();
    MPI_Recv(big, big_bytes, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE);
    MPI_Send(&t[1], 2, MPI_LONG_LONG, 0, 2, c);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, c);
  return ok; /* c stays: see fidelity() */
}

/* Each attempt's communicator is left alive to MPI_Finalize: the profiler
 * reports live communicators one by one, but merges freed ones past its
 * first 64 into one row, and retries on a loaded machine make more. */
static void fidelity(const char *out, int rank) {
  static const int delays[] = {2, 10, 50};
  static char big[1 << 20];
  FILE *truth = NULL;
  if (rank == 0) {
    char path[4096];
    snprintf(path, sizeof path, "%s/truth.log", out);
    truth = fopen(path, "w");
    if (!truth) fail("cannot write truth.log");
  }
  /* Warm-up: the buffer's pages touched and both protocols run once, so the
   * first phase pays no first-time costs inside its measured calls. */
  memset(big, 1, sizeof big);
  MPI_Comm warm;
  MPI_Comm_dup(MPI_COMM_WORLD, &warm);
  for (int k = 0; k < 2; ++k) {
    int n = k ? (int)sizeof big : 8;
    if (rank == 0) MPI_Send(big, n, MPI_BYTE, 1, 0, warm);
    if (rank == 1) MPI_Recv(big, n, MPI_BYTE, 0, 0, warm, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&warm);
  for (int i = 0; i < 3; ++i) {
    for (int a = 0; a < FIDELITY_ATTEMPTS && !late_sender(truth, rank, delays[i], a, big); ++a) {
    }
    for (int a = 0; a < FIDELITY_ATTEMPTS && !late_receiver(truth, rank, delays[i], a, big, (int)sizeof big); ++a) {
    }
  }
  if (truth) fclose(truth);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 || size < 2) fail("usage: traffic OUT --queues|--fidelity, on 2 or more ranks");
  mkdir(argv[1], 0777); /* the profiler makes it too, at MPI_Finalize */
  if (strcmp(argv[2], "--queues") == 0) {
    queues(argv[1], rank);
  } else if (strcmp(argv[2], "--fidelity") == 0) {
    fidelity(argv[1], rank);
  } else {
    fail("unknown mode");
  }
  MPI_Finalize();
  if (rank == 0) printf("traffic: done\n");
  return 0;
}
