// MPI 4.0 sessions: process sets and parent-less communicator construction
// (session.h).
#include "comm/session.h"

#include <strings.h>

#include <algorithm>

#include "comm/comm_build.h"
#include "core/engine.h"
#include "comm/group.h"
#include "core/p2p.h"

namespace sonde::engine {

const std::vector<std::string>& pset_names() {
  static const std::vector<std::string> names = {"mpi://WORLD", "mpi://SELF"};
  return names;
}

bool pset_members(const std::string& name, std::vector<int>* world_ranks) {
  Engine& e = engine();
  if (strcasecmp(name.c_str(), "mpi://WORLD") == 0) {
    world_ranks->resize(size_t(e.world_size()));
    for (int i = 0; i < e.world_size(); ++i) (*world_ranks)[size_t(i)] = i;
    return true;
  }
  if (strcasecmp(name.c_str(), "mpi://SELF") == 0) {
    *world_ranks = {e.world_rank()};
    return true;
  }
  return false;
}

int stringtag_tag(const std::string& stringtag, int kind) {
  // FNV-1a: the same on every process; 2^24 buckets of 64 tags below the
  // collectives' base, clear of INT_MIN.
  uint32_t h = 2166136261u;
  for (unsigned char ch : stringtag) h = (h ^ ch) * 16777619u;
  return kCollectiveTagBase - 64 * (1 + int(h % (1u << 24))) - kind;
}

namespace {

// The hidden communicator over all world processes on the reserved context;
// made on first use (messages that arrive before wait in the engine's early list).
Comm* bootstrap() {
  Engine& e = engine();
  Comm* c = e.contexts().find(kSessionBootstrapContext);
  if (c) return c;
  std::vector<int> all(size_t(e.world_size()));
  for (int i = 0; i < e.world_size(); ++i) all[size_t(i)] = i;
  if (e.create_comm(nullptr, std::move(all), e.world_rank(), kSessionBootstrapContext, &c) != MPI_SUCCESS)
    return nullptr;
  c->name = "sonde:session-bootstrap";
  c->errhandler = MPI_ERRORS_RETURN;
  return c;
}

// A context id free on every process of `members` (world ranks, the same
// list in the same order everywhere), taken on each.
int agree(const std::vector<int>& members, int tag, uint32_t* out) {
  Comm* via = bootstrap();
  if (!via) return MPI_ERR_INTERN;
  int me = rank_of(members, engine().world_rank());
  if (me == MPI_UNDEFINED) return MPI_ERR_GROUP;
  return agree_context(via, members, me, tag, out);
}

void adopt(Comm* c, int errhandler, const InfoPairs& hints) {
  c->errhandler = errhandler;
  c->info = hints;
}

}  // namespace

int comm_from_group(const std::vector<int>& world_ranks, const std::string& stringtag, int errhandler,
                    const InfoPairs& hints, Comm** out) {
  Engine& e = engine();
  int me = rank_of(world_ranks, e.world_rank());
  if (me == MPI_UNDEFINED) return MPI_ERR_GROUP;
  uint32_t context;
  int rc = agree(world_ranks, stringtag_tag(stringtag, 0), &context);
  if (rc) return rc;
  rc = e.create_comm(nullptr, world_ranks, me, context, out);
  if (rc) {
    give_back_context(context);
    return rc;
  }
  adopt(*out, errhandler, hints);
  return MPI_SUCCESS;
}

int intercomm_from_groups(const std::vector<int>& local, const std::vector<int>& remote, const std::string& stringtag,
                          int errhandler, const InfoPairs& hints, Comm** out) {
  Engine& e = engine();
  int me = rank_of(local, e.world_rank());
  if (me == MPI_UNDEFINED) return MPI_ERR_GROUP;
  // Both groups agree on the shared context first: the same sorted list of
  // all members on both sides, so both pick the same leader.
  std::vector<int> everyone = local;
  everyone.insert(everyone.end(), remote.begin(), remote.end());
  std::sort(everyone.begin(), everyone.end());
  uint32_t context, local_context;
  int rc = agree(everyone, stringtag_tag(stringtag, 1), &context);
  if (rc) return rc;
  // Then each group, on its own, the hidden local communicator's (later
  // constructions on the intercommunicator agree over it).
  rc = agree(local, stringtag_tag(stringtag, 2), &local_context);
  if (rc) {
    give_back_context(context);
    return rc;
  }
  Comm* local_comm = nullptr;
  rc = e.create_comm(nullptr, local, me, local_context, &local_comm);
  if (rc) {
    give_back_context(context);
    give_back_context(local_context);
    return rc;
  }
  local_comm->errhandler = MPI_ERRORS_RETURN;
  rc = make_intercomm(nullptr, local, remote, me, context, local_comm, out);
  if (rc) {
    e.free_comm(local_comm);
    give_back_context(context);
    return rc;
  }
  adopt(*out, errhandler, hints);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
