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

#include "tests/peruse_checker/checker.h"

namespace {

int g_rank = -1, g_size = 0, g_round = -1;
int g_failures = 0;
unsigned long long g_seed = 0;
uint64_t g_eager_limit = 16 * 1024;
// Diagnostics only (no test sets them): PERUSE_WORKLOAD_SKIP=free,fresh
// leaves out MPI_Request_free of send requests / traffic on a duplicate
// before every member has it, to tell engine defects apart while bisecting.
bool g_skip_free = false, g_skip_fresh = false;

// Coverage: every user message this rank sends or receives must appear in
// its recorded stream (send ACTIVATEs, MSG_ARRIVED), keyed by (communicator,
// peer, tag). This catches events that never fire, e.g. on a duplicate that
// propagation missed.
using Key = std::tuple<int, int, int>;
std::map<Key, long> g_expect_sends, g_expect_arrivals;
void expect_send(MPI_Comm c, int dst, int tag, long n = 1) { g_expect_sends[Key{c, dst, tag}] += n; }
void expect_arrival(MPI_Comm c, int src, int tag) { ++g_expect_arrivals[Key{c, src, tag}]; }

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

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

void fill(std::vector<uint8_t>& b, size_t n, uint64_t key) {
  b.resize(std::max<size_t>(n, 1));
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = mix(key * 0x9e3779b97f4a7c15ull + i);
    std::memcpy(b.data() + i, &w, std::min<size_t>(8, n - i));
  }
}

