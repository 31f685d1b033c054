#include "tools/mpiexec/hosts.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tools/mpiexec/options.h"

namespace sonde::mpiexec {
namespace {

// Far more than a sensible host can run; beyond it a typo is likelier.
constexpr long kMaxSlots = 4096;

int parse_slots(const std::string& v, const std::string& where) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > kMaxSlots) {
    throw UsageError(where + ": a slot count must be a number from 1 to " + std::to_string(kMaxSlots) + ", not '" + v +
                     "'");
  }
  return static_cast<int>(n);
}

bool valid_host_name(const std::string& n) {
  if (n.empty() || n.size() > 253 || n[0] == '-') return false;
  for (char c : n) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

HostSlots parse_entry(const std::string& entry, const std::string& where) {
  HostSlots h;
  size_t colon = entry.find(':');
  h.name = entry.substr(0, colon);
  if (colon != std::string::npos) h.slots = parse_slots(entry.substr(colon + 1), where);
  if (!valid_host_name(h.name)) throw UsageError(where + ": '" + h.name + "' is not a host name");
  return h;
}

}  // namespace

std::vector<HostSlots> parse_host_list(const std::string& list) {
  std::vector<HostSlots> hosts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    hosts.push_back(parse_entry(list.substr(start, comma - start), "--host"));
    start = comma + 1;
  }
  return hosts;
}

std::vector<HostSlots> parse_hostfile(const std::string& text, const std::string& origin) {
  std::vector<HostSlots> hosts;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string first, word;
    if (!(words >> first)) continue;
    const std::string where = origin + ":" + std::to_string(number);
    HostSlots h = parse_entry(first, where);
    while (words >> word) {
      if (word.rfind("slots=", 0) == 0) {
        h.slots = parse_slots(word.substr(6), where);
      } else if (word.rfind("max_slots=", 0) != 0) {  // max_slots: no limit we enforce
        throw UsageError(where + ": cannot read '" + word + "'");
      }
    }
    hosts.push_back(h);
  }
  if (hosts.empty()) throw UsageError(origin + " names no host");
  return hosts;
}

std::vector<Placement> place_ranks(const std::vector<HostSlots>& hosts, int ranks, int ppn, MapBy map_by) {
  std::vector<Placement> out;
  std::vector<int> slots;
  for (const auto& h : hosts) {
    int s = ppn > 0 ? ppn : (h.slots > 0 ? h.slots : 1);
    size_t i = 0;
    while (i < out.size() && out[i].name != h.name) ++i;
    if (i == out.size()) {
      out.push_back({h.name, {}});
      slots.push_back(0);
    }
    // -ppn is per host, however often the host is named.
    slots[i] = ppn > 0 ? ppn : slots[i] + s;
  }
  int total = 0;
  for (int s : slots) total += s;
  if (ranks == 0) ranks = total;
  if (ranks > total) {
    throw UsageError(std::to_string(ranks) + " ranks do not fit in the " + std::to_string(total) +
                     " slot(s) of the given hosts (give slots as host:N, or -ppn N)");
  }
  int next = 0;
  if (map_by == MapBy::kNode) {
    while (next < ranks) {
      for (size_t i = 0; i < out.size() && next < ranks; ++i) {
        if (static_cast<int>(out[i].ranks.size()) < slots[i]) out[i].ranks.push_back(next++);
      }
    }
  } else {
    for (size_t i = 0; i < out.size() && next < ranks; ++i) {
      for (int k = 0; k < slots[i] && next < ranks; ++k) out[i].ranks.push_back(next++);
    }
  }
  std::vector<Placement> used;
  for (auto& p : out) {
    if (!p.ranks.empty()) used.push_back(std::move(p));
  }
  return used;
}

