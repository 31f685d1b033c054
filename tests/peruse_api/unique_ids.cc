/* unique_id (spec 5.1.2, ARCHITECTURE.md, include/peruse.h): never 0; a
 * request's id is stable from REQ_ACTIVATE to REQ_NOTIFY, a message's from
 * MSG_ARRIVED to MSG_REMOVE_FROM_UNEX_Q or MSG_MATCH_POSTED_REQ, a search's
 * from BEGIN to END; no two live objects share one; request, message and
 * search ids never coincide.
 *
 * Every event on the work communicator is logged (with its spec) during a
 * few thousand mixed operations, then replayed against those rules. Two
 * ranks.
 *
 *   unique_ids mixed          blocking, non-blocking, persistent, buffered,
 *                             synchronous, eager and rendezvous sends;
 *                             specific and wildcard receives; probe, iprobe,
 *                             matched probe; cancel; MPI_PROC_NULL; self
 *   unique_ids request_free   MPI_Request_free of requests (already complete
 *                             or not) between other traffic
 */
#include <map>
#include <string>
#include <vector>

#include "tests/peruse_api/ptest.h"

namespace {

struct Ev {
  int event;
  MPI_Aint id;
  void* buf;
  int count;
  MPI_Datatype datatype;
  int peer, tag, operation;
  MPI_Comm comm;
};

std::vector<Ev>* g_log;

int log_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* s, void* param) {
  g_log->push_back(
      Ev{*static_cast<int*>(param), id, s->buf, s->count, s->datatype, s->peer, s->tag, s->operation, s->comm});
  return MPI_SUCCESS;
}

const char* ev_name(int e) {
  char* n = nullptr;
  PERUSE_Query_event_name(e, &n);
  return n ? n : "?";
}

enum Kind { kNone = 0, kRequest = 1, kMessage = 2, kSearchPosted = 3, kSearchUnex = 4 };
const char* kind_name(int k) {
  static const char* names[] = {"none", "request", "message", "posted search", "unexpected search"};
  return names[k];
}

bool is_request_event(int e) {
  return (e >= PERUSE_COMM_REQ_ACTIVATE && e <= PERUSE_COMM_REQ_NOTIFY) || e == PERUSE_COMM_REQ_XFER_CONTINUE;
}

bool same_spec(const Ev& a, const Ev& b) {
  return a.buf == b.buf && a.count == b.count && a.datatype == b.datatype && a.peer == b.peer && a.tag == b.tag &&
         a.operation == b.operation && a.comm == b.comm;
}

int violations = 0;
void violation(size_t i, const Ev& e, const std::string& what) {
  ++violations;
  if (violations <= 20)
    fprintf(stderr, "[rank %d] event #%zu %s id 0x%lx (peer %d tag %d count %d): %s\n", itest_rank, i, ev_name(e.event),
            (unsigned long)e.id, e.peer, e.tag, e.count, what.c_str());
}

