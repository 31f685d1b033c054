/* Non-overtaking order under wildcards.
 *
 * Rank 0 receives; every other rank sends it a numbered sequence of messages
 * with mixed tags and sizes on both sides of the eager limit. Whatever the
 * receive selects by (MPI_ANY_SOURCE / MPI_ANY_TAG, a specific tag, a specific
 * source), the messages of one sender that it can match must arrive in the
 * order they were sent (MPI 4.1 section 3.5).
 *
 * Every message carries (phase, sender, sequence) in its first 12 bytes and a
 * pattern derived from them in the rest.
 */
#include "tests/integration/itest.h"

#define COUNT 36  /* messages per sender per phase */
#define NTAGS 3
#define MAXBYTES (96 * 1024)

/* Sizes cycle across the default eager limit (16 KiB) and small limits. */
static const int kSizes[] = {12, 64, 16384, 16385, 40000, 200, 96 * 1024, 1000, 4096};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])

static MPI_Comm ctl; /* control traffic (syncs, barriers) stays off WORLD */

static int msg_size(int sender, int seq) { return kSizes[(seq * 5 + sender) % NSIZES]; }
static int msg_tag(int sender, int seq) { return 1 + (seq + sender * seq / 4) % NTAGS; }
static uint32_t msg_id(int phase, int sender, int seq) { return (uint32_t)(phase * 1000000 + sender * 1000 + seq); }

static void fill_msg(unsigned char* buf, int phase, int sender, int seq) {
  int n = msg_size(sender, seq);
  itest_fill(buf, (size_t)n, msg_id(phase, sender, seq));
  int hdr[3] = {phase, sender, seq};
  memcpy(buf, hdr, sizeof hdr);
}

/* Checks one received message; returns its sequence number (or -1). */
static int check_msg(const unsigned char* buf, const MPI_Status* st, int phase, const char* what) {
  int hdr[3];
  int count = -1;
  MPI_Get_count(st, MPI_BYTE, &count);
  if (count < 12) {
    CHECK(0, "%s: message of %d bytes from %d", what, count, st->MPI_SOURCE);
    return -1;
  }
  memcpy(hdr, buf, sizeof hdr);
  int sender = hdr[1], seq = hdr[2];
  CHECK(hdr[0] == phase, "%s: message of phase %d in phase %d", what, hdr[0], phase);
  CHECK(sender == st->MPI_SOURCE, "%s: status source %d but message from %d", what, st->MPI_SOURCE, sender);
  if (seq < 0 || seq >= COUNT) {
    CHECK(0, "%s: bad sequence number %d", what, seq);
    return -1;
  }
  CHECK(st->MPI_TAG == msg_tag(sender, seq), "%s: status tag %d, message %d of %d has tag %d", what, st->MPI_TAG,
        seq, sender, msg_tag(sender, seq));
  CHECK(count == msg_size(sender, seq), "%s: count %d, message %d of %d has %d bytes", what, count, seq, sender,
        msg_size(sender, seq));
  unsigned char* expect = malloc(MAXBYTES);
  fill_msg(expect, phase, sender, seq);
  int bad = -1;
  for (int i = 0; i < count && i < msg_size(sender, seq); ++i)
    if (buf[i] != expect[i]) {
      bad = i;
      break;
    }
  CHECK(bad < 0, "%s: message %d of %d differs at byte %d", what, seq, sender, bad);
  free(expect);
  return seq;
}

/* Phase 0: blocking sends; receiver takes everything with ANY_SOURCE/ANY_TAG.
 * Phase 1: Isends; receiver drains tag 3, then tag 2, then tag 1, each with
 *          ANY_SOURCE, leaving the others waiting in the unexpected queue.
 * Phase 2: receiver pre-posts every receive as ANY_SOURCE/ANY_TAG Irecv
 *          before the senders start (matching in the posted queue).
 * Phase 3: receiver drains each sender with (source, ANY_TAG) in reverse rank
 *          order while the others keep arriving. */
