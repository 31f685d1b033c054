/* Buffered and ready modes.
 *
 * Bsend / Ibsend copy the message into the attached buffer and return at
 * once, even for rendezvous sizes and while the receiver is not receiving:
 * the sender overwrites its buffer right away and the receiver must still get
 * the original data. Buffer_detach waits for the buffered messages to leave
 * and hands back the attached buffer. Too small a buffer is MPI_ERR_BUFFER.
 * Rsend / Irsend to a posted receive deliver normally.
 */
#include "tests/integration/itest.h"

#define NMSG 6
static MPI_Comm ctl;
static const int kSizes[NMSG] = {0, 10, 16384, 20000, 150000, 3};

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int peer = 1 - itest_rank;
  unsigned char* buf = malloc(150000);
  int total = 0;
  for (int i = 0; i < NMSG; ++i) total += kSizes[i] + MPI_BSEND_OVERHEAD;

  if (itest_rank == 0) {
    /* 1. Bsend/Ibsend while the receiver sleeps. */
    void* attached = malloc((size_t)total);
    CHECK_OK(MPI_Buffer_attach(attached, total));
    itest_sync(peer, ctl);
    double t0 = MPI_Wtime();
    for (int i = 0; i < NMSG; ++i) {
      itest_fill(buf, (size_t)kSizes[i], (uint32_t)i);
      if (i % 2) {
        MPI_Request r;
        CHECK_OK(MPI_Ibsend(buf, kSizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      } else {
        CHECK_OK(MPI_Bsend(buf, kSizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD));
      }
      memset(buf, 0xCC, (size_t)kSizes[i]); /* the message must be a copy by now */
    }
    double took = MPI_Wtime() - t0;
    CHECK(took < 0.5, "buffered sends took %.3fs: they waited for the receiver (asleep for 1s)", took);
    void* back = NULL;
    int back_size = -1;
    CHECK_OK(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == attached && back_size == total, "Buffer_detach gave %p/%d, attached %p/%d", back, back_size,
          attached, total);
    free(attached);

    /* 2. Not enough buffer: MPI_ERR_BUFFER, and the job goes on. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void* tiny = malloc(64 + MPI_BSEND_OVERHEAD);
    CHECK_OK(MPI_Buffer_attach(tiny, 64 + MPI_BSEND_OVERHEAD));
    CHECK_CLASS(MPI_Bsend(buf, 1000, MPI_BYTE, peer, 50, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_OK(MPI_Buffer_detach(&back, &back_size));
    /* No buffer at all. */
    CHECK_CLASS(MPI_Bsend(buf, 10, MPI_BYTE, peer, 51, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(tiny);
    itest_sync(peer, ctl);

    /* 3. Rsend / Irsend to posted receives. */
    for (int i = 0; i < 4; ++i) {
      int n = i < 2 ? 100 : 150000;
      itest_fill(buf, (size_t)n, (uint32_t)(60 + i));
      itest_sync(peer, ctl); /* receive posted */
      if (i % 2) {
        MPI_Request r;
        CHECK_OK(MPI_Irsend(buf, n, MPI_BYTE, peer, 60 + i, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      } else {
        CHECK_OK(MPI_Rsend(buf, n, MPI_BYTE, peer, 60 + i, MPI_COMM_WORLD));
      }
    }
  } else {
    itest_sync(peer, ctl);
    itest_sleep(1.0);
    for (int i = 0; i < NMSG; ++i) {
      MPI_Status st;
      int count = -1;
      memset(buf, 0, 150000);
      CHECK_OK(MPI_Recv(buf, 150000, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st));
      MPI_Get_count(&st, MPI_BYTE, &count);
      long bad = itest_verify(buf, (size_t)kSizes[i], (uint32_t)i);
      CHECK(count == kSizes[i] && bad < 0, "buffered message %d: %d bytes, bad byte %ld", i, count, bad);
    }
    itest_sync(peer, ctl);
    int flag = 1;
    MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a failed Bsend delivered a message");

    for (int i = 0; i < 4; ++i) {
      int n = i < 2 ? 100 : 150000;
      MPI_Request r;
      MPI_Status st;
      int count = -1;
      CHECK_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, 60 + i, MPI_COMM_WORLD, &r));
      itest_sync(peer, ctl);
      CHECK_OK(MPI_Wait(&r, &st));
      MPI_Get_count(&st, MPI_BYTE, &count);
      CHECK(count == n && itest_verify(buf, (size_t)n, (uint32_t)(60 + i)) < 0, "ready-mode message %d wrong", i);
    }
  }

  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  free(buf);
  return itest_finish("buffered_ready");
}
