/* Queue pvars against the real queues, in a scripted two-rank run: rank 1
 * sends, rank 0 reads the variables at every step and compares them with
 * what it knows the queues hold. Synchronisation goes through `ctl`, a
 * duplicate of MPI_COMM_WORLD, so it never touches WORLD's queues; packets
 * of one sender arrive in order whatever their communicator, so a message
 * on ctl received means every earlier WORLD message from that rank is in.
 *
 * Also: session independence (start/stop/reset/write in one session leave
 * another untouched), the process-wide totals, and the self transport's
 * counters (exact: nothing else uses it here). */
#include "tests/mpit/mtest.h"

#define K 5
static MPI_Comm ctl;
static MPI_Comm world = MPI_COMM_WORLD;

static void ctl_send(int peer) { MPI_Send(NULL, 0, MPI_BYTE, peer, 1, ctl); }
static void ctl_recv(int peer) { MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, ctl, MPI_STATUS_IGNORE); }

static MPI_T_pvar_session A, B;
/* Session A's handles (WORLD unless named total). */
static MPI_T_pvar_handle posted, unexpected, bytes, posted_peer, unexpected_peer, posted_hwm, unexpected_hwm,
    posted_matches, unexpected_matches, posted_res, unexpected_res, unexpected_search, total_unexpected,
    total_unexpected_matches, self_sent, self_bytes_sent, self_received, shm_received, posted_attempts,
    unexpected_attempts;

static void expect(const char* step, unsigned long long p, unsigned long long u, unsigned long long b,
                   unsigned long long u_from_1, unsigned long long p_from_1) {
  unsigned long long v, peer[2];
  v = mtest_read_ull(A, posted);
  CHECK(v == p, "%s: posted length %llu, want %llu", step, v, p);
  v = mtest_read_ull(A, unexpected);
  CHECK(v == u, "%s: unexpected length %llu, want %llu", step, v, u);
  v = mtest_read_ull(A, bytes);
  CHECK(v == b, "%s: unexpected bytes %llu, want %llu", step, v, b);
  CHECK_T(MPI_T_pvar_read(A, unexpected_peer, peer), MPI_SUCCESS);
  CHECK(peer[0] == 0 && peer[1] == u_from_1, "%s: unexpected per peer %llu %llu, want 0 %llu", step, peer[0],
        peer[1], u_from_1);
  CHECK_T(MPI_T_pvar_read(A, posted_peer, peer), MPI_SUCCESS);
  CHECK(peer[0] == 0 && peer[1] == p_from_1, "%s: posted per peer %llu %llu, want 0 %llu", step, peer[0], peer[1],
        p_from_1);
  v = mtest_read_ull(A, total_unexpected);
  CHECK(v == u, "%s: total unexpected %llu, want %llu (ctl is empty)", step, v, u);
}

static size_t size_of(int i) { return 100 * (size_t)(i + 1); }

