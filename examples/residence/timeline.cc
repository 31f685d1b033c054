// The job's timeline (trace.h), built on rank 0 at MPI_Finalize from every
// rank's event buffer: queue slices, depth series, sends, matches, the flows
// that join them, and the wait states.
//
// Joining a send to the receive it matched: MPI's non-overtaking rule makes
// the k-th message from a sender to a receiver on one communicator with one
// tag the k-th such message matched there, so the two ordered lists are
// zipped. The buffers keep the first events of a run, so the joins stay
// exact up to where either side's buffer filled.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codec.h"
#include "residence.h"
#include "trace.h"

namespace sonde::residence {

int Timeline::world_of(int comm, int rank) const {
  if (comm < 0 || comm >= static_cast<int>(comms.size()) || rank < 0) return -1;
  const std::vector<int>& w = comms[static_cast<size_t>(comm)].world;
  return rank < static_cast<int>(w.size()) ? w[static_cast<size_t>(rank)] : -1;
}

namespace {

// Turns every buffered request's (count, datatype) into bytes: the size of
// the datatype when the event happened (from g_freed_types for a type freed
// since, else its size now). A datatype the library no longer knows is an
// error answered here, not fatal: its requests show their count.
void bytes_of_requests() {
  MPI_Errhandler fatal = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &fatal);
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::map<int32_t, int64_t> now;
  for (size_t i = 0; i < g_buf.used; ++i) {
    Event& e = g_buf.ev[i];
    if ((e.kind != kEvSend && e.kind != kEvPostIn) || e.datatype == static_cast<int32_t>(MPI_BYTE)) continue;
    int64_t size = -1;
    for (const FreedType& f : g_freed_types)
      if (f.type == e.datatype && f.before > i) {
        size = f.size;
        break;
      }
    if (size < 0) {
      auto [it, fresh] = now.emplace(e.datatype, -1);
      int s = 0;
      if (fresh && PMPI_Type_size(static_cast<MPI_Datatype>(e.datatype), &s) == MPI_SUCCESS && s >= 0) it->second = s;
      size = it->second;
    }
    if (size < 0) continue;
    e.count = static_cast<int32_t>(std::min<int64_t>(INT32_MAX, size * e.count));
    e.datatype = static_cast<int32_t>(MPI_BYTE);
  }
  if (fatal != MPI_ERRHANDLER_NULL) PMPI_Comm_set_errhandler(MPI_COMM_WORLD, fatal);
}

std::string encode_buffer() {
  bytes_of_requests();
  Writer w;
  w.u64(static_cast<uint64_t>(g.world_rank));
  w.u64(static_cast<uint64_t>(getpid()));
  w.u64(g_buf.cap);
  w.u64(g_buf.overflow);
  w.u64(g_buf.used);
  w.raw(g_buf.ev, g_buf.used * sizeof(Event));
  w.u64(g_comm_infos.size());
  for (auto& [serial, info] : g_comm_infos) {
    w.u64(static_cast<uint64_t>(serial));
    w.str(info.label);
    w.str(info.name);
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(info.size)));
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(info.rank)));
    w.u64(info.world.size());
    for (int r : info.world) w.u64(static_cast<uint64_t>(static_cast<int64_t>(r)));
  }
  return std::move(w.bytes());
}

struct RankData {
  int rank = 0, pid = 0;
  uint64_t cap = 0, overflow = 0;
  std::vector<Event> events;
  std::map<int, CommInfo> comms;
  bool ok = false;
};

