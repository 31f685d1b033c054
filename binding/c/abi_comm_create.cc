// C ABI: communicator constructors and queries beyond dup/split (MPI 4.1
// sections 7.4, 7.6): dup_with_info, idup, create, create_group, split_type,
// compare, test_inter, remote_size, set_info/get_info.
#include <stdexcept>
#include <string>
#include <vector>

#include "binding/c/abi.h"
#include "runtime/lifecycle.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "comm/group.h"
#include "comm/info.h"
#include "core/p2p.h"

using namespace sonde::engine;

namespace {

// MPI_INFO_NULL means "no hints" wherever an info is an input.
bool info_arg(MPI_Info info, InfoPairs* out) {
  if (info == MPI_INFO_NULL) {
    out->clear();
    return true;
  }
  InfoPairs* p = find_info(info);
  if (!p) return false;
  *out = *p;
  return true;
}

// Is every member of `group` in `members`?
bool subset_of(const std::vector<int>& group, const std::vector<int>& members) {
  for (int w : group)
    if (rank_of(members, w) == MPI_UNDEFINED) return false;
  return true;
}

// MPI_Comm_idup(_with_info): `info` null for the plain form. The agreement
// runs in the background (progress()), on intra- and intercommunicators.
int idup(MPI_Comm comm, const MPI_Info* info, MPI_Comm* newcomm, MPI_Request* request, const char* fn) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  InfoPairs hints;
  if (info && !info_arg(*info, &hints)) return raise(c, MPI_ERR_INFO, fn);
  if (!newcomm || !request) return raise(c, MPI_ERR_ARG, fn);
  // No communicator on the request: it is not point-to-point traffic, so
  // PERUSE sees none of it (the agreement's own messages it does see).
  Request* r = engine().new_request(RequestKind::kCollective);
  if (!r) return raise(c, MPI_ERR_INTERN, fn);
  *request = r->handle;
  return finish(c, start_idup(c, info ? &hints : nullptr, newcomm, r), fn);
}

}  // namespace

