// Placement and binding within a host (tools/mpiexec/placement.h), on
// synthetic hwloc topologies: this machine has one package and two cores,
// so several packages, NUMA nodes and hyperthreads only exist here.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <hwloc.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/mpiexec/options.h"
#include "tools/mpiexec/placement.h"

using namespace sonde::mpiexec;

namespace {

// A loaded synthetic topology. PU os numbers follow the logical order, so
// core c of "... core:C pu:P" has cpus c*P .. c*P+P-1.
struct Synthetic {
  explicit Synthetic(const char* description) {
    REQUIRE(hwloc_topology_init(&topo) == 0);
    REQUIRE(hwloc_topology_set_synthetic(topo, description) == 0);
    REQUIRE(hwloc_topology_load(topo) == 0);
  }
  ~Synthetic() { hwloc_topology_destroy(topo); }
  Synthetic(const Synthetic&) = delete;
  Synthetic& operator=(const Synthetic&) = delete;
  std::vector<RankBinding> bind(Unit map, Unit bind, int ranks) const {
    return bind_local_ranks(topo, BindPolicy{map, bind}, ranks);
  }
  hwloc_topology_t topo = nullptr;
};

std::vector<unsigned> range(unsigned first, unsigned count) {
  std::vector<unsigned> v;
  for (unsigned i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

std::vector<unsigned> indexes(const std::vector<RankBinding>& b) {
  std::vector<unsigned> v;
  for (const auto& r : b) v.push_back(r.index);
  return v;
}

constexpr const char* kTwoPackages = "package:2 numa:1 l3:1 core:4 pu:2";  // 8 cores, 16 PUs

}  // namespace

TEST_CASE("--map-by package deals consecutive ranks to alternating packages") {
  Synthetic t(kTwoPackages);
  auto b = t.bind(Unit::kPackage, Unit::kPackage, 5);
  CHECK(indexes(b) == std::vector<unsigned>{0, 1, 0, 1, 0});
  for (const auto& r : b) CHECK(r.unit == Unit::kPackage);
  CHECK(b[0].cpus == range(0, 8));
  CHECK(b[1].cpus == range(8, 8));
}

TEST_CASE("--bind-to package gives the whole package's CPUs") {
  Synthetic t(kTwoPackages);
  // Without --map-by OBJ: the host's i-th rank on its i-th package.
  auto b = t.bind(Unit::kNone, Unit::kPackage, 2);
  CHECK(b[0].cpus == range(0, 8));
  CHECK(b[1].cpus == range(8, 8));
  CHECK(b[0].sharers == 1);
  // Placed by core, bound to the package that contains the core: cores 0..3
  // are package 0's.
  b = t.bind(Unit::kCore, Unit::kPackage, 5);
  CHECK(indexes(b) == std::vector<unsigned>{0, 0, 0, 0, 1});
  CHECK(b[4].cpus == range(8, 8));
}

TEST_CASE("--map-by core --bind-to hwthread gives one PU of the rank's core") {
  Synthetic t(kTwoPackages);
  auto b = t.bind(Unit::kCore, Unit::kHwthread, 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(b[i].unit == Unit::kHwthread);
    CHECK(b[i].cpus == std::vector<unsigned>{2u * static_cast<unsigned>(i)});  // first PU of core i
  }
  // The other way round: a rank placed on a PU is bound to its whole core.
  b = t.bind(Unit::kHwthread, Unit::kCore, 3);
  CHECK(indexes(b) == std::vector<unsigned>{0, 0, 1});
  CHECK(b[2].cpus == range(2, 2));
}

TEST_CASE("--map-by package --bind-to core: each rank gets the next free core of its package") {
  Synthetic t(kTwoPackages);
  auto b = t.bind(Unit::kPackage, Unit::kCore, 6);
  CHECK(indexes(b) == std::vector<unsigned>{0, 4, 1, 5, 2, 6});
  CHECK(b[1].cpus == range(8, 2));
  for (const auto& r : b) CHECK(r.sharers == 1);
}

TEST_CASE("NUMA nodes: bound to, placed on, and containing a core") {
  Synthetic t("package:2 numa:2 core:2 pu:1");  // 4 NUMA nodes of 2 cores
  auto b = t.bind(Unit::kNone, Unit::kNuma, 4);
  CHECK(indexes(b) == std::vector<unsigned>{0, 1, 2, 3});
  CHECK(b[3].cpus == range(6, 2));
  b = t.bind(Unit::kNuma, Unit::kCore, 5);
  CHECK(indexes(b) == std::vector<unsigned>{0, 2, 4, 6, 1});
  b = t.bind(Unit::kCore, Unit::kNuma, 4);
  CHECK(indexes(b) == std::vector<unsigned>{0, 0, 1, 1});
  // Package over NUMA: the NUMA nodes inside each package in turn.
  b = t.bind(Unit::kPackage, Unit::kNuma, 4);
  CHECK(indexes(b) == std::vector<unsigned>{0, 2, 1, 3});
}

TEST_CASE("more ranks than objects wrap around and say who shares") {
  Synthetic t(kTwoPackages);
  auto b = t.bind(Unit::kNone, Unit::kCore, 10);
  CHECK(b[8].index == 0);
  CHECK(b[9].index == 1);
  CHECK(b[0].sharers == 2);
  CHECK(b[8].sharers == 2);
  CHECK(b[2].sharers == 1);
  // Within a package: package 0 gets ranks 0,2,..,10, its 4 cores wrap.
  Synthetic small("package:2 core:2 pu:1");
  b = small.bind(Unit::kPackage, Unit::kCore, 6);
  CHECK(indexes(b) == std::vector<unsigned>{0, 2, 1, 3, 0, 2});
  CHECK(b[0].sharers == 2);
  CHECK(b[1].sharers == 2);
  CHECK(b[2].sharers == 1);
  CHECK(binding_report("mpiexec", 4, "h", b[4]) ==
        "[mpiexec] rank 4 on h: bound to core 0 (cpus 0), shared by 2 ranks (more ranks than cores)");
}

TEST_CASE("--bind-to core is what it always was: a host's rank i on core i mod cores") {
  Synthetic t("package:2 core:3 pu:2");
  const int cores = 6;
  auto b = t.bind(Unit::kNone, Unit::kCore, 14);
  for (int i = 0; i < 14; ++i) {
    const unsigned core = static_cast<unsigned>(i % cores);
    CHECK(b[i].unit == Unit::kCore);
    CHECK(b[i].index == core);
    CHECK(b[i].cpus == range(2 * core, 2));
  }
  // ... and the option still means that.
  CHECK(parse_options({"--bind-to", "core", "p"}).binding == BindPolicy{Unit::kNone, Unit::kCore});
  // --map-by core --bind-to core is the same placement.
  auto same = t.bind(Unit::kCore, Unit::kCore, 14);
  CHECK(indexes(same) == indexes(b));
}

TEST_CASE("a topology without cores binds by PU; one without the object type is an error") {
  Synthetic t("package:1 pu:4");
  auto b = t.bind(Unit::kNone, Unit::kCore, 5);
  CHECK(b[1].unit == Unit::kHwthread);
  CHECK(b[1].cpus == std::vector<unsigned>{1});
  CHECK(b[4].index == 0);
  CHECK_THROWS_AS(t.bind(Unit::kNone, Unit::kL3cache, 1), std::runtime_error);
  CHECK_THROWS_AS(t.bind(Unit::kL3cache, Unit::kCore, 1), std::runtime_error);
}

TEST_CASE("not bound: no CPUs, whatever the placement") {
  Synthetic t(kTwoPackages);
  for (Unit map : {Unit::kNone, Unit::kPackage}) {
    auto b = t.bind(map, Unit::kNone, 3);
    REQUIRE(b.size() == 3);
    for (const auto& r : b) {
      CHECK(r.unit == Unit::kNone);
      CHECK(r.cpus.empty());
    }
  }
  CHECK(binding_report("mpirun", 0, "node7", RankBinding{}) == "[mpirun] rank 0 on node7: not bound");
  CHECK(t.bind(Unit::kCore, Unit::kCore, 0).empty());
}

TEST_CASE("the CPU mask and list of a binding") {
  RankBinding b{Unit::kL3cache, 1, {0, 1, 2, 5, 7, 8}, 1};
  CHECK(cpu_list(b.cpus) == "0-2,5,7-8");
  cpu_set_t m = cpu_mask_of(b);
  CHECK(CPU_COUNT(&m) == 6);
  CHECK(CPU_ISSET(5, &m));
  CHECK_FALSE(CPU_ISSET(4, &m));
  // CPUs beyond what sched_setaffinity takes are left out, not wrapped.
  RankBinding huge{Unit::kCore, 0, {3, CPU_SETSIZE + 3u}, 1};
  m = cpu_mask_of(huge);
  CHECK(CPU_COUNT(&m) == 1);
  CHECK(binding_report("mpiexec", 1, "h", b) == "[mpiexec] rank 1 on h: bound to l3cache 1 (cpus 0-2,5,7-8)");
}

TEST_CASE("--bind-to and --map-by objects on the command line") {
  CHECK(parse_options({"p"}).binding == BindPolicy{Unit::kNone, Unit::kNone});
  CHECK(parse_options({"--bind-to", "socket", "p"}).binding.bind == Unit::kPackage);
  CHECK(parse_options({"-bind-to", "hwthread", "p"}).binding.bind == Unit::kHwthread);  // MPICH
  CHECK(parse_options({"--bind-to=l3cache", "p"}).binding.bind == Unit::kL3cache);
  // --map-by OBJ binds to OBJ unless --bind-to says otherwise (Open MPI).
  Options o = parse_options({"--map-by", "package", "p"});
  CHECK(o.binding == BindPolicy{Unit::kPackage, Unit::kPackage});
  CHECK(o.map_by == MapBy::kSlot);
  CHECK(parse_options({"--map-by", "numa", "--bind-to", "none", "p"}).binding == BindPolicy{Unit::kNuma, Unit::kNone});
  CHECK(parse_options({"--bind-to", "core", "-map-by", "socket", "p"}).binding ==
        BindPolicy{Unit::kPackage, Unit::kCore});
  // A later host mapping replaces the object.
  o = parse_options({"--map-by", "core", "--map-by", "node", "p"});
  CHECK(o.binding == BindPolicy{Unit::kNone, Unit::kNone});
  CHECK(o.map_by == MapBy::kNode);
  CHECK(parse_options({"--report-bindings", "p"}).report_bindings);
  CHECK(parse_options({"-report-bindings", "p"}).report_bindings);
  CHECK_FALSE(parse_options({"p"}).report_bindings);
  for (const char* bad : {"bogus", "Core", "", "core:2", "board", "l2cache"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_options({"--bind-to", bad, "p"}), UsageError);
  }
  for (const char* bad : {"bogus", "ppr:0:node", "ppr:2:socket", "none", "core:PE=2"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_options({"--map-by", bad, "p"}), UsageError);
  }
  CHECK_THROWS_AS(parse_options({"--report-bindings=yes", "p"}), UsageError);
  // Job options: not in a later block.
  CHECK_THROWS_AS(parse_options({"a", ":", "--bind-to", "core", "b"}), UsageError);
  CHECK_THROWS_AS(parse_options({"a", ":", "--report-bindings", "b"}), UsageError);
}