RankData decode_buffer(const std::string& blob) {
  RankData d;
  Reader r(blob.data(), blob.size());
  d.rank = static_cast<int>(r.u64());
  d.pid = static_cast<int>(r.u64());
  d.cap = r.u64();
  d.overflow = r.u64();
  uint64_t n = r.u64();
  if (n > blob.size() / sizeof(Event)) return d;
  d.events.resize(n);
  if (!r.raw(d.events.data(), n * sizeof(Event))) return d;
  uint64_t nc = r.u64();
  for (uint64_t i = 0; i < nc && r.ok(); ++i) {
    int serial = static_cast<int>(r.u64());
    CommInfo& c = d.comms[serial];
    c.label = r.str();
    c.name = r.str();
    c.size = static_cast<int>(static_cast<int64_t>(r.u64()));
    c.rank = static_cast<int>(static_cast<int64_t>(r.u64()));
    uint64_t nw = r.u64();
    for (uint64_t k = 0; k < nw && r.ok() && k < 1u << 24; ++k)
      c.world.push_back(static_cast<int>(static_cast<int64_t>(r.u64())));
  }
  d.ok = r.ok();
  return d;
}

// One rank's events into the timeline.
void add_rank(Timeline& tl, const RankData& d, const ClockFit& fit, int64_t origin,
              std::map<std::string, int>& comm_by_label) {
  RankInfo ri;
  ri.rank = d.rank;
  ri.pid = d.pid;
  ri.buffered = d.events.size();
  ri.overflow = d.overflow;
  ri.clock_error = fit.error();
  ri.begin = fit.map(fit.t_init) - origin;
  ri.end = fit.map(fit.t_final) - origin;
  auto when = [&](uint64_t t) { return fit.map(t) - origin; };
  // Serial -> timeline communicator, and this rank's rank in it.
  std::map<int, std::pair<int, int>> comm_of;
  auto comm = [&](int serial) -> std::pair<int, int> {
    auto it = comm_of.find(serial);
    if (it != comm_of.end()) return it->second;
    auto info = d.comms.find(serial);
    std::string label = info != d.comms.end() ? info->second.label : "comm#" + std::to_string(serial);
    auto [pos, fresh] = comm_by_label.emplace(label, static_cast<int>(tl.comms.size()));
    if (fresh) {
      tl.comms.emplace_back();
      tl.comms.back().label = label;
    }
    TimelineComm& tc = tl.comms[static_cast<size_t>(pos->second)];
    int me = -1;
    if (info != d.comms.end()) {
      if (tc.name.empty()) tc.name = info->second.name;
      if (tc.size < 0) tc.size = info->second.size;
      if (tc.world.empty()) tc.world = info->second.world;
      me = info->second.rank;
    }
    return comm_of[serial] = {pos->second, me};
  };
  auto bytes = [](const Event& e) -> int64_t { return e.count; };  // bytes_of_requests made them bytes

  std::vector<const Event*> order;
  for (const Event& e : d.events) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) { return a->t < b->t; });
  std::map<std::pair<int, uint64_t>, int> open;      // (queue, uid) -> slice
  std::map<int, std::pair<int32_t, int32_t>> level;  // comm -> (posted, unexpected)
  auto depth = [&](int c, int64_t t, int dq, int du) {
    auto& lv = level[c];
    lv.first = std::max(0, lv.first + dq);
    lv.second = std::max(0, lv.second + du);
    TimelineComm& tc = tl.comms[static_cast<size_t>(c)];
    tc.depth[d.rank].push_back({t, lv.first, lv.second});
    tc.hwm_posted[d.rank] = std::max(tc.hwm_posted[d.rank], lv.first);
    tc.hwm_unexpected[d.rank] = std::max(tc.hwm_unexpected[d.rank], lv.second);
  };
  for (const Event* e : order) {
    int64_t t = when(e->t);
    if (e->kind == kEvCall) {
      tl.calls.push_back({d.rank, e->count, t, when(e->uid)});
      continue;
    }
    auto [c, me] = comm(e->comm);
    switch (e->kind) {
      case kEvSend: tl.sends.push_back({d.rank, c, e->peer, e->tag, bytes(*e), t, e->uid, me}); break;
      case kEvPostIn:
      case kEvUnexIn: {
        int q = e->kind == kEvPostIn ? 0 : 1;
        int peer = e->peer >= 0 ? e->peer : -1;
        tl.slices.push_back({d.rank, q, c, peer, e->tag, bytes(*e), e->uid, t, t, true});
        open[{q, e->uid}] = static_cast<int>(tl.slices.size() - 1);
        depth(c, t, q == 0 ? 1 : 0, q == 1 ? 1 : 0);
        break;
      }
      case kEvPostOut:
      case kEvUnexOut: {
        int q = e->kind == kEvPostOut ? 0 : 1;
        auto it = open.find({q, e->uid});
        if (it == open.end()) break;  // inserted before the profiler saw it
        Slice& s = tl.slices[static_cast<size_t>(it->second)];
        open.erase(it);
        s.end = t;
        s.open = false;
        depth(c, t, q == 0 ? -1 : 0, q == 1 ? -1 : 0);
        if (q == 0 && !(e->flags & kMatched)) break;  // cancelled
        s.peer = e->peer;
        s.tag = e->tag;
        if (q == 0) s.bytes = e->count;  // the message's bytes
        tl.matches.push_back({d.rank, c, e->peer, e->tag, t, e->uid, static_cast<int>(&s - tl.slices.data()), me});
        break;
      }
      default: break;
    }
  }
  for (auto& [key, idx] : open)
    tl.slices[static_cast<size_t>(idx)].end = std::max(ri.end, tl.slices[static_cast<size_t>(idx)].begin);
  tl.ranks.push_back(ri);
}