extern "C" {

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_dup_with_info");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  InfoPairs hints;
  if (!info_arg(info, &hints)) return raise(c, MPI_ERR_INFO, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  Comm* out;
  int rc = dup_comm(c, &hints, &out);
  if (rc) return raise(find_comm(comm), rc, fn);
  *newcomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_dup_with_info)

// Nonblocking: the new communicator's context is agreed on in the
// background (comm/comm_build.h); *newcomm is written when the request
// completes, so it must stay valid until then.
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  SONDE_ENTER("MPI_Comm_idup");
  return idup(comm, nullptr, newcomm, request, fn);
}
SONDE_WEAK_ALIAS(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  SONDE_ENTER("MPI_Comm_idup_with_info");
  return idup(comm, &info, newcomm, request, fn);
}
SONDE_WEAK_ALIAS(Comm_idup_with_info)

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_create");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  Group* g = find_group(group);
  if (!g) return raise(c, MPI_ERR_GROUP, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  // The group is part of the local group (an intercommunicator's too).
  if (!subset_of(g->world, c->group_world())) return raise(c, MPI_ERR_GROUP, fn);
  std::vector<int> members = g->world;
  Engine& e = engine();
  Comm* out;
  if (c->inter) {
    int rc = create_intercomm(c, members, &out);
    if (rc) return raise(find_comm(comm), rc, fn);
    *newcomm = out ? out->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  uint32_t context;
  int rc = allocate_context(c, &context);
  if (rc) return raise(find_comm(comm), rc, fn);
  c = find_comm(comm);
  int my_rank = rank_of(members, e.world_rank());
  if (my_rank == MPI_UNDEFINED) {
    give_back_context(context);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  rc = e.create_comm(c, std::move(members), my_rank, context, &out);
  if (rc) return raise(c, rc, fn);
  *newcomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_create)

// Collective over the group's members only: they agree on a context id among
// themselves through `comm` (reserved tag kind kTagKindCreateGroup). The
// user's tag is validated but not needed to keep concurrent calls apart in a
// single-threaded process; concurrent calls from several threads on
// overlapping groups are not supported.
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_create_group");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (c->inter) return raise(c, MPI_ERR_COMM, fn);
  Group* g = find_group(group);
  if (!g) return raise(c, MPI_ERR_GROUP, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  if (tag < 0) return raise(c, MPI_ERR_TAG, fn);
  if (!subset_of(g->world, c->world)) return raise(c, MPI_ERR_GROUP, fn);
  Engine& e = engine();
  std::vector<int> world = g->world;
  int me = rank_of(world, e.world_rank());
  if (me == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;  // not a member: a local operation (MPI 4.1 7.4.2)
    return MPI_SUCCESS;
  }
  std::vector<int> members;  // comm ranks, in group order
  for (int w : world) members.push_back(rank_of(c->world, w));
  uint32_t context;
  int rc = agree_context(c, members, me, collective_tag(kTagKindCreateGroup), &context);
  if (rc) return raise(find_comm(comm), rc, fn);
  c = find_comm(comm);
  Comm* out;
  rc = e.create_comm(c, std::move(world), me, context, &out);
  if (rc) return raise(c, rc, fn);
  *newcomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_create_group)

// On an intercommunicator the types split it as MPI_Comm_split does (an
// intercommunicator per type between its local and remote processes).
// MPI_COMM_TYPE_SHARED groups the processes that share a node, as the
// resource manager reports nodes through wire-up (Wireup::node_of), not by
// comparing host names. HW_GUIDED with mpi_hw_resource_type=mpi_shared_memory
// is the same split; any other resource type gives MPI_COMM_NULL. HW_UNGUIDED
// gives the shared-memory split when it is strictly smaller than `comm`, else
// MPI_COMM_NULL.
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_split_type");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  InfoPairs hints;
  if (!info_arg(info, &hints)) return raise(c, MPI_ERR_INFO, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
      split_type != MPI_COMM_TYPE_HW_UNGUIDED)
    return raise(c, MPI_ERR_ARG, fn);
  Engine& e = engine();
  int color = MPI_UNDEFINED;
  if (split_type != MPI_UNDEFINED) {
    bool shared = split_type != MPI_COMM_TYPE_HW_GUIDED;
    if (!shared) {
      for (auto& [k, v] : hints)
        if (k == "mpi_hw_resource_type" && v == "mpi_shared_memory") shared = true;
    }
    if (shared) {
      try {
        color = job_wireup()->node_of(e.world_rank());
      } catch (const std::exception&) {
        return raise(c, MPI_ERR_INTERN, fn);
      }
    }
  }
  Comm* out;
  int rc = c->inter ? split_intercomm(c, color, key, &out) : split_comm(c, color, key, &out);
  if (rc) return raise(find_comm(comm), rc, fn);
  c = find_comm(comm);
  if (out && split_type == MPI_COMM_TYPE_HW_UNGUIDED && out->size == c->size && out->peers() == c->peers()) {
    // Not strictly smaller: every member sees the same sizes (an
    // intercommunicator's two sides see them swapped), so all drop it.
    free_comm_checked(out);
    out = nullptr;
  }
  if (out) out->info = hints;
  *newcomm = out ? out->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_split_type)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  SONDE_ENTER("MPI_Comm_compare");
  Comm* a = find_comm(comm1);
  Comm* b = find_comm(comm2);
  if (!a || !b) return raise(a ? a : b, MPI_ERR_COMM, fn);
  if (!result) return raise(a, MPI_ERR_ARG, fn);
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (a->inter != b->inter) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  int local = compare_members(a->group_world(), b->group_world());
  int remote = a->inter ? compare_members(a->world, b->world) : MPI_IDENT;
  if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL) *result = MPI_UNEQUAL;
  else if (local == MPI_IDENT && remote == MPI_IDENT) *result = MPI_CONGRUENT;
  else *result = MPI_SIMILAR;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_compare)

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  SONDE_ENTER("MPI_Comm_test_inter");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!flag) return raise(c, MPI_ERR_ARG, fn);
  *flag = c->inter;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  SONDE_ENTER("MPI_Comm_remote_size");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!size) return raise(c, MPI_ERR_ARG, fn);
  *size = int(c->world.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_remote_size)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  SONDE_ENTER("MPI_Comm_set_info");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  InfoPairs* p = find_info(info);
  if (!p) return raise(c, MPI_ERR_INFO, fn);
  for (auto& [k, v] : *p) info_set(c->info, k, v);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_set_info)

// The hints set on the communicator (by set_info, dup_with_info, or inherited
// through dup). Sonde acts on none of them; returning them lets layered
// libraries keep their own settings on a communicator.
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  SONDE_ENTER("MPI_Comm_get_info");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!info_used) return raise(c, MPI_ERR_ARG, fn);
  return finish(c, new_info(c->info, info_used), fn);
}
SONDE_WEAK_ALIAS(Comm_get_info)

}  // extern "C"
