#include "tools/mpiexec/job.h"

#include <fcntl.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include "engine/wireup_job_id.h"

extern char** environ;

namespace sonde::mpiexec {
namespace {

using namespace std::chrono_literals;

// How long ranks get between SIGTERM and SIGKILL, and how long we then wait
// for the kernel to reap them before giving up on them.
constexpr auto kTermGrace = 1s;
constexpr auto kKillGrace = 1s;
// Output still in flight when the last rank is reaped (or held by a
// grandchild that inherited the pipe) gets this long to arrive.
constexpr auto kDrainGrace = 500ms;
// A consumer that does not read our stdout for this long loses the output,
// rather than freezing the launcher and with it every deadline.
constexpr int kStalledOutputMs = 10000;

std::string errno_text(int e) { return std::strerror(e); }

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Environment entries we set ourselves, or that would point a rank at
// another job's PMIx server; PMIX_MCA_* are user settings for libpmix and stay.
bool inherited_entry_is_ours(const char* e) {
  static const char* const kPrefixes[] = {
      "PMIX_",       "PMI_",        "OMPI_COMM_WORLD_",  "OMPI_UNIVERSE_SIZE=", "SONDE_JOBID=",
      "SONDE_RANK=", "SONDE_SIZE=", "SONDE_LOCAL_RANK=", "SONDE_LOCAL_SIZE="};
  if (std::strncmp(e, "PMIX_MCA_", 9) == 0) return false;
  for (const char* p : kPrefixes) {
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

void set_entry(std::vector<std::string>& env, const std::string& entry) {
  size_t eq = entry.find('=');
  std::string_view name(entry.data(), eq == std::string::npos ? entry.size() : eq + 1);
  for (auto& e : env) {
    if (std::string_view(e).substr(0, name.size()) == name) {
      e = entry;
      return;
    }
  }
  env.push_back(entry);
}

std::vector<cpu_set_t> core_masks(int ranks) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    throw std::runtime_error("hwloc cannot read this host's topology");
  }
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int count = hwloc_get_nbobjs_by_type(topo, type);
  if (count <= 0) {  // some virtual machines report no cores, only PUs
    type = HWLOC_OBJ_PU;
    count = hwloc_get_nbobjs_by_type(topo, type);
  }
  if (count <= 0) {
    hwloc_topology_destroy(topo);
    throw std::runtime_error("hwloc finds no cores to bind to");
  }
  std::vector<cpu_set_t> masks(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(r % count));
    CPU_ZERO(&masks[r]);
    hwloc_cpuset_to_glibc_sched_affinity(topo, core->cpuset, &masks[r], sizeof(cpu_set_t));
  }
  hwloc_topology_destroy(topo);
  return masks;
}

struct ChildSetup {
  const char* path;
  char* const* argv;
  char* const* envp;
  pid_t parent;
  pid_t pgid;
  int stdin_fd, out_fd, err_fd, exec_fd;
  const cpu_set_t* mask;
};

// Runs in the forked child. The parent has other threads (libpmix's), so
// only async-signal-safe calls until execve: no allocation, no locks.
[[noreturn]] void exec_child(const ChildSetup& c) {
  setpgid(0, c.pgid);
  // If mpiexec dies without cleaning up, its ranks go with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != c.parent) _exit(127);
  dup2(c.stdin_fd, 0);
  dup2(c.out_fd, 1);
  dup2(c.err_fd, 2);
  // Ignored signals (SIGPIPE) and the blocked mask survive execve; the rank
  // must start with neither.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (c.mask != nullptr) sched_setaffinity(0, sizeof(cpu_set_t), c.mask);
  // Descriptors we inherited from our own caller do not belong to the ranks.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  execve(c.path, c.argv, c.envp);
  int e = errno;
  (void)!write(c.exec_fd, &e, sizeof e);
  _exit(127);
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

std::string resolve_executable(const std::string& program) {
  auto problem = [](const std::string& p) -> int {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (access(p.c_str(), X_OK) != 0) return errno;
    return 0;
  };
  if (program.empty()) throw std::runtime_error("the program name is empty");
  if (program.find('/') != std::string::npos) {
    if (int e = problem(program)) {
      throw std::runtime_error("cannot execute '" + program + "': " + errno_text(e));
    }
    return program;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int first_error = ENOENT;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    int e = problem(candidate);
    if (e == 0) return candidate;
    if (e != ENOENT && e != ENOTDIR && first_error == ENOENT) first_error = e;
    start = end + 1;
  }
  throw std::runtime_error(
      "cannot execute '" + program +
      "': " + (first_error == ENOENT ? std::string("not found in PATH") : errno_text(first_error)));
}

Job::Job(JobSpec spec, int signal_fd) : spec_(std::move(spec)), signal_fd_(signal_fd) {}

Job::~Job() {
  // Whatever path got us here, no rank outlives the launcher.
  bool any = false;
  for (auto& r : ranks_) {
    if (r->running) {
      kill(r->pid, SIGKILL);
      any = true;
    }
  }
  if (any && pgid_ > 0) kill(-pgid_, SIGKILL);
  auto give_up = Clock::now() + kKillGrace;
  while (running_ > 0 && Clock::now() < give_up) {
    for (auto& r : ranks_) {
      if (r->running && waitpid(r->pid, nullptr, WNOHANG) == r->pid) {
        r->running = false;
        --running_;
      }
    }
    if (running_ > 0) std::this_thread::sleep_for(10ms);
  }
  for (auto& r : ranks_) {
    close_fd(r->out_fd);
    close_fd(r->err_fd);
    close_fd(r->exec_fd);
  }
  host_.reset();
}

void Job::connected(int rank) {
  if (rank >= 0 && rank < static_cast<int>(ranks_.size())) ranks_[rank]->connected = true;
}

void Job::finalized(int rank) {
  if (rank >= 0 && rank < static_cast<int>(ranks_.size())) ranks_[rank]->finalized = true;
}

void Job::aborted(int rank, int status, const std::string& message) {
  int code = (status > 0 && status < 256) ? status : 1;
  fail(code, "rank " + std::to_string(rank) + " called abort with status " +
                 std::to_string(status) + (message.empty() ? "" : ": " + message));
}

bool Job::fail(int exit_code, const std::string& message) {
  std::lock_guard<std::mutex> lock(fail_mu_);
  if (failed_) return false;
  failed_ = true;
  exit_code_ = exit_code;
  std::fprintf(stderr, "%s: %s\n", spec_.program_name.c_str(), message.c_str());
  std::fflush(stderr);
  return true;
}

bool Job::failed() const {
  std::lock_guard<std::mutex> lock(fail_mu_);
  return failed_;
}

std::vector<std::string> Job::base_environment() const {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!inherited_entry_is_ours(*e)) env.emplace_back(*e);
  }
  return env;
}

