#include "tools/mpiexec/job.h"

#include <fcntl.h>
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

#include "pmi/wireup_job_id.h"
#include "tools/mpiexec/spawn.h"

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

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

Job::Job(JobSpec spec, int signal_fd) : spec_(std::move(spec)), signal_fd_(signal_fd) {}

Job::~Job() {
  // Whatever path got us here, no rank outlives the launcher.
  kill_and_reap(pgid_, ranks_, running_, kKillGrace);
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
  fail(code, "rank " + std::to_string(rank) + " called abort with status " + std::to_string(status) +
                 (message.empty() ? "" : ": " + message));
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

int Job::run() {
  start_ = Clock::now();
  ranks_.reserve(kMaxSlots);
  // Ranks exist (as slots) before the server can call us about them.
  for (int r = 0; r < spec_.ranks; ++r) {
    ranks_.push_back(std::make_unique<Rank>());
    const bool several = spec_.ranks > 1;
    ranks_.back()->out =
        LineFramer(spec_.tag_output ? tag_prefix(r, false) : "", several ? stdout_open_line_ : nullptr);
    ranks_.back()->err = LineFramer(spec_.tag_output ? tag_prefix(r, true) : "", several ? stderr_open_line_ : nullptr);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<int> all(static_cast<size_t>(spec_.ranks));
  for (int r = 0; r < spec_.ranks; ++r) all[static_cast<size_t>(r)] = r;
  std::vector<cpu_set_t> masks =
      host_binding_masks(spec_.binding, all, spec_.report_bindings, spec_.program_name, host);

  host_ = std::make_unique<PmixHost>(spec_.tmpdir, this);
  JobLayout layout;
  layout.nspace = "sonde-" + spec_.job_id;
  layout.job_id = spec_.job_id;
  layout.tmpdir = spec_.tmpdir;
  layout.size = spec_.ranks;
  layout.universe = static_cast<int>(std::thread::hardware_concurrency());
  layout.nodes.push_back({host, {}});
  for (const auto& app : spec_.apps) layout.apps.push_back({app.first, app.size});
  for (int r = 0; r < spec_.ranks; ++r) layout.nodes[0].ranks.push_back(r);
  host_->register_job(layout);

  snapshot_dir_ = snapshot_dir(spec_.tmpdir);
  monitor_ = std::make_unique<HangMonitor>(
      spec_.program_name, spec_.hang_report_seconds, spec_.report_json,
      [this, host = std::string(host)](uint64_t seq) {
        std::vector<SnapshotTarget> targets;
        for (int i = 0; i < static_cast<int>(ranks_.size()); ++i)
          targets.push_back({i, ranks_[i]->pid, ranks_[i]->running, ranks_[i]->snapshot_dir, ranks_[i]->snapshot_rank});
        auto answers = collect_snapshot(snapshot_dir_, seq, targets);
        for (auto& a : answers) a.host = host;
        return answers;
      },
      SlotNames{[this](int slot, std::string* nspace, int* rank) { return host_->proc_of(slot, nspace, rank); },
                [this](const std::string& nspace, int rank) {
                  return rank < 0 ? -1 : host_->slot_of(nspace.c_str(), static_cast<uint32_t>(rank));
                }});
  const std::vector<std::string> base = inherited_environment();
  for (int r = 0; r < spec_.ranks && !failed(); ++r) {
    std::vector<std::string> env = base;
    for (const auto& e : spec_.apps[static_cast<size_t>(app_of(spec_.apps, r))].env) {
      set_entry(env, e);
    }
    for (const auto& e : host_->client_env(r)) set_entry(env, e);
    set_entry(env, "SONDE_SNAPSHOT_DIR=" + snapshot_dir_);
    for (const auto& e : rank_identity_env(spec_.job_id, r, spec_.ranks, r, spec_.ranks)) {
      set_entry(env, e);
    }
    const std::string rs = std::to_string(r);
    try {
      spawn(r, env, masks.empty() ? nullptr : &masks[r]);
    } catch (const std::exception& e) {
      fail(1, "cannot start rank " + rs + ": " + e.what());
    }
  }
  loop();
  finish_output();
  std::lock_guard<std::mutex> lock(fail_mu_);
  return exit_code_;
}

void Job::spawn(int rank, const std::vector<std::string>& env, const void* cpu_mask) {
  const size_t app = static_cast<size_t>(app_of(spec_.apps, rank));
  start_slot(rank, spec_.executables[app], spec_.apps[app].argv, spec_.apps[app].wdir, env, cpu_mask);
}

void Job::start_slot(int rank, const std::string& executable, const std::vector<std::string>& argv,
                     const std::string& wdir, const std::vector<std::string>& env, const void* cpu_mask) {
  Rank& r = *ranks_[rank];
  // Only rank 0 reads our stdin, and only when it is not a terminal: ranks
  // live in their own process group, where reading the terminal would stop them.
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  RankLaunch l;
  l.executable = &executable;
  l.argv = &argv;
  l.wdir = &wdir;
  l.env = &env;
  l.stdin_fd = (rank == 0 && !isatty(0)) ? 0 : devnull;
  l.cpu_mask = static_cast<const cpu_set_t*>(cpu_mask);
  l.pgid = pgid_;
  StartedRank s;
  try {
    s = start_rank(l);
  } catch (...) {
    if (devnull >= 0) close(devnull);
    throw;
  }
  if (devnull >= 0) close(devnull);
  adopt_started(r, s, pgid_, running_);
}

void Job::loop() {
  const bool has_timeout = spec_.timeout_seconds > 0;
  const auto timeout_at =
      start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec_.timeout_seconds));
  std::optional<Clock::time_point> drain_until;
  std::vector<pollfd> fds;
  std::vector<std::pair<int, int>> owners;  // (rank, stream) for fds[2..]

  for (;;) {
    auto now = Clock::now();
    if (phase_ == Phase::kRunning && failed()) begin_termination();
    if (phase_ == Phase::kRunning && !failed() && monitor_->tick(now)) {
      fail(124, "no rank made progress for --hang-report " + format_seconds(spec_.hang_report_seconds) +
                    " s; ending the job");
      continue;
    }
    if (phase_ == Phase::kRunning && has_timeout && now >= timeout_at) {
      monitor_->report("timeout");
      fail(124, "the job ran longer than --timeout " + format_seconds(spec_.timeout_seconds) + " s; ending it");
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
      bool open =
          std::any_of(ranks_.begin(), ranks_.end(), [](const auto& r) { return r->out_fd >= 0 || r->err_fd >= 0; });
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
    if (phase_ == Phase::kRunning && monitor_->next_tick()) next = std::min(next, *monitor_->next_tick());
    if (phase_ == Phase::kTerminating) next = std::min(next, kill_at_);
    if (phase_ == Phase::kKilling) next = std::min(next, give_up_at_);
    if (drain_until) next = std::min(next, *drain_until);
    if (auto due = output_due()) next = std::min(next, *due);
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
        handle_signal(si);
      }
    }
    for (size_t k = 2; k < fds.size(); ++k) {
      if (fds[k].revents != 0) read_stream(owners[k - 2].first, owners[k - 2].second);
    }
    flush_due_output(Clock::now());
  }
}

