// The workload's shared state, data, communicators and seeded plan, and what
// runs between rounds (workload.h).
#include <algorithm>
#include <cstring>

#include <time.h>

#include "tests/peruse_checker/workload.h"

namespace workload {

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
std::map<Key, long> g_expect_sends, g_expect_arrivals;

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

const char* const kSlotNames[kNumSlots] = {"WORLD", "dupA", "dupB", "split", "temp"};

void CommInfo::layout(const std::vector<int>& colors, const std::vector<int>& keys) {
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

const char* const kSendNames[kNumSendKinds] = {"Send",      "Ssend",      "Rsend",      "Bsend",      "Isend",
                                               "Issend",    "Irsend",     "Ibsend",     "Isend+free", "Ibsend+free",
                                               "Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};

const char* const kRecvNames[kNumRecvKinds] = {"Irecv", "Recv_init", "Irecv+Cancel", "Recv",   "Irecv(late)",
                                               "Probe", "Iprobe",    "Mprobe",       "Improbe"};

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

}  // namespace workload
