#include "tools/mpiexec/placement.h"

#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

namespace sonde::mpiexec {
namespace {

hwloc_obj_type_t hwloc_type(Unit u) {
  switch (u) {
    case Unit::kHwthread: return HWLOC_OBJ_PU;
    case Unit::kCore: return HWLOC_OBJ_CORE;
    case Unit::kL3cache: return HWLOC_OBJ_L3CACHE;
    case Unit::kNuma: return HWLOC_OBJ_NUMANODE;
    case Unit::kPackage:
    case Unit::kNone: break;
  }
  return HWLOC_OBJ_PACKAGE;
}

struct Objects {
  Unit unit;  // what they are (kHwthread for cores of a topology without any)
  std::vector<hwloc_obj_t> list;
};

// The topology's objects of `u` that have CPUs (a NUMA node may be memory
// only), in logical order.
Objects objects_of(hwloc_topology_t topo, Unit u) {
  Objects out{u, {}};
  auto collect = [&](hwloc_obj_type_t type) {
    int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
      if (o != nullptr && o->cpuset != nullptr && !hwloc_bitmap_iszero(o->cpuset)) out.list.push_back(o);
    }
  };
  collect(hwloc_type(u));
  if (out.list.empty() && u == Unit::kCore) {  // some virtual machines report no cores, only PUs
    out.unit = Unit::kHwthread;
    collect(HWLOC_OBJ_PU);
  }
  if (out.list.empty()) {
    throw std::runtime_error(std::string("hwloc finds no ") + unit_name(u) + " on this host to " +
                             "place or bind ranks on");
  }
  return out;
}

std::vector<unsigned> cpus_of(hwloc_const_cpuset_t set) {
  std::vector<unsigned> cpus;
  for (int id = hwloc_bitmap_first(set); id >= 0; id = hwloc_bitmap_next(set, id)) {
    cpus.push_back(static_cast<unsigned>(id));
  }
  return cpus;
}

// The binding object for a rank placed on `p` as the `k`-th rank there (from 0).
hwloc_obj_t bind_within(const Objects& bind, hwloc_obj_t p, int k) {
  std::vector<hwloc_obj_t> inside, overlapping;
  for (hwloc_obj_t b : bind.list) {
    if (hwloc_bitmap_isincluded(b->cpuset, p->cpuset)) inside.push_back(b);
  }
  if (!inside.empty()) return inside[static_cast<size_t>(k) % inside.size()];
  for (hwloc_obj_t b : bind.list) {
    if (hwloc_bitmap_isincluded(p->cpuset, b->cpuset)) return b;
    if (hwloc_bitmap_intersects(p->cpuset, b->cpuset)) overlapping.push_back(b);
  }
  // Caches or NUMA nodes that straddle the placement objects: the ones it
  // touches, in turn. Some object always overlaps: each placement object has
  // CPUs, and every CPU is under a core, a PU and a package.
  if (!overlapping.empty()) return overlapping[static_cast<size_t>(k) % overlapping.size()];
  return bind.list[static_cast<size_t>(k) % bind.list.size()];
}

// Names as the options spell them; the first of a unit is its report name.
constexpr std::pair<const char*, Unit> kUnitNames[] = {
    {"hwthread", Unit::kHwthread}, {"core", Unit::kCore},       {"l3cache", Unit::kL3cache},
    {"numa", Unit::kNuma},         {"package", Unit::kPackage}, {"socket", Unit::kPackage},
};

}  // namespace

std::optional<Unit> unit_from_name(std::string_view n) {
  for (const auto& [name, unit] : kUnitNames) {
    if (n == name) return unit;
  }
  return std::nullopt;
}

const char* unit_name(Unit u) {
  for (const auto& [name, unit] : kUnitNames) {
    if (u == unit) return name;
  }
  return "none";
}

std::vector<RankBinding> bind_local_ranks(hwloc_topology_t topo, const BindPolicy& policy, int local_ranks) {
  const size_t n = local_ranks > 0 ? static_cast<size_t>(local_ranks) : 0;
  std::vector<RankBinding> out(n);
  if (policy.bind == Unit::kNone || n == 0) return out;
  const Objects bind = objects_of(topo, policy.bind);
  const bool by_object = policy.map != Unit::kNone && policy.map != policy.bind;
  const Objects placed = by_object ? objects_of(topo, policy.map) : bind;
  std::vector<int> load(placed.list.size(), 0);
  std::map<hwloc_obj_t, int> sharers;
  std::vector<hwloc_obj_t> chosen(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t p = i % placed.list.size();
    const int k = load[p]++;
    chosen[i] = by_object ? bind_within(bind, placed.list[p], k) : placed.list[p];
    ++sharers[chosen[i]];
  }
  for (size_t i = 0; i < n; ++i) {
    out[i].unit = bind.unit;
    out[i].index = chosen[i]->logical_index;
    out[i].cpus = cpus_of(chosen[i]->cpuset);
    out[i].sharers = sharers[chosen[i]];
  }
  return out;
}

std::vector<RankBinding> local_bindings(const BindPolicy& policy, int local_ranks) {
  if (policy.bind == Unit::kNone) return std::vector<RankBinding>(static_cast<size_t>(local_ranks));
  hwloc_topology_t raw;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> topo(raw, hwloc_topology_destroy);
  // Only the CPUs we may use: hwloc drops those outside our cgroup by
  // default; RESTRICT_TO_CPUBINDING also those outside our affinity. Our
  // other threads (libpmix's) must keep their binding during discovery.
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING |
                                    HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING);
  if (hwloc_topology_load(raw) != 0) throw std::runtime_error("hwloc cannot read this host's topology");
  return bind_local_ranks(raw, policy, local_ranks);
}

cpu_set_t cpu_mask_of(const RankBinding& b) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (unsigned c : b.cpus) {
    if (c < CPU_SETSIZE) CPU_SET(c, &mask);
  }
  return mask;
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string binding_report(const std::string& launcher, int rank, const std::string& host, const RankBinding& b) {
  std::string line = "[" + launcher + "] rank " + std::to_string(rank) + " on " + host + ": ";
  if (b.unit == Unit::kNone) return line + "not bound";
  line +=
      std::string("bound to ") + unit_name(b.unit) + " " + std::to_string(b.index) + " (cpus " + cpu_list(b.cpus) + ")";
  if (b.sharers > 1) {
    const std::string plural = b.unit == Unit::kNuma ? "NUMA nodes" : unit_name(b.unit) + std::string("s");
    line += ", shared by " + std::to_string(b.sharers) + " ranks (more ranks than " + plural + ")";
  }
  return line;
}

std::vector<cpu_set_t> host_binding_masks(const BindPolicy& policy, const std::vector<int>& ranks, bool report,
                                          const std::string& launcher, const std::string& host) {
  std::vector<cpu_set_t> masks;
  const std::vector<RankBinding> bindings = local_bindings(policy, static_cast<int>(ranks.size()));
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (report) std::fprintf(stderr, "%s\n", binding_report(launcher, ranks[i], host, bindings[i]).c_str());
    if (policy.bind != Unit::kNone) masks.push_back(cpu_mask_of(bindings[i]));
  }
  if (report) std::fflush(stderr);
  return masks;
}

}  // namespace sonde::mpiexec
