// Process groups (MPI 4.1 chapter 7.3): an ordered list of world ranks.
//
// Groups live in their own handle table (kind SONDE_KIND_GROUP); slot 1 is
// MPI_GROUP_EMPTY. A group is a value: nothing refers back to it, so freeing
// one never affects a communicator made from it. Callers hold the engine
// lock.
#pragma once

#include <vector>

#include "base/handles.h"
#include "include/mpi.h"

namespace sonde::engine {

struct Group {
  std::vector<int> world;  // group rank -> world rank
};

HandleTable<Group, SONDE_KIND_GROUP>& group_table();
// Live group (MPI_GROUP_EMPTY included), or null for null/freed/forged handles.
Group* find_group(MPI_Group h);
// A new group handle holding `world`; MPI_ERR_INTERN when the table is full.
int new_group(std::vector<int> world, MPI_Group* out);
// Rank of world rank `w` in `world`, or MPI_UNDEFINED.
int rank_of(const std::vector<int>& world, int w);
// MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL for two rank lists.
int compare_members(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace sonde::engine
