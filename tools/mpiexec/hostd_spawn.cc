// sonde-hostd's part in MPI_Comm_spawn from a job on several hosts
// (hostd.h): a client's PMIx_Spawn goes to mpiexec (kSpawnRequest), which
// places the children and tells every daemon (kSpawnJob); each registers
// the children's namespace with its PMIx server, so that parents and
// children anywhere resolve each other, and starts the children placed on
// its host as it started the job's ranks. Fences over other sets than the
// whole job (a connection's union, the children's own) go to mpiexec as
// kGroupFence.
#include <fcntl.h>
#include <pmix_common.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "tools/mpiexec/hostd.h"
#include "tools/mpiexec/hosts.h"
#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {
namespace {

const char* path_of(const std::vector<std::string>& env) {
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) return e.c_str() + 5;
  }
  return nullptr;
}

}  // namespace

void HostDaemon::spawn(const std::vector<SpawnApp>& apps, SpawnDone done) {
  if (leaving_ || !ch_) return done(PMIX_ERR_JOB_TERMINATED, {});
  // A program, directory or hostfile missing here answers at once, before
  // anything starts anywhere (the job's hosts are expected to look alike).
  SpawnRequest request;
  for (SpawnApp app : apps) {
    if (app.procs < 1) return done(PMIX_ERR_BAD_PARAM, {});
    if (app.host.empty() && !app.hostfile.empty()) {
      try {
        app.host = host_list_from_file(app.hostfile);  // the hosts as a list, for mpiexec
      } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: spawn on %s: %s\n", launcher_.c_str(), hostname_.c_str(), e.what());
        return done(PMIX_ERR_BAD_PARAM, {});
      }
    }
    std::string wdir = app.wdir, executable, why;
    const char* path = !app.path.empty() ? app.path.c_str() : path_of(base_env_);
    if (prepare_program(wdir, app.cmd, path, &executable, &why) != 0) {
      std::fprintf(stderr, "%s: spawn on %s: %s\n", launcher_.c_str(), hostname_.c_str(), why.c_str());
      return done(PMIX_ERR_NOT_FOUND, {});
    }
    request.apps.push_back(std::move(app));
  }
  request.id = next_spawn_++;
  spawns_[request.id] = std::move(done);
  ch_->send(Msg::kSpawnRequest, request.encode());
}

void HostDaemon::group_fence(std::vector<std::string> procs, std::string data, FenceDone done) {
  if (!ch_) return done(false, {});
  GroupFence f;
  f.id = next_group_fence_++;
  f.procs = std::move(procs);
  f.data = std::move(data);
  group_fences_[f.id] = std::move(done);
  ch_->send(Msg::kGroupFence, f.encode());
}

void HostDaemon::names(const NameRequest& request, NameTable::Done done) {
  NameRequest r = request;
  r.id = next_name_++;
  if (!ch_) {
    NameReply refused;
    refused.id = r.id;
    refused.status = NameStatus::kBadRequest;
    return done(std::move(refused));
  }
  names_[r.id] = std::move(done);
  ch_->send(Msg::kNameRequest, r.encode());
}

void HostDaemon::start_children(const SpawnJobMessage& m) {
  const JobMessage& job = m.job;
  const int node =
      opt_.node < static_cast<int>(job.daemon_node.size()) ? job.daemon_node[static_cast<size_t>(opt_.node)] : -1;
  const std::vector<int> mine = node >= 0 ? job.node_ranks[static_cast<size_t>(node)] : std::vector<int>();
  const size_t first_index = ranks_.size();
  std::string why;
  try {
    if (!pmix_) throw std::runtime_error("the job has not started here");
    // Slots grow with every spawn, so the ranks stay in ascending order; the
    // room was reserved (start), so libpmix's thread never sees them move.
    if (ranks_.size() + mine.size() > ranks_.capacity()) throw std::runtime_error("more spawned ranks than slots");
    for (int r : mine) {
      ranks_.push_back(std::make_unique<Rank>());
      ranks_.back()->rank = m.first_slot + r;
    }
    JobLayout layout;
    layout.nspace = m.nspace;
    layout.job_id = job_id_;
    layout.tmpdir = tmpdir_;
    layout.size = job.size;
    layout.universe = m.universe;
    for (size_t n = 0; n < job.node_ranks.size(); ++n) layout.nodes.push_back({job.hostnames[n], job.node_ranks[n]});
    layout.this_node = node;
    layout.node_ids = m.node_ids;
    for (const auto& app : job.apps) layout.apps.push_back({app.first, app.size});
    pmix_->register_spawned(layout, m.first_slot);

    if (!mine.empty()) {
      // The children's snapshot answers: a directory of this namespace's own.
      const std::string dir = snapshot_dir_ + "-" + m.nspace;
      mkdir(dir.c_str(), 0700);
      std::vector<App> apps = job.apps;
      std::vector<std::string> executables(apps.size());
      for (size_t a = 0; a < apps.size(); ++a) {
        const bool here = std::any_of(mine.begin(), mine.end(),
                                      [&](int r) { return r >= apps[a].first && r < apps[a].first + apps[a].size; });
        if (!here) continue;
        const char* path = !m.paths[a].empty() ? m.paths[a].c_str() : path_of(base_env_);
        if (prepare_program(apps[a].wdir, apps[a].argv[0], path, &executables[a], &why) != 0) {
          throw std::runtime_error(why);
        }
      }
      const int local_size = static_cast<int>(mine.size());
      for (int i = 0; i < local_size; ++i) {
        Rank& r = *ranks_[first_index + static_cast<size_t>(i)];
        const int rank = mine[static_cast<size_t>(i)];
        const size_t app = static_cast<size_t>(app_of(apps, rank));
        std::vector<std::string> env = base_env_;
        for (const auto& e : apps[app].env) set_entry(env, e);
        for (const auto& e : pmix_->client_env_in(m.nspace, rank)) set_entry(env, e);
        set_entry(env, "SONDE_SNAPSHOT_DIR=" + dir);
        for (const auto& e : rank_identity_env(job_id_, rank, job.size, i, local_size)) set_entry(env, e);
        r.snapshot_dir = dir;
        r.snapshot_rank = rank;
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        try {
          launch(r, executables[app], apps[app].argv, apps[app].wdir, env, devnull, nullptr);
        } catch (...) {
          close_fd(devnull);
          throw;
        }
        close_fd(devnull);
      }
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  Writer w;
  w.u32(m.spawn).i32(why.empty() ? PMIX_SUCCESS : PMIX_ERROR).str(why);
  ch_->send(Msg::kSpawnStarted, w);
  // Children that will not start are gone; mpiexec ends the job.
  if (!why.empty()) report_unstarted();
}

}  // namespace sonde::mpiexec
