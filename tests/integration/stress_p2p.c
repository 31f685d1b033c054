/* Point-to-point under load, one scenario per argument:
 *
 *   head-to-head  both ranks of each pair Send MANY eager messages to each
 *                 other before either receives: the rings fill up, and a
 *                 sender blocked on a full ring must keep draining its own
 *                 incoming ring into the unexpected queue, or both hang;
 *   deep-queues   thousands of messages waiting in the unexpected queue,
 *                 received in the reverse tag order; then thousands of
 *                 posted receives, matched by messages sent in reverse order;
 *   incast        every rank sends several multi-MiB messages to rank 0 at
 *                 once, which takes them with MPI_ANY_SOURCE (per-sender
 *                 order and data checked); then rank 0 sends to all at once;
 *   request-free  Isend/Issend whose request is freed at once (fire and
 *                 forget), eager and rendezvous: the data still arrives;
 *   many-requests tens of thousands of requests live at once per rank
 *                 (handle tables growing well past their first chunk), all
 *                 completed in one Waitall, twice (slots reused);
 *   reuse         the sender overwrites its buffer as soon as Send / Wait /
 *                 Test says the send is complete (rendezvous sizes, receiver
 *                 early and late, after earlier traffic has switched on the
 *                 single-copy and cooperative paths): the receiver must
 *                 still get the original data.
 */
#include "tests/integration/itest.h"

static MPI_Comm ctl;

static void head_to_head(void) {
  CHECK(itest_size % 2 == 0, "needs an even number of ranks");
  int peer = itest_rank ^ 1;
  const int many = 2000, bytes = 8000; /* 16 MB each way, eager by default */
  unsigned char* out = malloc(bytes);
  unsigned char* in = malloc(bytes);
  for (int i = 0; i < many; ++i) {
    itest_fill(out, bytes, (uint32_t)(itest_rank * 100000 + i));
    CHECK_OK(MPI_Send(out, bytes, MPI_BYTE, peer, i % 7, MPI_COMM_WORLD));
  }
  for (int i = 0; i < many; ++i) {
    MPI_Status st;
    CHECK_OK(MPI_Recv(in, bytes, MPI_BYTE, peer, i % 7, MPI_COMM_WORLD, &st));
    long bad = itest_verify(in, bytes, (uint32_t)(peer * 100000 + i));
    CHECK(bad < 0, "head-to-head message %d wrong at byte %ld", i, bad);
  }
  free(out);
  free(in);
}

static void deep_queues(void) {
  CHECK(itest_size == 2, "needs 2 ranks");
  int peer = 1 - itest_rank;
  const int n = 4000;
  int* vals = malloc(sizeof(int) * n);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * n);
  /* Unexpected queue: rank 1 sends tags 0..n-1, rank 0 receives n-1..0. */
  if (itest_rank == 1) {
    for (int t = 0; t < n; ++t) {
      vals[t] = t * 3;
      CHECK_OK(MPI_Isend(&vals[t], 1, MPI_INT, peer, t, MPI_COMM_WORLD, &reqs[t]));
    }
    itest_sync(peer, ctl);
    CHECK_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
  } else {
    itest_sync(peer, ctl);
    for (int t = n - 1; t >= 0; --t) {
      int v = -1;
      MPI_Status st;
      CHECK_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st));
      CHECK(v == t * 3 && st.MPI_TAG == t, "unexpected-queue receive of tag %d got %d (tag %d)", t, v, st.MPI_TAG);
    }
  }
  /* Posted queue: rank 0 posts tags 0..n-1, rank 1 sends n-1..0. */
  if (itest_rank == 0) {
    for (int t = 0; t < n; ++t) {
      vals[t] = -1;
      CHECK_OK(MPI_Irecv(&vals[t], 1, MPI_INT, peer, t, MPI_COMM_WORLD, &reqs[t]));
    }
    itest_sync(peer, ctl);
    MPI_Status* sts = malloc(sizeof(MPI_Status) * n);
    CHECK_OK(MPI_Waitall(n, reqs, sts));
    for (int t = 0; t < n; ++t) CHECK(vals[t] == t * 5 && sts[t].MPI_TAG == t, "posted receive %d got %d", t, vals[t]);
    free(sts);
  } else {
    itest_sync(peer, ctl);
    for (int t = n - 1; t >= 0; --t) {
      int v = t * 5;
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, t, MPI_COMM_WORLD));
    }
  }
  free(vals);
  free(reqs);
}

