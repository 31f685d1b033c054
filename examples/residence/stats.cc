// The profiler's tables: communicator records (g.comms, found through
// g.comm_index), per-(communicator, peer, traffic) statistics blocks (an
// mmap'd arena, found through g.pair_index, each communicator's blocks
// chained through PairMeta::next), and the snapshots of them the reports are
// made from. Everything here but allocate_tables runs with the lock held
// (residence.h).
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "residence.h"

namespace sonde::residence {

namespace {

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end;
  unsigned long long n = std::strtoull(v, &end, 10);
  return (*end || n == 0) ? fallback : static_cast<size_t>(n);
}

uint64_t comm_key(MPI_Comm c) { return static_cast<uint64_t>(static_cast<uint32_t>(c)) + 1; }
uint64_t pair_key(int32_t comm, int peer, int internal) {
  return (static_cast<uint64_t>(comm + 1) << 33) | (static_cast<uint64_t>(static_cast<uint32_t>(peer)) << 1) |
         static_cast<uint64_t>(internal);
}

}  // namespace

bool allocate_tables() {
  // 16384 slots: 12288 live requests (and as many unexpected messages) in
  // well under a megabyte each, small enough to stay in cache.
  size_t table = env_size("SONDE_RESIDENCE_TABLE_SIZE", 16384);
  size_t pairs = env_size("SONDE_RESIDENCE_MAX_PAIRS", 4096);
  if (pairs > (1u << 24)) pairs = 1u << 24;
  g.comms = static_cast<CommRec*>(std::calloc(kMaxComms, sizeof(CommRec)));
  g.pair_meta = static_cast<PairMeta*>(std::calloc(pairs, sizeof(PairMeta)));
  // Reserved, not committed: a page costs memory once a pair uses it.
  void* arena = mmap(nullptr, pairs * sizeof(PairStats), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (!g.comms || !g.pair_meta || arena == MAP_FAILED) return false;
  // calloc's pages of this size come straight from mmap, untouched: touched
  // here, so no callback faults on a communicator's record or a block's list.
  std::memset(static_cast<void*>(g.comms), 0, kMaxComms * sizeof(CommRec));
  std::memset(static_cast<void*>(g.pair_meta), 0, pairs * sizeof(PairMeta));
  g.pair_stats = static_cast<PairStats*>(arena);
  g.max_pairs = static_cast<int32_t>(pairs);
  for (int i = kMaxComms - 1; i >= 0; --i) {
    g.comms[i].pairs = g.free_comm;
    g.free_comm = i;
  }
  return g.comm_index.init(2 * kMaxComms) && g.pair_index.init(2 * pairs) && g.requests.init(table) &&
         g.messages.init(table);
}

void warm_pairs(int members) {
  const int32_t ahead = kWarmPairs + std::min(std::max(members, 0), kWarmPairsPerComm) * (g.keep_internal ? 2 : 1);
  const int32_t want = std::min(g.max_pairs, g.fresh_pairs + ahead);
  if (want <= g.warm_pairs) return;
  std::memset(static_cast<void*>(g.pair_stats + g.warm_pairs), 0, size_t(want - g.warm_pairs) * sizeof(PairStats));
  g.warm_pairs = want;
}

int32_t comm_index(MPI_Comm handle, bool create) {
  bool fresh = false;
  IndexSlot* s = create ? g.comm_index.insert(comm_key(handle), &fresh) : g.comm_index.find(comm_key(handle));
  if (!s) return -1;
  if (!fresh) return s->index;
  if (g.free_comm < 0) {
    g.comm_index.erase(s);
    return -1;
  }
  int32_t i = g.free_comm;
  CommRec& c = g.comms[i];
  g.free_comm = c.pairs;
  std::memset(&c, 0, sizeof c);
  c.used = true;
  c.handle = handle;
  c.size = c.rank = -1;
  c.serial = g.next_serial++;
  c.pairs = -1;
  std::snprintf(c.label, sizeof c.label, "comm-0x%x", static_cast<unsigned>(handle));
  s->index = i;
  return i;
}

namespace {

PairStats* pair_stats(int32_t comm, int peer, int internal) {
  bool fresh = false;
  IndexSlot* s = g.pair_index.insert(pair_key(comm, peer, internal), &fresh);
  if (!s) return nullptr;
  if (!fresh) return &g.pair_stats[s->index];
  int32_t p;
  if (g.free_pairs >= 0) {
    p = g.free_pairs;
    g.free_pairs = g.pair_meta[p].next;
  } else if (g.fresh_pairs < g.max_pairs) {
    p = g.fresh_pairs++;
  } else {
    g.pair_index.erase(s);
    return nullptr;
  }
  g.pair_stats[p] = PairStats{};
  g.pair_meta[p] = PairMeta{comm, peer, static_cast<uint8_t>(internal), g.comms[comm].pairs};
  g.comms[comm].pairs = p;
  s->index = p;
  return &g.pair_stats[p];
}

}  // namespace

void sample(int32_t comm, int peer, int internal, Metric m, uint64_t t0, uint64_t t1) {
  if (peer < 0 && peer != MPI_ANY_SOURCE) return;  // MPI_PROC_NULL: nothing queued, nothing moved
  PairStats* p = pair_stats(comm, peer, internal);
  if (!p) {
    ++g.comms[comm].lost;
    return;
  }
  p->h[m].add(t1 > t0 ? t1 - t0 : 0);
}

CommReport snapshot(const CommRec& c, int32_t ci, const char* name) {
  CommReport r;
  r.label = c.label;
  r.name = name ? name : "";
  r.size = c.size;
  r.rank = c.rank;
  r.serial = c.serial;
  std::memcpy(r.high_water, c.high_water, sizeof r.high_water);
  r.filtered = c.filtered;
  r.cancelled = c.cancelled;
  r.unmatched = c.unmatched;
  r.lost = c.lost;
  for (int32_t p = c.pairs; p >= 0; p = g.pair_meta[p].next) {
    if (g.pair_meta[p].comm != ci) break;  // defensive: lists never cross
    r.pairs.push_back({g.pair_meta[p].peer, g.pair_meta[p].internal, g.pair_stats[p]});
  }
  std::sort(r.pairs.begin(), r.pairs.end(), [](const CommReport::Pair& a, const CommReport::Pair& b) {
    if (a.internal != b.internal) return a.internal < b.internal;
    // Wildcard (unresolved) peers last.
    unsigned pa = static_cast<unsigned>(a.peer), pb = static_cast<unsigned>(b.peer);
    return pa < pb;
  });
  return r;
}

void retire(int32_t ci) {
  CommRec& c = g.comms[ci];
  if (c.live) {
    for (size_t i = 0; i < g.requests.capacity();) {
      ReqSlot* r = g.requests.at(i);
      if (r->key && r->comm == ci) g.requests.erase(r);  // re-examine slot i: erase may shift an entry into it
      else ++i;
    }
    for (size_t i = 0; i < g.messages.capacity();) {
      MsgSlot* m = g.messages.at(i);
      if (m->key && m->comm == ci) g.messages.erase(m);
      else ++i;
    }
  }
  for (int32_t p = c.pairs; p >= 0;) {
    int32_t next = g.pair_meta[p].next;
    if (IndexSlot* s = g.pair_index.find(pair_key(ci, g.pair_meta[p].peer, g.pair_meta[p].internal)))
      g.pair_index.erase(s);
    g.pair_meta[p].next = g.free_pairs;
    g.free_pairs = p;
    p = next;
  }
  if (IndexSlot* s = g.comm_index.find(comm_key(c.handle))) g.comm_index.erase(s);
  forget_pending(ci);
  c.used = false;
  c.pairs = g.free_comm;
  g.free_comm = ci;
}

namespace {

void merge_into(CommReport& into, const CommReport& from) {
  into.merged += from.merged;
  for (int t = 0; t < 2; ++t)
    for (int q = 0; q < 2; ++q) into.high_water[t][q] = std::max(into.high_water[t][q], from.high_water[t][q]);
  into.filtered += from.filtered;
  into.cancelled += from.cancelled;
  into.unmatched += from.unmatched;
  into.lost += from.lost;
  for (const CommReport::Pair& p : from.pairs) {
    auto it = std::find_if(into.pairs.begin(), into.pairs.end(),
                           [&](const CommReport::Pair& q) { return q.peer == p.peer && q.internal == p.internal; });
    if (it == into.pairs.end()) {
      into.pairs.push_back(p);
    } else {
      for (int m = 0; m < kMetrics; ++m) it->stats.h[m].merge(p.stats.h[m]);
    }
  }
}

}  // namespace

void keep_closed(CommReport r) {
  r.freed = true;
  if (g.closed.size() < kMaxClosed) {
    g.closed.push_back(std::move(r));
    return;
  }
  if (g.overflow.label.empty()) {
    r.label = "(freed communicators beyond the first 64, merged)";
    r.name.clear();
    r.serial = 1 << 30;
    g.overflow = std::move(r);
    return;
  }
  merge_into(g.overflow, r);
}

}  // namespace sonde::residence
