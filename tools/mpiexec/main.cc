// mpiexec / mpirun: starts the ranks of one job, on this host or, with
// --host/-hostfile, on several through sonde-hostd (docs/launch.md). See usage().

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pmi/wireup_job_id.h"
#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/hosts.h"
#include "tools/mpiexec/job.h"
#include "tools/mpiexec/multihost.h"
#include "tools/mpiexec/options.h"
#include "tools/mpiexec/profile.h"
#include "tools/mpiexec/snapshot_request.h"
#include "tools/mpiexec/spawn.h"

namespace {

using namespace sonde::mpiexec;

// Stopping the PMIx server is libpmix's business; if it ever hangs, the job's
// files still go and we still exit with the job's status.
constexpr auto kTeardownLimit = std::chrono::seconds(5);

// A closed 0/1/2 would be handed out by pipe() and then clobbered by the
// dup2 calls that set up a rank's stdio.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
  }
}

void arm_teardown_watchdog(const std::string& job_id, const std::string& tmpdir, int code) {
  std::thread([job_id, tmpdir, code] {
    std::this_thread::sleep_for(kTeardownLimit);
    remove_job_shm(job_id);
    remove_tree(tmpdir);
    _exit(code);
  }).detach();
}

std::string read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) throw UsageError("cannot read " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < s.size()) {
    i = s.find_first_not_of(" \t", i);
    if (i == std::string::npos) break;
    size_t end = s.find_first_of(" \t", i);
    if (end == std::string::npos) end = s.size();
    words.push_back(s.substr(i, end - i));
    i = end;
  }
  return words;
}

// The slots of host `name` in `list` (a name twice adds up; -ppn instead
// when given); 0 if the list does not name it.
int slots_in(const std::vector<HostSlots>& list, const std::string& name, int ppn) {
  int n = 0;
  for (const auto& h : list) {
    if (h.name == name) n = ppn > 0 ? ppn : n + (h.slots > 0 ? h.slots : 1);
  }
  return n;
}

// Where the ranks go when hosts were given; empty without hosts, or when
// every rank lands on this host (which then runs as a single-host job).
// *slots: each placement host's slots, for MPI_Comm_spawn's placement (the
// job's list first, else the most a block's list gives it, else its ranks).
std::vector<Placement> placement_of(Options& opt, std::vector<int>* slots) {
  const bool per_block = std::any_of(opt.block_host_lists.begin(), opt.block_host_lists.end(),
                                     [](const auto& lists) { return !lists.empty(); });
  if (opt.host_lists.empty() && opt.hostfile.empty() && !per_block) return {};
  std::vector<HostSlots> hosts;
  for (const auto& list : opt.host_lists) {
    for (auto& h : parse_host_list(list)) hosts.push_back(h);
  }
  if (!opt.hostfile.empty()) {
    for (auto& h : parse_hostfile(read_file(opt.hostfile), opt.hostfile)) hosts.push_back(h);
  }
  std::vector<std::vector<HostSlots>> block_hosts(opt.apps.size());
  for (size_t b = 0; b < opt.block_host_lists.size() && b < block_hosts.size(); ++b) {
    for (const auto& list : opt.block_host_lists[b]) {
      for (auto& h : parse_host_list(list)) block_hosts[b].push_back(h);
    }
  }
  // Every name of this machine we recognise is one host (under the first
  // such name): one machine is one node however it is named. Other names
  // of it are found once their daemons report (MultiHostJob).
  // (place_blocks names this host "localhost" when the job gives no hosts.)
  std::string here = hosts.empty() ? "localhost" : "";
  auto merge_local = [&](std::vector<HostSlots>& list) {
    for (auto& h : list) {
      if (!is_local_host(h.name)) continue;
      if (here.empty()) here = h.name;
      h.name = here;
    }
  };
  merge_local(hosts);
  for (auto& list : block_hosts) merge_local(list);
  std::vector<Placement> p;
  if (per_block) {
    std::vector<int> sizes;
    for (const auto& app : opt.apps) sizes.push_back(app.size);
    p = place_blocks(hosts, block_hosts, sizes, opt.ppn, opt.map_by);
  } else {
    // One program without -n gets every slot; blocks without -n get one rank.
    const bool fill = opt.apps.size() == 1 && !opt.ranks_given;
    p = place_ranks(hosts, fill ? 0 : opt.ranks, opt.ppn, opt.map_by);
    if (fill) {
      int total = 0;
      for (const auto& h : p) total += static_cast<int>(h.ranks.size());
      opt.apps[0].size = total;
      number_apps(opt);
    }
  }
  if (p.size() == 1 && is_local_host(p[0].name)) return {};
  for (const auto& host : p) {
    int n = slots_in(hosts, host.name, opt.ppn);
    if (n == 0) {
      for (const auto& list : block_hosts) n = std::max(n, slots_in(list, host.name, opt.ppn));
    }
    slots->push_back(n > 0 ? n : static_cast<int>(host.ranks.size()));
  }
  return p;
}