// Replays the log; returns the number of objects opened.
size_t check_log(const std::vector<Ev>& log) {
  struct Live {
    int kind;
    Ev first;
  };
  std::map<MPI_Aint, Live> live;
  std::map<MPI_Aint, int> ever;  // id -> kind it was used for
  size_t opened = 0;
  auto open = [&](size_t i, const Ev& e, int kind) {
    auto it = live.find(e.id);
    if (it != live.end())
      violation(i, e,
                std::string("opens a ") + kind_name(kind) + " with the id of a live " + kind_name(it->second.kind));
    live[e.id] = Live{kind, e};
    auto ev = ever.find(e.id);
    if (ev != ever.end() && ev->second != kind && !(kind >= kSearchPosted && ev->second >= kSearchPosted))
      violation(i, e, std::string("a ") + kind_name(kind) + " id that was a " + kind_name(ev->second) + " id before");
    ever[e.id] = kind;
    ++opened;
  };
  auto use = [&](size_t i, const Ev& e, int kind, bool close) {
    auto it = live.find(e.id);
    if (it == live.end() || it->second.kind != kind) {
      violation(i, e,
                std::string("no live ") + kind_name(kind) + " has this id" +
                    (it == live.end() ? "" : std::string(" (a live ") + kind_name(it->second.kind) + " has)"));
      return;
    }
    const Ev& f = it->second.first;
    if (kind == kRequest && !same_spec(f, e)) violation(i, e, "the request's spec changed since its REQ_ACTIVATE");
    if (kind == kMessage && (f.peer != e.peer || f.tag != e.tag || f.count != e.count || f.comm != e.comm))
      violation(i, e, "the message's envelope changed since its MSG_ARRIVED");
    if (close) live.erase(it);
  };
  for (size_t i = 0; i < log.size(); ++i) {
    const Ev& e = log[i];
    if (e.id == 0) violation(i, e, "unique_id 0");
    switch (e.event) {
      case PERUSE_COMM_REQ_ACTIVATE: open(i, e, kRequest); break;
      case PERUSE_COMM_REQ_NOTIFY: use(i, e, kRequest, true); break;
      case PERUSE_COMM_MSG_ARRIVED: open(i, e, kMessage); break;
      case PERUSE_COMM_MSG_INSERT_IN_UNEX_Q: use(i, e, kMessage, false); break;
      case PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q:
      case PERUSE_COMM_MSG_MATCH_POSTED_REQ: use(i, e, kMessage, true); break;
      case PERUSE_COMM_SEARCH_POSTED_Q_BEGIN: open(i, e, kSearchPosted); break;
      case PERUSE_COMM_SEARCH_POSTED_Q_END: use(i, e, kSearchPosted, true); break;
      case PERUSE_COMM_SEARCH_UNEX_Q_BEGIN: open(i, e, kSearchUnex); break;
      case PERUSE_COMM_SEARCH_UNEX_Q_END: use(i, e, kSearchUnex, true); break;
      default:
        if (is_request_event(e.event)) use(i, e, kRequest, false);
        else violation(i, e, "unknown event");
    }
  }
  for (auto& [id, l] : live)
    violation(log.size(), l.first, std::string("still live at the end: a ") + kind_name(l.kind));
  return opened;
}

// ------------------------------------------------------------------ workload

uint64_t rng_state = 0x243f6a8885a308d3ull;
uint64_t rng() { return ptest_rng(&rng_state); }

MPI_Comm W, ctl;
char small_out[256], small_in[256];
char* big_out;
char* big_in;
constexpr int kBig = 100 * 1024;  // above the eager limit: rendezvous

void sync() { itest_barrier(ctl); }

