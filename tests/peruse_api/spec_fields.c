/* The spec a callback receives (spec 5.1.2, include/peruse.h): request
 * events carry the user's own arguments (buf, count, datatype, peer as
 * given, MPI_ANY_SOURCE included, tag as given, MPI_ANY_TAG included,
 * PERUSE_SEND/PERUSE_RECV and the user's communicator handle); message
 * events carry the envelope (sender's rank in the communicator, tag, size in
 * bytes, MPI_BYTE, buf NULL). A callback that overwrites its spec does
 * not change what the next callback of the same event sees. Two ranks, on a communicator whose ranks are
 * the reverse of WORLD's so a world rank given by mistake shows. */
#include <string.h>

#include "tests/peruse_api/ptest.h"

typedef struct {
  int event;
  peruse_comm_spec_t s;
} Ev;

enum { MAX_EVENTS = 4096 };
static Ev evlog[MAX_EVENTS];
static int nlog;
static MPI_Comm ctl, S;

static int log_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  if (nlog < MAX_EVENTS) {
    evlog[nlog].event = *(int*)param;
    evlog[nlog].s = *spec;
    ++nlog;
  }
  return MPI_SUCCESS;
}

/* Overwrites every field it is given (the specification lets a callback do
 * that); callbacks after it on the same event must still see the truth. */
static int scribble_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  (void)h, (void)id, (void)param;
  memset(spec, 0x5a, sizeof *spec);
  return MPI_SUCCESS;
}

static int is_request_event(int e) {
  return (e >= PERUSE_COMM_REQ_ACTIVATE && e <= PERUSE_COMM_REQ_NOTIFY) || e == PERUSE_COMM_REQ_XFER_CONTINUE;
}
static int is_message_event(int e) { return e >= PERUSE_COMM_MSG_ARRIVED && e <= PERUSE_COMM_MSG_MATCH_POSTED_REQ; }

static const char* ev_name(int e) {
  char* n = NULL;
  PERUSE_Query_event_name(e, &n);
  return n ? n : "?";
}

/* Every request event of operation `op` must carry exactly (buf, count,
 * type, peer, tag) on S; `need` lists events that must have been seen. When
 * check_peer_tag is 0, peer and tag are not compared (MPI_Mrecv). */
static void check_requests(const char* what, int op, const void* buf, int count, MPI_Datatype type, int peer,
                           int tag, int check_peer_tag, const int* need, int nneed) {
  int seen[PTEST_LAST_EVENT + 1] = {0};
  for (int i = 0; i < nlog; ++i) {
    const Ev* e = &evlog[i];
    if (!is_request_event(e->event) || e->s.operation != op) continue;
    ++seen[e->event];
    CHECK(e->s.comm == S, "%s: %s: comm 0x%x, want the user's 0x%x", what, ev_name(e->event), (unsigned)e->s.comm,
          (unsigned)S);
    CHECK(e->s.buf == buf, "%s: %s: buf %p, want the user's %p", what, ev_name(e->event), e->s.buf, buf);
    CHECK(e->s.count == count, "%s: %s: count %d, want %d", what, ev_name(e->event), e->s.count, count);
    CHECK(e->s.datatype == type, "%s: %s: datatype 0x%x, want 0x%x", what, ev_name(e->event), (unsigned)e->s.datatype,
          (unsigned)type);
    if (check_peer_tag) {
      CHECK(e->s.peer == peer, "%s: %s: peer %d, want %d", what, ev_name(e->event), e->s.peer, peer);
      CHECK(e->s.tag == tag, "%s: %s: tag %d, want %d", what, ev_name(e->event), e->s.tag, tag);
    }
  }
  for (int k = 0; k < nneed; ++k)
    CHECK(seen[need[k]] >= 1, "%s: no %s with operation %s", what, ev_name(need[k]),
          op == PERUSE_SEND ? "PERUSE_SEND" : "PERUSE_RECV");
}

/* Every message event must carry the envelope (sender, tag, bytes). */
static void check_messages(const char* what, int sender, int tag, int bytes, const int* need, int nneed) {
  int seen[PTEST_LAST_EVENT + 1] = {0};
  for (int i = 0; i < nlog; ++i) {
    const Ev* e = &evlog[i];
    if (!is_message_event(e->event)) continue;
    ++seen[e->event];
    CHECK(e->s.comm == S, "%s: %s: comm 0x%x, want 0x%x", what, ev_name(e->event), (unsigned)e->s.comm, (unsigned)S);
    CHECK(e->s.buf == NULL, "%s: %s: buf %p, want NULL", what, ev_name(e->event), e->s.buf);
    CHECK(e->s.count == bytes, "%s: %s: count %d, want %d bytes", what, ev_name(e->event), e->s.count, bytes);
    CHECK(e->s.datatype == MPI_BYTE, "%s: %s: datatype 0x%x, want MPI_BYTE", what, ev_name(e->event),
          (unsigned)e->s.datatype);
    CHECK(e->s.peer == sender, "%s: %s: peer %d, want the sender's rank %d in the comm", what, ev_name(e->event),
          e->s.peer, sender);
    CHECK(e->s.tag == tag, "%s: %s: tag %d, want %d", what, ev_name(e->event), e->s.tag, tag);
  }
  for (int k = 0; k < nneed; ++k) CHECK(seen[need[k]] >= 1, "%s: no %s", what, ev_name(need[k]));
}

