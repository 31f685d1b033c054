/* Truncation: a message longer than the receive buffer.
 *
 * With MPI_ERRORS_RETURN on the communicator the receive returns
 * MPI_ERR_TRUNCATE (Recv, Wait, Waitall via MPI_ERR_IN_STATUS, Mrecv), writes
 * nothing past the buffer, the sender completes normally (all send modes),
 * and the pair keeps communicating correctly afterwards. Eager and
 * rendezvous sizes, expected (receive posted first) and unexpected.
 */
#include "tests/integration/itest.h"

#define GUARD 4096
static MPI_Comm ctl;
static const int kSizes[] = {40, 16000, 16385, 100000, 1 << 20};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])

static int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* Receive buffer of `cap` bytes followed by a guard zone. */
static void check_guard(const unsigned char* buf, int cap, const char* what) {
  for (int i = 0; i < GUARD; ++i)
    if (buf[cap + i] != 0xA5) {
      CHECK(0, "%s: wrote past the %d-byte receive buffer (offset %d)", what, cap, cap + i);
      return;
    }
}

/* What the receiver got must be a prefix of the message (if anything). */
static void check_prefix(const unsigned char* buf, int cap, uint32_t id, const char* what) {
  long bad = itest_verify(buf, (size_t)cap, id);
  if (bad >= 0) printf("note: %s: truncated buffer holds other data from byte %ld\n", what, bad);
}

static void follow_up(int peer, int round) {
  /* The pair must still work: a normal exchange of an eager and a large message. */
  static unsigned char buf[200000];
  uint32_t id = 900000u + (uint32_t)round;
  if (itest_rank == 0) {
    MPI_Status st;
    int count;
    CHECK_OK(MPI_Recv(buf, sizeof buf, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 200000 && itest_verify(buf, 200000, id) < 0, "follow-up %d after truncation broken", round);
  } else {
    itest_fill(buf, sizeof buf, id);
    CHECK_OK(MPI_Send(buf, sizeof buf, MPI_BYTE, peer, 99, MPI_COMM_WORLD));
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int peer = 1 - itest_rank;
  int maxn = kSizes[NSIZES - 1];
  unsigned char* buf = malloc((size_t)maxn + GUARD);
  int round = 0;
  char what[128];

  for (int k = 0; k < NSIZES; ++k) {
    int n = kSizes[k], cap = n / 2;
    /* way: 0 Recv unexpected, 1 Irecv+Test loop, 2 Irecv+Wait, 3 Irecv+Waitall,
     *      4 Mprobe+Mrecv, 5 Ssend to Recv, 6 Isend+Test loop to Recv */
    for (int way = 0; way < 7; ++way, ++round) {
      uint32_t id = (uint32_t)(k * 100 + way);
      int tag = 10 + way;
      snprintf(what, sizeof what, "%d bytes into %d, way %d", n, cap, way);
      if (itest_rank == 1) {
        itest_fill(buf, (size_t)n, id);
        itest_sync(peer, ctl);
        if (way == 5) {
          CHECK_OK(MPI_Ssend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        } else if (way == 6) {
          MPI_Request r;
          int flag = 0;
          CHECK_OK(MPI_Isend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
          double t0 = MPI_Wtime();
          while (!flag && MPI_Wtime() - t0 < 30) CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
          CHECK(flag, "%s: the sender never completed", what);
        } else {
          CHECK_OK(MPI_Send(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        }
      } else {
        memset(buf, 0xA5, (size_t)cap + GUARD);
        MPI_Status st;
        st.MPI_ERROR = -12345;
        int rc = MPI_SUCCESS;
        if (way == 0 || way == 4 || way == 5 || way == 6) {
          itest_sync(peer, ctl);
          if (way == 0) {
            /* Let it arrive first (unexpected). */
            int flag = 0;
            while (!flag) MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
          }
          if (way == 4) {
            MPI_Message m;
            CHECK_OK(MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &st));
            rc = MPI_Mrecv(buf, cap, MPI_BYTE, &m, &st);
          } else {
            rc = MPI_Recv(buf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
          }
        } else {
          MPI_Request r;
          CHECK_OK(MPI_Irecv(buf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
          itest_sync(peer, ctl);
          if (way == 1) {
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 30) rc = MPI_Test(&r, &flag, &st);
            CHECK(flag, "%s: Test never completed", what);
          } else if (way == 2) {
            rc = MPI_Wait(&r, &st);
          } else {
            MPI_Request rs[2] = {MPI_REQUEST_NULL, r};
            MPI_Status sts[2];
            sts[1].MPI_ERROR = -12345;
            rc = MPI_Waitall(2, rs, sts);
            CHECK(err_class(rc) == MPI_ERR_IN_STATUS, "%s: Waitall returned class %d, want MPI_ERR_IN_STATUS",
                  what, err_class(rc));
            rc = sts[1].MPI_ERROR;
            st = sts[1];
          }
        }
        CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "%s: returned %d (%s), want MPI_ERR_TRUNCATE", what, rc,
              itest_errstr(rc));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "%s: status source %d tag %d", what, st.MPI_SOURCE,
              st.MPI_TAG);
        check_guard(buf, cap, what);
        check_prefix(buf, cap, id, what);
      }
      follow_up(peer, round);
    }
  }
  /* A zero-byte receive buffer against a one-byte message. */
  if (itest_rank == 1) {
    char c = 'x';
    itest_sync(peer, ctl);
    CHECK_OK(MPI_Send(&c, 1, MPI_CHAR, peer, 77, MPI_COMM_WORLD));
  } else {
    itest_sync(peer, ctl);
    int rc = MPI_Recv(buf, 0, MPI_CHAR, peer, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "1 byte into 0: returned %d, want MPI_ERR_TRUNCATE", rc);
  }
  follow_up(peer, round);

  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  free(buf);
  return itest_finish("truncate");
}
