// C ABI: process groups (MPI 4.1 section 7.3).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "comm/group.h"

namespace sonde::engine {

HandleTable<Group, SONDE_KIND_GROUP>& group_table() {
  static auto* t = new HandleTable<Group, SONDE_KIND_GROUP>(1);  // 1: MPI_GROUP_EMPTY
  return *t;
}

Group* find_group(MPI_Group h) { return group_table().lookup(h); }

int new_group(std::vector<int> world, MPI_Group* out) {
  if (world.empty()) {
    // Every empty result is MPI_GROUP_EMPTY, as MPICH and Open MPI answer.
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  Group* g = nullptr;
  int h = group_table().allocate(&g);
  if (!h) return MPI_ERR_INTERN;
  g->world = std::move(world);
  *out = h;
  return MPI_SUCCESS;
}

int rank_of(const std::vector<int>& world, int w) {
  for (size_t i = 0; i < world.size(); ++i)
    if (world[i] == w) return int(i);
  return MPI_UNDEFINED;
}

int compare_members(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  if (a.size() != b.size()) return MPI_UNEQUAL;
  std::vector<int> x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace sonde::engine

using namespace sonde::engine;

namespace {

// Ranks given to incl/excl: each in range and none repeated.
bool distinct_in_range(int n, const int* ranks, int size) {
  std::vector<char> seen(size_t(size), 0);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size || seen[size_t(ranks[i])]) return false;
    seen[size_t(ranks[i])] = 1;
  }
  return true;
}

// The ranks of (first, last, stride) triplets, validated as MPI 7.3.2
// requires (in range, stride not 0, no rank twice). False on bad input.
bool expand_ranges(int n, int ranges[][3], int size, std::vector<int>& out) {
  std::vector<char> seen(size_t(size), 0);
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return false;
    if (first < 0 || first >= size || last < 0 || last >= size) return false;
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
      continue;  // an empty triplet is legal
    }
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[size_t(r)]) return false;
      seen[size_t(r)] = 1;
      out.push_back(int(r));
    }
  }
  return true;
}

int make_result(std::vector<int> world, MPI_Group* out, const char* fn) {
  int rc = new_group(std::move(world), out);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}

// incl/excl (ranks) and range_incl/range_excl (ranges): the chosen ranks in
// the order given (include), or the others in group order (exclude).
int select(MPI_Group group, int n, const int ranks[], int ranges[][3], MPI_Group* newgroup, bool include,
           const char* fn) {
  Group* g = find_group(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (!newgroup || n < 0 || (n > 0 && !ranks && !ranges)) return raise(nullptr, MPI_ERR_ARG, fn);
  int size = int(g->world.size());
  std::vector<int> chosen;
  if (ranges) {
    if (!expand_ranges(n, ranges, size, chosen)) return raise(nullptr, MPI_ERR_RANK, fn);
  } else {
    if (n > size || !distinct_in_range(n, ranks, size)) return raise(nullptr, MPI_ERR_RANK, fn);
    chosen.assign(ranks, ranks + n);
  }
  std::vector<int> world;
  if (include) {
    for (int r : chosen) world.push_back(g->world[size_t(r)]);
  } else {
    std::vector<char> out(g->world.size(), 0);
    for (int r : chosen) out[size_t(r)] = 1;
    for (size_t i = 0; i < g->world.size(); ++i)
      if (!out[i]) world.push_back(g->world[i]);
  }
  return make_result(std::move(world), newgroup, fn);
}

}  // namespace