// --profile: the profiler's environment for every rank (profile.h), under
// what the blocks set themselves.
void add_profile(Options& opt) {
  if (opt.profile_dir.empty()) return;
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
  char cwd[PATH_MAX] = {};
  if (getcwd(cwd, sizeof cwd) == nullptr) throw UsageError("--profile: cannot read the current directory");
  std::vector<std::string> env = profile_environment(opt.profile_dir, opt.profile_trace,
                                                     find_profiler_library(exe, std::getenv("SONDE_RESIDENCE_LIB")),
                                                     cwd, std::getenv("LD_PRELOAD"));
  for (const auto& e : opt.genv) set_entry(env, e);
  opt.genv = std::move(env);
}

// Each app's final environment additions (-genv under the block's own -env
// and -x) and directory (-gwdir unless the block gave -wdir).
void finish_apps(Options& opt) {
  for (auto& app : opt.apps) {
    std::vector<std::string> env = opt.genv;
    for (const auto& e : app.env) set_entry(env, e);
    app.env = std::move(env);
    if (app.wdir.empty()) app.wdir = opt.wdir;
  }
}

// Blocked before any thread starts (libpmix's inherit the mask), so these
// signals reach us only through the signalfd.
int handled_signal_fd() {
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&handled, s);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
}

int run_multihost(const std::string& name, const Options& opt, std::vector<Placement> placement,
                  std::vector<int> slots) {
  MultiHostSpec spec;
  spec.program_name = name;
  spec.apps = opt.apps;
  spec.placement = std::move(placement);
  spec.slots = std::move(slots);
  spec.map_by = opt.map_by;
  std::string agent = opt.launch_agent;
  if (agent.empty()) {
    const char* env = std::getenv("SONDE_LAUNCH_AGENT");
    agent = env != nullptr && *env != '\0' ? env : "ssh";
  }
  spec.agent = split_words(agent);
  spec.hostd = default_hostd_path();
  if (access(spec.hostd.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "%s: cannot run the host daemon %s: %s (set SONDE_HOSTD)\n", name.c_str(), spec.hostd.c_str(),
                 std::strerror(errno));
    return 127;
  }
  spec.binding = opt.binding;
  spec.report_bindings = opt.report_bindings;
  spec.tag_output = opt.tag_output;
  spec.timeout_seconds = opt.timeout_seconds;
  spec.hang_report_seconds = opt.hang_report_seconds;
  spec.report_json = opt.report_json;
  int sfd = handled_signal_fd();
  if (sfd < 0) {
    std::fprintf(stderr, "%s: signalfd: %s\n", name.c_str(), std::strerror(errno));
    return 1;
  }
  try {
    spec.job_id = sonde::random_job_id();
    MultiHostJob job(spec, sfd);
    return job.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = argc > 0 ? argv[0] : "mpiexec";
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  ensure_standard_fds();

  Options opt;
  std::vector<Placement> placement;
  std::vector<int> slots;
  try {
    opt = parse_options(std::vector<std::string>(argv + 1, argv + argc), read_file);
    apply_timeout_environment(opt, std::getenv("MPIEXEC_TIMEOUT"));
    if (!opt.help && opt.snapshot_pid == 0) {
      placement = placement_of(opt, &slots);
      add_profile(opt);
      finish_apps(opt);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", name.c_str(), e.what(), name.c_str());
    return 2;
  }
  if (opt.help) {
    std::fputs(usage(name).c_str(), stdout);
    return 0;
  }
  if (opt.snapshot_pid > 0) return request_snapshot(name, opt.snapshot_pid, opt.report_json);
  if (!placement.empty()) return run_multihost(name, opt, std::move(placement), std::move(slots));

  JobSpec spec;
  spec.program_name = name;
  spec.apps = opt.apps;
  spec.ranks = opt.ranks;
  spec.binding = opt.binding;
  spec.report_bindings = opt.report_bindings;
  spec.tag_output = opt.tag_output;
  spec.timeout_seconds = opt.timeout_seconds;
  spec.hang_report_seconds = opt.hang_report_seconds;
  spec.report_json = opt.report_json;
  for (auto& app : spec.apps) {
    std::string executable, why;
    if (int status = prepare_program(app.wdir, app.argv[0], nullptr, &executable, &why)) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), why.c_str());
      return status;
    }
    spec.executables.push_back(executable);
  }

  int sfd = handled_signal_fd();
  if (sfd < 0) {
    std::fprintf(stderr, "%s: signalfd: %s\n", name.c_str(), std::strerror(errno));
    return 1;
  }

  int code = 1;
  try {
    spec.job_id = sonde::random_job_id();
    spec.tmpdir = make_private_tmpdir(spec.job_id);
    Job job(spec, sfd);
    code = job.run();
    arm_teardown_watchdog(spec.job_id, spec.tmpdir, code);
  } catch (const std::exception& e) {
    // ~Job has already killed and reaped whatever it started.
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    code = 1;
  }
  remove_job_shm(spec.job_id);
  remove_tree(spec.tmpdir);
  return code;
}