static void sender(int phase) {
  int me = itest_rank;
  unsigned char* bufs = malloc((size_t)COUNT * MAXBYTES);
  MPI_Request reqs[COUNT];
  itest_sync(0, ctl); /* receiver ready for this phase */
  for (int seq = 0; seq < COUNT; ++seq) {
    unsigned char* b = bufs + (size_t)seq * MAXBYTES;
    fill_msg(b, phase, me, seq);
    if (phase == 0 || phase == 2) {
      /* Mix blocking modes; all are safe because the receiver keeps receiving. */
      if (seq % 4 == 3)
        CHECK_OK(MPI_Ssend(b, msg_size(me, seq), MPI_BYTE, 0, msg_tag(me, seq), MPI_COMM_WORLD));
      else
        CHECK_OK(MPI_Send(b, msg_size(me, seq), MPI_BYTE, 0, msg_tag(me, seq), MPI_COMM_WORLD));
      reqs[seq] = MPI_REQUEST_NULL;
    } else {
      if (seq % 5 == 4)
        CHECK_OK(MPI_Issend(b, msg_size(me, seq), MPI_BYTE, 0, msg_tag(me, seq), MPI_COMM_WORLD, &reqs[seq]));
      else
        CHECK_OK(MPI_Isend(b, msg_size(me, seq), MPI_BYTE, 0, msg_tag(me, seq), MPI_COMM_WORLD, &reqs[seq]));
    }
  }
  CHECK_OK(MPI_Waitall(COUNT, reqs, MPI_STATUSES_IGNORE));
  free(bufs);
}

static void receiver(int phase) {
  int senders = itest_size - 1;
  int total = senders * COUNT;
  int* next = calloc((size_t)itest_size, sizeof(int));         /* next seq per sender */
  int* next_tag = calloc((size_t)itest_size * (NTAGS + 1), sizeof(int)); /* per (sender, tag) */
  unsigned char* buf = malloc(MAXBYTES);
  char what[64];
  snprintf(what, sizeof what, "phase %d", phase);

  if (phase == 2) {
    unsigned char* bufs = malloc((size_t)total * MAXBYTES);
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)total);
    MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)total);
    for (int i = 0; i < total; ++i)
      CHECK_OK(MPI_Irecv(bufs + (size_t)i * MAXBYTES, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         MPI_COMM_WORLD, &reqs[i]));
    for (int s = 1; s <= senders; ++s) itest_sync(s, ctl);
    CHECK_OK(MPI_Waitall(total, reqs, sts));
    /* Receives match in the order they were posted. */
    for (int i = 0; i < total; ++i) {
      int s = sts[i].MPI_SOURCE;
      int seq = check_msg(bufs + (size_t)i * MAXBYTES, &sts[i], phase, what);
      if (seq < 0 || s < 1 || s > senders) continue;
      CHECK(seq == next[s], "%s: receive %d got message %d of sender %d, expected %d (overtaken)", what, i, seq, s,
            next[s]);
      next[s] = seq + 1;
    }
    free(bufs);
    free(reqs);
    free(sts);
  } else {
    for (int s = 1; s <= senders; ++s) itest_sync(s, ctl);
    int got = 0;
    if (phase == 0) {
      for (; got < total; ++got) {
        MPI_Status st;
        CHECK_OK(MPI_Recv(buf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE, seq = check_msg(buf, &st, phase, what);
        if (seq < 0 || s < 1 || s > senders) continue;
        CHECK(seq == next[s], "%s: got message %d of sender %d, expected %d (overtaken)", what, seq, s, next[s]);
        next[s] = seq + 1;
      }
    } else if (phase == 1) {
      for (int tag = NTAGS; tag >= 1; --tag) {
        int want = 0;
        for (int s = 1; s <= senders; ++s)
          for (int q = 0; q < COUNT; ++q) want += msg_tag(s, q) == tag;
        for (int k = 0; k < want; ++k, ++got) {
          MPI_Status st;
          CHECK_OK(MPI_Recv(buf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
          int s = st.MPI_SOURCE, seq = check_msg(buf, &st, phase, what);
          if (seq < 0 || s < 1 || s > senders) continue;
          /* The next message of s with this tag. */
          int* n = &next_tag[s * (NTAGS + 1) + tag];
          while (*n < COUNT && msg_tag(s, *n) != tag) ++*n;
          CHECK(seq == *n, "%s: tag %d: got message %d of sender %d, expected %d (overtaken)", what, tag, seq, s, *n);
          *n = seq + 1;
        }
      }
    } else {
      for (int s = senders; s >= 1; --s)
        for (int q = 0; q < COUNT; ++q, ++got) {
          MPI_Status st;
          CHECK_OK(MPI_Recv(buf, MAXBYTES, MPI_BYTE, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
          int seq = check_msg(buf, &st, phase, what);
          CHECK(seq == q, "%s: source %d: got message %d, expected %d (overtaken)", what, s, seq, q);
        }
    }
    CHECK(got == total, "%s: received %d of %d", what, got, total);
  }
  /* Nothing may be left over. */
  int flag = 1;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(!flag, "%s: a message is left over", what);
  free(next);
  free(next_tag);
  free(buf);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size >= 2, "needs at least 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  for (int phase = 0; phase < 4; ++phase) {
    if (itest_rank == 0)
      receiver(phase);
    else
      sender(phase);
    itest_barrier(ctl);
  }
  MPI_Comm_free(&ctl);
  return itest_finish("wildcard_order");
}