int Job::run() {
  start_ = Clock::now();
  // Ranks exist (as slots) before the server can call us about them.
  for (int r = 0; r < spec_.ranks; ++r) {
    ranks_.push_back(std::make_unique<Rank>());
    if (spec_.tag_output) {
      ranks_.back()->out = LineFramer(tag_prefix(r, false));
      ranks_.back()->err = LineFramer(tag_prefix(r, true));
    }
  }
  std::vector<cpu_set_t> masks;
  if (spec_.bind_to_core) masks = core_masks(spec_.ranks);

  host_ = std::make_unique<PmixHost>(spec_.tmpdir, this);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  JobLayout layout;
  layout.nspace = "sonde-" + spec_.job_id;
  layout.job_id = spec_.job_id;
  layout.hostname = host;
  layout.tmpdir = spec_.tmpdir;
  layout.size = spec_.ranks;
  host_->register_job(layout);

  const std::vector<std::string> base = base_environment();
  const std::string n = std::to_string(spec_.ranks);
  for (int r = 0; r < spec_.ranks && !failed(); ++r) {
    std::vector<std::string> env = base;
    for (const auto& e : host_->client_env(r)) set_entry(env, e);
    const std::string rs = std::to_string(r);
    for (const auto& e :
         {std::string(kJobIdEnv) + "=" + spec_.job_id, "SONDE_RANK=" + rs, "SONDE_SIZE=" + n,
          "SONDE_LOCAL_RANK=" + rs, "SONDE_LOCAL_SIZE=" + n, "OMPI_COMM_WORLD_RANK=" + rs,
          "OMPI_COMM_WORLD_SIZE=" + n, "OMPI_COMM_WORLD_LOCAL_RANK=" + rs,
          "OMPI_COMM_WORLD_LOCAL_SIZE=" + n, "OMPI_COMM_WORLD_NODE_RANK=" + rs,
          "OMPI_UNIVERSE_SIZE=" + n, "PMI_RANK=" + rs, "PMI_SIZE=" + n}) {
      set_entry(env, e);
    }
    try {
      spawn(r, env, masks.empty() ? nullptr : &masks[r]);
    } catch (const std::exception& e) {
      fail(1, "cannot start rank " + rs + ": " + e.what());
    }
  }
  loop();
  std::lock_guard<std::mutex> lock(fail_mu_);
  return exit_code_;
}

