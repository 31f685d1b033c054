// Dynamic processes (dynamic.h): connections between groups of processes
// that may belong to different jobs.
#include "runtime/dynamic.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "coll/coll.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "core/lookup.h"
#include "core/p2p.h"
#include "pmi/proc_list.h"
#include "runtime/lifecycle.h"
#include "runtime/errors.h"
#include "runtime/union_transports.h"
#include "transports/ofi/ofi_transport.h"

namespace sonde::engine {
namespace {

using dynamic::Proc;

std::string my_nspace() { return job_wireup() ? job_wireup()->nspace() : std::string(); }

// Engine peer id -> PMIx name; world ranks first. Changed under the
// engine lock; the snapshot handler reads it (connected_process).
std::vector<Proc>* g_names = nullptr;
std::vector<Proc>& names() {
  if (g_names == nullptr) g_names = new std::vector<Proc>;
  std::vector<Proc>* v = g_names;
  Engine& e = engine();
  if (v->empty()) {
    std::string ns = my_nspace();
    for (int r = 0; r < e.world_size(); ++r) v->push_back({ns, r});
  }
  return *v;
}

Comm*& parent_slot() {
  static Comm* parent = nullptr;
  return parent;
}

// Process lists as other processes write them (pmi/proc_list.h); a
// malformed one is refused, never half taken.
std::string encode(const std::vector<Proc>& procs) { return dynamic::format_procs(procs); }
bool decode(std::string_view text, std::vector<Proc>* procs, const char* what) {
  std::string why = dynamic::parse_procs(text, procs);
  if (why.empty()) return true;
  std::fprintf(stderr, "sonde: %s: %s\n", what, why.c_str());
  return false;
}

std::vector<Proc> procs_of(const std::vector<int>& ids) {
  std::vector<Proc> out;
  for (int id : ids) out.push_back(names()[size_t(id)]);
  return out;
}

// The engine id of `p`, adding one if it is new.
int id_of(const Proc& p) {
  auto& v = names();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == p) return int(i);
  v.push_back(p);
  return int(v.size()) - 1;
}

// The context agreement's channel (comm_build.h, agree_contexts_apart):
// round n's offers are PMIx values under the connection's key for n, made
// readable by a fence over the union.
struct OfferChannel {
  const std::string& prefix;
  const std::vector<Proc>& all;
  int me;
};

int swap_offers(void* arg, int round, const std::string& mine, std::vector<std::string>* others) {
  auto* ch = static_cast<OfferChannel*>(arg);
  const std::string key = ch->prefix + "ctx" + std::to_string(round);
  dynamic::Error err = dynamic::put(key, mine);
  if (!err) err = dynamic::fence(ch->all);
  if (err) {
    std::fprintf(stderr, "sonde: connecting to another job: %s\n", err.text.c_str());
    return MPI_ERR_OTHER;
  }
  for (size_t i = 0; i < ch->all.size(); ++i) {
    if (int(i) == ch->me) continue;
    std::optional<std::string> v = dynamic::get(ch->all[i], key);
    if (!v) {
      std::fprintf(stderr, "sonde: connecting to another job: a member published no context ids\n");
      return MPI_ERR_OTHER;
    }
    others->push_back(std::move(*v));
  }
  return MPI_SUCCESS;
}

// Steps 3 and 4 of dynamic.h for one member: `local` is this side's
// communicator, `remote` the other side's members, `low`: our side comes
// first in the union. `conn` names the connection, the same on both sides
// and on no other connection.
int connect_groups(Comm* local, const std::vector<Proc>& remote, bool low, const std::string& conn, Comm** out) {
  Engine& e = engine();
  const int local_handle = local->handle;
  std::vector<Proc> mine = procs_of(local->world);
  std::vector<Proc> all = low ? mine : remote;
  const std::vector<Proc>& second = low ? remote : mine;
  all.insert(all.end(), second.begin(), second.end());
  const int me = (low ? 0 : int(remote.size())) + local->rank;
  std::vector<int> remote_ids;
  for (const auto& p : remote) remote_ids.push_back(id_of(p));
  std::vector<int> ids;
  for (const auto& p : all) ids.push_back(id_of(p));
  UnionMember self;
  self.host = host_identity();
  self.all_ofi = transport::transport_choice_from_env().transport == "ofi";
  for (size_t i = 0; i < all.size(); ++i)
    if (int(i) != me && (ids[i] >= e.peer_count() || !e.router().to(ids[i]))) self.lacking = true;

  // One fence carries the members' hosts, who lacks a route, and the first
  // round of the context agreement: the intercommunicator's id and the
  // hidden local communicator's, both free on every member of the union.
  const std::string prefix = "c" + std::to_string(std::hash<std::string>{}(conn)) + ".";
  if (auto err = dynamic::put(prefix + "host", format_member(self))) {
    std::fprintf(stderr, "sonde: connecting to another job: %s\n", err.text.c_str());
    return MPI_ERR_OTHER;
  }
  OfferChannel channel{prefix, all, me};
  uint32_t contexts[2] = {0, 0};
  int rc = agree_contexts_apart(swap_offers, &channel, 2, contexts);
  if (rc) return rc;
  auto give_back = [&](int cls) {
    give_back_context(contexts[0]);
    give_back_context(contexts[1]);
    return cls;
  };
  std::vector<UnionMember> members(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (int(i) == me) {
      members[i] = self;
      continue;
    }
    std::optional<std::string> text = dynamic::get(all[i], prefix + "host");
    if (!text || !parse_member(*text, &members[i])) {
      std::fprintf(stderr, "sonde: connecting to another job: a member published no host\n");
      return give_back(MPI_ERR_OTHER);
    }
  }
  // Every member reads the same values, so all wire alike or fail alike.
  UnionPlan plan{&all, me, &ids, &members, prefix};
  if (std::string why = wire_union(plan); !why.empty()) {
    std::fprintf(stderr, "sonde: connecting to another job: %s\n", why.c_str());
    return give_back(MPI_ERR_OTHER);
  }

  // The hidden local communicator, then the intercommunicator.
  local = e.tables().comms.lookup(local_handle);
  Comm* hidden = nullptr;
  rc = e.create_comm(local, local->world, local->rank, contexts[1], &hidden);
  if (rc) return give_back(rc);
  local = e.tables().comms.lookup(local_handle);
  rc = make_intercomm(local, local->world, remote_ids, local->rank, contexts[0], hidden, out);
  if (rc) {
    e.free_comm(hidden);
    give_back_context(contexts[0]);
  }
  return rc;
}

// The root's string to every member of intracommunicator `c`.
int bcast_string(Comm* c, int root, std::string* s) {
  Datatype* byte = &engine().tables().datatypes.predefined(4);  // MPI_BYTE
  Datatype* u64 = &engine().tables().datatypes.predefined(24);  // MPI_UINT64_T
  uint64_t n = s->size();
  int rc = coll::bcast(&n, 1, u64, root, c);
  if (rc) return rc;
  s->resize(n);
  return n ? coll::bcast(s->data(), int64_t(n), byte, root, c) : MPI_SUCCESS;
}

int spawn_class(const dynamic::Error& e) {
  return e.status == dynamic::Status::kNotSupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_SPAWN;
}

}  // namespace

