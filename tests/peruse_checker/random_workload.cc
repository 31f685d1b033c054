// Randomized multi-rank workload under the PERUSE event-sequence checker.
//
//   random_workload [seed] [rounds]      (PERUSE_CHECKER_SEED overrides the seed)
//
// Every rank records every PERUSE event on MPI_COMM_WORLD (propagated to all
// its duplicates), MPI_COMM_SELF and the split communicators, runs the same
// seeded plan, and at the end verifies its own stream with the checker; the
// job fails unless every rank reports zero violations and all data arrived
// intact. The seed is printed on every failure.
//
// Each round, every rank derives the same plan from the seed:
//  - communicators: WORLD, two generations of duplicates, a split (odd/even,
//    reversed keys), and sometimes a temporary one: a duplicate (of WORLD, of
//    a duplicate or of the split) that carries traffic the moment it exists
//    (peers that finish MPI_Comm_dup first send before the others have the
//    communicator: the adoption path), or a split with random colours
//    (MPI_UNDEFINED included), freed at the end of the round;
//  - messages: random sender and receiver (itself included), 0 B to 1 MiB
//    (eager, the eager limit +-1, rendezvous), a unique tag per message;
//  - per (receiver, communicator) a way of selecting: by tag (source or
//    MPI_ANY_SOURCE), by source with MPI_ANY_TAG, or fully wildcard; within a
//    wildcard group every receive may take any message of the group, and the
//    data must show the non-overtaking order per sender;
//  - per receive: pre-posted (Irecv, Recv_init+Start, Irecv later cancelled:
//    the cancel succeeds or comes too late, then a plain receive takes the
//    message) or late (Recv, Irecv, Probe+Recv, Iprobe+Recv, Mprobe+Mrecv,
//    Improbe+Imrecv);
//  - per send: Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend, Ibsend,
//    Isend or Ibsend + MPI_Request_free, and the four persistent kinds;
//    blocking and ready sends only where a pre-posted receive makes them safe;
//  - always-failing receives that are cancelled (also a persistent one),
//    persistent channels restarted every round, MPI_PROC_NULL sends,
//    receives and probes, self traffic on MPI_COMM_SELF;
//  - Barrier / Allreduce between posting and sending, and a Barrier, Bcast
//    (up to 1 MiB) or Allreduce on a random communicator after sending;
//  - completion by Waitall, Waitany, Waitsome, Testall, Testany, Testsome,
//    Wait or Test, chosen at random.
#include <mpi.h>
#include <peruse.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <time.h>

#include "tests/peruse_checker/workload.h"

