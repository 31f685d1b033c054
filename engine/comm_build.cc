#include "engine/comm_build.h"

#include <algorithm>
#include <tuple>

#include "engine/attributes.h"
#include "engine/engine.h"
#include "engine/p2p.h"

namespace sonde::engine {

namespace {

Datatype* u64_type() { return &engine().datatypes.predefined(24); }  // MPI_UINT64_T
Datatype* int_type() { return &engine().datatypes.predefined(8); }   // MPI_INT

// Everyone's `n` ints, in rank order (linear through rank 0).
int allgather_ints(Comm* c, const int* mine, int n, std::vector<int>& all) {
  all.assign(size_t(n) * size_t(c->size), 0);
  int tag = collective_tag(kTagKindCommSplit);
  int rc;
  if (c->rank == 0) {
    std::copy(mine, mine + n, all.begin());
    for (int p = 1; p < c->size; ++p) {
      rc = recv(&all[size_t(p) * size_t(n)], n, int_type(), p, tag, c, MPI_STATUS_IGNORE);
      if (rc) return rc;
    }
    for (int p = 1; p < c->size; ++p) {
      rc = send(all.data(), int64_t(all.size()), int_type(), p, tag, c);
      if (rc) return rc;
    }
    return MPI_SUCCESS;
  }
  rc = send(mine, n, int_type(), 0, tag, c);
  if (rc) return rc;
  return recv(all.data(), int64_t(all.size()), int_type(), 0, tag, c, MPI_STATUS_IGNORE);
}

std::vector<int> all_ranks(int n) {
  std::vector<int> v(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) v[size_t(i)] = i;
  return v;
}

}  // namespace

int reduce_free_mask(Comm* via, const std::vector<int>& members, int me, int tag, std::vector<uint64_t>& mask) {
  Engine& e = engine();
  mask = e.free_contexts;
  int n = int(mask.size());
  if (me != 0) return send(mask.data(), n, u64_type(), members[0], tag, via);
  std::vector<uint64_t> other(mask.size());
  for (size_t p = 1; p < members.size(); ++p) {
    int rc = recv(other.data(), n, u64_type(), members[p], tag, via, MPI_STATUS_IGNORE);
    if (rc) return rc;
    for (int i = 0; i < n; ++i) mask[size_t(i)] &= other[size_t(i)];
  }
  return MPI_SUCCESS;
}

int bcast_ints(Comm* via, const std::vector<int>& members, int me, int tag, std::vector<int>& v) {
  int rc;
  if (me == 0) {
    int n = int(v.size());
    for (size_t p = 1; p < members.size(); ++p) {
      rc = send(&n, 1, int_type(), members[p], tag, via);
      if (!rc && n) rc = send(v.data(), n, int_type(), members[p], tag, via);
      if (rc) return rc;
    }
    return MPI_SUCCESS;
  }
  int n = 0;
  rc = recv(&n, 1, int_type(), members[0], tag, via, MPI_STATUS_IGNORE);
  if (rc) return rc;
  v.assign(size_t(n), 0);
  return n ? recv(v.data(), n, int_type(), members[0], tag, via, MPI_STATUS_IGNORE) : MPI_SUCCESS;
}

int lowest_free(const std::vector<uint64_t>& mask) {
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) return int(i * 64) + __builtin_ctzll(mask[i]);
  return -1;
}

void take_context(uint32_t id) { engine().free_contexts[id / 64] &= ~(uint64_t(1) << (id % 64)); }
void give_back_context(uint32_t id) { engine().free_contexts[id / 64] |= uint64_t(1) << (id % 64); }

int agree_context(Comm* via, const std::vector<int>& members, int me, int tag, uint32_t* out) {
  std::vector<uint64_t> mask;
  int rc = reduce_free_mask(via, members, me, tag, mask);
  if (rc) return rc;
  std::vector<int> pick(1, me == 0 ? lowest_free(mask) : -1);
  rc = bcast_ints(via, members, me, tag, pick);
  if (rc) return rc;
  if (pick.size() != 1 || pick[0] < 0) return MPI_ERR_INTERN;  // every context id in use
  *out = uint32_t(pick[0]);
  take_context(*out);
  return MPI_SUCCESS;
}