void Job::spawn(int rank, const std::vector<std::string>& env, const void* cpu_mask) {
  Rank& r = *ranks_[rank];
  int out[2] = {-1, -1}, err[2] = {-1, -1}, ex[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1], ex[0], ex[1]}) {
      if (fd >= 0) close(fd);
    }
    throw std::runtime_error("pipe: " + errno_text(e));
  }
  std::vector<char*> argv, envp;
  for (const auto& a : spec_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // Only rank 0 reads our stdin, and only when it is not a terminal: ranks
  // live in their own process group, where reading the terminal would stop them.
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ChildSetup c{spec_.executable.c_str(),
               argv.data(),
               envp.data(),
               getpid(),
               pgid_,
               (rank == 0 && !isatty(0)) ? 0 : devnull,
               out[1],
               err[1],
               ex[1],
               static_cast<const cpu_set_t*>(cpu_mask)};
  pid_t pid = fork();
  if (pid == 0) exec_child(c);
  int fork_errno = errno;
  if (devnull >= 0) close(devnull);
  close(out[1]);
  close(err[1]);
  close(ex[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    close(ex[0]);
    throw std::runtime_error("fork: " + errno_text(fork_errno));
  }
  // Also here, so the group exists before we might signal it; the child's own
  // call and ours race harmlessly.
  setpgid(pid, pgid_ == 0 ? pid : pgid_);
  if (pgid_ == 0) pgid_ = pid;
  for (int fd : {out[0], err[0], ex[0]}) set_nonblocking(fd);
  r.pid = pid;
  r.running = true;
  r.out_fd = out[0];
  r.err_fd = err[0];
  r.exec_fd = ex[0];
  ++running_;
}

void Job::loop() {
  const bool has_timeout = spec_.timeout_seconds > 0;
  const auto timeout_at = start_ + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(spec_.timeout_seconds));
  std::optional<Clock::time_point> drain_until;
  std::vector<pollfd> fds;
  std::vector<std::pair<int, int>> owners;  // (rank, stream) for fds[2..]

  for (;;) {
    auto now = Clock::now();
    if (phase_ == Phase::kRunning && failed()) begin_termination();
    if (phase_ == Phase::kRunning && has_timeout && now >= timeout_at) {
      fail(124, "the job ran longer than --timeout " + format_seconds(spec_.timeout_seconds) +
                    " s; ending it");
      continue;
    }
    if (phase_ == Phase::kTerminating && running_ > 0 && now >= kill_at_) {
      forward(SIGKILL);
      phase_ = Phase::kKilling;
      give_up_at_ = now + kKillGrace;
    }
    if (phase_ == Phase::kKilling && running_ > 0 && now >= give_up_at_) {
      std::fprintf(stderr, "%s: %d rank(s) still alive after SIGKILL; not waiting for them\n",
                   spec_.program_name.c_str(), running_);
      return;
    }
    if (running_ == 0) {
      if (!drain_until) drain_until = now + kDrainGrace;
      bool open = std::any_of(ranks_.begin(), ranks_.end(),
                              [](const auto& r) { return r->out_fd >= 0 || r->err_fd >= 0; });
      if (!open || now >= *drain_until) return;
    }

    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    fds.push_back({host_->wake_fd(), POLLIN, 0});
    for (int i = 0; i < static_cast<int>(ranks_.size()); ++i) {
      const Rank& r = *ranks_[i];
      const int streams[3] = {r.out_fd, r.err_fd, r.exec_fd};
      for (int s = 0; s < 3; ++s) {
        if (streams[s] >= 0) {
          fds.push_back({streams[s], POLLIN, 0});
          owners.emplace_back(i, s);
        }
      }
    }
    auto next = now + 1s;
    if (phase_ == Phase::kRunning && has_timeout) next = std::min(next, timeout_at);
    if (phase_ == Phase::kTerminating) next = std::min(next, kill_at_);
    if (phase_ == Phase::kKilling) next = std::min(next, give_up_at_);
    if (drain_until) next = std::min(next, *drain_until);
    auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    int n = poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 0)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll: " + errno_text(errno));
    }
    if (fds[1].revents != 0) host_->run_pending();
    if (fds[0].revents != 0) {
      signalfd_siginfo si;
      while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        handle_signal(static_cast<int>(si.ssi_signo));
      }
    }
    for (size_t k = 2; k < fds.size(); ++k) {
      if (fds[k].revents != 0) read_stream(owners[k - 2].first, owners[k - 2].second);
    }
  }
}