static void rank0(void) {
  static char buf[K][1000];
  int count;
  CHECK_T(MPI_T_pvar_session_create(&A), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_create(&B), MPI_SUCCESS);
  posted = mtest_handle(A, "sonde_posted_q_length", MPI_T_PVAR_CLASS_LEVEL, &world, 0);
  unexpected = mtest_handle(A, "sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL, &world, 0);
  bytes = mtest_handle(A, "sonde_unexpected_q_bytes", MPI_T_PVAR_CLASS_LEVEL, &world, 0);
  CHECK_T(MPI_T_pvar_handle_alloc(A, mtest_pvar("sonde_posted_q_length_per_peer", MPI_T_PVAR_CLASS_LEVEL), &world,
                                  &posted_peer, &count),
          MPI_SUCCESS);
  CHECK(count == 2, "per-peer count %d, want the communicator's size", count);
  unexpected_peer = mtest_handle(A, "sonde_unexpected_q_length_per_peer", MPI_T_PVAR_CLASS_LEVEL, &world, 0);
  posted_hwm = mtest_handle(A, "sonde_posted_q_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &world, 0);
  unexpected_hwm = mtest_handle(A, "sonde_unexpected_q_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &world, 0);
  posted_matches = mtest_handle(A, "sonde_posted_q_matches", MPI_T_PVAR_CLASS_COUNTER, &world, 0);
  unexpected_matches = mtest_handle(A, "sonde_unexpected_q_matches", MPI_T_PVAR_CLASS_COUNTER, &world, 0);
  posted_res = mtest_handle(A, "sonde_posted_q_residence_time", MPI_T_PVAR_CLASS_TIMER, &world, 0);
  unexpected_res = mtest_handle(A, "sonde_unexpected_q_residence_time", MPI_T_PVAR_CLASS_TIMER, &world, 0);
  unexpected_search = mtest_handle(A, "sonde_unexpected_q_search_time", MPI_T_PVAR_CLASS_TIMER, &world, 0);
  total_unexpected = mtest_handle(A, "sonde_total_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL, NULL, 0);
  total_unexpected_matches =
      mtest_handle(A, "sonde_total_unexpected_q_matches", MPI_T_PVAR_CLASS_COUNTER, NULL, 0);
  self_sent = mtest_handle(A, "sonde_self_messages_sent", MPI_T_PVAR_CLASS_COUNTER, NULL, 0);
  self_bytes_sent = mtest_handle(A, "sonde_self_bytes_sent", MPI_T_PVAR_CLASS_AGGREGATE, NULL, 0);
  self_received = mtest_handle(A, "sonde_self_messages_received", MPI_T_PVAR_CLASS_COUNTER, NULL, 0);
  shm_received = mtest_handle(A, "sonde_shm_messages_received", MPI_T_PVAR_CLASS_COUNTER, NULL, 0);
  posted_attempts = mtest_handle(A, "sonde_posted_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER, &world, 0);
  unexpected_attempts = mtest_handle(A, "sonde_unexpected_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER, &world, 0);
  /* Counters read 0 before they ever ran. */
  CHECK(mtest_read_ull(A, posted_matches) == 0, "unstarted counter not 0");
  CHECK_T(MPI_T_pvar_start(A, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);

  expect("empty", 0, 0, 0, 0, 0);
  ctl_send(1);  /* rank 1 sends K messages to WORLD, then answers on ctl */
  ctl_recv(1);
  unsigned long long all_bytes = 0;
  for (int i = 0; i < K; ++i) all_bytes += size_of(i);
  expect("k arrived", 0, K, all_bytes, K, 0);
  CHECK(mtest_read_ull(A, unexpected_hwm) == K, "unexpected hwm %llu", mtest_read_ull(A, unexpected_hwm));

  /* Post receives for messages not sent yet: two from rank 1, one from anyone. */
  MPI_Request rq[3];
  MPI_Irecv(buf[0], 1000, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(buf[1], 1000, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &rq[1]);
  MPI_Irecv(buf[2], 1000, MPI_BYTE, MPI_ANY_SOURCE, 101, MPI_COMM_WORLD, &rq[2]);
  expect("3 posted", 3, K, all_bytes, K, 2);
  CHECK(mtest_read_ull(A, posted_hwm) == 3, "posted hwm %llu", mtest_read_ull(A, posted_hwm));

  /* Receive three of the unexpected messages. */
  for (int i = 0; i < 3; ++i) {
    MPI_Recv(buf[i + 3 < K ? 3 : 0], 1000, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    all_bytes -= size_of(i);
    expect("received one", 3, (unsigned long long)(K - 1 - i), all_bytes, (unsigned long long)(K - 1 - i), 2);
  }
  CHECK(mtest_read_ull(A, unexpected_matches) == 3, "unexpected matches %llu", mtest_read_ull(A, unexpected_matches));
  CHECK(mtest_read_ull(A, posted_matches) == 0, "posted matches %llu", mtest_read_ull(A, posted_matches));
  /* The three receives posted above each compared all K waiting messages;
   * then each receive found its message first in line. */
  CHECK(mtest_read_ull(A, unexpected_attempts) == 3 * K + 3, "unexpected match attempts %llu",
        mtest_read_ull(A, unexpected_attempts));

  /* Session B starts now: it must see only what happens from here on. */
  MPI_T_pvar_handle b_unexpected_matches =
      mtest_handle(B, "sonde_unexpected_q_matches", MPI_T_PVAR_CLASS_COUNTER, &world, 1);
  MPI_T_pvar_handle b_posted_matches = mtest_handle(B, "sonde_posted_q_matches", MPI_T_PVAR_CLASS_COUNTER, &world, 1);
  MPI_T_pvar_handle b_unexpected_hwm =
      mtest_handle(B, "sonde_unexpected_q_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &world, 1);

  /* Rank 1 now sends what the posted receives wait for. */
  ctl_send(1);
  MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
  expect("posted matched", 0, K - 3, all_bytes, K - 3, 0);
  /* Arrivals (1,100), (1,100), (1,101) each found their receive first in line. */
  CHECK(mtest_read_ull(A, posted_attempts) == 3, "posted match attempts %llu", mtest_read_ull(A, posted_attempts));
  CHECK(mtest_read_ull(A, posted_matches) == 3, "posted matches %llu", mtest_read_ull(A, posted_matches));
  CHECK(mtest_read_ull(B, b_posted_matches) == 3, "B posted matches %llu", mtest_read_ull(B, b_posted_matches));
  double res = mtest_read_double(A, posted_res);
  CHECK(res > 0, "posted residence %g", res);

  /* The rest of the unexpected messages. */
  for (int i = 3; i < K; ++i) MPI_Recv(buf[0], 1000, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect("drained", 0, 0, 0, 0, 0);
  CHECK(mtest_read_ull(A, unexpected_matches) == K, "A unexpected matches %llu", mtest_read_ull(A, unexpected_matches));
  CHECK(mtest_read_ull(B, b_unexpected_matches) == K - 3, "B unexpected matches %llu",
        mtest_read_ull(B, b_unexpected_matches));
  CHECK(mtest_read_ull(A, total_unexpected_matches) >= K, "total unexpected matches %llu",
        mtest_read_ull(A, total_unexpected_matches));
  CHECK(mtest_read_double(A, unexpected_res) > 0, "unexpected residence");
  CHECK(mtest_read_double(A, unexpected_search) > 0, "unexpected search time");
  /* Watermarks: A saw K; B started when K-3 = 2 were waiting. */
  CHECK(mtest_read_ull(A, unexpected_hwm) == K, "A unexpected hwm %llu", mtest_read_ull(A, unexpected_hwm));
  CHECK(mtest_read_ull(B, b_unexpected_hwm) == K - 3, "B unexpected hwm %llu", mtest_read_ull(B, b_unexpected_hwm));

  /* Independence: reset, write and stop in A leave B alone, and back. */
  CHECK_T(MPI_T_pvar_reset(A, unexpected_matches), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_reset(A, unexpected_hwm), MPI_SUCCESS);
  CHECK(mtest_read_ull(A, unexpected_matches) == 0, "A after reset");
  CHECK(mtest_read_ull(A, unexpected_hwm) == 0, "A hwm after reset (queue empty)");
  CHECK(mtest_read_ull(B, b_unexpected_matches) == K - 3, "B changed by A's reset");
  unsigned long long hundred = 100, v;
  CHECK_T(MPI_T_pvar_write(A, posted_matches, &hundred), MPI_SUCCESS);
  CHECK(mtest_read_ull(A, posted_matches) == 100, "A after write");
  CHECK(mtest_read_ull(B, b_posted_matches) == 3, "B changed by A's write");
  CHECK_T(MPI_T_pvar_stop(A, unexpected_matches), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_reset(B, b_unexpected_hwm), MPI_SUCCESS);
  ctl_send(1); /* one more message, received unexpected */
  ctl_recv(1);
  MPI_Recv(buf[0], 1000, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(mtest_read_ull(A, unexpected_matches) == 0, "A stopped counter moved to %llu",
        mtest_read_ull(A, unexpected_matches));
  CHECK(mtest_read_ull(B, b_unexpected_matches) == K - 2, "B running counter %llu",
        mtest_read_ull(B, b_unexpected_matches));
  CHECK(mtest_read_ull(B, b_unexpected_hwm) == 1, "B hwm after reset %llu", mtest_read_ull(B, b_unexpected_hwm));
  CHECK(mtest_read_ull(A, unexpected_hwm) == 1, "A hwm %llu", mtest_read_ull(A, unexpected_hwm));
  /* readreset is atomic for counters: the value, then 0. */
  CHECK_T(MPI_T_pvar_readreset(B, b_unexpected_matches, &v), MPI_SUCCESS);
  CHECK(v == K - 2 && mtest_read_ull(B, b_unexpected_matches) == 0, "readreset gave %llu", v);
  CHECK_T(MPI_T_pvar_start(A, unexpected_matches), MPI_SUCCESS);

  /* The self transport: one message of 10 bytes to ourselves. */
  char ten[10] = {0};
  MPI_Sendrecv(ten, 10, MPI_BYTE, 0, 9, buf[0], 10, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(mtest_read_ull(A, self_sent) == 1, "self messages sent %llu", mtest_read_ull(A, self_sent));
  CHECK(mtest_read_ull(A, self_bytes_sent) == 10, "self bytes sent %llu", mtest_read_ull(A, self_bytes_sent));
  CHECK(mtest_read_ull(A, self_received) == 1, "self messages received %llu", mtest_read_ull(A, self_received));
  /* shm: at least the K + 3 + 1 WORLD messages from rank 1 (ctl traffic too). */
  CHECK(mtest_read_ull(A, shm_received) >= K + 4, "shm messages received %llu", mtest_read_ull(A, shm_received));

  /* A deep posted queue: D receives with distinct tags, matched in reverse
   * order. Indexed, each arrival examines one receive (a linear search would
   * examine D + (D-1) + ... + 1); the per-peer level is exact throughout. */
  enum { D = 100 };
  static int slots[D];
  MPI_Request deep[D];
  for (int i = 0; i < D; ++i) MPI_Irecv(&slots[i], 1, MPI_INT, 1, 200 + i, MPI_COMM_WORLD, &deep[i]);
  unsigned long long peer[2];
  CHECK_T(MPI_T_pvar_read(A, posted_peer, peer), MPI_SUCCESS);
  CHECK(peer[0] == 0 && peer[1] == D, "deep: posted per peer %llu %llu", peer[0], peer[1]);
  CHECK(mtest_read_ull(A, posted) == D, "deep: posted length %llu", mtest_read_ull(A, posted));
  unsigned long long before = mtest_read_ull(A, posted_attempts);
  ctl_send(1);
  MPI_Waitall(D, deep, MPI_STATUSES_IGNORE);
  for (int i = 0; i < D; ++i) CHECK(slots[i] == 200 + i, "deep: slot %d holds %d", i, slots[i]);
  v = mtest_read_ull(A, posted_attempts) - before;
  CHECK(v == D, "deep: %llu posted entries examined for %d arrivals", v, D);
  CHECK_T(MPI_T_pvar_read(A, posted_peer, peer), MPI_SUCCESS);
  CHECK(peer[0] == 0 && peer[1] == 0, "deep drained: posted per peer %llu %llu", peer[0], peer[1]);

  CHECK_T(MPI_T_pvar_session_free(&B), MPI_SUCCESS);
  CHECK_T(MPI_T_pvar_session_free(&A), MPI_SUCCESS);
  ctl_send(1);
}

static void rank1(void) {
  static char buf[1000];
  ctl_recv(0);
  for (int i = 0; i < K; ++i) MPI_Send(buf, (int)size_of(i), MPI_BYTE, 0, i, MPI_COMM_WORLD);
  ctl_send(0);
  ctl_recv(0);
  MPI_Send(buf, 10, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
  MPI_Send(buf, 20, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
  MPI_Send(buf, 30, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
  ctl_recv(0);
  MPI_Send(buf, 40, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
  ctl_send(0);
  ctl_recv(0);
  for (int i = 99; i >= 0; --i) {
    int value = 200 + i;
    MPI_Send(&value, 1, MPI_INT, 0, 200 + i, MPI_COMM_WORLD);
  }
  ctl_recv(0);
}

int main(int argc, char** argv) {
  int provided;
  itest_init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  CHECK(itest_size == 2, "run with 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  if (itest_rank == 0) rank0();
  else rank1();
  MPI_Comm_free(&ctl);
  CHECK_T(MPI_T_finalize(), MPI_SUCCESS);
  return itest_finish("queues");
}