using namespace workload;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1;
  if (const char* s = std::getenv("PERUSE_CHECKER_SEED")) g_seed = std::strtoull(s, nullptr, 0);
  int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  if (const char* s = std::getenv("SONDE_EAGER_LIMIT")) g_eager_limit = std::strtoull(s, nullptr, 0);
  if (const char* s = std::getenv("PERUSE_WORKLOAD_SKIP")) {
    g_skip_free = std::strstr(s, "free") != nullptr;
    g_skip_fresh = std::strstr(s, "fresh") != nullptr;
  }
  if (g_rank == 0) std::printf("random_workload: seed %llu, %d ranks, %d rounds\n", g_seed, g_size, rounds);

  sonde::peruse_checker::Recorder recorder(size_t(1) << 21);
  int rc = recorder.watch(MPI_COMM_WORLD, true);
  CHECK(rc == PERUSE_SUCCESS, "watch(MPI_COMM_WORLD) returned %d", rc);
  rc = recorder.watch(MPI_COMM_SELF, false);
  CHECK(rc == PERUSE_SUCCESS, "watch(MPI_COMM_SELF) returned %d", rc);

  // The long-lived communicators.
  std::vector<int> zeros(static_cast<size_t>(g_size), 0), ids(static_cast<size_t>(g_size)),
      colors(static_cast<size_t>(g_size)), keys(static_cast<size_t>(g_size));
  for (int w = 0; w < g_size; ++w) {
    ids[size_t(w)] = w;
    colors[size_t(w)] = w % 2;
    keys[size_t(w)] = -w;
  }
  g_comms[kWorld].layout(zeros, ids);
  g_comms[kWorld].comm = MPI_COMM_WORLD;
  // dupB's construction runs on dupA at once: the adoption path again.
  g_comms[kDupA] = g_comms[kWorld];
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[kDupA].comm));
  if (g_skip_fresh) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  g_comms[kDupB] = g_comms[kWorld];
  MPI_OK(MPI_Comm_dup(g_comms[kDupA].comm, &g_comms[kDupB].comm));
  if (g_skip_fresh) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Comm channel_comm;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &channel_comm));
  if (g_skip_fresh) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  // Not a duplicate, never watched: the shutdown runs on it, so no peer's
  // traffic after its own stop() can reach a recorded communicator.
  MPI_Comm quiet;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, g_rank, &quiet));
  g_comms[kSplit].layout(colors, keys);
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &g_comms[kSplit].comm));
  rc = recorder.watch(g_comms[kSplit].comm, true);
  CHECK(rc == PERUSE_SUCCESS, "watch(split) returned %d", rc);
  g_comms[kSplit].watched = true;
  for (int s = 0; s < kTemp; ++s) check_layout(g_comms[s], kSlotNames[s]);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  // everyone watches the split before it carries anything

  // Persistent requests that live across rounds.
  const int kChannel = 70000;  // rendezvous by default
  std::vector<uint8_t> ch_out, ch_in(kChannel);
  MPI_Request ch_send, ch_recv, never_persistent;
  ch_out.resize(kChannel);
  MPI_OK(MPI_Send_init(ch_out.data(), kChannel, MPI_BYTE, (g_rank + 1) % g_size, kTagChannel, channel_comm, &ch_send));
  MPI_OK(MPI_Recv_init(ch_in.data(), kChannel, MPI_BYTE, (g_rank + g_size - 1) % g_size, kTagChannel, channel_comm,
                       &ch_recv));
  char never_buf[8];
  MPI_OK(MPI_Recv_init(never_buf, 8, MPI_BYTE, MPI_ANY_SOURCE, kTagPersistentNever, MPI_COMM_WORLD, &never_persistent));

  std::vector<uint8_t> bsend_buf(size_t(kBsendBudget) + 4096);
  MPI_OK(MPI_Buffer_attach(bsend_buf.data(), int(bsend_buf.size())));

  Rng g{g_seed};
  Stats stats;
  for (int round = 0; round < rounds; ++round) {
    g_round = round;
    int temp_kind = make_temp(g, recorder);
    Round r(round, g, stats);
    r.plan = make_plan(g, round, r.groups);
    r.received.assign(r.plan.size(), 0);
    bool channel = g.chance(60);

    // Phase A: everything that must be posted before anyone sends.
    r.post_preposted();
    r.post_never(never_persistent);
    if (channel) {
      MPI_OK(MPI_Start(&ch_recv));
      expect_arrival(channel_comm, (g_rank + g_size - 1) % g_size, kTagChannel);
      r.pending.push_back({ch_recv, -1, false});
    }
    r.proc_null(false);
    // Every rank has posted (and watches the temporary split).
    if (g.chance(50)) {
      MPI_OK(MPI_Barrier(g.chance(50) ? MPI_COMM_WORLD : g_comms[kDupB].comm));
    } else {
      long one = 1, all = 0;
      MPI_OK(MPI_Allreduce(&one, &all, 1, MPI_LONG, MPI_SUM, g.chance(50) ? MPI_COMM_WORLD : g_comms[kDupA].comm));
      CHECK(all == g_size, "Allreduce as a separator: %ld", all);
    }

    // Phase B: sends.
    if (channel) {
      fill(ch_out, kChannel, msg_key(round, 777) ^ uint64_t(g_rank));
      MPI_OK(MPI_Start(&ch_send));
      expect_send(channel_comm, (g_rank + 1) % g_size, kTagChannel);
      r.pending.push_back({ch_send, -1, false});
    }
    r.send_all();
    r.proc_null(true);
    r.self_send();
    if (g.chance(60)) collective(g, round, "after sending");

    // Phase C: cancels and late receives.
    r.cancels();
    r.late_receives();
    r.self_recv();
    r.complete_all();
    if (r.persistent_started) {
      MPI_Status st;
      MPI_OK(MPI_Cancel(&never_persistent));
      MPI_OK(MPI_Wait(&never_persistent, &st));
      int flag = 0;
      MPI_Test_cancelled(&st, &flag);
      CHECK(flag, "persistent receive nothing matches was not cancelled");
    }
    if (channel) {
      int from = (g_rank + g_size - 1) % g_size;
      CHECK(checksum(ch_in.data(), kChannel) == expected_checksum(kChannel, msg_key(round, 777) ^ uint64_t(from)),
            "persistent channel: bad data");
    }
    r.check_order();

    // Buffered sends all gone (their internal requests complete), then a fresh buffer.
    void* detached = nullptr;
    int detached_size = 0;
    MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
    MPI_OK(MPI_Buffer_attach(bsend_buf.data(), int(bsend_buf.size())));
    if (temp_kind >= 0 && g_comms[kTemp].comm != MPI_COMM_NULL) {
      if (g_comms[kTemp].watched) recorder.unwatch(g_comms[kTemp].comm);
      MPI_OK(MPI_Comm_free(&g_comms[kTemp].comm));
    }
    g_comms[kTemp] = CommInfo{};
  }

  // Quiesce, then stop recording and check.
  void* detached = nullptr;
  int detached_size = 0;
  MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
  MPI_OK(MPI_Request_free(&ch_send));
  MPI_OK(MPI_Request_free(&ch_recv));
  MPI_OK(MPI_Request_free(&never_persistent));
  recorder.unwatch(g_comms[kSplit].comm);
  MPI_OK(MPI_Comm_free(&g_comms[kSplit].comm));
  MPI_OK(MPI_Comm_free(&g_comms[kDupB].comm));
  MPI_OK(MPI_Comm_free(&g_comms[kDupA].comm));
  MPI_OK(MPI_Comm_free(&channel_comm));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  // From here on only `quiet` carries traffic until MPI_Finalize.
  rc = recorder.stop();
  CHECK(rc == PERUSE_SUCCESS, "stop returned %d", rc);
  g_round = -1;

  int violations = recorder.check(stderr, g_rank);
  int uncovered = check_coverage(recorder);
  CHECK(uncovered == 0, "%d (communicator, peer, tag) keys whose sends or arrivals were not all recorded", uncovered);
  if (violations) std::fprintf(stderr, "[rank %d] %d PERUSE violations (seed %llu)\n", g_rank, violations, g_seed);
  std::vector<size_t> counts = recorder.counts();
  std::vector<long> mine(counts.begin(), counts.end()), total(counts.size());
  MPI_Allreduce(mine.data(), total.data(), int(mine.size()), MPI_LONG, MPI_SUM, quiet);
  std::vector<long> kinds(size_t(int(kNumSendKinds) + int(kNumRecvKinds))), kinds_sum(kinds.size());
  for (int k = 0; k < kNumSendKinds; ++k) kinds[size_t(k)] = stats.sends[k];
  for (int k = 0; k < kNumRecvKinds; ++k) kinds[size_t(kNumSendKinds + k)] = stats.recvs[k];
  MPI_Allreduce(kinds.data(), kinds_sum.data(), int(kinds.size()), MPI_LONG, MPI_SUM, quiet);
  if (g_rank == 0) {
    std::printf("events recorded (all ranks):");
    for (size_t e = 1; e < total.size(); ++e)
      std::printf("%s %s=%ld", e % 4 == 1 ? "\n " : "", sonde::peruse_checker::event_name(int(e)), total[e]);
    std::printf("\nsends:");
    for (int k = 0; k < kNumSendKinds; ++k) std::printf(" %s=%ld", kSendNames[k], kinds_sum[size_t(k)]);
    std::printf("\nreceives:");
    for (int k = 0; k < kNumRecvKinds; ++k) std::printf(" %s=%ld", kRecvNames[k], kinds_sum[size_t(kNumSendKinds + k)]);
    std::printf("\n");
    // Every event must have been exercised, or the run proved little.
    for (size_t e = 1; e < total.size(); ++e)
      if (e != PERUSE_COMM_REQ_XFER_CONTINUE)
        CHECK(total[e] > 0, "no %s event recorded", sonde::peruse_checker::event_name(int(e)));
    // Streamed rendezvous (no single copy) sends in fragments.
    const char* sc = std::getenv("SONDE_SHM_SINGLE_COPY");
    if (sc && std::strcmp(sc, "0") == 0)
      CHECK(total[PERUSE_COMM_REQ_XFER_CONTINUE] > 0, "no REQ_XFER_CONTINUE recorded with SONDE_SHM_SINGLE_COPY=0");
  }
  long local[6] = {violations, g_failures, stats.cancel_ok, stats.cancel_late, stats.messages, stats.bytes};
  long sum[6];
  MPI_Allreduce(local, sum, 6, MPI_LONG, MPI_SUM, quiet);
  if (g_rank == 0) {
    std::printf("%ld messages (%ld bytes) verified; cancels of real receives: %ld succeeded, %ld too late\n", sum[4],
                sum[5], sum[2], sum[3]);
    if (sum[0] == 0 && sum[1] == 0)
      std::printf("random_workload: 0 PERUSE violations on %d ranks, all data verified (seed %llu)\n", g_size, g_seed);
    else
      std::printf("random_workload: FAILED: %ld PERUSE violations, %ld data/API failures (seed %llu; rerun with "
                  "PERUSE_CHECKER_SEED=%llu)\n",
                  sum[0], sum[1], g_seed, g_seed);
  }
  std::fflush(stdout);
  long failed = sum[0] + sum[1];
  MPI_OK(MPI_Comm_free(&quiet));
  MPI_Finalize();
  return failed ? 1 : 0;
}
