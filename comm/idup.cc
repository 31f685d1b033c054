// Nonblocking MPI_Comm_idup (comm_build.h, start_idup): rounds of the
// context-id agreement driven by progress() through a progress hook.
#include <algorithm>
#include <utility>
#include <vector>

#include "comm/comm_build.h"
#include "comm/comm_build_internal.h"
#include "core/engine.h"
#include "core/p2p.h"
#include "core/progress_hooks.h"

namespace sonde::engine {

using namespace detail;

namespace {

// Ids an idup round leaves to blocking constructions (make_offer).
constexpr int kKeptForBlocking = 64;

struct Idup {
  MPI_Comm parent;
  bool inter = false;  // parent is an intercommunicator: two ids, a leader swap
  uint64_t key;        // (parent context, sequence): the same on every member
  int tag;
  MPI_Comm* out;
  Request* request;
  bool has_info = false;
  InfoPairs info;
  std::vector<int> members;  // ranks of the gathering communicator (via())
  int me = 0;
  // The current round.
  enum State { kGather, kSwap, kSent, kAwaitPick } state = kGather;
  bool gave = false;
  size_t from = 0, window = context_window::kFirstWords;  // the round's window (context_window.h)
  std::vector<uint64_t> offer, words, gathered, remote;
  int pick[2] = {-1, -1};   // [1]: the hidden local communicator's (inter)
  int error = MPI_SUCCESS;  // a transfer of the round that failed to start
  std::vector<Request*> pending;
};

// The live parent, or null when it was freed under the idup (erroneous).
Comm* parent_of(const Idup* d) {
  Comm* c = engine().tables().comms.lookup(d->parent);
  return c && c->live ? c : nullptr;
}
// Where the group's offers travel: the parent, or an intercommunicator's
// hidden local communicator.
Comm* via(Comm* parent) { return parent->inter ? parent->local_comm : parent; }

std::vector<Idup*>& idups() {
  static auto* v = new std::vector<Idup*>;
  return *v;
}

bool first_in_line(const Idup* d) {
  for (const Idup* o : idups())
    if (o->key < d->key) return false;
  return true;
}

// Start one transfer of the round (the request pointer is read after the
// call that fills it).
void post_recv(Idup* d, void* buf, int64_t n, Datatype* t, int peer, Comm* c) {
  Request* q = nullptr;
  int rc = start_recv(buf, n, t, peer, d->tag, c, &q);
  if (q) d->pending.push_back(q);
  if (rc && !d->error) d->error = rc;
}
void post_send(Idup* d, const void* buf, int64_t n, Datatype* t, int peer, Comm* c) {
  Request* q = nullptr;
  int rc = start_send(buf, n, t, peer, d->tag, c, SendMode::kStandard, &q);
  if (q) d->pending.push_back(q);
  if (rc && !d->error) d->error = rc;
}

void start_round(Idup* d) {
  Comm* c = parent_of(d);
  d->gave = first_in_line(d);
  if (!c) {
    // The parent was freed under the idup (erroneous): fail, offering nothing.
    d->gave = false;
    d->words = d->offer = make_offer(false, 0, d->window);
    d->error = MPI_ERR_COMM;
    d->state = Idup::kSent;
    return;
  }
  Comm* v = via(c);
  d->words = make_offer(d->gave, d->from, d->window, kKeptForBlocking);
  d->offer = d->words;
  int n = int(d->words.size());
  if (d->me == 0) {
    d->gathered.assign(d->words.size() * (d->members.size() - 1), 0);
    for (size_t p = 1; p < d->members.size(); ++p)
      post_recv(d, &d->gathered[(p - 1) * d->words.size()], n, u64_type(), d->members[p], v);
    d->state = Idup::kGather;
  } else {
    post_send(d, d->words.data(), n, u64_type(), d->members[0], v);
    post_recv(d, d->pick, 2, int_type(), d->members[0], v);
    d->state = Idup::kAwaitPick;
  }
}

// The round's requests are done: their first error, and they are released.
int retire_round(Idup* d) {
  int rc = d->pending.empty() ? MPI_SUCCESS : wait_all(int(d->pending.size()), d->pending.data());
  d->pending.clear();
  return std::exchange(d->error, MPI_SUCCESS) ?: rc;
}

// The leader's pick (d->words is the AND of everything), sent to the group.
void send_pick(Idup* d) {
  context_window::decide(d->words, d->inter ? 2 : 1, kIdWords, d->pick);
  d->state = Idup::kSent;
  Comm* c = parent_of(d);
  if (!c) {
    d->error = MPI_ERR_COMM;  // the parent was freed under the idup: erroneous
    return;
  }
  for (size_t p = 1; p < d->members.size(); ++p) post_send(d, d->pick, 2, int_type(), d->members[p], via(c));
}

// Make the communicator (as dup_comm does) and complete the request.
int finish(Idup* d) {
  Comm* c = parent_of(d);
  if (!c) {
    give_back_context(uint32_t(d->pick[0]));
    if (d->inter) give_back_context(uint32_t(d->pick[1]));
    return MPI_ERR_COMM;  // the parent was freed under the idup: erroneous
  }
  Comm* n;
  int rc = dup_with_contexts(c, uint32_t(d->pick[0]), d->inter ? uint32_t(d->pick[1]) : 0,
                             d->has_info ? &d->info : nullptr, &n);
  if (rc) return rc;
  *d->out = n->handle;
  return MPI_SUCCESS;
}

// Advance d as far as its requests allow. True when it is finished (the
// user's request is then complete).
bool advance(Idup* d) {
  for (;;) {
    for (Request* q : d->pending)
      if (!q->complete) return false;
    int rc = retire_round(d);
    if (!rc && d->state == Idup::kGather) {
      size_t w = d->words.size();
      for (size_t p = 1; p < d->members.size(); ++p) context_window::and_into(d->words, &d->gathered[(p - 1) * w]);
      if (d->inter) {
        // The other group's AND, from its leader over the intercommunicator.
        Comm* c = parent_of(d);
        d->remote.assign(w, 0);
        d->state = Idup::kSwap;
        if (!c) {
          d->error = MPI_ERR_COMM;
          continue;
        }
        post_send(d, d->words.data(), int64_t(w), u64_type(), 0, c);
        post_recv(d, d->remote.data(), int64_t(w), u64_type(), 0, c);
      } else {
        send_pick(d);
      }
      continue;
    }
    if (!rc && d->state == Idup::kSwap) {
      context_window::and_into(d->words, d->remote.data());
      send_pick(d);
      continue;
    }
    int chosen = rc ? -1 : d->pick[0];
    int second = rc || !d->inter || chosen < 0 ? -1 : d->pick[1];
    settle_offer(d->offer, d->gave, chosen);
    if (second >= 0) take_context(uint32_t(second));
    if (!rc && chosen == context_window::kGrow) {
      // Nothing common in the window: a larger one, further up.
      d->from = size_t(d->pick[1]);
      d->window = context_window::grown(d->window, kIdWords);
      start_round(d);
      return false;
    }
    if (!rc && chosen == context_window::kRetry) {
      d->from = 0;
      start_round(d);  // ids were out elsewhere: another round, on a later pass
      return false;
    }
    if (!rc) rc = chosen >= 0 ? finish(d) : MPI_ERR_NO_MEM;  // ids used up
    d->request->error = rc;
    return true;
  }
}

}  // namespace

// Advances every idup in flight; completes the requests of those done.
int progress_idups();

namespace {
ProgressHook g_idup_hook{progress_idups, 0};
struct RegisterIdups {
  RegisterIdups() { register_progress_hook(&g_idup_hook); }
} g_register_idups;
}  // namespace

int start_idup(Comm* c, const InfoPairs* info, MPI_Comm* newcomm, Request* request) {
  auto* d = new Idup;
  d->parent = c->handle;
  d->inter = c->inter;
  uint32_t seq = c->idup_seq++;
  d->key = (uint64_t(c->context) << 32) | seq;
  d->tag = kCollectiveTagBase - kTagKindIdup - 64 * int(seq % (1u << 24));
  d->out = newcomm;
  d->request = request;
  if (info) {
    d->has_info = true;
    d->info = *info;
  }
  Comm* v = via(c);
  d->members = all_ranks(v->size);
  d->me = v->rank;
  request->active = true;
  idups().push_back(d);
  set_in_flight(&g_idup_hook, int(idups().size()));
  start_round(d);
  progress_idups();
  return MPI_SUCCESS;
}

int progress_idups() {
  static bool running = false;  // attribute copy callbacks may call MPI
  if (running) return 0;
  running = true;
  int moved = 0;
  std::vector<Idup*>& v = idups();
  for (size_t i = 0; i < v.size();) {
    Idup* d = v[i];
    if (!advance(d)) {
      ++i;
      continue;
    }
    ++moved;
    v.erase(v.begin() + long(i));
    set_in_flight(&g_idup_hook, int(v.size()));
    Request* q = d->request;
    delete d;
    engine().complete(q);
  }
  set_in_flight(&g_idup_hook, int(v.size()));
  running = false;
  return moved;
}

}  // namespace sonde::engine