bool connected_process(int id, const char** nspace, int* rank) {
  const std::vector<Proc>* v = g_names;
  if (v == nullptr || id < engine().world_size() || id < 0 || size_t(id) >= v->size()) return false;
  *nspace = (*v)[size_t(id)].nspace.c_str();
  *rank = (*v)[size_t(id)].rank;
  return true;
}

int connected_process_end() {
  const std::vector<Proc>* v = g_names;
  return v == nullptr ? 0 : int(v->size());
}

int connect_to_parents() {
  const char* v = std::getenv("SONDE_SPAWN_PARENTS");
  if (v == nullptr || my_nspace().empty()) return MPI_SUCCESS;
  std::vector<Proc> parents;
  if (!decode(v, &parents, "MPI_Init: SONDE_SPAWN_PARENTS")) return MPI_ERR_OTHER;
  unsetenv("SONDE_SPAWN_PARENTS");  // not for programs this one starts
  Engine& e = engine();
  Comm* out = nullptr;
  int rc = connect_groups(e.world(), parents, false, my_nspace(), &out);
  if (rc) return rc;
  out->name = "MPI_COMM_PARENT";  // the standard's name for it, until the program renames it
  parent_slot() = out;
  return MPI_SUCCESS;
}

Comm* parent_comm() {
  Comm* p = parent_slot();
  // Disconnected or freed: no parent any more.
  if (p && find_comm(p->handle) != p) parent_slot() = p = nullptr;
  return p;
}

