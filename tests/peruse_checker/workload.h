// The randomized PERUSE workload's parts (random_workload.cc runs them):
// shared state and checks, the seeded plan of one round (workload_plan.cc),
// the round's posting, sending, cancelling and completing (workload_round.cc),
// collectives and temporary communicators between them.
#pragma once

#include <mpi.h>
#include <peruse.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include "tests/peruse_checker/checker.h"

namespace workload {

// ---------------------------------------------------------------- shared state

extern int g_rank, g_size, g_round;
extern int g_failures;  // CHECK failures on this rank
extern unsigned long long g_seed;
extern uint64_t g_eager_limit;
// Diagnostics only (no test sets them): PERUSE_WORKLOAD_SKIP=free,fresh
// leaves out MPI_Request_free of send requests / traffic on a duplicate
// before every member has it, to tell engine defects apart while bisecting.
extern bool g_skip_free, g_skip_fresh;

// Coverage: every user message this rank sends or receives must appear in
// its recorded stream (send ACTIVATEs, MSG_ARRIVED), keyed by (communicator,
// peer, tag). This catches events that never fire, e.g. on a duplicate that
// propagation missed.
using Key = std::tuple<int, int, int>;
extern std::map<Key, long> g_expect_sends, g_expect_arrivals;
inline void expect_send(MPI_Comm c, int dst, int tag, long n = 1) { g_expect_sends[Key{c, dst, tag}] += n; }
inline void expect_arrival(MPI_Comm c, int src, int tag) { ++g_expect_arrivals[Key{c, src, tag}]; }

// Counts and prints (the first 25) failures with the seed and round.
#define CHECK(cond, ...)                                                                                       \
  do {                                                                                                         \
    if (!(cond) && ++g_failures <= 25) {                                                                       \
      std::fprintf(stderr, "[rank %d] seed %llu round %d: %s:%d: CHECK(%s) failed: ", g_rank, g_seed, g_round, \
                   __FILE__, __LINE__, #cond);                                                                 \
      std::fprintf(stderr, __VA_ARGS__);                                                                       \
      std::fputc('\n', stderr);                                                                                \
      std::fflush(stderr);                                                                                     \
    }                                                                                                          \
  } while (0)

#define MPI_OK(call)                                         \
  do {                                                       \
    int rc_ = (call);                                        \
    CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_); \
  } while (0)

// splitmix64: the same sequence on every rank.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return int(next() % uint64_t(n)); }
  bool chance(int percent) { return below(100) < percent; }
};

// ---------------------------------------------------------------- data

// The bytes of message idx of a round are a function of (seed, round, idx).
void fill(std::vector<uint8_t>& b, size_t n, uint64_t key);
uint64_t checksum(const uint8_t* p, size_t n);  // FNV-1a
uint64_t expected_checksum(size_t n, uint64_t key);
uint64_t msg_key(int round, int idx);
// Between failed Iprobe/Improbe calls: each fires a search, and a rank
// waiting for an oversubscribed peer would otherwise record millions.
void backoff(int& spins);
// A message size: 0 B, small, around the eager limits, rendezvous up to 1 MiB.
int pick_size(Rng& g);

// ---------------------------------------------------------------- communicators

enum Slot { kWorld, kDupA, kDupB, kSplit, kTemp, kNumSlots };
extern const char* const kSlotNames[kNumSlots];

struct CommInfo {
  MPI_Comm comm = MPI_COMM_NULL;            // this rank's handle, MPI_COMM_NULL if not a member
  std::vector<int> color;                   // per world rank, -1: not a member
  std::vector<int> rank_of;                 // world rank -> rank in its communicator
  std::map<int, std::vector<int>> members;  // colour -> world ranks in rank order
  bool exists = false;
  bool watched = false;  // registered by the recorder itself (not by propagation)

  // Fills color, rank_of and members as MPI_Comm_split would order them.
  void layout(const std::vector<int>& colors, const std::vector<int>& keys);
  bool member(int w) const { return exists && color[size_t(w)] >= 0; }
  const std::vector<int>& peers_of(int w) const { return members.at(color[size_t(w)]); }
};

extern CommInfo g_comms[kNumSlots];