uint64_t checksum(const uint8_t* p, size_t n) {  // FNV-1a
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t expected_checksum(size_t n, uint64_t key) {
  std::vector<uint8_t> b;
  fill(b, n, key);
  return checksum(b.data(), n);
}

uint64_t msg_key(int round, int idx) { return (g_seed << 20) ^ (uint64_t(round) << 10) ^ uint64_t(idx); }

// Between failed Iprobe/Improbe calls: each fires a search, and a rank
// waiting for an oversubscribed peer would otherwise record millions.
void backoff(int& spins) {
  if (++spins < 8) return;
  timespec ts{0, 20000};
  nanosleep(&ts, nullptr);
}

int pick_size(Rng& g) {
  int r = g.below(100);
  if (r < 15) return 0;
  if (r < 40) return 1 + g.below(64);
  if (r < 60) return 65 + g.below(4032);
  if (r < 70) {
    static const int kEdges[] = {4095, 4096, 4097, 16383, 16384, 16385};
    return kEdges[g.below(6)];
  }
  if (r < 86) return 4097 + g.below(60000);
  if (r < 96) return 65536 + g.below(196608);
  return 262144 + g.below(786433);  // up to 1 MiB
}

// ---------------------------------------------------------------- communicators

enum Slot { kWorld, kDupA, kDupB, kSplit, kTemp, kNumSlots };
const char* const kSlotNames[] = {"WORLD", "dupA", "dupB", "split", "temp"};

struct CommInfo {
  MPI_Comm comm = MPI_COMM_NULL;            // this rank's handle, MPI_COMM_NULL if not a member
  std::vector<int> color;                   // per world rank, -1: not a member
  std::vector<int> rank_of;                 // world rank -> rank in its communicator
  std::map<int, std::vector<int>> members;  // colour -> world ranks in rank order
  bool exists = false;
  bool watched = false;  // registered by the recorder itself (not by propagation)

  void layout(const std::vector<int>& colors, const std::vector<int>& keys) {
    color = colors;
    rank_of.assign(size_t(g_size), -1);
    members.clear();
    std::map<int, std::vector<std::pair<int, int>>> by_color;
    for (int w = 0; w < g_size; ++w)
      if (colors[size_t(w)] >= 0) by_color[colors[size_t(w)]].push_back({keys[size_t(w)], w});
    for (auto& [c, v] : by_color) {
      std::stable_sort(v.begin(), v.end());
      for (auto& [k, w] : v) {
        rank_of[size_t(w)] = int(members[c].size());
        members[c].push_back(w);
      }
    }
    exists = true;
  }
  bool member(int w) const { return exists && color[size_t(w)] >= 0; }
  const std::vector<int>& peers_of(int w) const { return members.at(color[size_t(w)]); }
};

CommInfo g_comms[kNumSlots];

void check_layout(const CommInfo& c, const char* what) {
  if (!c.member(g_rank)) {
    CHECK(c.comm == MPI_COMM_NULL, "%s: not a member but got a communicator", what);
    return;
  }
  int r = -1, n = -1;
  MPI_Comm_rank(c.comm, &r);
  MPI_Comm_size(c.comm, &n);
  CHECK(r == c.rank_of[size_t(g_rank)] && n == int(c.peers_of(g_rank).size()), "%s: rank %d of %d, expected %d of %zu",
        what, r, n, c.rank_of[size_t(g_rank)], c.peers_of(g_rank).size());
}

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
const char* const kSendNames[] = {"Send",      "Ssend",      "Rsend",      "Bsend",      "Isend",
                                  "Issend",    "Irsend",     "Ibsend",     "Isend+free", "Ibsend+free",
                                  "Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};

enum RecvKind { kIrecv, kRecvInit, kIrecvCancel, kRecv, kIrecvLate, kProbe, kIprobe, kMprobe, kImprobe, kNumRecvKinds };
const char* const kRecvNames[] = {"Irecv", "Recv_init", "Irecv+Cancel", "Recv",   "Irecv(late)",
                                  "Probe", "Iprobe",    "Mprobe",       "Improbe"};

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

std::vector<Msg> make_plan(Rng& g, int round, std::map<int, Group>& groups) {
  std::vector<int> slots;
  for (int s = 0; s < kNumSlots; ++s)
    if (g_comms[s].exists) slots.push_back(s);
  int n = g_size * (1 + g.below(3));
  std::vector<Msg> plan;
  for (int i = 0; i < n; ++i) {
    Msg m{};
    m.idx = i;
    m.slot = slots[size_t(g.below(int(slots.size())))];
    std::vector<int> can_send;
    for (int w = 0; w < g_size; ++w)
      if (g_comms[m.slot].member(w)) can_send.push_back(w);
    if (can_send.empty()) {  // a temporary split nobody joined
      m.slot = kWorld;
      for (int w = 0; w < g_size; ++w) can_send.push_back(w);
    }
    m.src_w = can_send[size_t(g.below(int(can_send.size())))];
    const CommInfo& c = g_comms[m.slot];
    const std::vector<int>& peers = c.peers_of(m.src_w);
    m.dst_w = peers[size_t(g.below(int(peers.size())))];
    m.src = c.rank_of[size_t(m.src_w)];
    m.dst = c.rank_of[size_t(m.dst_w)];
    m.tag = kTagBase + i + 1000 * (round % 7);
    m.size = pick_size(g);
    plan.push_back(m);
  }
  // One way of selecting per (receiver, communicator).
  std::map<std::pair<int, int>, int> style;
  for (Msg& m : plan) {
    auto key = std::make_pair(m.dst_w, m.slot);
    if (!style.count(key)) {
      int r = g.below(100);
      style[key] = r < 55 ? kTagged : r < 80 ? kAnyTag : kWild;
    }
    m.style = style[key];
    switch (m.style) {
      case kTagged:
        m.psrc = g.chance(30) ? MPI_ANY_SOURCE : m.src;
        m.ptag = m.tag;
        m.group = m.idx;
        break;
      case kAnyTag:
        m.psrc = m.src;
        m.ptag = MPI_ANY_TAG;
        m.group = 100000 + (m.dst_w * kNumSlots + m.slot) * 64 + m.src_w;
        break;
      default:
        m.psrc = MPI_ANY_SOURCE;
        m.ptag = MPI_ANY_TAG;
        m.group = 200000 + m.dst_w * kNumSlots + m.slot;
        break;
    }
    m.preposted = g.chance(50);
    Group& gr = groups[m.group];
    gr.all_preposted = gr.all_preposted && m.preposted;
    gr.max_size = std::max(gr.max_size, m.size);
  }
  std::vector<long> bsend_used(size_t(g_size), 0);
  for (Msg& m : plan) {
    if (m.preposted) {
      m.recv_kind = m.style == kTagged && g.chance(25) ? kIrecvCancel : g.chance(30) ? kRecvInit : kIrecv;
    } else {
      m.recv_kind = kRecv + g.below(kNumRecvKinds - kRecv);
    }
    std::vector<int> kinds = {kIsend, kIssend, kIbsend, kIbsendFree, kSendInit, kSsendInit, kBsendInit, kBsend};
    if (uint64_t(m.size) <= g_eager_limit) kinds.insert(kinds.end(), {kSend, kIsendFree});
    bool safe = groups[m.group].all_preposted && m.recv_kind != kIrecvCancel;
    if (safe) kinds.insert(kinds.end(), {kSend, kSsend});
    if (safe && m.style == kTagged) kinds.insert(kinds.end(), {kRsend, kIrsend, kRsendInit});
    m.send_kind = kinds[size_t(g.below(int(kinds.size())))];
    if (g_skip_free && m.send_kind == kIsendFree) m.send_kind = kIsend;
    if (g_skip_free && m.send_kind == kIbsendFree) m.send_kind = kIbsend;
    bool buffered =
        m.send_kind == kBsend || m.send_kind == kIbsend || m.send_kind == kIbsendFree || m.send_kind == kBsendInit;
    if (buffered) {
      long need = long(m.size) + MPI_BSEND_OVERHEAD;
      if (bsend_used[size_t(m.src_w)] + need > kBsendBudget) m.send_kind = kIsend;
      else bsend_used[size_t(m.src_w)] += need;
    }
  }
  return plan;
}

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

  int new_record(const Msg& m) {
    RecvRecord rec;
    rec.msg = m.idx;
    rec.buf.assign(size_t(std::max(groups[m.group].max_size, 1)), 0);
    rec.post_seq = post_seq++;
    records.push_back(std::move(rec));
    return int(records.size()) - 1;
  }

  void verify_record(RecvRecord& rec) {
    const Msg& own = plan[size_t(rec.msg)];
    const MPI_Status& st = rec.status;
    int idx = st.MPI_TAG - kTagBase - 1000 * (round % 7);
    if (idx < 0 || idx >= int(plan.size())) {
      CHECK(false, "receive for msg %d (%s, group %d) got tag %d: no such message", own.idx, kRecvNames[own.recv_kind],
            own.group, st.MPI_TAG);
      return;
    }
    const Msg& m = plan[size_t(idx)];
    CHECK(m.group == own.group && m.dst_w == g_rank,
          "receive for msg %d (group %d) got msg %d of group %d (to world rank %d)", own.idx, own.group, m.idx, m.group,
          m.dst_w);
    CHECK(received[size_t(idx)]++ == 0, "msg %d received twice", idx);
    expect_arrival(comm_of(m), m.src, m.tag);
    CHECK(st.MPI_SOURCE == m.src, "msg %d: status source %d, sent by %d", idx, st.MPI_SOURCE, m.src);
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == m.size, "msg %d: %d bytes received, %d sent", idx, count, m.size);
    if (count == m.size) {
      uint64_t got = checksum(rec.buf.data(), size_t(m.size)),
               want = expected_checksum(size_t(m.size), msg_key(round, idx));
      CHECK(got == want, "msg %d (%d B, %s -> %s, comm %s): checksum %016llx, expected %016llx", idx, m.size,
            kSendNames[m.send_kind], kRecvNames[own.recv_kind], kSlotNames[m.slot], (unsigned long long)got,
            (unsigned long long)want);
    }
    ++stats.messages;
    stats.bytes += m.size;
  }

  void post_preposted() {
    for (const Msg& m : plan) {
      if (m.dst_w != g_rank || !m.preposted) continue;
      int r = new_record(m);
      RecvRecord& rec = records[size_t(r)];
      MPI_Request req;
      int cap = int(rec.buf.size());
      ++stats.recvs[m.recv_kind];
      if (m.recv_kind == kRecvInit) {
        MPI_OK(MPI_Recv_init(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, comm_of(m), &req));
        MPI_OK(MPI_Start(&req));
        pending.push_back({req, r, true});
      } else {
        MPI_OK(MPI_Irecv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, comm_of(m), &req));
        if (m.recv_kind == kIrecvCancel) cancel_prone.push_back({req, r, false});
        else pending.push_back({req, r, false});
      }
    }
  }

  std::vector<Pending> cancel_prone;  // real receives cancelled in phase C (success or too late)
  std::vector<MPI_Request> never;     // receives nothing can match: the cancel must succeed

  void post_never(MPI_Request persistent_never) {
    // All ranks draw the same numbers; each acts on its own.
    for (int w = 0; w < g_size; ++w) {
      bool post = g.chance(40);
      int slot = g.below(kNumSlots);
      int pick = g.below(1 << 20);
      if (w != g_rank || !post) continue;
      if (!g_comms[slot].member(g_rank)) slot = kWorld;
      const CommInfo& c = g_comms[slot];
      int n = int(c.peers_of(g_rank).size());
      int src = pick % 3 == 0 ? MPI_ANY_SOURCE : pick % n;
      scratch.emplace_back(16);
      MPI_Request req;
      MPI_OK(MPI_Irecv(scratch.back().data(), 16, MPI_BYTE, src, kTagNever, c.comm, &req));
      never.push_back(req);
    }
    if (g.chance(30)) {
      MPI_Request p = persistent_never;
      MPI_OK(MPI_Start(&p));
      persistent_started = true;
    }
  }
  bool persistent_started = false;

  void send_all() {
    for (const Msg& m : plan) {
      if (m.src_w != g_rank) continue;
      send_bufs.emplace_back();
      std::vector<uint8_t>& b = send_bufs.back();
      fill(b, size_t(m.size), msg_key(round, m.idx));
      MPI_Comm c = comm_of(m);
      MPI_Request req = MPI_REQUEST_NULL;
      ++stats.sends[m.send_kind];
      // MPI_Ibsend and a started MPI_Bsend_init: the user's request and the internal one.
      bool two = m.send_kind == kIbsend || m.send_kind == kIbsendFree || m.send_kind == kBsendInit;
      expect_send(c, m.dst, m.tag, two ? 2 : 1);
      switch (m.send_kind) {
        case kSend: MPI_OK(MPI_Send(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
        case kSsend: MPI_OK(MPI_Ssend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
        case kRsend: MPI_OK(MPI_Rsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
        case kBsend: MPI_OK(MPI_Bsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c)); break;
        case kIsend: MPI_OK(MPI_Isend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kIssend: MPI_OK(MPI_Issend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kIrsend: MPI_OK(MPI_Irsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kIbsend: MPI_OK(MPI_Ibsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kIsendFree:
          MPI_OK(MPI_Isend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req));
          MPI_OK(MPI_Request_free(&req));
          break;
        case kIbsendFree:
          MPI_OK(MPI_Ibsend(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req));
          MPI_OK(MPI_Request_free(&req));
          break;
        case kSendInit: MPI_OK(MPI_Send_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kSsendInit: MPI_OK(MPI_Ssend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kRsendInit: MPI_OK(MPI_Rsend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
        case kBsendInit: MPI_OK(MPI_Bsend_init(b.data(), m.size, MPI_BYTE, m.dst, m.tag, c, &req)); break;
      }
      bool persistent = m.send_kind >= kSendInit;
      if (persistent) MPI_OK(MPI_Start(&req));
      if (req != MPI_REQUEST_NULL) pending.push_back({req, -1, persistent});
    }
  }

  // Sends, receives and probes with MPI_PROC_NULL.
  void proc_null(bool sending) {
    int what = g.below(8);
    int act = g.below(g_size);
    bool also = g.chance(50);  // drawn by every rank: the sequence stays the same everywhere
    if (act != g_rank && !also) return;
    char b[8] = {};
    MPI_Status st;
    MPI_Request req;
    if (sending) {
      switch (what % 4) {
        case 0: MPI_OK(MPI_Send(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); break;
        case 1:
          MPI_OK(MPI_Isend(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, g_comms[kDupA].comm, &req));
          pending.push_back({req, -1, false});
          break;
        case 2:
          MPI_OK(MPI_Send_init(b, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
          MPI_OK(MPI_Start(&req));
          pending.push_back({req, -1, true});
          break;
        default:
          MPI_OK(MPI_Sendrecv(b, 4, MPI_BYTE, MPI_PROC_NULL, 1, b + 4, 4, MPI_BYTE, MPI_PROC_NULL, 1,
                              g_comms[kDupB].comm, &st));
          CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Sendrecv with MPI_PROC_NULL: source %d", st.MPI_SOURCE);
          break;
      }
      return;
    }
    int flag = 0;
    MPI_Message msg;
    switch (what) {
      case 0:
        MPI_OK(MPI_Recv(b, 8, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
        break;
      case 1:
      case 2:
        MPI_OK(MPI_Irecv(b, 8, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, g_comms[kDupA].comm, &req));
        MPI_OK(MPI_Wait(&req, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Irecv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
        break;
      case 3: MPI_OK(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st)); break;
      case 4:
        MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag, "Iprobe(MPI_PROC_NULL) flag 0");
        break;
      default:
        MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave no MPI_MESSAGE_NO_PROC");
        MPI_OK(MPI_Mrecv(b, 8, MPI_BYTE, &msg, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv(MPI_MESSAGE_NO_PROC): source %d", st.MPI_SOURCE);
        break;
    }
  }

  // Self traffic on MPI_COMM_SELF: a nonblocking send now, a receive later.
  int self_size = -1;
  void self_send() {
    int size = pick_size(g);
    if (!g.chance(35)) return;
    self_size = size;
    send_bufs.emplace_back();
    fill(send_bufs.back(), size_t(size), msg_key(round, 999));
    MPI_Request req;
    MPI_OK(MPI_Isend(send_bufs.back().data(), size, MPI_BYTE, 0, 11, MPI_COMM_SELF, &req));
    expect_send(MPI_COMM_SELF, 0, 11);
    expect_arrival(MPI_COMM_SELF, 0, 11);
    pending.push_back({req, -1, false});
  }
  void self_recv() {
    if (self_size < 0) return;
    std::vector<uint8_t> b(size_t(self_size) + 1);
    MPI_Status st;
    if (g_rank % 2) {
      MPI_Message msg;
      MPI_OK(MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_SELF, &msg, &st));
      MPI_OK(MPI_Mrecv(b.data(), int(b.size()), MPI_BYTE, &msg, &st));
    } else {
      MPI_OK(MPI_Recv(b.data(), int(b.size()), MPI_BYTE, 0, 11, MPI_COMM_SELF, &st));
    }
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == self_size &&
              checksum(b.data(), size_t(count)) == expected_checksum(size_t(count), msg_key(round, 999)),
          "self message on MPI_COMM_SELF: %d bytes, expected %d, or bad data", count, self_size);
  }

  void cancels() {
    for (MPI_Request& req : never) {
      MPI_Status st;
      MPI_OK(MPI_Cancel(&req));
      MPI_OK(MPI_Wait(&req, &st));
      int flag = 0;
      MPI_Test_cancelled(&st, &flag);
      CHECK(flag, "a receive nothing matches was not cancelled");
    }
    for (Pending& p : cancel_prone) {
      RecvRecord& rec = records[size_t(p.record)];
      const Msg& m = plan[size_t(rec.msg)];
      MPI_OK(MPI_Cancel(&p.req));
      MPI_OK(MPI_Wait(&p.req, &rec.status));
      int flag = 0;
      MPI_Test_cancelled(&rec.status, &flag);
      if (flag) {
        ++stats.cancel_ok;
        MPI_OK(MPI_Recv(rec.buf.data(), int(rec.buf.size()), MPI_BYTE, m.psrc, m.ptag, comm_of(m), &rec.status));
      } else {
        ++stats.cancel_late;
      }
      verify_record(rec);
    }
  }

  void late_receives() {
    for (const Msg& m : plan) {
      if (m.dst_w != g_rank || m.preposted) continue;
      int r = new_record(m);
      RecvRecord& rec = records[size_t(r)];
      int cap = int(rec.buf.size());
      MPI_Comm c = comm_of(m);
      MPI_Request req;
      MPI_Message msg;
      MPI_Status st;
      int flag = 0;
      ++stats.recvs[m.recv_kind];
      switch (m.recv_kind) {
        case kRecv:
          MPI_OK(MPI_Recv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, c, &rec.status));
          verify_record(rec);
          break;
        case kIrecvLate:
          MPI_OK(MPI_Irecv(rec.buf.data(), cap, MPI_BYTE, m.psrc, m.ptag, c, &req));
          pending.push_back({req, r, false});
          break;
        case kProbe:
        case kIprobe:
          if (m.recv_kind == kProbe) {
            MPI_OK(MPI_Probe(m.psrc, m.ptag, c, &st));
          } else {
            for (int spins = 0; !flag; backoff(spins)) MPI_OK(MPI_Iprobe(m.psrc, m.ptag, c, &flag, &st));
          }
          MPI_OK(MPI_Recv(rec.buf.data(), cap, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, c, &rec.status));
          CHECK(rec.status.MPI_TAG == st.MPI_TAG && rec.status.MPI_SOURCE == st.MPI_SOURCE,
                "probed (%d, %d) but received (%d, %d)", st.MPI_SOURCE, st.MPI_TAG, rec.status.MPI_SOURCE,
                rec.status.MPI_TAG);
          verify_record(rec);
          break;
        case kMprobe:
          MPI_OK(MPI_Mprobe(m.psrc, m.ptag, c, &msg, &st));
          MPI_OK(MPI_Mrecv(rec.buf.data(), cap, MPI_BYTE, &msg, &rec.status));
          verify_record(rec);
          break;
        case kImprobe:
          for (int spins = 0; !flag; backoff(spins)) MPI_OK(MPI_Improbe(m.psrc, m.ptag, c, &flag, &msg, &st));
          MPI_OK(MPI_Imrecv(rec.buf.data(), cap, MPI_BYTE, &msg, &req));
          pending.push_back({req, r, false});
          break;
        default: CHECK(false, "bad late receive kind %d", m.recv_kind);
      }
    }
  }

  // Completes everything pending, with a completion call chosen at random.
  void complete_all() {
    size_t n = pending.size();
    std::vector<MPI_Request> reqs(n);
    std::vector<MPI_Status> st(n);
    for (size_t k = 0; k < n; ++k) reqs[k] = pending[k].req;
    int method = g.below(8);
    std::vector<int> idx(n + 1);
    std::vector<MPI_Status> some_st(n + 1);
    int ni = int(n);
    // Waitsome / Testsome until no request is active (completed persistent
    // requests are inactive and count as null).
    auto some = [&](int (*call)(int, MPI_Request*, int*, int*, MPI_Status*)) {
      for (int out = 0; out != MPI_UNDEFINED;) {
        MPI_OK(call(ni, reqs.data(), &out, idx.data(), some_st.data()));
        for (int k = 0; k < out && out != MPI_UNDEFINED; ++k) st[size_t(idx[size_t(k)])] = some_st[size_t(k)];
      }
    };
    switch (method) {
      case 0: MPI_OK(MPI_Waitall(ni, reqs.data(), st.data())); break;
      case 1:
        for (int i = 0; i != MPI_UNDEFINED;) {
          MPI_Status s;
          MPI_OK(MPI_Waitany(ni, reqs.data(), &i, &s));
          if (i != MPI_UNDEFINED) st[size_t(i)] = s;
        }
        break;
      case 2: some(MPI_Waitsome); break;
      case 3: {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Testall(ni, reqs.data(), &flag, st.data()));
        break;
      }
      case 4:
        for (int i = 0, flag = 0; !(flag && i == MPI_UNDEFINED);) {
          MPI_Status s;
          MPI_OK(MPI_Testany(ni, reqs.data(), &i, &flag, &s));
          if (flag && i != MPI_UNDEFINED) st[size_t(i)] = s;
        }
        break;
      case 5: some(MPI_Testsome); break;
      case 6:
        for (size_t k = n; k-- > 0;) MPI_OK(MPI_Wait(&reqs[k], &st[k]));
        break;
      default:
        for (size_t k = 0; k < n; ++k) {
          int flag = 0;
          while (!flag) MPI_OK(MPI_Test(&reqs[k], &flag, &st[k]));
        }
        break;
    }
    for (size_t k = 0; k < n; ++k) {
      // One-shot persistent requests are inactive now: free them.
      if (pending[k].persistent_free) {
        MPI_Request r = pending[k].req;
        MPI_OK(MPI_Request_free(&r));
      }
      if (pending[k].record >= 0) {
        RecvRecord& rec = records[size_t(pending[k].record)];
        rec.status = st[k];
        verify_record(rec);
      }
    }
    pending.clear();
  }

  // Wildcard groups: per sender, receives in posting order got messages in sending order.
  void check_order() {
    std::map<int, std::vector<const RecvRecord*>> by_group;
    for (const RecvRecord& rec : records) {
      const Msg& own = plan[size_t(rec.msg)];
      if (own.style != kTagged) by_group[own.group].push_back(&rec);
    }
    for (auto& [group, recs] : by_group) {
      std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->post_seq < b->post_seq; });
      std::map<int, int> last;  // sender -> last plan index received
      for (const RecvRecord* rec : recs) {
        int idx = rec->status.MPI_TAG - kTagBase - 1000 * (round % 7);
        if (idx < 0 || idx >= int(plan.size())) continue;
        int src = plan[size_t(idx)].src_w;
        auto it = last.find(src);
        CHECK(it == last.end() || it->second < idx,
              "group %d: a receive posted later got msg %d from world rank %d before msg %d (non-overtaking)", group,
              it == last.end() ? -1 : it->second, src, idx);
        last[src] = idx;
      }
    }
    for (size_t i = 0; i < plan.size(); ++i)
      if (plan[i].dst_w == g_rank) CHECK(received[i] == 1, "msg %zu received %d times", i, received[i]);
  }
};

// A collective on a random communicator (members only), verified.
void collective(Rng& g, int round, const char* where) {
  int slot = g.below(g_comms[kTemp].exists ? 5 : 4);
  int kind = g.below(3);
  int size = pick_size(g);
  int root_pick = g.below(1 << 20);
  const CommInfo& c = g_comms[slot];
  if (!c.member(g_rank)) return;
  int n = int(c.peers_of(g_rank).size());
  int me = c.rank_of[size_t(g_rank)];
  if (kind == 0) {
    MPI_OK(MPI_Barrier(c.comm));
  } else if (kind == 1) {
    int root = root_pick % n;
    std::vector<uint8_t> b;
    uint64_t key = msg_key(round, 5000 + slot) ^ uint64_t(c.color[size_t(g_rank)]);
    if (me == root) fill(b, size_t(size), key);
    else b.assign(size_t(std::max(size, 1)), 0);
    MPI_OK(MPI_Bcast(b.data(), size, MPI_BYTE, root, c.comm));
    CHECK(checksum(b.data(), size_t(size)) == expected_checksum(size_t(size), key), "%s: Bcast of %d B on %s: bad data",
          where, size, kSlotNames[slot]);
  } else {
    int count = 1 + size % 5000;
    std::vector<long> in(static_cast<size_t>(count)), out(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) in[size_t(i)] = long(me) * 1000003 + i;
    MPI_OK(MPI_Allreduce(in.data(), out.data(), count, MPI_LONG, MPI_SUM, c.comm));
    bool ok = true;
    for (int i = 0; i < count; ++i) ok = ok && out[size_t(i)] == long(n) * (n - 1) / 2 * 1000003 + long(n) * i;
    CHECK(ok, "%s: Allreduce of %d longs on %s: wrong sum", where, count, kSlotNames[slot]);
  }
}

// Creates this round's temporary communicator, if any. Returns its kind.
int make_temp(Rng& g, sonde::peruse_checker::Recorder& rec) {
  CommInfo& t = g_comms[kTemp];
  t = CommInfo{};
  if (!g.chance(40)) return -1;
  int kind = g.below(4);
  std::vector<int> colors(static_cast<size_t>(g_size)), keys(static_cast<size_t>(g_size));
  for (int w = 0; w < g_size; ++w) {
    colors[size_t(w)] = g.below(3);
    keys[size_t(w)] = g.below(5);
  }
  MPI_Comm out = MPI_COMM_NULL;
  if (kind == 3) {  // a split of dupA with random colours; 2 is MPI_UNDEFINED
    int color = colors[size_t(g_rank)] == 2 ? MPI_UNDEFINED : colors[size_t(g_rank)];
    MPI_OK(MPI_Comm_split(g_comms[kDupA].comm, color, keys[size_t(g_rank)], &out));
    for (int w = 0; w < g_size; ++w) {
      if (colors[size_t(w)] == 2) colors[size_t(w)] = -1;
      keys[size_t(w)] = keys[size_t(w)] * g_size + g_comms[kDupA].rank_of[size_t(w)];  // ties by parent rank
    }
    t.layout(colors, keys);
    t.comm = out;
    check_layout(t, "temporary split");
    if (out != MPI_COMM_NULL) {
      // No traffic on it before every member is watching: the next
      // all-rank collective (before any send of the round) guarantees that.
      int rc = rec.watch(out, true);
      CHECK(rc == PERUSE_SUCCESS, "watch(temporary split) returned %d", rc);
      t.watched = true;
    }
    return kind;
  }
  // A duplicate, used at once: peers that finish first send before the
  // others have created it.
  int parent = kind == 0 ? kWorld : kind == 1 ? kDupA : kSplit;
  const CommInfo& p = g_comms[parent];
  MPI_OK(MPI_Comm_dup(p.comm, &out));
  t = p;
  t.comm = out;
  t.watched = false;
  check_layout(t, "temporary duplicate");
  if (g_skip_fresh) MPI_OK(MPI_Barrier(p.comm));
  int n = int(t.peers_of(g_rank).size()), me = t.rank_of[size_t(g_rank)];
  long token = long(g_rank), got = -1;
  MPI_Request req;
  MPI_OK(MPI_Isend(&token, 1, MPI_LONG, (me + 1) % n, kTagRing, out, &req));
  expect_send(out, (me + 1) % n, kTagRing);
  expect_arrival(out, (me + n - 1) % n, kTagRing);
  MPI_Status st;
  MPI_OK(MPI_Recv(&got, 1, MPI_LONG, (me + n - 1) % n, kTagRing, out, &st));
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(got == long(t.peers_of(g_rank)[size_t((me + n - 1) % n)]), "ring on a fresh duplicate: got %ld", got);
  return kind;
}

// Compares the recorded stream with what this rank sent and received.
int check_coverage(const sonde::peruse_checker::Recorder& rec) {
  std::map<Key, long> sends, arrivals;
  const sonde::peruse_checker::Event* ev = rec.events();
  for (size_t i = 0, n = rec.size(); i < n; ++i) {
    if (ev[i].tag < 0 || ev[i].peer == MPI_PROC_NULL) continue;  // internal traffic, MPI_PROC_NULL
    if (ev[i].event == PERUSE_COMM_REQ_ACTIVATE && ev[i].operation == PERUSE_SEND)
      ++sends[Key{ev[i].comm, ev[i].peer, ev[i].tag}];
    if (ev[i].event == PERUSE_COMM_MSG_ARRIVED) ++arrivals[Key{ev[i].comm, ev[i].peer, ev[i].tag}];
  }
  int bad = 0;
  auto compare = [&](const char* what, const std::map<Key, long>& want, const std::map<Key, long>& got) {
    std::map<Key, std::pair<long, long>> all;
    for (auto& [k, v] : want) all[k].first = v;
    for (auto& [k, v] : got) all[k].second = v;
    for (auto& [k, v] : all) {
      if (v.first == v.second) continue;
      if (++bad <= 10)
        std::fprintf(stderr, "[rank %d] coverage: %s on comm %d peer %d tag %d: %ld made, %ld recorded\n", g_rank, what,
                     std::get<0>(k), std::get<1>(k), std::get<2>(k), v.first, v.second);
    }
  };
  compare("send REQ_ACTIVATE", g_expect_sends, sends);
  compare("MSG_ARRIVED", g_expect_arrivals, arrivals);
  return bad;
}

}  // namespace

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