// One operation, the same choice on both ranks. `a` sends, `b` receives.
void one_op(int kind, int i) {
  int me = itest_rank, a = int(rng() % 2), b = 1 - a;
  int tag = int(rng() % 50);
  int n = int(rng() % 200);
  MPI_Status st;
  MPI_Request rq[4];
  switch (kind) {
    case 0:  // blocking small (the no-request fast path)
      if (me == a) CHECK_OK(MPI_Send(small_out, n, MPI_BYTE, b, tag, W));
      else CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, a, tag, W, &st));
      break;
    case 1:  // non-blocking both ways
      CHECK_OK(MPI_Irecv(small_in, 256, MPI_BYTE, 1 - me, tag, W, &rq[0]));
      CHECK_OK(MPI_Isend(small_out, n, MPI_BYTE, 1 - me, tag, W, &rq[1]));
      CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
      break;
    case 2:  // rendezvous into a wildcard receive
      if (me == a) CHECK_OK(MPI_Send(big_out, kBig, MPI_BYTE, b, tag, W));
      else CHECK_OK(MPI_Recv(big_in, kBig, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st));
      break;
    case 3:  // unexpected, probed, then received
      if (me == a) CHECK_OK(MPI_Isend(i % 2 ? big_out : small_out, i % 2 ? kBig : n, MPI_BYTE, b, tag, W, &rq[0]));
      sync();
      if (me == b) {
        CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, tag, W, &st));
        CHECK_OK(MPI_Recv(big_in, kBig, MPI_BYTE, a, MPI_ANY_TAG, W, &st));
      } else {
        CHECK_OK(MPI_Wait(&rq[0], &st));
      }
      break;
    case 4: {  // matched probe
      if (me == a) CHECK_OK(MPI_Send(small_out, n, MPI_BYTE, b, tag, W));
      else {
        MPI_Message m;
        CHECK_OK(MPI_Mprobe(a, MPI_ANY_TAG, W, &m, &st));
        if (i % 2) CHECK_OK(MPI_Mrecv(small_in, 256, MPI_BYTE, &m, &st));
        else {
          CHECK_OK(MPI_Imrecv(small_in, 256, MPI_BYTE, &m, &rq[0]));
          CHECK_OK(MPI_Wait(&rq[0], &st));
        }
      }
      break;
    }
    case 5: {  // iprobe loop (many searches), then receive
      if (me == a) CHECK_OK(MPI_Send(small_out, n, MPI_BYTE, b, tag, W));
      else {
        int flag = 0;
        // A few unsuccessful searches, then wait (keeps the log small when
        // the peer is slow to be scheduled).
        for (int k = 0; k < 20 && !flag; ++k) CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &flag, &st));
        if (!flag) CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st));
        CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, W, &st));
      }
      break;
    }
    case 6:  // cancelled receive
      CHECK_OK(MPI_Irecv(small_in, 256, MPI_BYTE, 1 - me, 30000, W, &rq[0]));
      CHECK_OK(MPI_Cancel(&rq[0]));
      CHECK_OK(MPI_Wait(&rq[0], &st));
      break;
    case 7: {  // persistent, started twice
      if (me == a) CHECK_OK(MPI_Send_init(small_out, n, MPI_BYTE, b, tag, W, &rq[0]));
      else CHECK_OK(MPI_Recv_init(small_in, 256, MPI_BYTE, a, tag, W, &rq[0]));
      for (int k = 0; k < 2; ++k) {
        CHECK_OK(MPI_Start(&rq[0]));
        CHECK_OK(MPI_Wait(&rq[0], &st));
      }
      CHECK_OK(MPI_Request_free(&rq[0]));
      break;
    }
    case 8:  // synchronous, eager and rendezvous
      if (me == a) CHECK_OK(MPI_Ssend(i % 2 ? big_out : small_out, i % 2 ? kBig : n, MPI_BYTE, b, tag, W));
      else CHECK_OK(MPI_Recv(big_in, kBig, MPI_BYTE, a, tag, W, &st));
      break;
    case 9:  // self
      CHECK_OK(MPI_Isend(small_out, n, MPI_BYTE, me, tag, W, &rq[0]));
      CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, me, tag, W, &st));
      CHECK_OK(MPI_Wait(&rq[0], &st));
      break;
    case 10:  // MPI_PROC_NULL
      CHECK_OK(MPI_Send(small_out, n, MPI_BYTE, MPI_PROC_NULL, tag, W));
      CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, MPI_PROC_NULL, tag, W, &st));
      CHECK_OK(MPI_Irecv(small_in, 256, MPI_BYTE, MPI_PROC_NULL, tag, W, &rq[0]));
      CHECK_OK(MPI_Wait(&rq[0], &st));
      break;
    case 11: {  // issend + test loop
      if (me == a) {
        CHECK_OK(MPI_Issend(small_out, n, MPI_BYTE, b, tag, W, &rq[0]));
        int flag = 0;
        while (!flag) CHECK_OK(MPI_Test(&rq[0], &flag, &st));
      } else {
        CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, a, tag, W, &st));
      }
      break;
    }
    case 12:  // buffered
      if (me == a) CHECK_OK(MPI_Bsend(small_out, n, MPI_BYTE, b, tag, W));
      else CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, a, tag, W, &st));
      break;
    case 13:  // sendrecv
      CHECK_OK(MPI_Sendrecv(small_out, n, MPI_BYTE, 1 - me, tag, small_in, 256, MPI_BYTE, 1 - me, tag, W, &st));
      break;
    case 14: {  // several outstanding, mixed sizes, waitany/waitsome
      for (int k = 0; k < 2; ++k) {
        int sz = k ? kBig : n;
        CHECK_OK(MPI_Irecv(k ? big_in : small_in, sz, MPI_BYTE, 1 - me, 40 + k, W, &rq[k]));
        CHECK_OK(MPI_Isend(k ? big_out : small_out, sz, MPI_BYTE, 1 - me, 40 + k, W, &rq[2 + k]));
      }
      int idx;
      CHECK_OK(MPI_Waitany(4, rq, &idx, &st));
      CHECK_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
      break;
    }
  }
}