int spawn(Comm* comm, int root, const std::vector<dynamic::App>& apps, std::vector<int>* errcodes, Comm** out) {
  Engine& e = engine();
  const int handle = comm->handle;
  // The root's outcome: "ok <nspace> <n>" or "error <class> <n>".
  std::string result;
  if (comm->rank == root) {
    int total = 0;
    for (const auto& a : apps) total += a.procs;
    std::vector<dynamic::App> with_parents = apps;
    const std::string parents = encode(procs_of(comm->world));
    for (auto& a : with_parents) a.env.push_back("SONDE_SPAWN_PARENTS=" + parents);
    std::string nspace;
    dynamic::Error err = dynamic::spawn(with_parents, &nspace);
    if (err) {
      std::fprintf(stderr, "sonde: MPI_Comm_spawn: %s\n", err.text.c_str());
      result = "error " + std::to_string(spawn_class(err)) + " " + std::to_string(total);
    } else {
      result = "ok " + nspace + " " + std::to_string(total);
    }
  }
  int rc = bcast_string(comm, root, &result);
  if (rc) return rc;
  char word[16] = {}, name[512] = {};
  int total = 0;
  if (std::sscanf(result.c_str(), "%15s %511s %d", word, name, &total) != 3) return MPI_ERR_INTERN;
  const bool ok = std::strcmp(word, "ok") == 0;
  if (errcodes) errcodes->assign(size_t(total), ok ? MPI_SUCCESS : MPI_ERR_SPAWN);
  if (!ok) return std::atoi(name);
  std::vector<Proc> children;
  for (int r = 0; r < total; ++r) children.push_back({name, r});
  comm = e.tables().comms.lookup(handle);
  return connect_groups(comm, children, true, name, out);
}

// ---- ports, names, accept/connect ----

int open_port(std::string* port) {
  static int next = 0;
  const std::string ns = my_nspace();
  if (ns.empty()) return MPI_ERR_UNSUPPORTED_OPERATION;
  *port = "sonde-port:" + ns + ":" + std::to_string(engine().world_rank()) + ":" + std::to_string(getpid()) + ":" +
          std::to_string(next++);
  return MPI_SUCCESS;
}

int close_port(const std::string& port) { return port.rfind("sonde-port:", 0) == 0 ? MPI_SUCCESS : MPI_ERR_PORT; }