static void incast(void) {
  const int per = 3;
  const int sizes[3] = {1 << 20, 3 << 20, (4 << 20) + 7};
  if (itest_rank == 0) {
    int senders = itest_size - 1;
    int* next = calloc((size_t)itest_size, sizeof(int));
    unsigned char* buf = malloc((size_t)sizes[2]);
    for (int k = 0; k < senders * per; ++k) {
      MPI_Status st;
      int count = -1;
      CHECK_OK(MPI_Recv(buf, sizes[2], MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
      int s = st.MPI_SOURCE, i = s >= 1 && s < itest_size ? next[s]++ : 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      CHECK(i < per && count == sizes[i % per], "incast: message %d of %d has %d bytes", i, s, count);
      long bad = itest_verify(buf, (size_t)count, (uint32_t)(s * 10 + i));
      CHECK(bad < 0, "incast: message %d of %d wrong at byte %ld", i, s, bad);
    }
    /* Outcast: one message to everybody at once. */
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)itest_size);
    unsigned char* big = malloc((size_t)sizes[2]);
    itest_fill(big, (size_t)sizes[2], 777);
    for (int p = 1; p < itest_size; ++p)
      CHECK_OK(MPI_Isend(big, sizes[2], MPI_BYTE, p, 2, MPI_COMM_WORLD, &reqs[p - 1]));
    CHECK_OK(MPI_Waitall(itest_size - 1, reqs, MPI_STATUSES_IGNORE));
    free(big);
    free(reqs);
    free(buf);
    free(next);
  } else {
    unsigned char* bufs[3];
    MPI_Request reqs[3];
    for (int i = 0; i < per; ++i) {
      bufs[i] = malloc((size_t)sizes[i]);
      itest_fill(bufs[i], (size_t)sizes[i], (uint32_t)(itest_rank * 10 + i));
      CHECK_OK(MPI_Isend(bufs[i], sizes[i], MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[i]));
    }
    unsigned char* in = malloc((size_t)sizes[2]);
    CHECK_OK(MPI_Recv(in, sizes[2], MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long bad = itest_verify(in, (size_t)sizes[2], 777);
    CHECK(bad < 0, "outcast message wrong at byte %ld", bad);
    CHECK_OK(MPI_Waitall(per, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < per; ++i) free(bufs[i]);
    free(in);
  }
}

static void request_free(void) {
  CHECK(itest_size == 2, "needs 2 ranks");
  int peer = 1 - itest_rank;
  const int sizes[4] = {16, 5000, 100000, 2 << 20};
  unsigned char* bufs[4];
  for (int i = 0; i < 4; ++i) bufs[i] = malloc((size_t)sizes[i]);
  if (itest_rank == 0) {
    for (int i = 0; i < 4; ++i) {
      MPI_Request r;
      itest_fill(bufs[i], (size_t)sizes[i], (uint32_t)i);
      if (i % 2)
        CHECK_OK(MPI_Issend(bufs[i], sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &r));
      else
        CHECK_OK(MPI_Isend(bufs[i], sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Request_free(&r));
      CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
    }
    /* The receiver's acknowledgement says the data has arrived, so the
     * buffers may be released. */
    int ack = 0;
    CHECK_OK(MPI_Recv(&ack, 1, MPI_INT, peer, 9, ctl, MPI_STATUS_IGNORE));
  } else {
    itest_sleep(0.1); /* let them be started (and freed) first */
    for (int i = 3; i >= 0; --i) {
      MPI_Status st;
      int count = -1;
      CHECK_OK(MPI_Recv(bufs[i], sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &st));
      MPI_Get_count(&st, MPI_BYTE, &count);
      long bad = itest_verify(bufs[i], (size_t)sizes[i], (uint32_t)i);
      CHECK(count == sizes[i] && bad < 0, "freed-request message %d: %d bytes, bad byte %ld", i, count, bad);
    }
    int ack = 1;
    CHECK_OK(MPI_Send(&ack, 1, MPI_INT, peer, 9, ctl));
  }
  for (int i = 0; i < 4; ++i) free(bufs[i]);
}

static void many_requests(void) {
  CHECK(itest_size % 2 == 0, "needs an even number of ranks");
  int peer = itest_rank ^ 1;
  const int n = 40000;
  int* out = malloc(sizeof(int) * n);
  int* in = malloc(sizeof(int) * n);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      in[i] = -1;
      out[i] = pass * 1000000 + itest_rank * 100000 + i;
      CHECK_OK(MPI_Irecv(&in[i], 1, MPI_INT, peer, i % 100, MPI_COMM_WORLD, &reqs[i]));
    }
    for (int i = 0; i < n; ++i) CHECK_OK(MPI_Isend(&out[i], 1, MPI_INT, peer, i % 100, MPI_COMM_WORLD, &reqs[n + i]));
    CHECK_OK(MPI_Waitall(2 * n, reqs, MPI_STATUSES_IGNORE));
    int bad = -1;
    for (int i = 0; i < n && bad < 0; ++i)
      if (in[i] != pass * 1000000 + peer * 100000 + i) bad = i;
    CHECK(bad < 0, "pass %d: receive %d got %d", pass, bad, bad >= 0 ? in[bad] : 0);
  }
  free(out);
  free(in);
  free(reqs);
}

static void reuse(void) {
  CHECK(itest_size == 2, "needs 2 ranks");
  int peer = 1 - itest_rank;
  const int sizes[5] = {100, 20000, 262144, 1 << 20, (4 << 20) + 3};
  unsigned char* buf = malloc((size_t)sizes[4]);
  for (int round = 0; round < 2 * 5 * 3; ++round) {
    int n = sizes[round % 5], late = (round / 5) % 2, how = round / 10; /* 0 Send, 1 Isend+Wait, 2 Isend+Test */
    uint32_t id = (uint32_t)(round * 7 + 1);
    if (itest_rank == 0) {
      itest_fill(buf, (size_t)n, id);
      itest_sync(peer, ctl);
      if (how == 0) {
        CHECK_OK(MPI_Send(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD));
      } else {
        MPI_Request r;
        int flag = 0;
        CHECK_OK(MPI_Isend(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &r));
        if (how == 1) CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        while (how == 2 && !flag) CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
      }
      memset(buf, 0xEE, (size_t)n); /* complete: the buffer is ours again */
    } else {
      memset(buf, 0, (size_t)n);
      MPI_Request r;
      if (!late) CHECK_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &r));
      itest_sync(peer, ctl);
      if (late) {
        itest_sleep(0.05);
        CHECK_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &r));
      }
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      long bad = itest_verify(buf, (size_t)n, id);
      CHECK(bad < 0, "%d bytes (receiver %s, sender completion %d): byte %ld is 0x%02x: the sender reused its buffer "
            "before the data left", n, late ? "late" : "early", how, bad, bad >= 0 ? buf[bad] : 0);
    }
  }
  free(buf);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  const char* what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "head-to-head") == 0)
    head_to_head();
  else if (strcmp(what, "deep-queues") == 0)
    deep_queues();
  else if (strcmp(what, "incast") == 0)
    incast();
  else if (strcmp(what, "request-free") == 0)
    request_free();
  else if (strcmp(what, "reuse") == 0)
    reuse();
  else if (strcmp(what, "many-requests") == 0)
    many_requests();
  else
    CHECK(0, "unknown scenario '%s'", what);
  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  return itest_finish("stress_p2p");
}