// Requests freed with MPI_Request_free, completed or not.
void free_op(int i) {
  int me = itest_rank, peer = 1 - me;
  MPI_Request rq[2];
  MPI_Status st;
  switch (i % 3) {
    case 0:  // a small send complete at once (handed to the transport), freed
      CHECK_OK(MPI_Isend(small_out, 8, MPI_BYTE, peer, 1, W, &rq[0]));
      CHECK_OK(MPI_Request_free(&rq[0]));
      CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, peer, 1, W, &st));
      break;
    case 1:  // a rendezvous send freed before it completes
      if (me == 0) {
        CHECK_OK(MPI_Isend(big_out, kBig, MPI_BYTE, 1, 2, W, &rq[0]));
        CHECK_OK(MPI_Request_free(&rq[0]));
      } else {
        CHECK_OK(MPI_Recv(big_in, kBig, MPI_BYTE, 0, 2, W, &st));
      }
      break;
    case 2:  // a persistent request completed and freed without a wait
      CHECK_OK(MPI_Send_init(small_out, 8, MPI_BYTE, peer, 3, W, &rq[0]));
      CHECK_OK(MPI_Start(&rq[0]));
      CHECK_OK(MPI_Recv(small_in, 256, MPI_BYTE, peer, 3, W, &st));
      CHECK_OK(MPI_Request_free(&rq[0]));
      break;
  }
  // Other requests come and go meanwhile (descriptor slots get reused).
  CHECK_OK(MPI_Irecv(small_in, 256, MPI_BYTE, peer, 4, W, &rq[0]));
  CHECK_OK(MPI_Isend(small_out, 4, MPI_BYTE, peer, 4, W, &rq[1]));
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  g_log = new std::vector<Ev>();
  g_log->reserve(1 << 20);
  big_out = static_cast<char*>(calloc(kBig, 1));
  big_in = static_cast<char*>(calloc(kBig, 1));
  static char bsend_buf[64 * 1024];
  CHECK_OK(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &W));
  static int ids[PTEST_LAST_EVENT + 1];
  peruse_event_h hs[PTEST_LAST_EVENT + 1];
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) {
    ids[e] = e;
    CHECK_RC(PERUSE_Event_comm_register(e, W, log_cb, &ids[e], &hs[e]), PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(hs[e]));
  }
  sync();
  int ops = 0;
  if (mode == "mixed") {
    const bool verbose = getenv("PTEST_VERBOSE") != nullptr;
    for (; ops < 3000; ++ops) {
      int kind = int(rng() % 15);
      if (verbose) fprintf(stderr, "[rank %d] op %d kind %d\n", itest_rank, ops, kind);
      one_op(kind, ops);
    }
  } else if (mode == "request_free") {
    for (; ops < 300; ++ops) free_op(ops);
  } else {
    CHECK(0, "unknown mode %s", mode.c_str());
  }
  sync();
  for (int e = PTEST_FIRST_EVENT; e <= PTEST_LAST_EVENT; ++e) CHECK_PERUSE_OK(PERUSE_Event_release(&hs[e]));
  size_t opened = check_log(*g_log);
  CHECK(violations == 0, "%d unique_id violations in %zu events", violations, g_log->size());
  CHECK(opened > size_t(ops), "only %zu objects opened in %d operations", opened, ops);
  if (itest_rank == 0) printf("unique_ids %s: %zu events, %zu objects checked\n", mode.c_str(), g_log->size(), opened);
  void* b;
  int bs;
  MPI_Buffer_detach(&b, &bs);
  CHECK_OK(MPI_Comm_free(&W));
  CHECK_OK(MPI_Comm_free(&ctl));
  return itest_finish(("unique_ids " + mode).c_str());
}
