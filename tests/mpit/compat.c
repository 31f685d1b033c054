/* The queue variables under MPICH's and Open MPI's names, read by name
 * during a scripted two-rank run and compared with the Sonde variable each
 * mirrors: at every step rank 0 reads each alias and its Sonde variable and
 * they must agree exactly. Also: each alias's class, datatype, binding and
 * flags are the peer's, and its description names the implementation.
 * Synchronisation as in queues.c: through `ctl`, never WORLD's queues. */
#include <string.h>

#include "tests/mpit/mtest.h"

#define K 6
static MPI_Comm ctl;
static MPI_Comm world = MPI_COMM_WORLD;
static void ctl_send(int peer) { MPI_Send(NULL, 0, MPI_BYTE, peer, 1, ctl); }
static void ctl_recv(int peer) { MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, ctl, MPI_STATUS_IGNORE); }

typedef struct {
  const char* alias;
  const char* implementation; /* named in the description */
  int var_class, bind;
  MPI_Datatype datatype;
  const char* mirrors;
  int mirror_class;
} Pair;

static Pair pairs[] = {
    {"posted_recvq_length", "MPICH", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, MPI_UNSIGNED,
     "sonde_total_posted_q_length", MPI_T_PVAR_CLASS_LEVEL},
    {"unexpected_recvq_length", "MPICH", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, MPI_UNSIGNED,
     "sonde_total_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL},
    {"unexpected_recvq_buffer_size", "MPICH", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, MPI_UNSIGNED_LONG_LONG,
     "sonde_total_unexpected_q_buffer_bytes", MPI_T_PVAR_CLASS_LEVEL},
    {"posted_recvq_match_attempts", "MPICH", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, MPI_UNSIGNED_LONG_LONG,
     "sonde_total_posted_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER},
    {"unexpected_recvq_match_attempts", "MPICH", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT,
     MPI_UNSIGNED_LONG_LONG, "sonde_total_unexpected_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER},
    {"time_failed_matching_postedq", "MPICH", MPI_T_PVAR_CLASS_TIMER, MPI_T_BIND_NO_OBJECT, MPI_DOUBLE,
     "sonde_total_posted_q_failed_search_time", MPI_T_PVAR_CLASS_TIMER},
    {"time_matching_unexpectedq", "MPICH", MPI_T_PVAR_CLASS_TIMER, MPI_T_BIND_NO_OBJECT, MPI_DOUBLE,
     "sonde_total_unexpected_q_search_time", MPI_T_PVAR_CLASS_TIMER},
    {"pml_ob1_posted_recvq_length", "Open MPI", MPI_T_PVAR_CLASS_SIZE, MPI_T_BIND_MPI_COMM, MPI_UNSIGNED,
     "sonde_posted_q_length_per_peer", MPI_T_PVAR_CLASS_LEVEL},
    {"pml_ob1_unexpected_msgq_length", "Open MPI", MPI_T_PVAR_CLASS_SIZE, MPI_T_BIND_MPI_COMM, MPI_UNSIGNED,
     "sonde_unexpected_q_length_per_peer", MPI_T_PVAR_CLASS_LEVEL},
};
#define NPAIRS (int)(sizeof pairs / sizeof pairs[0])
/* The handles of pairs[i]: alias, mirror; the alias's count. */
static struct {
  MPI_T_pvar_handle ha, hm;
  int count;
} live[sizeof pairs / sizeof pairs[0]];
#define L(p) (&live[(p) - pairs])
static MPI_T_pvar_session S;

static void metadata(Pair* p) {
  int idx = mtest_pvar(p->alias, p->var_class);
  char name[128], desc[1024];
  int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
  MPI_Datatype dt;
  MPI_T_enum et;
  CHECK_T(MPI_T_pvar_get_info(idx, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind, &ro, &cont, &atomic),
          MPI_SUCCESS);
  CHECK(cls == p->var_class && dt == p->datatype && bind == p->bind && ro && cont && !atomic,
        "%s: class %d type %d bind %d readonly %d continuous %d atomic %d", p->alias, cls, (int)dt, bind, ro, cont,
        atomic);
  CHECK(strstr(desc, p->implementation) && strstr(desc, p->mirrors), "%s: description '%s'", p->alias, desc);
  /* Continuous: no start/stop, no write. */
  CHECK_T(MPI_T_pvar_start(S, L(p)->ha), MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK_T(MPI_T_pvar_reset(S, L(p)->ha), MPI_T_ERR_PVAR_NO_WRITE);
}

/* Every alias equals its mirror now. */
static void compare(const char* step) {
  for (int i = 0; i < NPAIRS; ++i) {
    Pair* p = &pairs[i];
    if (p->datatype == MPI_DOUBLE) {
      double a = mtest_read_double(S, L(p)->ha), m = mtest_read_double(S, L(p)->hm);
      CHECK(a == m, "%s: %s %.9f, %s %.9f", step, p->alias, a, p->mirrors, m);
    } else if (p->datatype == MPI_UNSIGNED) {
      unsigned a[2] = {~0u, ~0u};
      unsigned long long m[2] = {~0ull, ~0ull};
      CHECK_T(MPI_T_pvar_read(S, L(p)->ha, a), MPI_SUCCESS);
      CHECK_T(MPI_T_pvar_read(S, L(p)->hm, m), MPI_SUCCESS);
      for (int j = 0; j < L(p)->count; ++j)
        CHECK(a[j] == m[j], "%s: %s[%d] %u, %s %llu", step, p->alias, j, a[j], p->mirrors, m[j]);
    } else {
      unsigned long long a = mtest_read_ull(S, L(p)->ha), m = mtest_read_ull(S, L(p)->hm);
      CHECK(a == m, "%s: %s %llu, %s %llu", step, p->alias, a, p->mirrors, m);
    }
  }
}

static unsigned long long total(const char* mirrors) {
  for (int i = 0; i < NPAIRS; ++i)
    if (strcmp(pairs[i].mirrors, mirrors) == 0) return mtest_read_ull(S, live[i].hm);
  return ~0ull;
}

static void rank0(void) {
  static char buf[K][1000];
  CHECK_T(MPI_T_pvar_session_create(&S), MPI_SUCCESS);
  for (int i = 0; i < NPAIRS; ++i) {
    Pair* p = &pairs[i];
    MPI_Comm* obj = p->bind == MPI_T_BIND_MPI_COMM ? &world : NULL;
    int count = 0;
    CHECK_T(MPI_T_pvar_handle_alloc(S, mtest_pvar(p->alias, p->var_class), obj, &L(p)->ha, &count), MPI_SUCCESS);
    L(p)->count = count;
    CHECK(count == (p->bind == MPI_T_BIND_MPI_COMM ? 2 : 1), "%s: count %d", p->alias, count);
    L(p)->hm = mtest_handle(S, p->mirrors, p->mirror_class, obj, p->mirror_class != MPI_T_PVAR_CLASS_LEVEL);
    metadata(p);
  }
  compare("empty");
  ctl_send(1); /* rank 1 sends K messages to WORLD, then answers on ctl */
  ctl_recv(1);
  compare("k unexpected");
  CHECK(total("sonde_total_unexpected_q_length") == K, "unexpected length %llu",
        total("sonde_total_unexpected_q_length"));
  CHECK(total("sonde_total_unexpected_q_buffer_bytes") > 0, "no buffered bytes");
  MPI_Request rq[3];
  MPI_Irecv(buf[0], 1000, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(buf[1], 1000, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &rq[1]);
  MPI_Irecv(buf[2], 1000, MPI_BYTE, MPI_ANY_SOURCE, 101, MPI_COMM_WORLD, &rq[2]);
  compare("3 posted");
  CHECK(total("sonde_total_posted_q_length") == 3, "posted length %llu", total("sonde_total_posted_q_length"));
  for (int i = 0; i < 3; ++i) {
    MPI_Recv(buf[3], 1000, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    compare("received one unexpected");
  }
  ctl_send(1); /* rank 1 sends what the posted receives wait for */
  MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
  compare("posted matched");
  /* Totals: ctl's own messages count too. */
  CHECK(total("sonde_total_posted_recvq_match_attempts") >= 3, "posted match attempts %llu",
        total("sonde_total_posted_recvq_match_attempts"));
  for (int i = 3; i < K; ++i) MPI_Recv(buf[3], 1000, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  compare("drained");
  /* Each of the K receives compared at least its own message. */
  CHECK(total("sonde_total_unexpected_recvq_match_attempts") >= K, "unexpected match attempts %llu",
        total("sonde_total_unexpected_recvq_match_attempts"));
  /* A freed communicator's attempts stay in the totals. */
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Request sr;
  MPI_Isend(buf[0], 1, MPI_BYTE, 0, 7, self, &sr);
  MPI_Recv(buf[1], 1, MPI_BYTE, 0, 7, self, MPI_STATUS_IGNORE);
  MPI_Wait(&sr, MPI_STATUS_IGNORE);
  unsigned long long before =
      total("sonde_total_posted_recvq_match_attempts") + total("sonde_total_unexpected_recvq_match_attempts");
  compare("self message");
  MPI_Comm_free(&self);
  unsigned long long after =
      total("sonde_total_posted_recvq_match_attempts") + total("sonde_total_unexpected_recvq_match_attempts");
  CHECK(after >= before && before > K, "match attempts %llu before the free, %llu after", before, after);
  compare("communicator freed");
  CHECK(mtest_read_double(S, live[5].ha) > 0, "no failed posted-queue search time (K messages went unexpected)");
  CHECK_T(MPI_T_pvar_session_free(&S), MPI_SUCCESS);
}

static void rank1(void) {
  static char buf[1000];
  ctl_recv(0);
  for (int i = 0; i < K; ++i) MPI_Send(buf, 100 * (i + 1), MPI_BYTE, 0, i, MPI_COMM_WORLD);
  ctl_send(0);
  ctl_recv(0);
  MPI_Send(buf, 10, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
  MPI_Send(buf, 10, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
  MPI_Send(buf, 10, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int provided;
  itest_init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  if (itest_rank == 0) rank0();
  else rank1();
  MPI_Barrier(ctl);
  MPI_Comm_free(&ctl);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  return itest_finish("compat");
}