std::vector<Placement> place_blocks(const std::vector<HostSlots>& job_hosts,
                                    const std::vector<std::vector<HostSlots>>& block_hosts,
                                    const std::vector<int>& sizes, int ppn, MapBy map_by) {
  std::vector<Placement> out;
  std::vector<int> cap, used;
  auto index_of = [&](const std::string& name) {
    size_t i = 0;
    while (i < out.size() && out[i].name != name) ++i;
    if (i == out.size()) {
      out.push_back({name, {}});
      cap.push_back(0);
      used.push_back(0);
    }
    return i;
  };
  auto count_slots = [&](const std::vector<HostSlots>& list) {
    std::vector<std::pair<size_t, int>> in_list;  // (host, slots within this list)
    for (const auto& h : list) {
      size_t i = index_of(h.name);
      size_t k = 0;
      while (k < in_list.size() && in_list[k].first != i) ++k;
      if (k == in_list.size()) in_list.push_back({i, 0});
      in_list[k].second += h.slots > 0 ? h.slots : 1;
    }
    for (auto [i, n] : in_list) cap[i] = ppn > 0 ? ppn : std::max(cap[i], n);
  };
  std::vector<HostSlots> job = job_hosts;
  const bool here_unlimited = job.empty() && ppn == 0;
  if (job.empty()) job.push_back({"localhost", 0});
  count_slots(job);
  if (here_unlimited) cap[index_of("localhost")] = static_cast<int>(kMaxSlots) * 1024;
  for (const auto& list : block_hosts) count_slots(list);

  int next = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    const auto& list = b < block_hosts.size() && !block_hosts[b].empty() ? block_hosts[b] : job;
    std::vector<size_t> mine;
    for (const auto& h : list) {
      size_t i = index_of(h.name);
      if (std::find(mine.begin(), mine.end(), i) == mine.end()) mine.push_back(i);
    }
    long free = 0;
    for (size_t i : mine) free += cap[i] - used[i];
    if (sizes[b] > free) {
      throw UsageError("block " + std::to_string(b + 1) + ": " + std::to_string(sizes[b]) +
                       " ranks do not fit in the " + std::to_string(free) +
                       " free slot(s) of its hosts (give slots as host:N, or -ppn N)");
    }
    const int end = next + sizes[b];
    if (map_by == MapBy::kNode) {
      while (next < end) {
        for (size_t i : mine) {
          if (next < end && used[i] < cap[i]) {
            out[i].ranks.push_back(next++);
            ++used[i];
          }
        }
      }
    } else {
      for (size_t i : mine) {
        while (next < end && used[i] < cap[i]) {
          out[i].ranks.push_back(next++);
          ++used[i];
        }
      }
    }
  }
  std::vector<Placement> placed;
  for (auto& p : out) {
    if (!p.ranks.empty()) placed.push_back(std::move(p));
  }
  return placed;
}

std::vector<int> place_children(const std::vector<int>& candidates, const std::vector<int>& slots,
                                std::vector<int>& used, int count, MapBy map_by) {
  std::vector<int> out;
  if (candidates.empty()) return out;
  for (int round = 1; static_cast<int>(out.size()) < count;) {
    // Within this round, host i holds at most round * slots[i].
    int pick = -1;
    for (int i : candidates) {
      if (used[i] >= round * std::max(slots[i], 1)) continue;
      // By slot: the first with room; by node: the least used (the earlier
      // on a tie), which deals one per host in turn.
      if (pick < 0 || (map_by == MapBy::kNode && used[i] < used[pick])) pick = i;
      if (map_by == MapBy::kSlot) break;
    }
    if (pick < 0) {
      ++round;
      continue;
    }
    ++used[pick];
    out.push_back(pick);
  }
  return out;
}

std::string host_list_from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read hostfile " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string list;
  for (const auto& h : parse_hostfile(text.str(), path)) {
    list += (list.empty() ? "" : ",") + h.name + (h.slots > 0 ? ":" + std::to_string(h.slots) : "");
  }
  return list;
}

bool is_local_host(const std::string& name) {
  if (name == "localhost" || name.rfind("127.", 0) == 0) return true;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return false;
  std::string me = buf;
  if (name == me) return true;
  std::string short_me = me.substr(0, me.find('.'));
  return name == short_me || name.substr(0, name.find('.')) == me;
}

}  // namespace sonde::mpiexec