int agree_inter_context(Comm* inter, uint32_t* out) {
  Comm* local = inter->local_comm;
  std::vector<int> members = all_ranks(local->size);
  int tag_local = collective_tag(kTagKindInterLocal);
  std::vector<uint64_t> mask;
  int rc = reduce_free_mask(local, members, local->rank, tag_local, mask);
  if (rc) return rc;
  std::vector<int> pick(1, -1);
  if (local->rank == 0) {
    // Leaders are rank 0 of each group; they swap their groups' sets.
    std::vector<uint64_t> other(mask.size());
    rc = sendrecv(mask.data(), int64_t(mask.size()), u64_type(), 0, collective_tag(kTagKindInterLeaders),
                  other.data(), int64_t(other.size()), u64_type(), 0, collective_tag(kTagKindInterLeaders), inter,
                  MPI_STATUS_IGNORE);
    if (rc) return rc;
    for (size_t i = 0; i < mask.size(); ++i) mask[i] &= other[i];
    pick[0] = lowest_free(mask);
  }
  rc = bcast_ints(local, members, local->rank, tag_local, pick);
  if (rc) return rc;
  if (pick.size() != 1 || pick[0] < 0) return MPI_ERR_INTERN;
  *out = uint32_t(pick[0]);
  take_context(*out);
  return MPI_SUCCESS;
}

int make_intercomm(Comm* parent, std::vector<int> local, std::vector<int> remote, int my_rank, uint32_t context,
                   Comm* local_comm, Comm** out) {
  Comm* c = nullptr;
  int rc = engine().create_comm(parent, std::move(remote), my_rank, context, &c);
  if (rc) return rc;
  c->inter = true;
  c->size = int(local.size());
  c->local_world = std::move(local);
  c->local_comm = local_comm;
  *out = c;
  return MPI_SUCCESS;
}

int dup_comm(Comm* c, const InfoPairs* info, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  uint32_t context;
  Comm* hidden = nullptr;
  int rc;
  if (c->inter) {
    // A fresh hidden local communicator first, then the shared context.
    uint32_t local_context;
    Comm* local = c->local_comm;
    rc = e.allocate_context(local, &local_context);
    if (rc) return rc;
    rc = e.create_comm(local, local->world, local->rank, local_context, &hidden);
    if (rc) return rc;
    rc = agree_inter_context(e.comms.lookup(handle), &context);
  } else {
    rc = e.allocate_context(c, &context);
  }
  if (rc) return rc;
  c = e.comms.lookup(handle);  // the table may have grown
  Comm* n;
  rc = e.create_comm(c, c->world, c->rank, context, &n, /*duplicate=*/true);
  if (rc) return rc;
  c = e.comms.lookup(handle);
  if (c->inter) {
    n->inter = true;
    n->size = c->size;
    n->local_world = c->local_world;
    n->local_comm = hidden;
  }
  n->info = info ? *info : c->info;
  attr::AttrList from = c->attrs;
  rc = attr::copy_all(attr::Kind::kComm, handle, from, n->handle, n->attrs);
  if (rc) {
    // MPI 7.7.2: a failing copy callback fails the dup; nothing is left behind.
    if (n->local_comm) e.free_comm(n->local_comm);
    e.free_comm(n);
    return rc;
  }
  *out = n;
  return MPI_SUCCESS;
}

int split_comm(Comm* c, int color, int key, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  int mine[2] = {color, key};
  std::vector<int> all;
  int rc = allgather_ints(c, mine, 2, all);
  if (rc) return rc;
  uint32_t context;
  rc = e.allocate_context(c, &context);
  if (rc) return rc;
  c = e.comms.lookup(handle);
  if (color == MPI_UNDEFINED) {
    give_back_context(context);  // we took the id like everyone else; it stays free for us
    *out = nullptr;
    return MPI_SUCCESS;
  }
  // Members of my color ordered by (key, rank in the parent).
  std::vector<std::tuple<int, int>> members;
  for (int p = 0; p < c->size; ++p)
    if (all[size_t(2 * p)] == color) members.emplace_back(all[size_t(2 * p + 1)], p);
  std::stable_sort(members.begin(), members.end());
  std::vector<int> world;
  int my_rank = -1;
  for (auto& [k, p] : members) {
    if (p == c->rank) my_rank = int(world.size());
    world.push_back(c->world[size_t(p)]);
  }
  return e.create_comm(c, std::move(world), my_rank, context, out);
}

int free_comm_checked(Comm* c) {
  int rc = attr::delete_all(attr::Kind::kComm, c->handle, c->attrs);
  if (rc) return rc;
  Engine& e = engine();
  Comm* hidden = c->local_comm;
  c->local_comm = nullptr;
  e.free_comm(c);
  if (hidden) e.free_comm(hidden);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine
