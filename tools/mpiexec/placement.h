// Where a host's ranks run: --map-by OBJECT (placement within the host) and
// --bind-to OBJECT (the CPUs a rank may use), computed from an hwloc topology.
// Shared by mpiexec (its own host) and sonde-hostd (the host it serves); each
// host computes the bindings of its own ranks from its own topology.
//
// The computation (bind_local_ranks) is a pure function of the topology, so
// unit tests drive it with synthetic topologies of several packages, which
// this machine does not have.
#pragma once

#include <hwloc.h>
#include <sched.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::mpiexec {

// Hardware objects ranks are placed on or bound to. The values travel in the
// job description (control.h): append, never renumber.
enum class Unit : uint8_t {
  kNone = 0,  // placement: no object (by slot); binding: not bound
  kHwthread = 1,
  kCore = 2,
  kL3cache = 3,
  kNuma = 4,
  kPackage = 5,
};
constexpr uint8_t kLastUnit = 5;

// "hwthread", "core", "l3cache", "numa", "package" and Open MPI's and
// MPICH's "socket" (a package). Anything else, "none" included: nullopt.
std::optional<Unit> unit_from_name(std::string_view name);
// The name used in reports ("package" for a socket); "none" for kNone.
const char* unit_name(Unit u);

struct BindPolicy {
  // --map-by OBJECT: a host's ranks are dealt round-robin over its objects of
  // this type (local rank i on object i mod count). kNone (--map-by slot,
  // node, ppr:N:node): ranks are laid over the binding objects instead.
  Unit map = Unit::kNone;
  // --bind-to OBJECT; kNone: ranks are not bound.
  Unit bind = Unit::kNone;
  bool operator==(const BindPolicy&) const = default;
};

struct RankBinding {
  Unit unit = Unit::kNone;     // kNone: not bound (cpus empty)
  unsigned index = 0;          // logical index of the object among the host's objects of `unit`
  std::vector<unsigned> cpus;  // OS numbers of its PUs, ascending, never empty when bound
  int sharers = 0;             // ranks of this host bound to that object (1: alone)
};

// One binding per local rank (0..local_ranks-1, a host's ranks in rank
// order), from `topo` (loaded; only its objects with CPUs count) and the
// policy:
// - Placement: with policy.map set, local rank i is placed on the object
//   P = (objects of that type)[i mod count]; without, on the binding object
//   (objects of policy.bind)[i mod count], which is how --bind-to core has
//   always worked (rank i on core i mod cores).
// - Binding: the policy.bind object containing P (map-by core, bind-to
//   package: the core's package), or, if such objects lie inside P, the next
//   one inside P in turn (map-by package, bind-to core: the k-th rank placed
//   on a package gets its core k mod cores-of-that-package).
// - More ranks than objects: placement wraps around, and several ranks then
//   share an object; `sharers` says how many.
// A topology without cores is bound by PU instead (some virtual machines
// report none). Throws std::runtime_error if it has no object of a type the
// policy needs (e.g. no L3 cache), naming the type.
std::vector<RankBinding> bind_local_ranks(hwloc_topology_t topo, const BindPolicy& policy, int local_ranks);

// This host's bindings: bind_local_ranks over its real topology, limited to
// the CPUs this process may use (its cgroup and its own affinity, so a
// launcher started under `taskset` or inside a Slurm step binds within it).
// Not bound at all (no topology read) when policy.bind is kNone.
std::vector<RankBinding> local_bindings(const BindPolicy& policy, int local_ranks);

// The mask to hand sched_setaffinity: the binding's CPUs below CPU_SETSIZE.
cpu_set_t cpu_mask_of(const RankBinding& b);

// "0-3,8": CPU numbers as ranges.
std::string cpu_list(const std::vector<unsigned>& cpus);

// The --report-bindings line (no newline): "[mpiexec] rank 1 on h: bound to
// core 1 (cpus 1)", "... not bound", and ", shared by N ranks" when ranks
// outnumber the objects.
std::string binding_report(const std::string& launcher, int rank, const std::string& host, const RankBinding& b);

// What a launcher does with a host's bindings before it starts the ranks:
// one mask per local rank for sched_setaffinity (empty when the policy does
// not bind), after writing the --report-bindings lines to stderr when
// `report` is set. `ranks[i]` is local rank i's rank in the job.
std::vector<cpu_set_t> host_binding_masks(const BindPolicy& policy, const std::vector<int>& ranks, bool report,
                                          const std::string& launcher, const std::string& host);

}  // namespace sonde::mpiexec
