/* The MPI 4.0 large-count (_c) point-to-point calls carry the same data as
 * their int forms: every send mode, blocking, nonblocking and persistent,
 * with Recv_c / Irecv_c / Recv_init_c / Mrecv_c / Imrecv_c, the send-receives,
 * Get_count_c, Buffer_attach_c/detach_c; a count beyond INT_MAX reads back
 * through Get_count_c while Get_count says MPI_UNDEFINED. Two ranks. */
#include <limits.h>

#include "tests/integration/itest.h"

enum { kN = 5000 };

static int value(int rank, int tag, int i) { return rank * 7919 + tag * 104729 + i; }

static void fill(int* b, int tag) {
  for (int i = 0; i < kN; ++i) b[i] = value(itest_rank, tag, i);
}

static void expect(const int* b, int peer, int tag, const char* what) {
  int bad = -1;
  for (int i = 0; i < kN && bad < 0; ++i)
    if (b[i] != value(peer, tag, i)) bad = i;
  CHECK(bad < 0, "%s: element %d wrong", what, bad);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int peer = 1 - itest_rank;
  static int out[kN], in[kN];
  MPI_Count n = kN;
  MPI_Status st;
  MPI_Request r, rr;

  int bsize = (int)(sizeof out + MPI_BSEND_OVERHEAD) * 4;
  void* bbuf = malloc((size_t)bsize);
  CHECK_OK(MPI_Buffer_attach_c(bbuf, bsize));

  for (int tag = 0; tag < 12; ++tag) {
    if (itest_rank == 0) {
      fill(out, tag);
      switch (tag) {
        case 0: CHECK_OK(MPI_Send_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
        case 1: CHECK_OK(MPI_Ssend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
        case 2: CHECK_OK(MPI_Bsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
        case 3:
          itest_sync(peer, MPI_COMM_WORLD); /* the receive is posted: Rsend is legal */
          CHECK_OK(MPI_Rsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD));
          break;
        case 4: CHECK_OK(MPI_Isend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 5: CHECK_OK(MPI_Issend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 6: CHECK_OK(MPI_Ibsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 7:
          itest_sync(peer, MPI_COMM_WORLD);
          CHECK_OK(MPI_Irsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
          break;
        case 8: CHECK_OK(MPI_Send_init_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 9: CHECK_OK(MPI_Ssend_init_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 10: CHECK_OK(MPI_Bsend_init_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r)); break;
        case 11:
          CHECK_OK(MPI_Rsend_init_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
          itest_sync(peer, MPI_COMM_WORLD);
          break;
      }
      if (tag >= 8) {
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Request_free(&r));
      } else if (tag >= 4) {
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      }
    } else {
      memset(in, 0, sizeof in);
      MPI_Count got = -1;
      if (tag % 3 == 0) {
        if (tag == 3) {
          CHECK_OK(MPI_Irecv_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
          itest_sync(peer, MPI_COMM_WORLD);
          CHECK_OK(MPI_Wait(&r, &st));
        } else {
          CHECK_OK(MPI_Recv_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &st));
        }
      } else if (tag % 3 == 1) {
        CHECK_OK(MPI_Recv_init_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Start(&r));
        if (tag == 7) itest_sync(peer, MPI_COMM_WORLD);
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK_OK(MPI_Request_free(&r));
      } else {
        MPI_Message m;
        if (tag == 11) {
          CHECK_OK(MPI_Irecv_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
          itest_sync(peer, MPI_COMM_WORLD);
          CHECK_OK(MPI_Wait(&r, &st));
        } else if (tag == 2) {
          CHECK_OK(MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &st));
          CHECK_OK(MPI_Mrecv_c(in, n, MPI_INT, &m, &st));
        } else {
          CHECK_OK(MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &st));
          CHECK_OK(MPI_Imrecv_c(in, n, MPI_INT, &m, &r));
          CHECK_OK(MPI_Wait(&r, &st));
        }
      }
      CHECK_OK(MPI_Get_count_c(&st, MPI_INT, &got));
      CHECK(got == n, "tag %d: Get_count_c %lld", tag, got);
      CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "tag %d: status %d %d", tag, st.MPI_SOURCE, st.MPI_TAG);
      expect(in, peer, tag, "send mode");
    }
  }

  /* Send-receives, both ranks. */
  fill(out, 20);
  CHECK_OK(MPI_Sendrecv_c(out, n, MPI_INT, peer, 20, in, n, MPI_INT, peer, 20, MPI_COMM_WORLD, &st));
  expect(in, peer, 20, "Sendrecv_c");
  fill(in, 21);
  CHECK_OK(MPI_Sendrecv_replace_c(in, n, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD, &st));
  expect(in, peer, 21, "Sendrecv_replace_c");
  fill(out, 22);
  CHECK_OK(MPI_Isendrecv_c(out, n, MPI_INT, peer, 22, in, n, MPI_INT, peer, 22, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  expect(in, peer, 22, "Isendrecv_c");
  fill(in, 23);
  CHECK_OK(MPI_Isendrecv_replace_c(in, n, MPI_INT, peer, 23, peer, 23, MPI_COMM_WORLD, &rr));
  CHECK_OK(MPI_Wait(&rr, &st));
  expect(in, peer, 23, "Isendrecv_replace_c");

  void* back = NULL;
  MPI_Count bsize_back = 0;
  CHECK_OK(MPI_Buffer_detach_c(&back, &bsize_back));
  CHECK(back == bbuf && bsize_back == bsize, "Buffer_detach_c gave %p %lld", back, bsize_back);
  free(bbuf);

  /* A count only MPI_Count can hold. */
  MPI_Count huge = (MPI_Count)INT_MAX + 12345;
  int small = 0;
  MPI_Count large = 0;
  CHECK_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, huge));
  CHECK_OK(MPI_Get_count_c(&st, MPI_BYTE, &large));
  CHECK(large == huge, "Get_count_c: %lld, want %lld", large, huge);
  CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &small));
  CHECK(small == MPI_UNDEFINED, "Get_count of a count beyond INT_MAX: %d", small);
  CHECK_CLASS(MPI_Send_c(out, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Get_count_c(&st, MPI_INT, NULL), MPI_ERR_ARG);
  return itest_finish("large_count");
}
