// MPI 4.0 sessions: session objects, process sets, and
// communicators made from groups without a parent communicator
// (MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups).
//
// Sessions and the World model coexist in one process; starting and
// stopping the engine for them is the runtime's (runtime/lifecycle.h).
//
// Context ids without a parent: every process reserves context
// kSessionBootstrapContext at engine start (runtime/lifecycle.cc) for one hidden
// communicator over all world processes, the *bootstrap*. A construction
// from a group runs comm_build's agree_context over the bootstrap, among
// the group's members only, with a reserved tag derived from the stringtag
// (kinds below). Calls on different groups never exchange a message; calls
// on overlapping groups are told apart by their stringtags (MPI requires
// concurrent ones to differ) and ordered by the non-overtaking rule
// otherwise. docs/communicators.md, section "Sessions", has the details.
//
// Callers hold the engine lock. Results are MPI error classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/info.h"
#include "core/objects.h"

namespace sonde::engine {

// Reserved at engine start on every process (besides 0 WORLD, 1 SELF).
inline constexpr uint32_t kSessionBootstrapContext = 2;

// The process sets every session knows, in MPI_Session_get_nth_pset order.
const std::vector<std::string>& pset_names();
// World ranks of a process set (names compare case-insensitively); false
// for an unknown name.
bool pset_members(const std::string& name, std::vector<int>* world_ranks);

// Reserved tag of a construction from a group: kind 0 MPI_Comm_create_from_group,
// 1 the whole of an MPI_Intercomm_create_from_groups, 2 its local group.
int stringtag_tag(const std::string& stringtag, int kind);

// A new intracommunicator over `world_ranks` (my world rank among them),
// its context agreed over the bootstrap. `errhandler` and `hints` become
// the communicator's.
int comm_from_group(const std::vector<int>& world_ranks, const std::string& stringtag, int errhandler,
                    const InfoPairs& hints, Comm** out);
// A new intercommunicator between `local` (mine) and `remote` (disjoint).
int intercomm_from_groups(const std::vector<int>& local, const std::vector<int>& remote, const std::string& stringtag,
                          int errhandler, const InfoPairs& hints, Comm** out);

}  // namespace sonde::engine
