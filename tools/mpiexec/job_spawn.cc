// Job::spawn: PMIx_Spawn served by the launcher (MPI_Comm_spawn and
// MPI_Comm_spawn_multiple). The children form a new namespace on this host;
// they become slots of this job after its own ranks, so their output, exit
// status and snapshots are handled like any rank's.
#include <algorithm>
#include <pmix.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tools/mpiexec/hosts.h"
#include "tools/mpiexec/job.h"

namespace sonde::mpiexec {

void Job::spawn(const std::vector<SpawnApp>& apps, SpawnDone done) {
  if (phase_ != Phase::kRunning || failed()) return done(PMIX_ERR_JOB_TERMINATED, {});
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // Everything is checked before anything starts: a failed spawn leaves no
  // process behind.
  int total = 0;
  std::vector<std::string> executables, wdirs;
  for (const auto& app : apps) {
    if (app.procs < 1) return done(PMIX_ERR_BAD_PARAM, {});
    if (!app.host.empty() && app.host != host && app.host != "localhost") {
      std::fprintf(stderr, "%s: spawn: host '%s' is not this job's host\n", spec_.program_name.c_str(),
                   app.host.c_str());
      return done(PMIX_ERR_NOT_AVAILABLE, {});
    }
    if (app.host.empty() && !app.hostfile.empty()) {
      // Every host the file names must be this one.
      try {
        for (const auto& h : parse_host_list(host_list_from_file(app.hostfile))) {
          if (h.name != host && !is_local_host(h.name)) {
            std::fprintf(stderr, "%s: spawn: host '%s' of %s is not this job's host\n", spec_.program_name.c_str(),
                         h.name.c_str(), app.hostfile.c_str());
            return done(PMIX_ERR_NOT_AVAILABLE, {});
          }
        }
      } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: spawn: %s\n", spec_.program_name.c_str(), e.what());
        return done(PMIX_ERR_BAD_PARAM, {});
      }
    }
    std::string wdir = app.wdir, exe, error;
    if (prepare_program(wdir, app.cmd, app.path.empty() ? nullptr : app.path.c_str(), &exe, &error) != 0) {
      std::fprintf(stderr, "%s: spawn: %s\n", spec_.program_name.c_str(), error.c_str());
      return done(PMIX_ERR_NOT_FOUND, {});
    }
    executables.push_back(exe);
    wdirs.push_back(wdir);
    total += app.procs;
  }
  const int first = static_cast<int>(ranks_.size());
  if (static_cast<size_t>(first + total) > kMaxSlots) return done(PMIX_ERR_OUT_OF_RESOURCE, {});

  JobLayout layout;
  layout.nspace = "sonde-" + spec_.job_id + "-spawn" + std::to_string(++spawned_jobs_);
  layout.job_id = spec_.job_id;
  layout.tmpdir = spec_.tmpdir;
  layout.size = total;
  // The universe holds at least every process the job has started, these
  // children included, so a child never sees a universe smaller than
  // its own world plus its parents.
  layout.universe = std::max(static_cast<int>(std::thread::hardware_concurrency()), first + total);
  layout.nodes.push_back({host, {}});
  int next = 0;
  for (const auto& app : apps) {
    layout.apps.push_back({next, app.procs});
    next += app.procs;
  }
  for (int r = 0; r < total; ++r) layout.nodes[0].ranks.push_back(r);
  try {
    host_->register_spawned(layout, first);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: spawn: %s\n", spec_.program_name.c_str(), e.what());
    return done(PMIX_ERROR, {});
  }
  for (int r = 0; r < total; ++r) {
    ranks_.push_back(std::make_unique<Rank>());
    Rank& slot = *ranks_.back();
    slot.out = LineFramer(spec_.tag_output ? tag_prefix(first + r, false) : "", stdout_open_line_);
    slot.err = LineFramer(spec_.tag_output ? tag_prefix(first + r, true) : "", stderr_open_line_);
  }
  const std::vector<std::string> base = inherited_environment();
  // The children answer snapshots in a directory of their namespace's own,
  // under their ranks in it.
  const std::string snapshots = snapshot_dir_ + "-" + layout.nspace;
  mkdir(snapshots.c_str(), 0700);
  int r = 0;
  for (size_t a = 0; a < apps.size(); ++a) {
    for (int k = 0; k < apps[a].procs; ++k, ++r) {
      std::vector<std::string> env = base;
      for (const auto& e : apps[a].env) set_entry(env, e);
      try {
        for (const auto& e : host_->client_env_in(layout.nspace, r)) set_entry(env, e);
        set_entry(env, "SONDE_SNAPSHOT_DIR=" + snapshots);
        for (const auto& e : rank_identity_env(spec_.job_id, r, total, r, total)) set_entry(env, e);
        Rank& slot = *ranks_[static_cast<size_t>(first + r)];
        slot.executable = executables[a];
        slot.wdir = wdirs[a];
        slot.snapshot_dir = snapshots;
        slot.snapshot_rank = r;
        start_slot(first + r, executables[a], apps[a].argv, wdirs[a], env, nullptr);
      } catch (const std::exception& e) {
        // Some children may run already: the job cannot go on consistently.
        fail(1, "cannot start spawned rank " + std::to_string(r) + ": " + e.what());
        return done(PMIX_ERROR, {});
      }
    }
  }
  done(PMIX_SUCCESS, layout.nspace);
}

}  // namespace sonde::mpiexec