extern "C" {

int PMPI_Group_size(MPI_Group group, int* size) {
  SONDE_ENTER("MPI_Group_size");
  Group* g = find_group(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  *size = int(g->world.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int* rank) {
  SONDE_ENTER("MPI_Group_rank");
  Group* g = find_group(group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (!rank) return raise(nullptr, MPI_ERR_ARG, fn);
  *rank = rank_of(g->world, engine().world_rank());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_rank)

int PMPI_Group_free(MPI_Group* group) {
  SONDE_ENTER("MPI_Group_free");
  if (!group) return raise(nullptr, MPI_ERR_ARG, fn);
  Group* g = find_group(*group);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, fn);
  // MPI_GROUP_EMPTY is predefined: freeing it is allowed (MPI 4.1 7.3.3) and
  // leaves it intact.
  if (*group != MPI_GROUP_EMPTY) {
    g->world.clear();
    g->world.shrink_to_fit();
    group_table().release(*group);
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_free)

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_incl");
  return select(group, n, ranks, nullptr, newgroup, true, fn);
}
SONDE_WEAK_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_excl");
  return select(group, n, ranks, nullptr, newgroup, false, fn);
}
SONDE_WEAK_ALIAS(Group_excl)

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_range_incl");
  return select(group, n, nullptr, ranges, newgroup, true, fn);
}
SONDE_WEAK_ALIAS(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_range_excl");
  return select(group, n, nullptr, ranges, newgroup, false, fn);
}
SONDE_WEAK_ALIAS(Group_range_excl)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  SONDE_ENTER("MPI_Group_translate_ranks");
  Group* a = find_group(group1);
  Group* b = find_group(group2);
  if (!a || !b) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (n < 0 || (n > 0 && (!ranks1 || !ranks2))) return raise(nullptr, MPI_ERR_ARG, fn);
  for (int i = 0; i < n; ++i)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= int(a->world.size())))
      return raise(nullptr, MPI_ERR_RANK, fn);
  std::unordered_map<int, int> where;
  for (size_t i = 0; i < b->world.size(); ++i) where.emplace(b->world[i], int(i));
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    auto it = where.find(a->world[size_t(ranks1[i])]);
    ranks2[i] = it == where.end() ? MPI_UNDEFINED : it->second;
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  SONDE_ENTER("MPI_Group_compare");
  Group* a = find_group(group1);
  Group* b = find_group(group2);
  if (!a || !b) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (!result) return raise(nullptr, MPI_ERR_ARG, fn);
  *result = compare_members(a->world, b->world);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_compare)

}  // extern "C"

namespace {

// The three set operations share their validation; `keep_b` decides which
// of group1's members stay (by membership in group2) and whether group2's
// other members are appended (union).
enum class SetOp { kUnion, kIntersection, kDifference };
int set_op(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, SetOp op, const char* fn) {
  Group* a = find_group(group1);
  Group* b = find_group(group2);
  if (!a || !b) return raise(nullptr, MPI_ERR_GROUP, fn);
  if (!newgroup) return raise(nullptr, MPI_ERR_ARG, fn);
  std::unordered_set<int> in_b(b->world.begin(), b->world.end());
  std::vector<int> world;
  for (int w : a->world)
    if (op == SetOp::kUnion || (in_b.count(w) != 0) == (op == SetOp::kIntersection)) world.push_back(w);
  if (op == SetOp::kUnion) {
    std::unordered_set<int> in_a(a->world.begin(), a->world.end());
    for (int w : b->world)
      if (!in_a.count(w)) world.push_back(w);
  }
  return make_result(std::move(world), newgroup, fn);
}

}  // namespace

extern "C" {

// Union: group1's members, then group2's not in group1, each in its order.
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_union");
  return set_op(group1, group2, newgroup, SetOp::kUnion, fn);
}
SONDE_WEAK_ALIAS(Group_union)

// Intersection: group1's members also in group2, in group1's order.
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_intersection");
  return set_op(group1, group2, newgroup, SetOp::kIntersection, fn);
}
SONDE_WEAK_ALIAS(Group_intersection)

// Difference: group1's members not in group2, in group1's order.
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_difference");
  return set_op(group1, group2, newgroup, SetOp::kDifference, fn);
}
SONDE_WEAK_ALIAS(Group_difference)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  SONDE_ENTER("MPI_Comm_group");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!group) return raise(c, MPI_ERR_ARG, fn);
  int rc = new_group(c->group_world(), group);
  return finish(c, rc, fn);
}
SONDE_WEAK_ALIAS(Comm_group)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  SONDE_ENTER("MPI_Comm_remote_group");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!group) return raise(c, MPI_ERR_ARG, fn);
  return finish(c, new_group(c->world, group), fn);
}
SONDE_WEAK_ALIAS(Comm_remote_group)

}  // extern "C"
