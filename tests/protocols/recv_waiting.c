/* MPI_Recv of messages that already wait in the unexpected queue, of every
 * kind a sender makes: eager, zero bytes, synchronous (MPI_Issend: its
 * sender completes only once matched), rendezvous, truncated (the receive
 * returns MPI_ERR_TRUNCATE and a status of the bytes kept), into a gapped
 * datatype, and by wildcards. Then a deep queue (more messages than the
 * index threshold) taken in an order that is neither arrival order nor
 * one pattern: named source and tag first, then MPI_ANY_SOURCE, then
 * MPI_ANY_TAG, so the matcher starts keeping each kind of list with
 * messages already waiting. Rank 0 sends; rank 1 receives once a marker
 * sent last has arrived (one sender's messages arrive in order, so every
 * earlier one is then waiting). Two ranks. */
#include "tests/integration/itest.h"

enum { kMarker = 999, kDeep = 200, kBig = 300000 };

static void wait_marker(void) { CHECK_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, kMarker, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); }
static void send_marker(void) { CHECK_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, kMarker, MPI_COMM_WORLD)); }

static void kinds_of_message(void) {
  static unsigned char big[kBig], got[kBig];
  int v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  if (itest_rank == 0) {
    MPI_Request sync;
    itest_fill(big, kBig, 7);
    CHECK_OK(MPI_Send(v, 8, MPI_INT, 1, 1, MPI_COMM_WORLD));    /* eager */
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, 1, 2, MPI_COMM_WORLD)); /* zero bytes */
    CHECK_OK(MPI_Issend(v, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &sync));
    CHECK_OK(MPI_Send(v, 8, MPI_INT, 1, 4, MPI_COMM_WORLD)); /* truncated there */
    CHECK_OK(MPI_Send(v, 8, MPI_INT, 1, 5, MPI_COMM_WORLD)); /* into a gapped type */
    CHECK_OK(MPI_Send(v, 3, MPI_INT, 1, 6, MPI_COMM_WORLD)); /* by MPI_ANY_SOURCE, MPI_ANY_TAG */
    MPI_Request rdv;
    CHECK_OK(MPI_Isend(big, kBig, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rdv));
    send_marker();
    CHECK_OK(MPI_Wait(&sync, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&rdv, MPI_STATUS_IGNORE));
    return;
  }
  MPI_Status st;
  int in[16];
  wait_marker();

  memset(in, 0, sizeof in);
  CHECK_OK(MPI_Recv(in, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 1, 32, "eager");
  for (int i = 0; i < 8; ++i) CHECK(in[i] == i, "eager: element %d is %d", i, in[i]);

  CHECK_OK(MPI_Recv(in, 8, MPI_INT, 0, 2, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 2, 0, "zero bytes");

  memset(in, 0, sizeof in);
  CHECK_OK(MPI_Recv(in, 8, MPI_INT, 0, 3, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 3, 16, "synchronous");
  CHECK(in[3] == 3 && in[4] == 0, "synchronous: got %d %d", in[3], in[4]);

  memset(in, 0x5a, sizeof in);
  CHECK_CLASS(MPI_Recv(in, 5, MPI_INT, 0, 4, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
  CHECK_STATUS(&st, 0, 4, 20, "truncated");
  CHECK(in[4] == 4, "truncated: kept element 4 is %d", in[4]);
  CHECK(in[5] == 0x5a5a5a5a, "truncated: wrote past the buffer (%d)", in[5]);

  MPI_Datatype every_other;
  MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_Recv(in, 1, every_other, 0, 5, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 5, 32, "gapped");
  for (int i = 0; i < 8; ++i) CHECK(in[2 * i] == i && in[2 * i + 1] == 0, "gapped: slot %d", i);
  MPI_Type_free(&every_other);

  CHECK_OK(MPI_Recv(in, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 6, 12, "wildcards");

  CHECK_OK(MPI_Recv(got, kBig, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
  CHECK_STATUS(&st, 0, 7, kBig, "rendezvous");
  CHECK(itest_verify(got, kBig, 7) < 0, "rendezvous: data differs");
}

/* kDeep messages, tag i % 7, payload i. */
static void deep_queue(void) {
  if (itest_rank == 0) {
    for (int i = 0; i < kDeep; ++i) CHECK_OK(MPI_Send(&i, 1, MPI_INT, 1, i % 7, MPI_COMM_WORLD));
    send_marker();
    return;
  }
  wait_marker();
  int taken[kDeep] = {0}, x = -1, n = 0;
  MPI_Status st;
  /* Named source and tag, tags from the last down: the oldest of each tag. */
  for (int tag = 6; tag >= 0; --tag)
    for (int k = 0; k < 10; ++k, ++n) {
      CHECK_OK(MPI_Recv(&x, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &st));
      CHECK(x == tag + 7 * k, "named (0, %d) #%d got %d", tag, k, x);
      if (x >= 0 && x < kDeep) ++taken[x];
    }
  /* MPI_ANY_SOURCE, one tag: continues where the named receives stopped. */
  for (int k = 10; k < 20; ++k, ++n) {
    CHECK_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st));
    CHECK(x == 3 + 7 * k && st.MPI_TAG == 3, "(any, 3) #%d got %d", k, x);
    if (x >= 0 && x < kDeep) ++taken[x];
  }
  /* MPI_ANY_TAG: the rest in arrival order. */
  for (int last = -1; n < kDeep; ++n) {
    CHECK_OK(MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x > last && st.MPI_TAG == x % 7, "(0, any) after %d got %d tag %d", last, x, st.MPI_TAG);
    if (x >= 0 && x < kDeep) ++taken[x];
    last = x;
  }
  for (int i = 0; i < kDeep; ++i) CHECK(taken[i] == 1, "message %d taken %d times", i, taken[i]);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  if (itest_size != 2) {
    fprintf(stderr, "recv_waiting: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  kinds_of_message();
  MPI_Barrier(MPI_COMM_WORLD);
  deep_queue();
  return itest_finish("recv_waiting");
}