// The flows, and each send's time moved to the enter of the blocking send
// call it happened in (a blocking eager send reports its activation after
// handing the message over).
void join(Timeline& tl) {
  std::map<int, std::vector<const Call*>> calls_of;
  for (const Call& c : tl.calls) calls_of[c.rank].push_back(&c);
  for (auto& [r, v] : calls_of)
    std::sort(v.begin(), v.end(), [](const Call* a, const Call* b) { return a->begin < b->begin; });
  auto enclosing = [&](int rank, int64_t t, bool sending) -> Call* {
    auto& v = calls_of[rank];
    auto it = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const Call* c) { return x < c->begin; });
    while (it != v.begin()) {
      --it;
      if ((*it)->end < t) return nullptr;
      if (sending ? blocking_send((*it)->kind) : receives((*it)->kind)) return const_cast<Call*>(*it);
    }
    return nullptr;
  };
  std::vector<Call*> send_call(tl.sends.size(), nullptr);
  for (size_t i = 0; i < tl.sends.size(); ++i)
    if ((send_call[i] = enclosing(tl.sends[i].rank, tl.sends[i].t, true))) tl.sends[i].t = send_call[i]->begin;

  using Key = std::tuple<int, int, int, int>;  // comm, sender, receiver (ranks in comm), tag
  std::map<Key, std::vector<int>> sends, matches;
  for (size_t i = 0; i < tl.sends.size(); ++i) {
    const SendRec& s = tl.sends[i];
    sends[{s.comm, s.me, s.dest, s.tag}].push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < tl.matches.size(); ++i) {
    const MatchRec& m = tl.matches[i];
    matches[{m.comm, m.src, m.me, m.tag}].push_back(static_cast<int>(i));
  }
  for (auto& [key, ms] : matches) {
    auto it = sends.find(key);
    size_t n = it == sends.end() ? 0 : std::min(ms.size(), it->second.size());
    tl.unjoined_matches += ms.size() - n;
    for (size_t k = 0; k < n; ++k) {
      int si = it->second[k], mi = ms[k];
      tl.flows.push_back({si, mi});
      const SendRec& s = tl.sends[static_cast<size_t>(si)];
      const MatchRec& m = tl.matches[static_cast<size_t>(mi)];
      if (m.t < s.t) ++tl.backward_flows;
      // Late receiver: a blocking send that returned only after the
      // receive was posted, which happened after the send began: the time
      // from the send's start to that post (Scalasca's enter(recv) -
      // enter(send), with the post seen from inside the receiver's queues:
      // the posted-queue insertion, or, for a message that was already
      // unexpected, its removal).
      const Slice& sl = tl.slices[static_cast<size_t>(m.slice)];
      Call* c = send_call[static_cast<size_t>(si)];
      if (!c) continue;
      int64_t posted = sl.queue == 0 ? sl.begin : sl.end;
      if (c->end < posted || posted <= c->begin) continue;
      int64_t w = posted - c->begin;
      if (w > c->late_receiver) {
        c->late_receiver = w;
        c->peer_world = m.rank;
      }
      PairWait& pw = tl.comms[static_cast<size_t>(s.comm)].waits[{s.rank, m.rank}];
      pw.late_receiver += static_cast<uint64_t>(w);
      pw.lr.add(static_cast<uint64_t>(w));
    }
  }
  for (auto& [key, ss] : sends) {
    auto it = matches.find(key);
    tl.unjoined_sends += ss.size() - (it == matches.end() ? 0 : std::min(ss.size(), it->second.size()));
  }
}

