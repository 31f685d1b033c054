// MultiHostJob's part in MPI_Comm_spawn (multihost.h): placing a spawn's
// children on the job's hosts, telling every daemon, answering the rank
// that asked once every daemon has registered them (and started its own),
// and gathering the fences over sets other than the whole job (a
// connection's union of parents and children, the children's own job)
// from exactly the hosts that have a member; and the name service every
// host's ranks share.
#include <pmix_common.h>

#include <algorithm>
#include <cstdio>

#include "tools/mpiexec/multihost.h"

namespace sonde::mpiexec {

bool MultiHostJob::named_hosts(const std::string& list, std::vector<int>* out, std::vector<int>* slots,
                               std::string* why) const {
  std::vector<HostSlots> named;
  try {
    named = parse_host_list(list);
  } catch (const UsageError& e) {
    *why = e.what();
    return false;
  }
  out->clear();
  std::vector<int> given(hosts_.size(), 0);
  for (const auto& entry : named) {
    int found = -1;
    for (size_t n = 0; n < hosts_.size() && found < 0; ++n) {
      const Host& h = hosts_[n];
      if (h.place.name == entry.name || h.hostname == entry.name || (h.local && is_local_host(entry.name))) {
        found = static_cast<int>(n);
      }
    }
    // A second name of a machine: the host that took its ranks.
    if (found >= 0 && hosts_[static_cast<size_t>(found)].retired) {
      const std::string& identity = hosts_[static_cast<size_t>(found)].identity;
      found = -1;
      for (size_t n = 0; n < hosts_.size() && found < 0; ++n) {
        if (!hosts_[n].retired && hosts_[n].identity == identity) found = static_cast<int>(n);
      }
    }
    if (found < 0 || hosts_[static_cast<size_t>(found)].gone) {
      *why = "host '" + entry.name + "' is not one of the job's hosts";
      return false;
    }
    if (std::find(out->begin(), out->end(), found) == out->end()) out->push_back(found);
    // "name:N" gives the host N slots for these children (a name twice adds up).
    given[static_cast<size_t>(found)] += entry.slots;
  }
  for (size_t n = 0; n < given.size(); ++n) {
    if (given[n] > 0) (*slots)[n] = given[n];
  }
  return true;
}

void MultiHostJob::on_spawn_request(size_t node, const SpawnRequest& request) {
  auto answer = [&](int status, const std::string& nspace) {
    Writer w;
    w.u32(request.id).i32(status).str(nspace);
    hosts_[node].ch->send(Msg::kSpawnReply, w);
  };
  auto refuse = [&](int status, const std::string& why) {
    if (!why.empty()) std::fprintf(stderr, "%s: spawn: %s\n", spec_.program_name.c_str(), why.c_str());
    answer(status, "");
  };
  if (phase_ != Phase::kRunning || failed_) return refuse(PMIX_ERR_JOB_TERMINATED, "");

  // Everything is decided before any daemon hears of it: a refused spawn
  // starts nothing anywhere.
  std::vector<int> all;
  for (size_t n = 0; n < hosts_.size(); ++n) {
    if (!hosts_[n].retired && !hosts_[n].gone) all.push_back(static_cast<int>(n));
  }
  std::vector<int> slots(hosts_.size(), 1), used(hosts_.size(), 0), host_of;
  for (size_t n = 0; n < hosts_.size() && n < spec_.slots.size(); ++n) slots[n] = spec_.slots[n];
  int64_t total = 0;
  for (const auto& app : request.apps) {
    if (app.procs < 1) return refuse(PMIX_ERR_BAD_PARAM, "");
    total += app.procs;
    if (spawned_slots_ + total > kMaxSpawnedSlots) {
      return refuse(PMIX_ERR_OUT_OF_RESOURCE,
                    "a job spawns at most " + std::to_string(kMaxSpawnedSlots) + " processes in all");
    }
    std::vector<int> candidates = all, app_slots = slots;
    std::string why;
    if (!app.host.empty() && !named_hosts(app.host, &candidates, &app_slots, &why)) {
      return refuse(PMIX_ERR_NOT_AVAILABLE, why);
    }
    for (int h : place_children(candidates, app_slots, used, app.procs, spec_.map_by)) host_of.push_back(h);
  }
  if (static_cast<int64_t>(host_of.size()) != total) return refuse(PMIX_ERR_OUT_OF_RESOURCE, "no host to run on");

  const int first = static_cast<int>(ranks_.size());
  SpawnJobMessage m;
  m.spawn = next_spawn_++;
  m.nspace = "sonde-" + spec_.job_id + "-spawn" + std::to_string(nspaces_.size());
  m.first_slot = first;
  // The universe holds every process the job has started, these included.
  m.universe = first + static_cast<int>(total);
  JobMessage& job = m.job;
  job.job_id = spec_.job_id;
  job.launcher = spec_.program_name;
  job.size = static_cast<int>(total);
  int next = 0;
  for (const auto& app : request.apps) {
    App a;
    a.argv = app.argv;
    if (a.argv.empty()) a.argv.push_back(app.cmd);
    a.argv[0] = app.cmd;
    a.env = app.env;
    a.wdir = app.wdir;
    a.first = next;
    a.size = app.procs;
    next += app.procs;
    job.apps.push_back(std::move(a));
    m.paths.push_back(app.path);
  }
  // The nodes with children, in node order, each with its child ranks.
  std::vector<int> child_node(hosts_.size(), -1);
  for (size_t n = 0; n < hosts_.size(); ++n) {
    for (int r = 0; r < job.size; ++r) {
      if (host_of[static_cast<size_t>(r)] != static_cast<int>(n)) continue;
      if (child_node[n] < 0) {
        child_node[n] = static_cast<int>(job.hostnames.size());
        job.hostnames.push_back(hosts_[n].hostname);
        job.node_ranks.emplace_back();
        m.node_ids.push_back(static_cast<uint32_t>(daemon_node_[n]));
      }
      job.node_ranks[static_cast<size_t>(child_node[n])].push_back(r);
    }
  }
  job.daemon_node = child_node;

  // The children are slots from now on: output, exits and snapshots.
  const int nspace = static_cast<int>(nspaces_.size());
  nspaces_.push_back({m.nspace, first, job.size});
  spawned_slots_ += job.size;
  for (int r = 0; r < job.size; ++r) {
    const int slot = first + r;
    const App& app = job.apps[static_cast<size_t>(app_of(job.apps, r))];
    Rank rank;
    rank.node = host_of[static_cast<size_t>(r)];
    rank.nspace = nspace;
    rank.program = app.argv[0];
    rank.wdir = app.wdir;
    rank.framer[0] = LineFramer(spec_.tag_output ? tag_prefix(slot, false) : "", stdout_open_line_);
    rank.framer[1] = LineFramer(spec_.tag_output ? tag_prefix(slot, true) : "", stderr_open_line_);
    ranks_.push_back(std::move(rank));
    hosts_[static_cast<size_t>(host_of[static_cast<size_t>(r)])].place.ranks.push_back(slot);
    ++running_;
  }
  PendingSpawn p;
  p.asker = node;
  p.request = request.id;
  p.nspace = m.nspace;
  p.waiting.assign(hosts_.size(), false);
  const Writer w = m.encode();
  for (size_t n = 0; n < hosts_.size(); ++n) {
    Host& h = hosts_[n];
    if (!h.ch || h.gone || h.retired) continue;
    h.ch->send(Msg::kSpawnJob, w);
    p.waiting[n] = true;
    ++p.left;
  }
  spawns_[m.spawn] = std::move(p);
}

void MultiHostJob::on_spawn_started(size_t node, Reader& in) {
  const uint32_t id = in.u32();
  const int status = in.i32();
  const std::string message = in.str();
  auto it = spawns_.find(id);
  if (it == spawns_.end() || !it->second.waiting[node]) throw ProtocolError("answer to an unknown spawn");
  PendingSpawn& p = it->second;
  p.waiting[node] = false;
  --p.left;
  if (status != PMIX_SUCCESS) {
    // Children elsewhere may run already: the job cannot go on consistently.
    p.failed = true;
    fail(1, "host " + hosts_[node].place.name + " cannot start the spawned processes of " + p.nspace + ": " + message);
  }
  if (p.left > 0) return;
  Host& asker = hosts_[p.asker];
  if (asker.ch && !asker.gone) {
    Writer w;
    w.u32(p.request).i32(p.failed ? PMIX_ERROR : PMIX_SUCCESS).str(p.failed ? "" : p.nspace);
    asker.ch->send(Msg::kSpawnReply, w);
  }
  spawns_.erase(it);
}

void MultiHostJob::on_group_fence(size_t node, const GroupFence& fence) {
  auto refuse = [&](int status) {
    Writer w;
    w.u32(fence.id).i32(status).str("");
    hosts_[node].ch->send(Msg::kGroupFenceDone, w);
  };
  // The hosts of the participants.
  std::vector<bool> involved(hosts_.size(), false);
  for (const auto& proc : fence.procs) {
    std::string name;
    int rank = 0;
    GroupFence::split(proc, &name, &rank);  // decode checked the form
    auto ns = std::find_if(nspaces_.begin(), nspaces_.end(), [&](const Namespace& n) { return n.name == name; });
    if (ns == nspaces_.end() || rank >= ns->size) return refuse(PMIX_ERR_NOT_FOUND);
    const int from = rank < 0 ? ns->first_slot : ns->first_slot + rank;
    const int to = rank < 0 ? ns->first_slot + ns->size : from + 1;
    for (int s = from; s < to; ++s) involved[static_cast<size_t>(ranks_[static_cast<size_t>(s)].node)] = true;
  }
  if (!involved[node]) return refuse(PMIX_ERR_BAD_PARAM);  // a host with no participant
  std::string key;
  for (const auto& proc : fence.procs) key += proc + "\n";
  std::deque<GroupWait>& waits = group_fences_[key];
  auto wait = std::find_if(waits.begin(), waits.end(), [&](const GroupWait& g) { return !g.parts[node]; });
  if (wait == waits.end()) {
    GroupWait g;
    g.involved = involved;
    g.parts.resize(hosts_.size());
    g.ids.resize(hosts_.size());
    g.need = static_cast<size_t>(std::count(involved.begin(), involved.end(), true));
    waits.push_back(std::move(g));
    wait = waits.end() - 1;
  }
  wait->parts[node] = fence.data;
  wait->ids[node] = fence.id;
  if (++wait->have < wait->need) return;
  // Parts in host order, as for the job's own fences.
  std::string all;
  for (const auto& part : wait->parts) all += part.value_or("");
  for (size_t n = 0; n < hosts_.size(); ++n) {
    Host& h = hosts_[n];
    if (!wait->parts[n] || !h.ch || h.gone) continue;
    Writer w;
    w.u32(wait->ids[n]).i32(PMIX_SUCCESS).str(all);
    h.ch->send(Msg::kGroupFenceDone, w);
  }
  waits.erase(wait);
  if (waits.empty()) group_fences_.erase(key);
}

void MultiHostJob::on_name_request(size_t node, const NameRequest& request) {
  names_.serve(request, [this, node](NameReply reply) {
    Host& h = hosts_[node];
    if (h.ch && !h.gone) h.ch->send(Msg::kNameReply, reply.encode());
  });
}

}  // namespace sonde::mpiexec
