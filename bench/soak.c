/* Soak: randomized multi-rank traffic for a given time, every byte checked.
 *
 *   soak SEED SECONDS [MAX_BYTES]
 *
 * The run is a sequence of epochs. Every rank derives the same plan for an
 * epoch from (SEED, epoch): messages between every ordered pair of ranks,
 * sizes from 0 to MAX_BYTES (default 4 MiB; log-uniform with extra weight
 * on 0, 1 and the usual eager/rendezvous boundaries), each with a send
 * form (Isend, Issend, persistent Send_init/Start, blocking Send or Ssend)
 * and a way to receive it (a specific Irecv, MPI_ANY_SOURCE with the
 * message's tag, Mprobe + Mrecv or Iprobe + Recv, MPI_ANY_TAG from its
 * source, or MPI_ANY_SOURCE + MPI_ANY_TAG). Tags are unique per receiver
 * within an epoch, so a status names the message it delivered; the payload
 * of every message is a pattern of (SEED, epoch, source, destination, tag)
 * and is checked byte by byte, with its size. Receives are posted in an
 * order that can never starve (specific and unique-tag receives, then
 * probes, then MPI_ANY_TAG receives, then full wildcards), so any message
 * the engine delivers wrongly or not at all shows up as corrupted or lost,
 * never as a hang of the program's own making.
 *
 * Interleaved with the point-to-point traffic: a nonblocking allreduce
 * started before the sends and completed with them; receives that can never
 * match, cancelled (they must report cancelled); sends cancelled right after
 * they start on a second communicator (each either cancelled or delivered:
 * an alltoall tells the receivers how many to drain, and those are checked
 * too); then a broadcast from a random root, an allreduce and an alltoallv
 * of random sizes, all checked.
 *
 * Lost: a receive that has not completed after SOAK_STALL_SECONDS (default
 * 120) without any other progress; the program then prints its counts and
 * aborts. Output (rank 0, machine-readable, one `key=value` list per line):
 *
 *   soak_progress seconds=.. epochs=.. moved=.. bytes=.. corrupted=.. lost=..
 *   soak_result ranks=.. seed=.. seconds=.. epochs=.. moved=.. bytes=..
 *               corrupted=.. lost=.. cancelled_sends=.. cancelled_receives=..
 *               collectives=..
 *
 * (soak_result on one line). Exit status 0 only when nothing was corrupted
 * or lost. bench/soak.sh runs it over shared memory and over ofi between
 * fake hosts.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kFlat, kIsend, kIssend, kPersistent, kSend, kSsend, kSendForms };
enum { kSpecific, kAnySourceTag, kProbe, kSourceAnyTag, kAnyAny, kRecvForms };
enum { kCancelTag = 30000, kNeverTag = 30001 };

typedef struct {
  int src, dst, tag;
  int64_t size;
  int send_form, recv_form;
  int received;  /* at the destination */
} Msg;

static uint64_t g_seed;
static int me, np;
static int64_t g_max = 4 << 20;

/* Counters (this rank). */
static long long moved, bytes_moved, corrupted, lost, cancelled_sends, cancelled_recvs, collectives;

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct {
  uint64_t s;
} Rng;
static uint64_t next(Rng* r) { return mix(r->s++); }
static int64_t below(Rng* r, int64_t n) { return n <= 0 ? 0 : (int64_t)(next(r) % (uint64_t)n); }

/* Payload byte pattern of message (epoch, src, dst, tag): 8 bytes per step. */
static void fill(uint8_t* p, int64_t n, uint64_t key) {
  for (int64_t i = 0; i < n; i += 8) {
    uint64_t w = mix(key + (uint64_t)i);
    int64_t k = n - i < 8 ? n - i : 8;
    memcpy(p + i, &w, (size_t)k);
  }
}
static int check(const uint8_t* p, int64_t n, uint64_t key) {
  for (int64_t i = 0; i < n; i += 8) {
    uint64_t w = mix(key + (uint64_t)i);
    int64_t k = n - i < 8 ? n - i : 8;
    if (memcmp(p + i, &w, (size_t)k)) return 0;
  }
  return 1;
}
static uint64_t key_of(long epoch, int src, int dst, int tag) {
  return mix(g_seed ^ mix(((uint64_t)epoch << 32) ^ ((uint64_t)src << 20) ^ ((uint64_t)dst << 8)) ^ (uint64_t)tag);
}