static int no_messages(void) {
  int n = 0;
  for (int i = 0; i < nlog; ++i) n += is_message_event(evlog[i].event);
  return n;
}

static void begin_phase(void) {
  nlog = 0;
  itest_barrier(ctl);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -itest_rank, &S));
  int me;
  MPI_Comm_rank(S, &me);
  CHECK(me == 1 - itest_rank, "reversed comm: rank %d in S, world rank %d", me, itest_rank);
  const int A = 1, B = 0; /* ranks in S: A sends, B receives */
  static int ids[PTEST_LAST_EVENT + 1];
  peruse_event_h hs[PTEST_LAST_EVENT + 1];
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
    ids[e] = e;
    CHECK_RC(PERUSE_Event_comm_register(e, S, log_cb, &ids[e], &hs[e]), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(hs[e]));
  }
  MPI_Request rq;
  MPI_Status st;

  /* 1. Wildcard receive posted first; non-blocking send. */
  {
    int sbuf[5] = {1, 2, 3, 4, 5}, rbuf[7];
    begin_phase();
    if (me == B) {
      CHECK_OK(MPI_Irecv(rbuf, 7, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, S, &rq));
      itest_barrier(ctl);
      CHECK_OK(MPI_Wait(&rq, &st));
    } else {
      itest_barrier(ctl);
      CHECK_OK(MPI_Isend(sbuf, 5, MPI_INT, B, 33, S, &rq));
      CHECK_OK(MPI_Wait(&rq, &st));
    }
    itest_barrier(ctl);
    int rneed[] = {PERUSE_COMM_REQ_ACTIVATE,   PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
                   PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END,           PERUSE_COMM_REQ_COMPLETE,
                   PERUSE_COMM_REQ_NOTIFY};
    int sneed[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END,
                   PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_MSG_MATCH_POSTED_REQ};
    if (me == B) {
      check_requests("wildcard Irecv", PERUSE_RECV, rbuf, 7, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, 1, rneed, 7);
      check_messages("message into a posted receive", A, 33, 20, mneed, 2);
    } else {
      check_requests("Isend", PERUSE_SEND, sbuf, 5, MPI_INT, B, 33, 1, sneed, 5);
      CHECK(no_messages() == 0, "the sender saw %d message events", no_messages());
    }
  }

  /* 2. Blocking send of a derived type (the request-less fast path),
   * unexpected at the receiver, received with a specific source and tag. */
  {
    MPI_Datatype t3;
    CHECK_OK(MPI_Type_contiguous(3, MPI_SHORT, &t3));
    CHECK_OK(MPI_Type_commit(&t3));
    short sbuf[6] = {1, 2, 3, 4, 5, 6}, rbuf[12];
    begin_phase();
    if (me == A) CHECK_OK(MPI_Send(sbuf, 2, t3, B, 34, S));
    itest_barrier(ctl);
    if (me == B) CHECK_OK(MPI_Recv(rbuf, 4, t3, A, 34, S, &st));
    itest_barrier(ctl);
    int rneed[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_MATCH_UNEX, PERUSE_COMM_REQ_COMPLETE,
                   PERUSE_COMM_REQ_NOTIFY};
    int sneed[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_MSG_INSERT_IN_UNEX_Q, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q};
    if (me == B) {
      check_requests("Recv of a derived type", PERUSE_RECV, rbuf, 4, t3, A, 34, 1, rneed, 4);
      check_messages("unexpected message", A, 34, 12, mneed, 3);
    } else {
      check_requests("blocking Send of a derived type", PERUSE_SEND, sbuf, 2, t3, B, 34, 1, sneed, 3);
    }
    CHECK_OK(MPI_Type_free(&t3));
  }

  /* 3. Rendezvous into a receive with MPI_ANY_SOURCE and a specific tag. */
  {
    enum { N = 100 * 1024 };
    static char big_out[N], big_in[N];
    begin_phase();
    if (me == A) CHECK_OK(MPI_Send(big_out, N, MPI_CHAR, B, 35, S));
    else CHECK_OK(MPI_Recv(big_in, N, MPI_CHAR, MPI_ANY_SOURCE, 35, S, &st));
    itest_barrier(ctl);
    int need[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_END,
                  PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED};
    if (me == B) {
      check_requests("rendezvous Recv", PERUSE_RECV, big_in, N, MPI_CHAR, MPI_ANY_SOURCE, 35, 1, need, 5);
      check_messages("rendezvous message", A, 35, N, mneed, 1);
    } else {
      check_requests("rendezvous Send", PERUSE_SEND, big_out, N, MPI_CHAR, B, 35, 1, need, 5);
    }
  }

  /* 4. Persistent receive with MPI_ANY_TAG; synchronous send. */
  {
    double sbuf[3] = {1, 2, 3}, rbuf[9];
    begin_phase();
    if (me == B) {
      CHECK_OK(MPI_Recv_init(rbuf, 9, MPI_DOUBLE, A, MPI_ANY_TAG, S, &rq));
      CHECK_OK(MPI_Start(&rq));
      CHECK_OK(MPI_Wait(&rq, &st));
      CHECK_OK(MPI_Request_free(&rq));
    } else {
      CHECK_OK(MPI_Ssend(sbuf, 3, MPI_DOUBLE, B, 36, S));
    }
    itest_barrier(ctl);
    int need[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED};
    if (me == B) {
      check_requests("persistent Recv", PERUSE_RECV, rbuf, 9, MPI_DOUBLE, A, MPI_ANY_TAG, 1, need, 3);
      check_messages("synchronous message", A, 36, 24, mneed, 1);
    } else {
      check_requests("Ssend", PERUSE_SEND, sbuf, 3, MPI_DOUBLE, B, 36, 1, need, 3);
    }
  }

  /* 5. Matched probe: the message's envelope; the Mrecv's buffer, count,
   * datatype (it names no source or tag). */
  {
    int sbuf[2] = {7, 8}, rbuf[4];
    begin_phase();
    if (me == A) CHECK_OK(MPI_Send(sbuf, 2, MPI_INT, B, 37, S));
    else {
      MPI_Message m;
      CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, S, &m, &st));
      CHECK_OK(MPI_Mrecv(rbuf, 4, MPI_INT, &m, &st));
    }
    itest_barrier(ctl);
    int need[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q};
    if (me == B) {
      check_requests("Mrecv", PERUSE_RECV, rbuf, 4, MPI_INT, 0, 0, 0, need, 3);
      check_messages("probed message", A, 37, 8, mneed, 2);
    }
  }

  /* 6. To MPI_PROC_NULL: the user's arguments as given. */
  {
    int v = 0;
    begin_phase();
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 38, S));
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, S, &st));
    itest_barrier(ctl);
    check_requests("Send to MPI_PROC_NULL", PERUSE_SEND, &v, 1, MPI_INT, MPI_PROC_NULL, 38, 1, NULL, 0);
    check_requests("Recv from MPI_PROC_NULL", PERUSE_RECV, &v, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, 1, NULL, 0);
    CHECK(no_messages() == 0, "MPI_PROC_NULL traffic fired %d message events", no_messages());
  }

  /* 7. Two handles on every event, the first one scribbling on its spec: the
   * second still sees the user's arguments and the envelope. The handles
   * are re-registered so the scribbler comes first in dispatch order. */
  {
    peruse_event_h scribblers[PTEST_LAST_EVENT + 1];
    for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
      CHECK_PERUSE_OK(PERUSE_Event_release(&hs[e]));
      CHECK_PERUSE_OK(PERUSE_Event_comm_register(e, S, scribble_cb, NULL, &scribblers[e]));
      CHECK_PERUSE_OK(PERUSE_Event_activate(scribblers[e]));
      CHECK_PERUSE_OK(PERUSE_Event_comm_register(e, S, log_cb, &ids[e], &hs[e]));
      CHECK_PERUSE_OK(PERUSE_Event_activate(hs[e]));
    }
    int sbuf[3] = {4, 5, 6}, rbuf[3];
    begin_phase();
    if (me == B) {
      CHECK_OK(MPI_Irecv(rbuf, 3, MPI_INT, A, 39, S, &rq));
      itest_barrier(ctl);
      CHECK_OK(MPI_Wait(&rq, &st));
    } else {
      itest_barrier(ctl);
      CHECK_OK(MPI_Send(sbuf, 3, MPI_INT, B, 39, S));
    }
    itest_barrier(ctl);
    int rneed[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_INSERT_IN_POSTED_Q, PERUSE_COMM_REQ_COMPLETE,
                   PERUSE_COMM_REQ_NOTIFY};
    int sneed[] = {PERUSE_COMM_REQ_ACTIVATE, PERUSE_COMM_REQ_COMPLETE, PERUSE_COMM_REQ_NOTIFY};
    int mneed[] = {PERUSE_COMM_MSG_ARRIVED, PERUSE_COMM_MSG_MATCH_POSTED_REQ};
    if (me == B) {
      check_requests("Irecv after a scribbler", PERUSE_RECV, rbuf, 3, MPI_INT, A, 39, 1, rneed, 4);
      check_messages("message after a scribbler", A, 39, 12, mneed, 2);
    } else {
      check_requests("Send after a scribbler", PERUSE_SEND, sbuf, 3, MPI_INT, B, 39, 1, sneed, 3);
    }
    for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) CHECK_PERUSE_OK(PERUSE_Event_release(&scribblers[e]));
  }

  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) CHECK_PERUSE_OK(PERUSE_Event_release(&hs[e]));
  CHECK_OK(MPI_Comm_free(&S));
  CHECK_OK(MPI_Comm_free(&ctl));
  return itest_finish("spec_fields");
}