void Job::handle_signal(const signalfd_siginfo& si) {
  const int sig = static_cast<int>(si.ssi_signo);
  switch (sig) {
    case SIGCHLD: reap(); break;
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
      if (phase_ == Phase::kRunning) monitor_->report("snapshot", open_snapshot_reply(si));
      break;
    case SIGUSR2: forward(sig); break;
    default: break;
  }
}

void Job::forward(int sig) {
  std::vector<pid_t> running;
  for (auto& r : ranks_) {
    if (r->running) running.push_back(r->pid);
  }
  signal_ranks(pgid_, running, sig);
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
    const bool spawned = rank >= spec_.ranks;
    const size_t app = spawned ? 0 : static_cast<size_t>(app_of(spec_.apps, rank));
    const std::string& exe = spawned ? r.executable : spec_.executables[app];
    const std::string& wdir = spawned ? r.wdir : spec_.apps[app].wdir;
    fail(127, "rank " + std::to_string(rank) + ": cannot execute '" + exe + "'" + (wdir.empty() ? "" : " in " + wdir) +
                  ": " + errno_text(r.exec_errno));
  } else if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    fail(128 + sig, who + " was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")");
  } else if (int code = WEXITSTATUS(wait_status); code != 0) {
    fail(code, who + " exited with status " + std::to_string(code));
  } else if (r.connected && !r.finalized && running_ > 0) {
    fail(1, who + " exited without calling finalize while other ranks were still running");
  }
}

void Job::drain_exec_status(Rank& r) {
  int e = read_exec_errno(r.exec_fd);
  if (e > 0) r.exec_errno = e;
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

std::optional<Job::Clock::time_point> Job::output_due() const {
  std::optional<Clock::time_point> first;
  for (const auto& r : ranks_) {
    for (const LineFramer* f : {&r->out, &r->err}) {
      if (auto at = f->due(); at && (!first || *at < *first)) first = at;
    }
  }
  return first;
}

void Job::flush_due_output(Clock::time_point now) {
  for (auto& r : ranks_) {
    emit(1, r->out.flush_if_due(now));
    emit(2, r->err.flush_if_due(now));
  }
}

void Job::finish_output() {
  for (auto& r : ranks_) {
    emit(1, r->out.finish());
    emit(2, r->err.finish());
  }
}

void Job::emit(int fd, const std::string& bytes) {
  bool& ok = fd == 1 ? stdout_ok_ : stderr_ok_;
  if (!ok || bytes.empty()) return;
  switch (write_output(fd, bytes, kStalledOutputMs)) {
    case WriteOutcome::kWritten: return;
    case WriteOutcome::kStalled:
      ok = false;
      if (fd == 1) {
        std::fprintf(stderr, "%s: standard output is not being read; dropping the rest\n", spec_.program_name.c_str());
      }
      return;
    case WriteOutcome::kClosed:
      // Nobody reads our end any more (`mpiexec ... | head`): let the ranks
      // meet a closed pipe too, as they would without us in between.
      ok = false;
      for (auto& r : ranks_) close_fd(fd == 1 ? r->out_fd : r->err_fd);
      return;
  }
}

}  // namespace sonde::mpiexec