namespace {

// The roots swap their groups through the name service: the acceptor
// publishes "<port>#a" (its group and a nonce); the connector takes the
// nonce by publishing "<port>#c<nonce>" (its group), which only one
// connector can; the acceptor then withdraws "#a" and the connector its
// key once the connection stands.
int swap_groups(const std::string& port, bool acceptor, const std::vector<Proc>& mine, std::vector<Proc>* theirs,
                std::string* conn) {
  static int nonce_counter = 0;
  if (acceptor) {
    const std::string nonce = dynamic::make_nonce(long(getpid()), nonce_counter++);
    if (auto err = dynamic::publish(port + "#a", dynamic::format_offer(nonce, mine))) {
      std::fprintf(stderr, "sonde: MPI_Comm_accept: %s\n", err.text.c_str());
      return err.status == dynamic::Status::kNotSupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_PORT;
    }
    std::string value;
    dynamic::Error err = dynamic::lookup(port + "#c" + nonce, true, &value);
    dynamic::unpublish(port + "#a");
    if (err) return MPI_ERR_PORT;
    *conn = port + "#" + nonce;
    return decode(value, theirs, "MPI_Comm_accept: the connector's group") ? MPI_SUCCESS : MPI_ERR_PORT;
  }
  for (;;) {
    std::string offer;
    if (auto err = dynamic::lookup(port + "#a", true, &offer)) {
      std::fprintf(stderr, "sonde: MPI_Comm_connect: %s\n", err.text.c_str());
      return err.status == dynamic::Status::kNotSupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_PORT;
    }
    std::string nonce;
    if (std::string why = dynamic::parse_offer(offer, &nonce, theirs); !why.empty()) {
      std::fprintf(stderr, "sonde: MPI_Comm_connect: the acceptor's offer: %s\n", why.c_str());
      return MPI_ERR_PORT;
    }
    dynamic::Error err = dynamic::publish(port + "#c" + nonce, encode(mine));
    if (err.status == dynamic::Status::kDuplicate) {
      // Another connector took this accept; wait for the next one.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (err) return MPI_ERR_PORT;
    *conn = port + "#" + nonce;
    return MPI_SUCCESS;
  }
}

int accept_or_connect(const std::string& port, int root, Comm* comm, bool acceptor, Comm** out) {
  Engine& e = engine();
  const int handle = comm->handle;
  std::string blob;  // "<class>|<conn>|<their group>"
  if (comm->rank == root) {
    std::vector<Proc> theirs;
    std::string conn;
    int rc = port.rfind("sonde-port:", 0) == 0 ? swap_groups(port, acceptor, procs_of(comm->world), &theirs, &conn)
                                               : MPI_ERR_PORT;
    blob = std::to_string(rc) + "|" + conn + "|" + encode(theirs);
  }
  int rc = bcast_string(comm, root, &blob);
  if (rc) return rc;
  size_t a = blob.find('|'), b = blob.find('|', a + 1);
  if (a == std::string::npos || b == std::string::npos) return MPI_ERR_INTERN;
  if (int cls = std::atoi(blob.c_str())) return cls;
  const std::string conn = blob.substr(a + 1, b - a - 1);
  std::vector<Proc> theirs;
  if (!decode(std::string_view(blob).substr(b + 1), &theirs, "connecting to another job")) return MPI_ERR_INTERN;
  comm = e.tables().comms.lookup(handle);
  rc = connect_groups(comm, theirs, acceptor, conn, out);
  if (!acceptor && comm->rank == root) dynamic::unpublish(port + "#c" + conn.substr(conn.rfind('#') + 1));
  return rc;
}

}  // namespace

int accept(const std::string& port, int root, Comm* comm, Comm** out) {
  return accept_or_connect(port, root, comm, true, out);
}

int connect(const std::string& port, int root, Comm* comm, Comm** out) {
  return accept_or_connect(port, root, comm, false, out);
}

int publish_name(const std::string& service, const std::string& port) {
  dynamic::Error err = dynamic::publish("svc:" + service, port);
  if (err.status == dynamic::Status::kNotSupported) return MPI_ERR_UNSUPPORTED_OPERATION;
  return err ? MPI_ERR_SERVICE : MPI_SUCCESS;
}

int unpublish_name(const std::string& service) {
  dynamic::Error err = dynamic::unpublish("svc:" + service);
  if (err.status == dynamic::Status::kNotSupported) return MPI_ERR_UNSUPPORTED_OPERATION;
  return err ? MPI_ERR_SERVICE : MPI_SUCCESS;
}

int lookup_name(const std::string& service, std::string* port) {
  dynamic::Error err = dynamic::lookup("svc:" + service, false, port);
  if (err.status == dynamic::Status::kNotSupported) return MPI_ERR_UNSUPPORTED_OPERATION;
  return err ? MPI_ERR_NAME : MPI_SUCCESS;
}

// ---- join ----

namespace {

bool write_all(int fd, const std::string& s) {
  uint32_t n = uint32_t(s.size());
  std::string msg(reinterpret_cast<const char*>(&n), sizeof n);
  msg += s;
  for (size_t done = 0; done < msg.size();) {
    ssize_t k = write(fd, msg.data() + done, msg.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += size_t(k);
  }
  return true;
}

bool read_exact(int fd, char* buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t k = read(fd, buf + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += size_t(k);
  }
  return true;
}

bool read_msg(int fd, std::string* s) {
  uint32_t n = 0;
  if (!read_exact(fd, reinterpret_cast<char*>(&n), sizeof n) || n > (1u << 20)) return false;
  s->resize(n);
  return read_exact(fd, s->data(), n);
}

}  // namespace

int join(int fd, Comm** out) {
  Engine& e = engine();
  if (my_nspace().empty()) return MPI_ERR_UNSUPPORTED_OPERATION;
  static int joins = 0;
  const Proc me = names()[size_t(e.world_rank())];
  // The name, then a nonce: the same two processes may join again, and each
  // connection needs keys of its own.
  const std::string nonce = dynamic::make_nonce(long(getpid()), joins++);
  std::string theirs, their_nonce;
  if (!write_all(fd, encode({me})) || !write_all(fd, nonce) || !read_msg(fd, &theirs) || !read_msg(fd, &their_nonce))
    return MPI_ERR_ARG;
  std::vector<Proc> other;
  if (!decode(theirs, &other, "MPI_Comm_join: the other process's name") || other.size() != 1) return MPI_ERR_ARG;
  if (their_nonce.size() > 64 || their_nonce.find_first_not_of("0123456789.") != std::string::npos) {
    std::fprintf(stderr, "sonde: MPI_Comm_join: the other process's nonce is malformed\n");
    return MPI_ERR_ARG;
  }
  const bool low = me.nspace < other[0].nspace || (me.nspace == other[0].nspace && me.rank < other[0].rank);
  const std::string conn = "join:" + (low ? encode({me}) + nonce + " " + theirs + their_nonce
                                          : theirs + their_nonce + " " + encode({me}) + nonce);
  return connect_groups(e.self(), other, low, conn, out);
}

}  // namespace sonde::engine
