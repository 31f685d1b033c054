// Parsing snapshots and finding what a stuck job waits on (hang_report.h).
#include "tools/mpiexec/hang_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

namespace sonde::mpiexec {
namespace {

constexpr int kAnySource = -2;

std::string unescape(const std::string& s) {
  if (s == "-") return "";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> fields(std::istringstream& words) {
  std::map<std::string, std::string> f;
  std::string w;
  while (words >> w) {
    size_t eq = w.find('=');
    if (eq != std::string::npos) f[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return f;
}

int64_t num(const std::map<std::string, std::string>& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
}

std::string str(const std::map<std::string, std::string>& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() ? "" : it->second;
}

SnapshotEntry entry_of(const std::map<std::string, std::string>& f, bool send) {
  SnapshotEntry e;
  e.id = str(f, "id");
  e.ctx = static_cast<uint32_t>(num(f, "ctx"));
  e.peer = static_cast<int>(num(f, send ? "dest" : "src"));
  e.tag = static_cast<int>(num(f, "tag"));
  e.count = num(f, "count");
  e.bytes = static_cast<uint64_t>(num(f, "bytes"));
  e.type = unescape(str(f, "type"));
  e.stage = str(f, "stage");
  e.sync = num(f, "sync") != 0;
  if (f.count("age_us")) {
    e.age = static_cast<double>(num(f, "age_us")) / 1e6;
    e.age_from_rank = true;
  }
  const std::string coll = str(f, "coll");
  if (size_t hash = coll.find('#'); hash != std::string::npos) {
    e.coll_call = coll.substr(0, hash);
    e.coll_seq = static_cast<uint32_t>(std::strtoul(coll.c_str() + hash + 1, nullptr, 10));
  }
  return e;
}

}  // namespace

void world_to_slots(std::vector<RankSnapshot>& ranks, const SlotNames& names) {
  for (RankSnapshot& r : ranks) {
    std::string nspace;
    int own = 0;
    if (!names.proc_of(r.rank, &nspace, &own)) continue;
    for (SnapshotComm& c : r.comms) {
      for (int& w : c.world) {
        auto peer = r.peers.find(w);
        w = peer != r.peers.end() ? names.slot_of(peer->second.first, peer->second.second) : names.slot_of(nspace, w);
      }
    }
  }
}

const SnapshotComm* RankSnapshot::comm(uint32_t ctx) const {
  for (const auto& c : comms)
    if (c.ctx == ctx) return &c;
  return nullptr;
}

RankSnapshot parse_rank_snapshot(int rank, const std::string& text) {
  RankSnapshot r;
  r.rank = rank;
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != "sonde-snapshot 1") return r;
  bool ended = false;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind, value;
    words >> kind;
    if (kind == "end") {
      ended = true;
      break;
    }
    if (kind == "call") {
      words >> value;
      if (value == "-") {
        r.condition = RankCondition::kUserCode;
      } else if (value == "finalized") {
        r.condition = RankCondition::kFinalized;
      } else {
        r.condition = RankCondition::kInCall;
        r.call = value;
      }
    } else if (kind == "pid") {
      words >> r.pid;
    } else if (kind == "arrivals") {
      words >> r.arrivals;
    } else if (kind == "omitted") {
      words >> r.omitted;
    } else if (kind == "comm") {
      auto f = fields(words);
      SnapshotComm c;
      c.ctx = static_cast<uint32_t>(num(f, "ctx"));
      c.name = unescape(str(f, "name"));
      c.rank = static_cast<int>(num(f, "rank"));
      c.size = static_cast<int>(num(f, "size"));
      c.inter = num(f, "inter") != 0;
      c.coll = static_cast<uint32_t>(num(f, "coll"));
      if (f.count("coll_age_us")) c.coll_age = static_cast<double>(num(f, "coll_age_us")) / 1e6;
      std::istringstream ws(str(f, "world"));
      std::string w;
      while (std::getline(ws, w, ',')) c.world.push_back(std::atoi(w.c_str()));
      r.comms.push_back(std::move(c));
    } else if (kind == "peer") {
      auto f = fields(words);
      r.peers[static_cast<int>(num(f, "id"))] = {unescape(str(f, "nspace")), static_cast<int>(num(f, "rank"))};
    } else if (kind == "recv" || kind == "send" || kind == "unexp") {
      auto f = fields(words);
      SnapshotEntry e = entry_of(f, kind == "send");
      (kind == "recv" ? r.recvs : kind == "send" ? r.sends : r.unexpected).push_back(std::move(e));
    } else if (kind == "probe") {
      auto f = fields(words);
      SnapshotEntry e = entry_of(f, false);
      e.probe_call = unescape(str(f, "call"));
      e.stage = num(f, "blocking") ? "probe" : "polling";
      e.id = "probe:" + e.probe_call;
      e.type = "";
      r.recvs.push_back(std::move(e));
    }
  }
  if (!ended) r.condition = RankCondition::kSilent;
  return r;
}

void EntryAges::stamp(std::vector<RankSnapshot>& ranks, double now) {
  std::map<std::string, double> seen;
  auto age = [&](const RankSnapshot& r, SnapshotEntry& e, const char* kind) {
    if (e.age_from_rank) return;
    const std::string key = std::to_string(r.rank) + kind + e.id + ":" + std::to_string(e.ctx) + ":" +
                            std::to_string(e.peer) + ":" + std::to_string(e.tag);
    auto it = first_seen_.find(key);
    const double first = it == first_seen_.end() ? now : it->second;
    seen[key] = first;
    e.age = now - first;
  };
  for (auto& r : ranks) {
    for (auto& e : r.recvs) age(r, e, "r");
    for (auto& e : r.sends) age(r, e, "s");
    for (auto& e : r.unexpected) age(r, e, "u");
  }
  first_seen_ = std::move(seen);
}

const SnapshotEntry* current_collective(const RankSnapshot& r, double* seconds) {
  const SnapshotEntry* in = nullptr;
  for (const auto* list : {&r.recvs, &r.sends})
    for (const auto& e : *list)
      if (!in && !e.coll_call.empty()) in = &e;
  *seconds = -1;
  if (in) {
    // The communicator's latest collective is the one the age is of.
    const SnapshotComm* c = r.comm(in->ctx);
    if (c && c->coll % (1u << 24) == in->coll_seq) *seconds = c->coll_age;
  }
  return in;
}

std::string comm_label(const RankSnapshot& r, uint32_t ctx) {
  const SnapshotComm* c = r.comm(ctx);
  if (c && !c->name.empty()) return c->name;
  return "comm #" + std::to_string(ctx);
}

std::string rank_list(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

// The world rank of `peer` of communicator ctx as rank r sees it, or -1.
int world_of(const RankSnapshot& r, uint32_t ctx, int peer) {
  const SnapshotComm* c = r.comm(ctx);
  if (!c || peer < 0 || peer >= static_cast<int>(c->world.size())) return -1;
  return c->world[static_cast<size_t>(peer)];
}

const RankSnapshot* find_rank(const std::vector<RankSnapshot>& ranks, int rank) {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

void add_edges(const std::vector<RankSnapshot>& ranks, const RankSnapshot& r, std::vector<WaitEdge>& edges) {
  // In user code a rank waits only through an Iprobe/Improbe loop.
  const bool in_call = r.condition == RankCondition::kInCall;
  if (!in_call && r.condition != RankCondition::kUserCode) return;
  for (const auto& e : r.recvs) {
    if (!in_call && e.stage != "polling") continue;
    const std::string call = !e.probe_call.empty() ? e.probe_call : e.coll_call.empty() ? r.call : e.coll_call;
    WaitEdge w{r.rank, 0, "recv", call, e.ctx, e.tag, e.peer, e.coll_seq};
    if (e.peer == kAnySource) {
      if (const SnapshotComm* c = r.comm(e.ctx)) {
        for (int t : c->world)
          if (t >= 0 && t != r.rank) edges.push_back({w.from, t, w.why, w.call, w.ctx, w.tag, w.peer, w.seq});
      }
    } else if (int t = world_of(r, e.ctx, e.peer); t >= 0) {
      w.to = t;
      edges.push_back(w);
    }
  }
  if (!in_call) return;
  for (const auto& e : r.sends) {
    int t = world_of(r, e.ctx, e.peer);
    if (t >= 0)
      edges.push_back(
          {r.rank, t, "send", e.coll_call.empty() ? r.call : e.coll_call, e.ctx, e.tag, e.peer, e.coll_seq});
  }
  // Collectives: members behind on the communicator.
  std::set<std::pair<uint32_t, uint32_t>> in;  // (ctx, seq)
  for (const auto* list : {&r.recvs, &r.sends})
    for (const auto& e : *list)
      if (!e.coll_call.empty()) in.insert({e.ctx, e.coll_seq});
  for (auto [ctx, seq] : in) {
    const SnapshotComm* c = r.comm(ctx);
    if (!c || c->inter) continue;
    std::string call;
    for (const auto* list : {&r.recvs, &r.sends})
      for (const auto& e : *list)
        if (e.ctx == ctx && e.coll_seq == seq && call.empty()) call = e.coll_call;
    for (int m : c->world) {
      if (m == r.rank) continue;
      const RankSnapshot* other = find_rank(ranks, m);
      if (!other || other->condition == RankCondition::kSilent || other->condition == RankCondition::kNoMpi ||
          other->condition == RankCondition::kHostSilent)
        continue;
      const SnapshotComm* oc = other->comm(ctx);
      const uint32_t started = oc ? oc->coll : 0;
      if ((started % (1u << 24)) < seq) edges.push_back({r.rank, m, "collective", call, ctx, 0, 0, seq});
    }
  }
}

// Tarjan's strongly connected components; returns one simple cycle for
// each component with a cycle.
std::vector<std::vector<int>> find_cycles(const std::map<int, std::set<int>>& adj) {
  std::map<int, int> index, low;
  std::vector<int> stack;
  std::set<int> on_stack;
  std::vector<std::vector<int>> comps;
  int next = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    auto it = adj.find(v);
    if (it != adj.end()) {
      for (int w : it->second) {
        if (!index.count(w)) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    }
    if (low[v] == index[v]) {
      std::vector<int> comp;
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack.erase(w);
        comp.push_back(w);
      } while (w != v);
      comps.push_back(comp);
    }
  };
  for (const auto& [v, _] : adj)
    if (!index.count(v)) visit(v);
  std::vector<std::vector<int>> cycles;
  for (auto& comp : comps) {
    std::set<int> members(comp.begin(), comp.end());
    const int start = *members.begin();
    auto self = adj.find(start);
    if (comp.size() == 1 && (self == adj.end() || !self->second.count(start))) continue;
    // Walk inside the component, always to the lowest-numbered next member,
    // until a rank repeats: the loop from its first visit is a cycle.
    std::vector<int> path{start};
    std::map<int, size_t> at{{start, 0}};
    for (;;) {
      int v = path.back(), to = -1;
      for (int w : adj.at(v))
        if (members.count(w)) {
          to = w;
          break;
        }
      if (to < 0) break;
      if (at.count(to)) {
        cycles.emplace_back(path.begin() + static_cast<long>(at[to]), path.end());
        break;
      }
      at[to] = path.size();
      path.push_back(to);
    }
  }
  return cycles;
}

}  // namespace

HangAnalysis analyze_hang(const std::vector<RankSnapshot>& ranks) {
  HangAnalysis a;
  for (const auto& r : ranks) add_edges(ranks, r, a.edges);
  std::map<int, std::set<int>> adj;
  for (const auto& e : a.edges) adj[e.from].insert(e.to);
  a.cycles = find_cycles(adj);
  std::set<int> targets;
  for (const auto& e : a.edges) targets.insert(e.to);
  for (int t : targets)
    if (!adj.count(t)) a.waited_on.push_back(t);
  add_findings(ranks, a);
  return a;
}

}  // namespace sonde::mpiexec