static int64_t pick_size(Rng* r) {
  static const int64_t edges[] = {0, 1, 7, 8, 63, 64, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537};
  if (below(r, 4) == 0) {
    int64_t s = edges[below(r, (int64_t)(sizeof edges / sizeof edges[0]))];
    return s <= g_max ? s : g_max;
  }
  int bits = 0;
  while (((int64_t)1 << bits) < g_max) ++bits;
  int64_t top = (int64_t)1 << below(r, bits + 1);
  int64_t s = below(r, top + 1);
  return s <= g_max ? s : g_max;
}

/* The epoch's plan: the same on every rank. */
static Msg* plan(long epoch, int* count) {
  Rng r = {mix(g_seed) ^ (uint64_t)epoch * 0x100000001b3ull};
  int cap = np * np * 8 + 1, n = 0;
  Msg* m = calloc((size_t)cap, sizeof(Msg));
  int* next_tag = calloc((size_t)np, sizeof(int));
  /* Bytes per epoch are bounded so memory stays modest at any MAX_BYTES. */
  int64_t budget = (int64_t)np * 24 * (1 << 20);
  for (int s = 0; s < np; ++s) {
    for (int d = 0; d < np; ++d) {
      int k = (int)below(&r, 7);
      for (int i = 0; i < k && n < cap; ++i) {
        Msg x = {s, d, next_tag[d]++, pick_size(&r), (int)below(&r, kSendForms - 1) + 1, (int)below(&r, kRecvForms), 0};
        if (x.size > budget) x.size = 0;
        budget -= x.size;
        m[n++] = x;
      }
    }
  }
  free(next_tag);
  *count = n;
  return m;
}

static Msg* find(Msg* m, int n, int src, int tag) {
  for (int i = 0; i < n; ++i)
    if (m[i].dst == me && m[i].src == src && m[i].tag == tag) return &m[i];
  return NULL;
}

/* A completed receive of (src, tag, bytes) into buf: which message, right size, right bytes. */
static void verify(long epoch, Msg* m, int n, const uint8_t* buf, const MPI_Status* st) {
  int bytes = 0;
  MPI_Get_count(st, MPI_BYTE, &bytes);
  Msg* x = find(m, n, st->MPI_SOURCE, st->MPI_TAG);
  if (!x || x->received) {
    ++corrupted;
    fprintf(stderr, "soak: rank %d epoch %ld: unplanned or duplicate message (source %d tag %d, %d bytes)\n", me,
            epoch, st->MPI_SOURCE, st->MPI_TAG, bytes);
    return;
  }
  x->received = 1;
  ++moved;
  bytes_moved += bytes;
  if (bytes != x->size || !check(buf, bytes, key_of(epoch, x->src, x->dst, x->tag))) {
    ++corrupted;
    fprintf(stderr, "soak: rank %d epoch %ld: message from %d tag %d corrupted (%d bytes, want %lld)\n", me, epoch,
            x->src, x->tag, bytes, (long long)x->size);
  }
}

typedef struct {
  MPI_Request req;
  uint8_t* buf;
  int is_recv;
} Slot;

/* Waits for every slot with Testsome, verifying receives as they complete.
 * A stall of SOAK_STALL_SECONDS with receives still open counts them lost. */
