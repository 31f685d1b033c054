#include "comm/comm_build.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "comm/attributes.h"
#include "core/engine.h"
#include "comm/group.h"
#include "core/p2p.h"
#include "comm/comm_build_internal.h"

namespace sonde::engine {

namespace detail {

Datatype* u64_type() { return &engine().tables().datatypes.predefined(24); }  // MPI_UINT64_T
Datatype* int_type() { return &engine().tables().datatypes.predefined(8); }   // MPI_INT

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

}  // namespace detail

using namespace detail;

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

int swap_ints(Comm* via, int peer, int tag, const std::vector<int>& mine, std::vector<int>& theirs) {
  int n = int(mine.size()), m = 0;
  int rc = sendrecv(&n, 1, int_type(), peer, tag, &m, 1, int_type(), peer, tag, via, MPI_STATUS_IGNORE);
  if (rc) return rc;
  theirs.assign(size_t(m), 0);
  return sendrecv(mine.data(), n, int_type(), peer, tag, theirs.data(), m, int_type(), peer, tag, via,
                  MPI_STATUS_IGNORE);
}

void take_context(uint32_t id) { engine().contexts().take(id); }
void give_back_context(uint32_t id) { engine().contexts().give_back(id); }

namespace detail {

int g_offers_out = 0;  // rounds in flight in this process holding an offer

std::vector<uint64_t> make_offer(bool give, size_t from, size_t window, int keep) {
  if (!give) return context_window::empty_offer(window);
  ContextRegistry& contexts = engine().contexts();
  const std::vector<uint64_t>& free_set = contexts.free_words();
  if (keep > 0) {
    int total = 0;
    for (uint64_t w : free_set) total += __builtin_popcountll(w);
    if (total <= 2 * keep) keep = 0;  // nearly used up: everything is offered
  }
  std::vector<uint64_t> offer = context_window::window_of(free_set, from, window, keep, g_offers_out == 0);
  for (uint64_t i = offer[0]; i < offer[1]; ++i) contexts.take_bits(i, offer[context_window::kHeader + i - offer[0]]);
  ++g_offers_out;
  return offer;
}

void settle_offer(const std::vector<uint64_t>& offer, bool gave, int pick) {
  if (!gave) return;
  ContextRegistry& contexts = engine().contexts();
  for (uint64_t i = offer[0]; i < offer[1]; ++i)
    contexts.give_back_bits(i, offer[context_window::kHeader + i - offer[0]]);
  if (pick >= 0) take_context(uint32_t(pick));
  --g_offers_out;
}

}  // namespace detail

namespace {

// The rounds of an agreement (comm_build.h) on `want` ids: `round(n, offer,
// pick)` combines this member's offer of round n with the others' and sets
// pick (two ints, the same on every member) to the decision.
template <class Round>
int run_rounds(int want, uint32_t* out, Round&& round) {
  size_t window = context_window::kFirstWords, from = 0;
  for (int n = 0;; ++n) {
    std::vector<uint64_t> offer = make_offer(true, from, window);
    std::vector<int> pick(2, context_window::kRetry);
    int rc = round(n, offer, pick);
    int chosen = !rc && pick.size() == 2 ? pick[0] : context_window::kRetry;
    int second = want == 2 && chosen >= 0 ? pick[1] : -1;
    settle_offer(offer, true, chosen);
    if (second >= 0) take_context(uint32_t(second));
    if (rc) return rc;
    if (pick.size() != 2) return MPI_ERR_INTERN;
    if (chosen >= 0) {
      out[0] = uint32_t(chosen);
      if (want == 2) out[1] = uint32_t(second);
      return MPI_SUCCESS;
    }
    if (chosen == context_window::kExhausted) return MPI_ERR_NO_MEM;  // ids used up (comm_build.h)
    if (chosen == context_window::kGrow) {
      from = size_t(pick[1]);
      window = context_window::grown(window, kIdWords);
      continue;
    }
    // Some member's ids were out on another round (an idup in flight): let
    // that one move, then try again from the lowest.
    from = 0;
    int idle = 0;
    if (progress() == 0) engine().idle(idle);
  }
}

}  // namespace

int agree_context(Comm* via, const std::vector<int>& members, int me, int tag, uint32_t* out, LeaderSwap swap,
                  void* swap_arg) {
  return run_rounds(1, out, [&](int, const std::vector<uint64_t>& offer, std::vector<int>& pick) {
    std::vector<uint64_t> words = offer;
    int n = int(words.size()), rc = MPI_SUCCESS;
    if (me != 0) {
      rc = send(words.data(), n, u64_type(), members[0], tag, via);
    } else {
      std::vector<uint64_t> other(words.size());
      for (size_t p = 1; p < members.size() && !rc; ++p) {
        rc = recv(other.data(), n, u64_type(), members[p], tag, via, MPI_STATUS_IGNORE);
        if (!rc) context_window::and_into(words, other.data());
      }
      if (!rc && swap) rc = swap(swap_arg, words);
      context_window::decide(words, 1, kIdWords, pick.data());
    }
    return rc ? rc : bcast_ints(via, members, me, tag, pick);
  });
}

int agree_contexts_apart(OfferSwap swap, void* arg, int want, uint32_t* out) {
  return run_rounds(want, out, [&](int n, const std::vector<uint64_t>& offer, std::vector<int>& pick) {
    std::vector<std::string> others;
    int rc = swap(arg, n, context_window::offer_text(offer), &others);
    if (rc) return rc;
    const size_t window = offer.size() - context_window::kHeader;
    std::vector<uint64_t> words = offer, other;
    for (const std::string& text : others) {
      if (!context_window::parse_offer_text(text, window, kIdWords, &other).empty()) return MPI_ERR_OTHER;
      context_window::and_into(words, other.data());
    }
    context_window::decide(words, want, kIdWords, pick.data());
    return MPI_SUCCESS;
  });
}

namespace {
// Leaders of an intercommunicator's groups (rank 0 of each) swap their
// groups' ANDs over the intercommunicator itself.
int swap_over_inter(void* arg, std::vector<uint64_t>& words) {
  Comm* inter = static_cast<Comm*>(arg);
  std::vector<uint64_t> other(words.size());
  int tag = collective_tag(kTagKindInterLeaders);
  int rc = sendrecv(words.data(), int64_t(words.size()), u64_type(), 0, tag, other.data(), int64_t(other.size()),
                    u64_type(), 0, tag, inter, MPI_STATUS_IGNORE);
  if (!rc) context_window::and_into(words, other.data());
  return rc;
}
}  // namespace

int agree_inter_context(Comm* inter, uint32_t* out) {
  Comm* local = inter->local_comm;
  return agree_context(local, all_ranks(local->size), local->rank, collective_tag(kTagKindInterLocal), out,
                       swap_over_inter, inter);
}

namespace {

// A new intercommunicator's two ids, agreed over the one at `handle`: its
// hidden local communicator's, then the one both groups share. On failure
// neither is kept. (Looked up by handle: the agreement runs the engine.)
int allocate_inter_contexts(int handle, uint32_t* local_context, uint32_t* context) {
  Engine& e = engine();
  int rc = allocate_context(e.tables().comms.lookup(handle)->local_comm, local_context);
  if (rc) return rc;
  rc = agree_inter_context(e.tables().comms.lookup(handle), context);
  if (rc) give_back_context(*local_context);
  return rc;
}

// The leaders (local rank 0) swap `mine` over the intercommunicator `c`;
// every member of the local group gets the other side's in `theirs`.
int swap_between_groups(Comm* c, const std::vector<int>& mine, std::vector<int>& theirs) {
  Comm* local = c->local_comm;
  if (local->rank == 0) {
    int rc = swap_ints(c, 0, collective_tag(kTagKindInterLeaders), mine, theirs);
    if (rc) return rc;
  }
  return bcast_ints(local, all_ranks(local->size), local->rank, collective_tag(kTagKindInterLocal), theirs);
}

}  // namespace

// ---- duplicates ----------------------------------------------------------------

namespace detail {

// The duplicate of c on agreed ids (`local_context`: its hidden local
// communicator's, intercommunicators only): propagated PERUSE handles,
// copied attributes (copy callbacks run), hints. Shared by dup_comm and the
// idup.
int dup_with_contexts(Comm* c, uint32_t context, uint32_t local_context, const InfoPairs* info, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  Comm* hidden = nullptr;
  int rc;
  if (c->inter) {
    Comm* local = c->local_comm;
    rc = e.create_comm(local, local->world, local->rank, local_context, &hidden);
    if (rc) return rc;
    c = e.tables().comms.lookup(handle);
  }
  Comm* n;
  rc = e.create_comm(c, c->world, c->rank, context, &n, /*duplicate=*/true);
  if (rc) {
    if (hidden) e.free_comm(hidden);
    return rc;
  }
  c = e.tables().comms.lookup(handle);
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

}  // namespace detail

int allocate_context(Comm* parent, uint32_t* out) {
  std::vector<int> members(size_t(parent->size));
  for (int i = 0; i < parent->size; ++i) members[size_t(i)] = i;
  return agree_context(parent, members, parent->rank, collective_tag(kTagKindContextId), out);
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
  uint32_t context, local_context = 0;
  int rc;
  if (c->inter) {
    rc = allocate_inter_contexts(handle, &local_context, &context);
  } else {
    rc = allocate_context(c, &context);
  }
  if (rc) return rc;
  return dup_with_contexts(e.tables().comms.lookup(handle), context, local_context, info, out);
}

// MPI 4.1 7.4.2: the two sides' parts are swapped by the leaders (rank 0 of
// each whole group), so every process learns both; all processes of both
// groups take part in the context agreements, as for a split.
int create_intercomm(Comm* c, const std::vector<int>& group, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  std::vector<int> remote;
  int rc = swap_between_groups(c, group, remote);
  if (rc) return rc;
  uint32_t local_context, context;
  rc = allocate_inter_contexts(handle, &local_context, &context);
  if (rc) return rc;
  c = e.tables().comms.lookup(handle);
  int my_rank = rank_of(group, e.world_rank());
  if (my_rank == MPI_UNDEFINED || group.empty() || remote.empty()) {
    give_back_context(local_context);
    give_back_context(context);
    *out = nullptr;
    return MPI_SUCCESS;
  }
  Comm* hidden;
  rc = e.create_comm(c->local_comm, group, my_rank, local_context, &hidden);
  if (rc) return rc;
  return make_intercomm(e.tables().comms.lookup(handle), group, std::move(remote), my_rank, context, hidden, out);
}

int split_comm(Comm* c, int color, int key, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  int mine[2] = {color, key};
  std::vector<int> all;
  int rc = allgather_ints(c, mine, 2, all);
  if (rc) return rc;
  uint32_t context;
  rc = allocate_context(c, &context);
  if (rc) return rc;
  c = e.tables().comms.lookup(handle);
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

namespace {
// Ranks of `table` (pairs color, key by rank) with color `color`, ordered
// by (key, rank).
std::vector<int> members_of(const std::vector<int>& table, int color) {
  std::vector<std::tuple<int, int>> m;
  for (size_t p = 0; 2 * p < table.size(); ++p)
    if (table[2 * p] == color) m.emplace_back(table[2 * p + 1], int(p));
  std::stable_sort(m.begin(), m.end());
  std::vector<int> out;
  for (auto& [k, p] : m) out.push_back(p);
  return out;
}
}  // namespace

// MPI 4.1 7.4.2 on an intercommunicator: the processes of each color form
// an intercommunicator between their local and remote parts (MPI_COMM_NULL
// when either part is empty). Colors are disjoint, so one context id free
// on both groups serves every color, and one id free on the local group
// serves every color's hidden local communicator.
int split_intercomm(Comm* c, int color, int key, Comm** out) {
  Engine& e = engine();
  int handle = c->handle;
  Comm* local = c->local_comm;
  int mine[2] = {color, key};
  std::vector<int> table, remote_table;
  int rc = allgather_ints(local, mine, 2, table);
  if (rc) return rc;
  rc = swap_between_groups(c, table, remote_table);
  if (rc) return rc;
  uint32_t local_context, context;
  rc = allocate_inter_contexts(handle, &local_context, &context);
  if (rc) return rc;
  c = e.tables().comms.lookup(handle);
  local = c->local_comm;
  std::vector<int> mine_ranks = members_of(table, color), theirs = members_of(remote_table, color);
  if (color == MPI_UNDEFINED || theirs.empty()) {
    give_back_context(local_context);
    give_back_context(context);
    *out = nullptr;
    return MPI_SUCCESS;
  }
  std::vector<int> local_world, remote_world;
  int my_rank = 0;
  for (int p : mine_ranks) {
    if (p == local->rank) my_rank = int(local_world.size());
    local_world.push_back(c->local_world[size_t(p)]);
  }
  for (int p : theirs) remote_world.push_back(c->world[size_t(p)]);
  Comm* hidden;
  rc = e.create_comm(local, local_world, my_rank, local_context, &hidden);
  if (rc) return rc;
  return make_intercomm(c, std::move(local_world), std::move(remote_world), my_rank, context, hidden, out);
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