// This rank's rank and size in c are what c's layout says.
void check_layout(const CommInfo& c, const char* what);

// ---------------------------------------------------------------- the plan

enum SendKind {
  kSend,
  kSsend,
  kRsend,
  kBsend,
  kIsend,
  kIssend,
  kIrsend,
  kIbsend,
  kIsendFree,
  kIbsendFree,
  kSendInit,
  kSsendInit,
  kRsendInit,
  kBsendInit,
  kNumSendKinds
};
extern const char* const kSendNames[kNumSendKinds];

enum RecvKind { kIrecv, kRecvInit, kIrecvCancel, kRecv, kIrecvLate, kProbe, kIprobe, kMprobe, kImprobe, kNumRecvKinds };
extern const char* const kRecvNames[kNumRecvKinds];

enum Style { kTagged, kAnyTag, kWild };

struct Msg {
  int idx, slot, src_w, dst_w, src, dst, tag, size;
  int send_kind, recv_kind, style, group;
  int psrc, ptag;  // the receive's pattern
  bool preposted;
};

struct Group {
  bool all_preposted = true;
  int max_size = 0;
};

constexpr int kTagBase = 100;
constexpr int kTagNever = 99;  // no message ever carries it: its receives are cancelled
constexpr int kTagPersistentNever = 98;
constexpr int kTagRing = 5;
constexpr int kTagChannel = 7;
constexpr int kBsendBudget = 3 << 20;

// Every rank derives the same plan of messages for a round from g.
std::vector<Msg> make_plan(Rng& g, int round, std::map<int, Group>& groups);

// ---------------------------------------------------------------- one round

struct RecvRecord {
  int msg;  // plan index of the receive's own entry (its group)
  std::vector<uint8_t> buf;
  MPI_Status status{};
  long post_seq = 0;
};

struct Pending {
  MPI_Request req;
  int record;            // RecvRecord index, -1 for sends and the rest
  bool persistent_free;  // a one-shot persistent request: free it once complete
};

struct Stats {
  long cancel_ok = 0, cancel_late = 0, messages = 0, bytes = 0;
  long sends[kNumSendKinds] = {}, recvs[kNumRecvKinds] = {};
};

struct Round {
  int round;
  Rng& g;
  std::vector<Msg> plan;
  std::map<int, Group> groups;
  std::vector<RecvRecord> records;
  std::vector<Pending> pending;
  std::vector<std::vector<uint8_t>> send_bufs;
  std::vector<std::vector<uint8_t>> scratch;  // kept alive until the round ends
  std::vector<int> received;                  // per plan index: times received
  long post_seq = 0;
  Stats& stats;

  Round(int r, Rng& rng, Stats& s) : round(r), g(rng), stats(s) {}

  MPI_Comm comm_of(const Msg& m) const { return g_comms[m.slot].comm; }

  int new_record(const Msg& m);

  void verify_record(RecvRecord& rec);

  void post_preposted();

  std::vector<Pending> cancel_prone;  // real receives cancelled in phase C (success or too late)
  std::vector<MPI_Request> never;     // receives nothing can match: the cancel must succeed

  void post_never(MPI_Request persistent_never);
  bool persistent_started = false;

  void send_all();

  // Sends, receives and probes with MPI_PROC_NULL.
  void proc_null(bool sending);

  // Self traffic on MPI_COMM_SELF: a nonblocking send now, a receive later.
  int self_size = -1;
  void self_send();
  void self_recv();

  void cancels();

  void late_receives();

  // Completes everything pending, with a completion call chosen at random.
  void complete_all();

  // Wildcard groups: per sender, receives in posting order got messages in sending order.
  void check_order();
};

// ---------------------------------------------------------------- between rounds

// A collective on a random communicator (members only), verified.
void collective(Rng& g, int round, const char* where);
// Creates this round's temporary communicator, if any. Returns its kind (-1: none).
int make_temp(Rng& g, sonde::peruse_checker::Recorder& rec);
// Compares the recorded stream with what this rank sent and received; returns the mismatched keys.
int check_coverage(const sonde::peruse_checker::Recorder& rec);

}  // namespace workload