static int drain(long epoch, Msg* m, int n, Slot* s, int ns, double stall) {
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)(ns + 1));
  int* idx = malloc(sizeof(int) * (size_t)(ns + 1));
  MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)(ns + 1));
  for (int i = 0; i < ns; ++i) reqs[i] = s[i].req;
  int open = 0;
  for (int i = 0; i < ns; ++i) open += reqs[i] != MPI_REQUEST_NULL;
  double last = MPI_Wtime();
  int ok = 1;
  while (open > 0) {
    int done = 0;
    MPI_Testsome(ns, reqs, &done, idx, sts);
    if (done == MPI_UNDEFINED) break;
    if (done > 0) last = MPI_Wtime();
    for (int k = 0; k < done; ++k) s[idx[k]].req = reqs[idx[k]];
    for (int k = 0; k < done; ++k) {
      Slot* x = &s[idx[k]];
      if (x->is_recv) verify(epoch, m, n, x->buf, &sts[k]);
      --open;
    }
    if (MPI_Wtime() - last > stall) {
      for (int i = 0; i < ns; ++i) s[i].req = reqs[i];
      for (int i = 0; i < ns; ++i)
        if (reqs[i] != MPI_REQUEST_NULL && s[i].is_recv) ++lost;
      fprintf(stderr, "soak: rank %d epoch %ld: %d operations stalled for %.0f s\n", me, epoch, open, stall);
      ok = 0;
      break;
    }
  }
  free(reqs);
  free(idx);
  free(sts);
  return ok;
}

static void report(const char* kind, double seconds, long epochs) {
  long long mine[7] = {moved, bytes_moved, corrupted, lost, cancelled_sends, cancelled_recvs, collectives}, all[7];
  MPI_Reduce(mine, all, 7, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me != 0) return;
  if (!strcmp(kind, "soak_progress"))
    printf("soak_progress seconds=%.0f epochs=%ld moved=%lld bytes=%lld corrupted=%lld lost=%lld\n", seconds, epochs,
           all[0], all[1], all[2], all[3]);
  else
    printf("soak_result ranks=%d seed=%llu seconds=%.0f epochs=%ld moved=%lld bytes=%lld corrupted=%lld lost=%lld "
           "cancelled_sends=%lld cancelled_receives=%lld collectives=%lld\n",
           np, (unsigned long long)g_seed, seconds, epochs, all[0], all[1], all[2], all[3], all[4], all[5], all[6] / np);
  fflush(stdout);
}

