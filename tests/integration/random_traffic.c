/* Randomized many-rank traffic with checksums.
 *
 *   random_traffic [seed|jobid] [rounds] [stop-file]
 *
 * With a stop file, rounds go on past `rounds` until that file exists
 * (rank 0 looks for it after each round and tells the others), so a job
 * can be kept busy for as long as a test needs it.
 * "jobid" derives the seed from SONDE_JOBID (the same on every rank, new for
 * every job); the seed is printed either way, so a failure can be replayed.
 * Every rank derives the same plan from the seed: per round, each rank sends
 * MSGS messages to random peers (itself included) with random sizes
 * (0..256 KiB, biased to small), random tags, and a random send call
 * (Send, Ssend, Isend, Issend; blocking ones only towards peers that
 * pre-post). Each receiver gets a mode for the round:
 *  - PREPOST: all receives posted up front with Irecv, then its sends, then
 *    completion by Waitall / Waitany / Waitsome / Testany / Testsome / Test
 *    (chosen at random);
 *  - LATE: Isend everything, then blocking Recv / Probe+Recv / Mprobe+Mrecv
 *    one at a time;
 * and one way of selecting: (ANY_SOURCE, ANY_TAG), (ANY_SOURCE, tag),
 * (source, ANY_TAG) or (source, tag). Within a round a receiver uses only one
 * way, and the number of its receives equals the number of messages it is
 * sent, so every receive is matched. Since the plan is known, every received
 * message is checked against the one non-overtaking order allows: for each
 * sender, the earliest not-yet-received message that fits the receive
 * (status source, tag, count, and payload checksum). Rounds are separated by
 * a barrier on a private communicator. The seed is printed on failure.
 */
#include <unistd.h>

#include "tests/integration/itest.h"

#define MSGS 6
#define MAXB (256 * 1024)

static uint64_t g_state;
static uint32_t rnd(void) { /* xorshift64*, identical on every rank */
  g_state ^= g_state >> 12;
  g_state ^= g_state << 25;
  g_state ^= g_state >> 27;
  return (uint32_t)((g_state * 2685821657736338717ull) >> 32);
}

struct msg {
  int src, dst, seq, tag, size, call; /* call: 0 Send 1 Ssend 2 Isend 3 Issend */
  int received;
};

static int rand_size(void) {
  switch (rnd() % 4) {
    case 0: return (int)(rnd() % 64);
    case 1: return (int)(rnd() % 20000);
    case 2: return (int)(rnd() % 70000);
    default: return (int)(rnd() % (MAXB + 1));
  }
}