void Job::handle_signal(int sig) {
  switch (sig) {
    case SIGCHLD:
      reap();
      break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
      if (phase_ == Phase::kRunning && interrupts_++ == 0) {
        forward(sig);
      } else {
        // Asked twice: the ranks had their chance to exit on their own.
        fail(128 + sig, "received " + signal_name(sig) + " again; killing the job");
        forward(SIGKILL);
        phase_ = Phase::kKilling;
        give_up_at_ = Clock::now() + kKillGrace;
      }
      break;
    case SIGUSR1:
    case SIGUSR2:
      forward(sig);
      break;
    default:
      break;
  }
}

void Job::forward(int sig) {
  // The process group reaches what the ranks started too; a rank that left
  // the group is signalled directly. The group is only used while one of our
  // unreaped ranks is in it, so its id cannot have been reused.
  bool group_alive = false;
  for (auto& r : ranks_) {
    if (!r->running) continue;
    if (getpgid(r->pid) == pgid_) {
      group_alive = true;
    } else {
      kill(r->pid, sig);
    }
  }
  if (group_alive) kill(-pgid_, sig);
}

void Job::begin_termination() {
  phase_ = Phase::kTerminating;
  kill_at_ = Clock::now() + kTermGrace;
  if (running_ > 0) forward(SIGTERM);
}

void Job::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (int i = 0; i < static_cast<int>(ranks_.size()); ++i) {
      if (ranks_[i]->pid == pid && ranks_[i]->running) {
        on_rank_exit(i, status);
        break;
      }
    }
  }
}

void Job::on_rank_exit(int rank, int wait_status) {
  Rank& r = *ranks_[rank];
  r.running = false;
  --running_;
  drain_exec_status(r);
  if (phase_ != Phase::kRunning) return;  // we are ending it anyway
  std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) + ")";
  if (r.exec_errno != 0) {
    fail(127, "rank " + std::to_string(rank) + ": cannot execute '" + spec_.executable +
                  "': " + errno_text(r.exec_errno));
  } else if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    fail(128 + sig,
         who + " was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")");
  } else if (int code = WEXITSTATUS(wait_status); code != 0) {
    fail(code, who + " exited with status " + std::to_string(code));
  } else if (r.connected && !r.finalized && running_ > 0) {
    fail(1, who + " exited without calling finalize while other ranks were still running");
  }
}

void Job::drain_exec_status(Rank& r) {
  if (r.exec_fd < 0) return;
  int e = 0;
  ssize_t n = read(r.exec_fd, &e, sizeof e);
  if (n == static_cast<ssize_t>(sizeof e)) r.exec_errno = e;
  // EAGAIN: the child has not reached execve yet.
  if (n >= 0 || errno != EAGAIN) close_fd(r.exec_fd);
}

void Job::read_stream(int rank, int stream) {
  Rank& r = *ranks_[rank];
  if (stream == 2) {
    drain_exec_status(r);
    return;
  }
  int& fd = stream == 0 ? r.out_fd : r.err_fd;
  LineFramer& framer = stream == 0 ? r.out : r.err;
  const int target = stream == 0 ? 1 : 2;
  char buf[64 * 1024];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    emit(target, framer.feed(std::string_view(buf, static_cast<size_t>(n))));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    emit(target, framer.finish());
    close_fd(fd);
  }
}

void Job::emit(int fd, const std::string& bytes) {
  bool& ok = fd == 1 ? stdout_ok_ : stderr_ok_;
  size_t off = 0;
  while (ok && off < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    int ready = poll(&p, 1, kStalledOutputMs);
    if (ready < 0 && errno == EINTR) continue;
    // POLLERR on a pipe means its reader is gone; the write below reports
    // that as EPIPE.
    if (ready <= 0) {
      ok = false;
      if (fd == 1) {
        std::fprintf(stderr, "%s: standard output is not being read; dropping the rest\n",
                     spec_.program_name.c_str());
      }
      return;
    }
    // At most PIPE_BUF per write: POLLOUT on a pipe promises that much room,
    // so the write cannot block.
    ssize_t w = write(fd, bytes.data() + off, std::min<size_t>(bytes.size() - off, PIPE_BUF));
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      ok = false;
      if (errno == EPIPE) {
        // Nobody reads our end any more (`mpiexec ... | head`): let the ranks
        // meet a closed pipe too, as they would without us in between.
        for (auto& r : ranks_) close_fd(fd == 1 ? r->out_fd : r->err_fd);
      }
      return;
    }
    off += static_cast<size_t>(w);
  }
}

void Job::close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace sonde::mpiexec