// Late sender: a receive call blocked while the request it completes sat in
// the posted queue; for a call completing several (Waitall), the longest.
void late_senders(Timeline& tl) {
  std::map<int, std::vector<int>> posted_matches;  // rank -> matches from the posted queue, by time
  for (size_t i = 0; i < tl.matches.size(); ++i)
    if (tl.slices[static_cast<size_t>(tl.matches[i].slice)].queue == 0)
      posted_matches[tl.matches[i].rank].push_back(static_cast<int>(i));
  for (auto& [r, v] : posted_matches)
    std::sort(v.begin(), v.end(), [&](int a, int b) {
      return tl.matches[static_cast<size_t>(a)].t < tl.matches[static_cast<size_t>(b)].t;
    });
  for (Call& c : tl.calls) {
    if (!receives(c.kind)) continue;
    auto& v = posted_matches[c.rank];
    auto it = std::lower_bound(v.begin(), v.end(), c.begin,
                               [&](int m, int64_t t) { return tl.matches[static_cast<size_t>(m)].t < t; });
    int best = -1;
    int64_t wait = 0;
    for (; it != v.end() && tl.matches[static_cast<size_t>(*it)].t <= c.end; ++it) {
      const MatchRec& m = tl.matches[static_cast<size_t>(*it)];
      int64_t w = m.t - std::max(c.begin, tl.slices[static_cast<size_t>(m.slice)].begin);
      if (w > wait) {
        wait = w;
        best = *it;
      }
    }
    if (best < 0) continue;
    const MatchRec& m = tl.matches[static_cast<size_t>(best)];
    c.late_sender = wait;
    c.peer_world = tl.world_of(m.comm, m.src);
    PairWait& pw = tl.comms[static_cast<size_t>(m.comm)].waits[{c.rank, c.peer_world}];
    pw.late_sender += static_cast<uint64_t>(wait);
    pw.ls.add(static_cast<uint64_t>(wait));
  }
}

}  // namespace

Timeline gather_timeline() {
  std::vector<std::string> blobs = gather_blobs(g.supported ? encode_buffer() : std::string());
  Timeline tl;
  if (g.world_rank != 0) return tl;
  tl.world_size = g.world_size;
  tl.enabled = g_buf.cap > 0;
  int64_t origin = g_clocks.empty() ? 0 : static_cast<int64_t>(g_clocks[0].t_init);
  tl.clocks = g_clocks;
  tl.origin = origin;
  std::map<std::string, int> comm_by_label;
  for (size_t r = 0; r < blobs.size(); ++r) {
    RankData d = decode_buffer(blobs[r]);
    ClockFit fit = r < g_clocks.size() ? g_clocks[r] : ClockFit{};
    add_rank(tl, d, fit, origin, comm_by_label);
    tl.overflow += d.overflow;
    tl.clock_error = std::max(tl.clock_error, fit.error());
    tl.end = std::max(tl.end, tl.ranks.back().end);
    tl.ranks.back().rank = static_cast<int>(r);
  }
  join(tl);
  late_senders(tl);
  for (const Call& c : tl.calls) {
    RankInfo& ri = tl.ranks[static_cast<size_t>(c.rank)];  // blobs arrive in rank order
    ri.late_sender += static_cast<uint64_t>(c.late_sender);
    ri.late_receiver += static_cast<uint64_t>(c.late_receiver);
  }
  return tl;
}

}  // namespace sonde::residence