static uint32_t msg_id(int round, const struct msg* m) { return (uint32_t)(round * 100000 + m->src * 1000 + m->seq); }

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
  if (argc > 1 && strcmp(argv[1], "jobid") == 0) {
    const char* job = getenv("SONDE_JOBID");
    seed = 1469598103934665603ull; /* FNV-1a of the job id */
    for (const char* c = job ? job : ""; *c; ++c) seed = (seed ^ (unsigned char)*c) * 1099511628211ull;
    seed &= 0xFFFFFFFFFFFFull;
  }
  if (itest_rank == 0) printf("random_traffic: seed %llu\n", seed);
  int rounds = argc > 2 ? atoi(argv[2]) : 12;
  MPI_Comm ctl;
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int n = itest_size, me = itest_rank;
  g_state = seed * 0x9E3779B97F4A7C15ull + 1;

  int total = n * MSGS;
  struct msg* plan = malloc(sizeof(struct msg) * (size_t)total);
  unsigned char* sendbufs = malloc((size_t)MSGS * MAXB);
  unsigned char* recvbufs = NULL;
  size_t recvcap = 0;
  int* mode = malloc(sizeof(int) * (size_t)n);
  int* way = malloc(sizeof(int) * (size_t)n);
  int* how = malloc(sizeof(int) * (size_t)n);
  long long bytes_checked = 0;

  const char* stop_file = argc > 3 ? argv[3] : NULL;
  for (int round = 0; round < rounds; ++round) {
    if (stop_file && round == rounds - 1) {
      int go_on = me == 0 && access(stop_file, F_OK) != 0;
      MPI_Bcast(&go_on, 1, MPI_INT, 0, ctl);
      if (go_on) ++rounds;
    }
    /* The plan, the same on every rank. */
    for (int p = 0; p < n; ++p) {
      mode[p] = (int)(rnd() % 2);   /* 0 PREPOST, 1 LATE */
      way[p] = (int)(rnd() % 4);    /* 0 any/any 1 any/tag 2 src/any 3 src/tag */
      how[p] = (int)(rnd() % 6);    /* completion or receive flavour */
    }
    for (int i = 0; i < total; ++i) {
      struct msg* m = &plan[i];
      m->src = i / MSGS;
      m->seq = i % MSGS;
      m->dst = (int)(rnd() % (uint32_t)n);
      m->tag = (int)(rnd() % 4);
      m->size = rand_size();
      m->call = (int)(rnd() % 4);
      if (mode[m->dst] != 0 && m->call < 2) m->call += 2; /* blocking only towards pre-posters */
      m->received = 0;
    }

    /* My receives: one per message addressed to me, in a chosen order. */
    int nrecv = 0;
    for (int i = 0; i < total; ++i) nrecv += plan[i].dst == me;
    if ((size_t)nrecv * MAXB > recvcap) {
      recvcap = (size_t)nrecv * MAXB;
      recvbufs = realloc(recvbufs, recvcap);
    }
    /* Receive k selects (src_k, tag_k); for specific ways the selectors are
     * the planned messages' own, shuffled. */
    int* rsrc = malloc(sizeof(int) * (size_t)(nrecv + 1));
    int* rtag = malloc(sizeof(int) * (size_t)(nrecv + 1));
    {
      int k = 0;
      for (int i = 0; i < total; ++i)
        if (plan[i].dst == me) {
          rsrc[k] = way[me] >= 2 ? plan[i].src : MPI_ANY_SOURCE;
          rtag[k] = way[me] % 2 ? plan[i].tag : MPI_ANY_TAG;
          ++k;
        }
      /* Local shuffle: must not consume the shared generator. */
      uint64_t local = seed ^ ((uint64_t)round << 32) ^ (uint64_t)me;
      for (int a = nrecv - 1; a > 0; --a) {
        local = local * 6364136223846793005ull + 1442695040888963407ull;
        int b = (int)((local >> 33) % (uint64_t)(a + 1));
        int t = rsrc[a]; rsrc[a] = rsrc[b]; rsrc[b] = t;
        t = rtag[a]; rtag[a] = rtag[b]; rtag[b] = t;
      }
    }
    MPI_Request* rreq = malloc(sizeof(MPI_Request) * (size_t)(nrecv + 1));
    MPI_Status* rst = malloc(sizeof(MPI_Status) * (size_t)(nrecv + 1));
    MPI_Request sreq[MSGS];

    if (mode[me] == 0)
      for (int k = 0; k < nrecv; ++k)
        CHECK_OK(MPI_Irecv(recvbufs + (size_t)k * MAXB, MAXB, MPI_BYTE, rsrc[k], rtag[k], MPI_COMM_WORLD, &rreq[k]));

    for (int s = 0; s < MSGS; ++s) {
      struct msg* m = &plan[me * MSGS + s];
      unsigned char* b = sendbufs + (size_t)s * MAXB;
      itest_fill(b, (size_t)m->size, msg_id(round, m));
      sreq[s] = MPI_REQUEST_NULL;
      switch (m->call) {
        case 0: CHECK_OK(MPI_Send(b, m->size, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD)); break;
        case 1: CHECK_OK(MPI_Ssend(b, m->size, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD)); break;
        case 2: CHECK_OK(MPI_Isend(b, m->size, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD, &sreq[s])); break;
        default: CHECK_OK(MPI_Issend(b, m->size, MPI_BYTE, m->dst, m->tag, MPI_COMM_WORLD, &sreq[s])); break;
      }
    }

    if (mode[me] == 0) {
      int done = 0, idx, flag, outcount;
      int* indices = malloc(sizeof(int) * (size_t)(nrecv + 1));
      MPI_Status* tmp = malloc(sizeof(MPI_Status) * (size_t)(nrecv + 1));
      double t0 = MPI_Wtime();
      switch (how[me] % 3 == 0 ? 0 : how[me]) {
        case 0: CHECK_OK(MPI_Waitall(nrecv, rreq, rst)); break;
        case 1:
          for (; done < nrecv; ++done) {
            MPI_Status s;
            CHECK_OK(MPI_Waitany(nrecv, rreq, &idx, &s));
            if (idx >= 0 && idx < nrecv) rst[idx] = s;
          }
          break;
        case 2:
          while (done < nrecv) {
            CHECK_OK(MPI_Waitsome(nrecv, rreq, &outcount, indices, tmp));
            if (outcount == MPI_UNDEFINED) break;
            for (int j = 0; j < outcount; ++j) rst[indices[j]] = tmp[j];
            done += outcount;
          }
          break;
        case 4:
          while (done < nrecv && MPI_Wtime() - t0 < 50) {
            MPI_Status s;
            CHECK_OK(MPI_Testany(nrecv, rreq, &idx, &flag, &s));
            if (flag && idx != MPI_UNDEFINED) rst[idx] = s, ++done;
          }
          break;
        default:
          while (done < nrecv && MPI_Wtime() - t0 < 50) {
            CHECK_OK(MPI_Testsome(nrecv, rreq, &outcount, indices, tmp));
            for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; ++j) rst[indices[j]] = tmp[j];
            if (outcount != MPI_UNDEFINED) done += outcount;
          }
          break;
      }
      free(indices);
      free(tmp);
    } else {
      for (int k = 0; k < nrecv; ++k) {
        unsigned char* b = recvbufs + (size_t)k * MAXB;
        if (how[me] % 3 == 1) {
          MPI_Status ps;
          CHECK_OK(MPI_Probe(rsrc[k], rtag[k], MPI_COMM_WORLD, &ps));
          /* Receive exactly what was probed, by its own source and tag. */
          CHECK_OK(MPI_Recv(b, MAXB, MPI_BYTE, ps.MPI_SOURCE, ps.MPI_TAG, MPI_COMM_WORLD, &rst[k]));
          CHECK(rst[k].MPI_SOURCE == ps.MPI_SOURCE && rst[k].MPI_TAG == ps.MPI_TAG,
                "seed %llu round %d: probed %d/%d, received %d/%d", seed, round, ps.MPI_SOURCE, ps.MPI_TAG,
                rst[k].MPI_SOURCE, rst[k].MPI_TAG);
        } else if (how[me] % 3 == 2) {
          MPI_Message msg;
          MPI_Status ps;
          CHECK_OK(MPI_Mprobe(rsrc[k], rtag[k], MPI_COMM_WORLD, &msg, &ps));
          CHECK_OK(MPI_Mrecv(b, MAXB, MPI_BYTE, &msg, &rst[k]));
        } else {
          CHECK_OK(MPI_Recv(b, MAXB, MPI_BYTE, rsrc[k], rtag[k], MPI_COMM_WORLD, &rst[k]));
        }
      }
    }
    CHECK_OK(MPI_Waitall(MSGS, sreq, MPI_STATUSES_IGNORE));

    /* Check in posting order: receive k got the earliest unreceived message
     * from its source that fits (rsrc[k], rtag[k]). With the Probe flavour
     * the receive was re-targeted to the probed (source, tag); the earliest
     * rule is the same. */
    for (int k = 0; k < nrecv; ++k) {
      int src = rst[k].MPI_SOURCE, count = -1;
      MPI_Get_count(&rst[k], MPI_BYTE, &count);
      struct msg* want = NULL;
      if (src >= 0 && src < n)
        for (int s = 0; s < MSGS; ++s) {
          struct msg* m = &plan[src * MSGS + s];
          if (m->dst != me || m->received) continue;
          if (rtag[k] != MPI_ANY_TAG && m->tag != rtag[k]) continue;
          want = m;
          break;
        }
      if (!want) {
        CHECK(0, "seed %llu round %d: receive %d got a message from %d (tag %d) that was not expected", seed, round,
              k, src, rst[k].MPI_TAG);
        continue;
      }
      want->received = 1;
      CHECK(rsrc[k] == MPI_ANY_SOURCE || rsrc[k] == src, "seed %llu round %d: receive %d for source %d got %d",
            seed, round, k, rsrc[k], src);
      CHECK(rst[k].MPI_TAG == want->tag && count == want->size,
            "seed %llu round %d: receive %d from %d: tag %d count %d, expected message %d (tag %d, %d bytes): "
            "overtaken or wrong",
            seed, round, k, src, rst[k].MPI_TAG, count, want->seq, want->tag, want->size);
      if (count == want->size) {
        long bad = itest_verify(recvbufs + (size_t)k * MAXB, (size_t)count, msg_id(round, want));
        CHECK(bad < 0, "seed %llu round %d: message %d from %d (%d bytes): checksum fails at byte %ld", seed, round,
              want->seq, src, count, bad);
        bytes_checked += count;
      }
    }
    free(rsrc);
    free(rtag);
    free(rreq);
    free(rst);
    itest_barrier(ctl);
  }

  if (itest_failures) fprintf(stderr, "[rank %d] random_traffic FAILED with seed %llu\n", me, seed);
  if (me == 0) printf("random_traffic: %d rounds, %lld bytes verified on rank 0\n", rounds, bytes_checked);
  free(plan);
  free(sendbufs);
  free(recvbufs);
  free(mode);
  free(way);
  free(how);
  MPI_Comm_free(&ctl);
  return itest_finish("random_traffic");
}
