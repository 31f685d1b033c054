// C ABI: intercommunicators (MPI 4.1 section 7.6): MPI_Intercomm_create and
// MPI_Intercomm_merge. Point-to-point on them needs nothing special: an
// intercommunicator's `world` lists the remote group (core/objects.h), so ranks
// in sends and receives name remote processes, and a message carries the
// sender's rank in its own group, which is the receiver's remote rank.
#include <vector>

#include "binding/c/abi.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "comm/group.h"
#include "core/p2p.h"

using namespace sonde::engine;

namespace {

Datatype* u64_type() { return &engine().tables().datatypes.predefined(24); }  // MPI_UINT64_T

// Intercomm_create's leader swap of context offers over peer_comm.
struct LeaderPeer {
  Comm* peer;
  int remote_leader;
  int tag;
};
int swap_with_peer(void* arg, std::vector<uint64_t>& words) {
  auto* p = static_cast<LeaderPeer*>(arg);
  std::vector<uint64_t> other(words.size());
  int rc = sendrecv(words.data(), int64_t(words.size()), u64_type(), p->remote_leader, p->tag, other.data(),
                    int64_t(other.size()), u64_type(), p->remote_leader, p->tag, p->peer, MPI_STATUS_IGNORE);
  if (!rc)
    for (size_t i = 0; i < words.size(); ++i) words[i] &= other[i];
  return rc;
}

}  // namespace

extern "C" {

// The leaders swap their groups' free context sets and member lists over
// peer_comm with the user's tag (as MPI specifies); everything else runs on
// local_comm with reserved tags. Each group also gets a hidden
// intracommunicator of its own, which later dup/merge agreements use.
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm* newintercomm) {
  SONDE_ENTER("MPI_Intercomm_create");
  Comm* lc = find_comm(local_comm);
  if (!lc || lc->inter) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!newintercomm) return raise(lc, MPI_ERR_ARG, fn);
  if (local_leader < 0 || local_leader >= lc->size) return raise(lc, MPI_ERR_RANK, fn);
  if (tag < 0) return raise(lc, MPI_ERR_TAG, fn);
  bool leader = lc->rank == local_leader;
  Comm* pc = nullptr;
  if (leader) {
    pc = find_comm(peer_comm);
    if (!pc) return raise(lc, MPI_ERR_COMM, fn);
    if (remote_leader < 0 || remote_leader >= pc->peers()) return raise(lc, MPI_ERR_RANK, fn);
    if (!pc->inter && remote_leader == pc->rank) return raise(lc, MPI_ERR_RANK, fn);
  }
  Engine& e = engine();
  std::vector<int> members{local_leader};
  for (int r = 0; r < lc->size; ++r)
    if (r != local_leader) members.push_back(r);
  int me = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == lc->rank) me = int(i);
  int tag_local = collective_tag(kTagKindInterLocal);

  // The hidden local intracommunicator.
  uint32_t local_context;
  int rc = agree_context(lc, members, me, tag_local, &local_context);
  if (rc) return raise(find_comm(local_comm), rc, fn);
  lc = find_comm(local_comm);
  Comm* hidden;
  rc = e.create_comm(lc, lc->world, lc->rank, local_context, &hidden);
  if (rc) return raise(lc, rc, fn);

  // The leaders swap their groups' member lists; everyone learns the remote
  // group (or that the groups overlap: -1 first).
  std::vector<int> pack;
  if (leader) {
    rc = swap_ints(pc, remote_leader, tag, lc->world, pack);
    if (rc) return raise(lc, rc, fn);
    bool disjoint = true;
    for (int w : pack)
      if (rank_of(lc->world, w) != MPI_UNDEFINED) disjoint = false;
    if (!disjoint) pack.insert(pack.begin(), -1);
  }
  rc = bcast_ints(lc, members, me, tag_local, pack);
  if (rc) return raise(lc, rc, fn);
  if (pack.empty() || pack[0] < 0) {
    e.free_comm(hidden);
    return raise(lc, MPI_ERR_COMM, fn);  // the groups overlap (or one is empty)
  }
  // The intercommunicator's context: free in both groups (the leaders AND
  // their groups' offers over peer_comm with the user's tag).
  LeaderPeer peer{pc, remote_leader, tag};
  uint32_t context;
  rc = agree_context(lc, members, me, tag_local, &context, leader ? swap_with_peer : nullptr, &peer);
  if (rc) {
    e.free_comm(hidden);
    return raise(lc, rc, fn);
  }
  std::vector<int> remote = std::move(pack);
  Comm* out;
  rc = make_intercomm(lc, lc->world, std::move(remote), lc->rank, context, hidden, &out);
  if (rc) return raise(lc, rc, fn);
  *newintercomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Intercomm_create)

// The group whose leader passed high=false comes first; with equal `high`
// the group whose leader has the lower process uid (Engine::process_uid:
// the world rank within one job) does (MPI leaves that
// order to the implementation).
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  SONDE_ENTER("MPI_Intercomm_merge");
  Comm* c = find_comm(intercomm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!newintracomm) return raise(c, MPI_ERR_ARG, fn);
  Engine& e = engine();
  Comm* local = c->local_comm;
  std::vector<int> members(size_t(local->size));
  for (int i = 0; i < local->size; ++i) members[size_t(i)] = i;
  int tag_local = collective_tag(kTagKindInterLocal);
  int tag_leaders = collective_tag(kTagKindInterLeaders);
  // Leaders (rank 0 of each group) settle the order, then the context.
  std::vector<int> order(1, 0);
  int rc = MPI_SUCCESS;
  if (local->rank == 0) {
    // The tie-break must mean the same in both groups, which may be
    // different jobs: the process's unique id, not its world rank.
    const uint64_t uid = e.process_uid();
    uint64_t mine[2] = {high ? 1u : 0u, uid}, theirs[2] = {0, 0};
    rc = sendrecv(mine, 2, u64_type(), 0, tag_leaders, theirs, 2, u64_type(), 0, tag_leaders, c, MPI_STATUS_IGNORE);
    if (rc) return raise(c, rc, fn);
    order[0] = mine[0] < theirs[0] || (mine[0] == theirs[0] && mine[1] < theirs[1]);
  }
  rc = bcast_ints(local, members, local->rank, tag_local, order);
  if (rc) return raise(c, rc, fn);
  uint32_t context;
  rc = agree_inter_context(c, &context);
  if (rc) return raise(find_comm(intercomm), rc, fn);
  std::vector<int> pack{int(context), order.empty() ? 0 : order[0]};
  c = find_comm(intercomm);
  bool first = pack[1] != 0;
  std::vector<int> world = first ? c->local_world : c->world;
  const std::vector<int>& second = first ? c->world : c->local_world;
  world.insert(world.end(), second.begin(), second.end());
  int my_rank = first ? c->rank : int(c->world.size()) + c->rank;
  Comm* out;
  rc = e.create_comm(c, std::move(world), my_rank, context, &out);
  if (rc) return raise(c, rc, fn);
  *newintracomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Intercomm_merge)

}  // extern "C"