/* Collectives with random sizes and roots, checked. */
static void collectives_round(long epoch, MPI_Comm side) {
  Rng r = {mix(g_seed ^ 0xc011ull) + (uint64_t)epoch};
  /* Broadcast. */
  int root = (int)below(&r, np);
  int64_t n = pick_size(&r);
  uint8_t* b = malloc((size_t)n + 1);
  uint64_t key = key_of(epoch, root, -1, 1);
  if (me == root) fill(b, n, key);
  MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
  if (!check(b, n, key)) {
    ++corrupted;
    fprintf(stderr, "soak: rank %d epoch %ld: broadcast of %lld bytes from %d corrupted\n", me, epoch, (long long)n,
            root);
  }
  free(b);
  /* Allreduce. */
  int64_t v[16], sum[16];
  for (int i = 0; i < 16; ++i) v[i] = (int64_t)(mix(key_of(epoch, me, i, 2)) % 1000000);
  MPI_Allreduce(v, sum, 16, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 16; ++i) {
    int64_t want = 0;
    for (int p = 0; p < np; ++p) want += (int64_t)(mix(key_of(epoch, p, i, 2)) % 1000000);
    if (sum[i] != want) {
      ++corrupted;
      fprintf(stderr, "soak: rank %d epoch %ld: allreduce slot %d gave %lld, want %lld\n", me, epoch, i,
              (long long)sum[i], (long long)want);
      break;
    }
  }
  /* Alltoallv: block (p -> q) of size from the shared plan. */
  int* sc = calloc((size_t)np, sizeof(int));
  int* rc = calloc((size_t)np, sizeof(int));
  int* sd = calloc((size_t)np, sizeof(int));
  int* rd = calloc((size_t)np, sizeof(int));
  int st = 0, rt = 0;
  for (int q = 0; q < np; ++q) {
    Rng a = {mix(g_seed ^ (uint64_t)epoch ^ ((uint64_t)me << 16) ^ (uint64_t)q)};
    Rng b2 = {mix(g_seed ^ (uint64_t)epoch ^ ((uint64_t)q << 16) ^ (uint64_t)me)};
    sc[q] = (int)below(&a, 65537);
    rc[q] = (int)below(&b2, 65537);
    sd[q] = st;
    rd[q] = rt;
    st += sc[q];
    rt += rc[q];
  }
  uint8_t* sb = malloc((size_t)st + 1);
  uint8_t* rb = malloc((size_t)rt + 1);
  for (int q = 0; q < np; ++q) fill(sb + sd[q], sc[q], key_of(epoch, me, q, 3));
  MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, side);
  for (int q = 0; q < np; ++q) {
    if (!check(rb + rd[q], rc[q], key_of(epoch, q, me, 3))) {
      ++corrupted;
      fprintf(stderr, "soak: rank %d epoch %ld: alltoallv block from %d corrupted\n", me, epoch, q);
    }
  }
  free(sb);
  free(rb);
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  collectives += 3;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 3) {
    if (me == 0) fprintf(stderr, "usage: soak SEED SECONDS [MAX_BYTES]\n");
    MPI_Finalize();
    return 2;
  }
  g_seed = strtoull(argv[1], NULL, 0);
  const double seconds = atof(argv[2]);
  if (argc > 3) g_max = atoll(argv[3]);
  const char* st_env = getenv("SOAK_STALL_SECONDS");
  const double stall = st_env && *st_env ? atof(st_env) : 120.0;
  MPI_Comm side;
  MPI_Comm_dup(MPI_COMM_WORLD, &side);

  const double t0 = MPI_Wtime();
  double next_report = t0 + 60;
  long epoch = 0;
  int ok = 1;
  for (;; ++epoch) {
    /* Everyone agrees whether to go on and whether to report progress at
     * the end of the epoch, both by rank 0's clock (each rank reading its
     * own would disagree on who enters the report's reduction). */
    int decide[2] = {MPI_Wtime() - t0 < seconds, MPI_Wtime() > next_report};
    MPI_Bcast(decide, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (!decide[0]) break;
    int n = 0;
    Msg* m = plan(epoch, &n);
    Rng r = {mix(g_seed ^ 0x5eedull) + (uint64_t)epoch * 977 + (uint64_t)me};
    Slot* s = calloc((size_t)(2 * n + 8), sizeof(Slot));
    int ns = 0;
    /* 1. Receives that name their message: specific, or any source with its unique tag. */
    for (int i = 0; i < n; ++i) {
      Msg* x = &m[i];
      if (x->dst != me || (x->recv_form != kSpecific && x->recv_form != kAnySourceTag)) continue;
      Slot* y = &s[ns++];
      y->buf = malloc((size_t)x->size + 1);
      y->is_recv = 1;
      MPI_Irecv(y->buf, (int)x->size, MPI_BYTE, x->recv_form == kSpecific ? x->src : MPI_ANY_SOURCE, x->tag,
                MPI_COMM_WORLD, &y->req);
    }
    /* A nonblocking collective across the point-to-point traffic. */
    int64_t mine = epoch + me, total = -1;
    MPI_Request coll;
    MPI_Iallreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &coll);
    /* 2. Sends, in order, every form. */
    for (int i = 0; i < n; ++i) {
      Msg* x = &m[i];
      if (x->src != me) continue;
      Slot* y = &s[ns++];
      y->buf = malloc((size_t)x->size + 1);
      fill(y->buf, x->size, key_of(epoch, x->src, x->dst, x->tag));
      y->req = MPI_REQUEST_NULL;
      int c = (int)x->size;
      switch (x->send_form) {
        case kIsend: MPI_Isend(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD, &y->req); break;
        case kIssend: MPI_Issend(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD, &y->req); break;
        case kPersistent:
          MPI_Send_init(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD, &y->req);
          MPI_Start(&y->req);
          break;
        /* Blocking forms only where the receive is posted before any
         * blocking call (step 1); others would depend on the peer's order. */
        case kSend:
        case kSsend:
          if (x->recv_form == kSpecific || x->recv_form == kAnySourceTag) {
            if (x->send_form == kSend) MPI_Send(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD);
            else MPI_Ssend(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD);
          } else {
            MPI_Isend(y->buf, c, MPI_BYTE, x->dst, x->tag, MPI_COMM_WORLD, &y->req);
          }
          break;
      }
    }
    /* Cancelled sends on the side communicator: each is cancelled or delivered. */
    int* uncancelled = calloc((size_t)np, sizeof(int));
    int* to_drain = calloc((size_t)np, sizeof(int));
    for (int k = 0, nk = (int)below(&r, 3); k < nk; ++k) {
      int d = (int)below(&r, np);
      int64_t sz = pick_size(&r);
      uint8_t* b = malloc((size_t)sz + 1);
      fill(b, sz, key_of(epoch, me, d, kCancelTag + uncancelled[d]));
      MPI_Request q;
      MPI_Isend(b, (int)sz, MPI_BYTE, d, kCancelTag, side, &q);
      MPI_Cancel(&q);
      MPI_Status cst;
      MPI_Wait(&q, &cst);
      int flag = 0;
      MPI_Test_cancelled(&cst, &flag);
      if (flag) ++cancelled_sends;
      else ++uncancelled[d]; /* delivered: the receiver checks it by its order */
      free(b);
    }
    /* Receives that can never match, cancelled. */
    if (below(&r, 2)) {
      uint8_t dummy[8];
      MPI_Request q;
      MPI_Status cst;
      MPI_Irecv(dummy, 8, MPI_BYTE, MPI_ANY_SOURCE, kNeverTag, MPI_COMM_WORLD, &q);
      MPI_Cancel(&q);
      MPI_Wait(&q, &cst);
      int flag = 0;
      MPI_Test_cancelled(&cst, &flag);
      if (flag) ++cancelled_recvs;
      else {
        ++corrupted;
        fprintf(stderr, "soak: rank %d epoch %ld: a receive nothing could match was not cancelled\n", me, epoch);
      }
    }
    /* 3. Probed receives, in plan order. */
    for (int i = 0; i < n; ++i) {
      Msg* x = &m[i];
      if (x->dst != me || x->recv_form != kProbe) continue;
      MPI_Status pst;
      uint8_t* b;
      if (x->tag % 2) {
        MPI_Message msg;
        MPI_Mprobe(x->src, x->tag, MPI_COMM_WORLD, &msg, &pst);
        int c = 0;
        MPI_Get_count(&pst, MPI_BYTE, &c);
        b = malloc((size_t)c + 1);
        MPI_Mrecv(b, c, MPI_BYTE, &msg, &pst);
      } else {
        int flag = 0;
        while (!flag) MPI_Iprobe(x->src, x->tag, MPI_COMM_WORLD, &flag, &pst);
        int c = 0;
        MPI_Get_count(&pst, MPI_BYTE, &c);
        b = malloc((size_t)c + 1);
        MPI_Recv(b, c, MPI_BYTE, x->src, x->tag, MPI_COMM_WORLD, &pst);
      }
      verify(epoch, m, n, b, &pst);
      free(b);
    }
    /* 4. Wildcards: MPI_ANY_TAG from a source, then MPI_ANY_SOURCE + MPI_ANY_TAG,
     * each with room for the largest message it could take. */
    int64_t largest_any = 0;
    for (int i = 0; i < n; ++i)
      if (m[i].dst == me && (m[i].recv_form == kSourceAnyTag || m[i].recv_form == kAnyAny) &&
          m[i].size > largest_any)
        largest_any = m[i].size;
    for (int i = 0; i < n; ++i) {
      Msg* x = &m[i];
      if (x->dst != me || x->recv_form != kSourceAnyTag) continue;
      int64_t room = 0;
      for (int j = 0; j < n; ++j)
        if (m[j].dst == me && m[j].src == x->src && (m[j].recv_form == kSourceAnyTag || m[j].recv_form == kAnyAny) &&
            m[j].size > room)
          room = m[j].size;
      Slot* y = &s[ns++];
      y->buf = malloc((size_t)room + 1);
      y->is_recv = 1;
      MPI_Irecv(y->buf, (int)room, MPI_BYTE, x->src, MPI_ANY_TAG, MPI_COMM_WORLD, &y->req);
    }
    for (int i = 0; i < n; ++i) {
      Msg* x = &m[i];
      if (x->dst != me || x->recv_form != kAnyAny) continue;
      Slot* y = &s[ns++];
      y->buf = malloc((size_t)largest_any + 1);
      y->is_recv = 1;
      MPI_Irecv(y->buf, (int)largest_any, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &y->req);
    }
    s[ns].req = coll;
    s[ns].is_recv = 0;
    ++ns;
    /* 5. Everything completes, or the stalled receives are lost. */
    if (!drain(epoch, m, n, s, ns, stall)) ok = 0;
    if (ok && total != (int64_t)np * epoch + (int64_t)np * (np - 1) / 2) {
      ++corrupted;
      fprintf(stderr, "soak: rank %d epoch %ld: iallreduce gave %lld\n", me, epoch, (long long)total);
    }
    for (int i = 0; i < n; ++i)
      if (m[i].dst == me && !m[i].received && ok) {
        ++lost;
        fprintf(stderr, "soak: rank %d epoch %ld: message from %d tag %d never came\n", me, epoch, m[i].src, m[i].tag);
      }
    for (int i = 0; i < ns; ++i) {
      if (s[i].req != MPI_REQUEST_NULL) MPI_Request_free(&s[i].req); /* persistent, or left by a stall */
      free(s[i].buf);
    }
    if (!ok) {
      report("soak_result", MPI_Wtime() - t0, epoch + 1);
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* 6. The uncancelled sends: how many from whom, then each checked. */
    MPI_Alltoall(uncancelled, 1, MPI_INT, to_drain, 1, MPI_INT, side);
    for (int p = 0; p < np; ++p) {
      for (int k = 0; k < to_drain[p]; ++k) {
        MPI_Status cst;
        MPI_Message msg;
        int c = -1;
        MPI_Mprobe(p, kCancelTag, side, &msg, &cst);
        MPI_Get_count(&cst, MPI_BYTE, &c);
        uint8_t* b = malloc((size_t)c + 1);
        MPI_Mrecv(b, c, MPI_BYTE, &msg, &cst);
        ++moved;
        bytes_moved += c;
        if (!check(b, c, key_of(epoch, p, me, kCancelTag + k))) {
          ++corrupted;
          fprintf(stderr, "soak: rank %d epoch %ld: uncancelled send %d from %d corrupted\n", me, epoch, k, p);
        }
        free(b);
      }
    }
    free(uncancelled);
    free(to_drain);
    /* 7. Collectives, checked. */
    collectives_round(epoch, side);
    collectives += 2; /* the iallreduce and the alltoall */
    free(s);
    free(m);
    if (decide[1]) {
      next_report += 60;
      report("soak_progress", MPI_Wtime() - t0, epoch + 1);
    }
  }
  report("soak_result", MPI_Wtime() - t0, epoch);
  long long bad[2] = {corrupted, lost}, all_bad[2];
  MPI_Allreduce(bad, all_bad, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&side);
  MPI_Finalize();
  return all_bad[0] || all_bad[1] ? 1 : 0;
}
