#include "tools/mpiexec/multihost.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "pmi/wireup_job_id.h"
#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {
namespace {

using namespace std::chrono_literals;

constexpr auto kHeartbeatEvery = 1s;
// A connection that has not said which daemon it is by then is dropped.
constexpr auto kHelloLimit = 10s;
// After kTerminate the daemons need kTermGrace + kKillGrace (hostd.cc) to
// report every rank gone; beyond this we stop waiting for them.
constexpr auto kTerminateLimit = 5s;
// Output still in flight when the last rank is reported gone.
constexpr auto kDrainGrace = 2s;
// After kShutdown: how long the daemons get to clean up and disconnect.
constexpr auto kShutdownLimit = 3s;
constexpr int kStalledOutputMs = 10000;

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

std::string shell_command(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += '\'';
    for (char c : w) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

std::string default_hostd_path() {
  if (const char* v = std::getenv("SONDE_HOSTD"); v != nullptr && *v != '\0') return v;
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "sonde-hostd";
  std::string dir(self, static_cast<size_t>(n));
  return dir.substr(0, dir.rfind('/') + 1) + "sonde-hostd";
}

MultiHostJob::MultiHostJob(MultiHostSpec spec, int signal_fd)
    : spec_(std::move(spec)), signal_fd_(signal_fd), heartbeat_limit_(heartbeat_limit_seconds()) {}

MultiHostJob::~MultiHostJob() {
  // Whatever path got us here, no agent or local daemon outlives us; remote
  // daemons see their connection close and end their ranks.
  bool any = false;
  for (auto& h : hosts_) {
    h.ch.reset();
    if (h.agent > 0) {
      kill(-h.agent, SIGKILL);
      kill(h.agent, SIGKILL);
      any = true;
    }
  }
  auto give_up = Clock::now() + 1s;
  while (any && Clock::now() < give_up) {
    any = false;
    for (auto& h : hosts_) {
      if (h.agent > 0 && waitpid(h.agent, nullptr, WNOHANG) == h.agent) h.agent = -1;
      any = any || h.agent > 0;
    }
    if (any) std::this_thread::sleep_for(10ms);
  }
  if (listen_fd_ >= 0) close(listen_fd_);
}

bool MultiHostJob::fail(int code, const std::string& message) {
  if (failed_) return false;
  failed_ = true;
  exit_code_ = code;
  std::fprintf(stderr, "%s: %s\n", spec_.program_name.c_str(), message.c_str());
  std::fflush(stderr);
  return true;
}

int MultiHostJob::run() {
  start_ = Clock::now();
  token_ = random_job_id();
  uint16_t port = 0;
  listen_fd_ = listen_tcp(&port);
  if (listen_fd_ < 0) {
    throw std::runtime_error(std::string("cannot listen for the daemons: ") + std::strerror(errno));
  }
  std::string endpoints;
  for (const auto& a : local_addresses()) {
    endpoints += (endpoints.empty() ? "" : ",") + a + ":" + std::to_string(port);
  }
  int size = 0;
  for (const auto& p : spec_.placement) size += static_cast<int>(p.ranks.size());
  ranks_.resize(static_cast<size_t>(size));
  running_ = size;
  for (size_t n = 0; n < spec_.placement.size(); ++n) {
    Host h;
    h.place = spec_.placement[n];
    h.local = is_local_host(h.place.name);
    for (int r : h.place.ranks) {
      Rank& rank = ranks_[static_cast<size_t>(r)];
      rank.node = static_cast<int>(n);
      rank.framer[0] = LineFramer(spec_.tag_output ? tag_prefix(r, false) : "", size > 1 ? stdout_open_line_ : nullptr);
      rank.framer[1] = LineFramer(spec_.tag_output ? tag_prefix(r, true) : "", size > 1 ? stderr_open_line_ : nullptr);
    }
    hosts_.push_back(std::move(h));
  }
  monitor_ = std::make_unique<HangMonitor>(
      spec_.program_name, spec_.hang_report_seconds, spec_.report_json,
      [this](uint64_t seq) { return collect_snapshot_across_hosts(seq); },
      SlotNames{[this](int slot, std::string* nspace, int* rank) {
                  for (const Namespace& ns : nspaces_) {
                    if (slot >= ns.first_slot && slot < ns.first_slot + ns.size) {
                      *nspace = ns.name;
                      *rank = slot - ns.first_slot;
                      return true;
                    }
                  }
                  return false;
                },
                [this](const std::string& nspace, int rank) {
                  for (const Namespace& ns : nspaces_) {
                    if (ns.name == nspace && rank >= 0 && rank < ns.size) return ns.first_slot + rank;
                  }
                  return -1;
                }});
  for (size_t n = 0; n < hosts_.size() && !failed_; ++n) {
    try {
      launch(n, endpoints);
    } catch (const std::exception& e) {
      fail(1, "cannot start the daemon for host " + hosts_[n].place.name + ": " + e.what());
    }
  }
  loop();
  finish_output();
  return exit_code_;
}

void MultiHostJob::launch(size_t node, const std::string& endpoints) {
  Host& h = hosts_[node];
  std::vector<std::string> args = {spec_.hostd, "--connect",          endpoints,
                                   "--node",    std::to_string(node), "--token",
                                   token_,      "--heartbeat-limit",  format_seconds(heartbeat_limit_)};
  const bool has_rank0 = !h.place.ranks.empty() && h.place.ranks.front() == 0;
  const bool give_stdin = h.local && has_rank0 && !isatty(0);
  if (give_stdin) args.emplace_back("--stdin");
  if (!h.local && has_rank0 && !isatty(0)) {
    args.emplace_back("--stdin-relay");
    stdin_fd_ = 0;
  }
  std::vector<std::string> words;
  if (h.local) {
    words = args;
  } else {
    words = spec_.agent;
    words.push_back(h.place.name);
    words.push_back(shell_command(args));
  }
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // Made before fork: the child only writes it (async-signal-safe).
  const std::string exec_failed = spec_.program_name + ": cannot execute " + words[0] + ": ";
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = fork();
  if (pid == 0) {
    // Our own process group: a terminal's Ctrl-C reaches mpiexec, which
    // tears the job down in order, not the agents behind its back.
    setpgid(0, 0);
    // Agents (ssh) must not eat our stdin; only the local daemon may get it.
    dup2(give_stdin ? 0 : devnull, 0);
    dup2(2, 1);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    execvp(argv[0], argv.data());
    const char* why = strerrordesc_np(errno);
    (void)!write(2, exec_failed.data(), exec_failed.size());
    (void)!write(2, why, std::strlen(why));
    (void)!write(2, "\n", 1);
    _exit(127);
  }
  int e = errno;
  if (devnull >= 0) close(devnull);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(e));
  setpgid(pid, pid);
  h.agent = pid;
}

bool MultiHostJob::output_open() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.open[0] || r.open[1]; });
}

void MultiHostJob::broadcast(Msg type, const Writer& w) {
  for (auto& h : hosts_) {
    if (h.ch && !h.gone && !h.retired) h.ch->send(type, w);
  }
}

void MultiHostJob::relay_stdin() {
  Host& h = hosts_[static_cast<size_t>(ranks_[0].node)];
  char buf[64 * 1024];
  ssize_t n = read(stdin_fd_, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  Writer w;
  w.str(n > 0 ? std::string_view(buf, static_cast<size_t>(n)) : std::string_view());
  if (h.ch && !h.gone) h.ch->send(Msg::kStdin, w);
  if (n <= 0) stdin_fd_ = -1;  // end of input (or an error: the same to rank 0)
}

void MultiHostJob::begin_termination() {
  if (phase_ == Phase::kTerminating || phase_ == Phase::kDone) return;
  const bool ranks_started = phase_ == Phase::kRunning;
  phase_ = Phase::kTerminating;
  give_up_at_ = Clock::now() + kTerminateLimit;
  broadcast(Msg::kTerminate);
  // Daemons that never got the job (or never said hello) have no ranks to
  // report.
  for (size_t n = 0; n < hosts_.size(); ++n) {
    if (!ranks_started || !hosts_[n].ch) forget_ranks(n);
  }
}

int MultiHostJob::forget_ranks(size_t node) {
  int lost = 0;
  for (int r : hosts_[node].place.ranks) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.open[0] = rank.open[1] = false;
    if (!rank.exited) {
      rank.exited = true;
      --running_;
      ++lost;
    }
  }
  return lost;
}

void MultiHostJob::serve_host(size_t node, short revents) {
  Host& h = hosts_[node];
  bool ok = true;
  if ((revents & POLLOUT) != 0) ok = h.ch->flush();
  if (ok && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) ok = h.ch->fill();
  try {
    while (auto m = h.ch->next()) handle(node, m->first, m->second);
  } catch (const ProtocolError& e) {
    host_lost(node, std::string("bad message: ") + e.what());
  }
  if (!ok) host_lost(node, "its connection closed");
}

void MultiHostJob::host_lost(size_t node, const std::string& why) {
  Host& h = hosts_[node];
  if (h.gone) return;
  h.gone = true;
  int lost_ranks = forget_ranks(node);
  if (lost_ranks > 0 && (phase_ == Phase::kRunning || phase_ == Phase::kStarting)) {
    fail(1, "lost the daemon on host " + h.place.name + " (" + why + "); its " + std::to_string(lost_ranks) +
                " rank(s) are gone; ending the job");
  }
}

void MultiHostJob::reap_agents() {
  for (size_t n = 0; n < hosts_.size(); ++n) {
    Host& h = hosts_[n];
    int status = 0;
    if (h.agent <= 0 || waitpid(h.agent, &status, WNOHANG) != h.agent) continue;
    h.agent = -1;
    h.agent_status = status;
    // Before its hello, the agent failing is all we will hear (ssh: 255).
    // After it, the connection tells: some agents exit as soon as the
    // daemon runs.
    if (!h.ch && !h.gone && phase_ != Phase::kDone) {
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok) {
        std::string how = WIFSIGNALED(status) ? "was killed by " + signal_name(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
        fail(1, "cannot start the daemon on host " + h.place.name + ": the launch agent (" +
                    (h.local ? spec_.hostd : spec_.agent[0]) + ") " + how);
        forget_ranks(n);
      }
    }
  }
}

void MultiHostJob::handle_signal(const signalfd_siginfo& si) {
  const int sig = static_cast<int>(si.ssi_signo);
  switch (sig) {
    case SIGCHLD: reap_agents(); break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
      if (phase_ == Phase::kRunning && interrupts_++ == 0) {
        Writer w;
        w.i32(sig);
        broadcast(Msg::kSignal, w);
      } else {
        fail(128 + sig,
             "received " + signal_name(sig) +
                 (phase_ == Phase::kStarting ? " while starting; ending the job" : " again; killing the job"));
        Writer w;
        w.i32(SIGKILL);
        broadcast(Msg::kSignal, w);
        begin_termination();
      }
      break;
    case SIGUSR1:
      if (phase_ == Phase::kRunning) monitor_->report("snapshot", open_snapshot_reply(si));
      break;
    case SIGUSR2: {
      Writer w;
      w.i32(sig);
      broadcast(Msg::kSignal, w);
      break;
    }
    default: break;
  }
}

void MultiHostJob::emit(int fd, const std::string& bytes) {
  bool& ok = fd == 1 ? stdout_ok_ : stderr_ok_;
  if (!ok || bytes.empty()) return;
  WriteOutcome w = write_output(fd, bytes, kStalledOutputMs);
  if (w == WriteOutcome::kStalled && fd == 1) {
    std::fprintf(stderr, "%s: standard output is not being read; dropping the rest\n", spec_.program_name.c_str());
  }
  if (w != WriteOutcome::kWritten) ok = false;
}

void MultiHostJob::loop() {
  const bool has_timeout = spec_.timeout_seconds > 0;
  const auto timeout_at =
      start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec_.timeout_seconds));
  const auto limit = std::chrono::duration<double>(heartbeat_limit_);
  // Starting a daemon through ssh may take a while; twice the silence limit.
  const auto launch_limit = start_ + std::chrono::duration_cast<Clock::duration>(2 * limit);
  auto next_beat = Clock::now();
  std::optional<Clock::time_point> drain_until, shutdown_until;
  std::vector<pollfd> fds;
  std::vector<int> owners;  // host index for fds[3..], -1 - i for unnamed_[i]

  for (;;) {
    auto now = Clock::now();
    if (failed_ && (phase_ == Phase::kRunning || phase_ == Phase::kStarting)) begin_termination();
    if (phase_ == Phase::kRunning && !failed_ && monitor_->tick(now)) {
      fail(124, "no rank made progress for --hang-report " + format_seconds(spec_.hang_report_seconds) +
                    " s; ending the job");
      continue;
    }
    if ((phase_ == Phase::kRunning || phase_ == Phase::kStarting) && has_timeout && now >= timeout_at) {
      if (phase_ == Phase::kRunning) monitor_->report("timeout");
      fail(124, "the job ran longer than --timeout " + format_seconds(spec_.timeout_seconds) + " s; ending it");
      continue;
    }
    if (phase_ == Phase::kStarting && now >= launch_limit) {
      for (size_t n = 0; n < hosts_.size(); ++n) {
        if (!hosts_[n].ch) {
          fail(1, "the daemon on host " + hosts_[n].place.name + " did not connect within " +
                      format_seconds(2 * heartbeat_limit_) + " s");
        }
      }
      continue;
    }
    if (phase_ == Phase::kTerminating && running_ > 0 && give_up_at_ && now >= *give_up_at_) {
      std::fprintf(stderr, "%s: %d rank(s) not reported gone; not waiting for them\n", spec_.program_name.c_str(),
                   running_);
      for (size_t n = 0; n < hosts_.size(); ++n) forget_ranks(n);
    }
    if (phase_ != Phase::kStarting && phase_ != Phase::kDone && running_ == 0) {
      if (!drain_until) drain_until = now + kDrainGrace;
      if (!output_open() || now >= *drain_until) {
        phase_ = Phase::kDone;
        broadcast(Msg::kShutdown);
        // A daemon (or agent) that never connected gets no kShutdown: it has
        // started nothing, so it may simply go.
        for (auto& h : hosts_) {
          if (!h.ch && h.agent > 0) kill(-h.agent, SIGTERM);
        }
        shutdown_until = now + kShutdownLimit;
      }
    }
    if (phase_ == Phase::kDone) {
      bool waiting =
          std::any_of(hosts_.begin(), hosts_.end(), [](const Host& h) { return (h.ch && !h.gone) || h.agent > 0; });
      if (!waiting || now >= *shutdown_until) return;
    }
    // Heartbeats, and silence from a daemon.
    for (size_t n = 0; n < hosts_.size(); ++n) {
      Host& h = hosts_[n];
      if (!h.ch || h.gone) continue;
      if (now - h.ch->last_heard() > limit) {
        host_lost(n, "no word from it for " + format_seconds(heartbeat_limit_) + " s");
      } else if (now >= next_beat) {
        h.ch->send(Msg::kHeartbeat);
      }
    }
    if (now >= next_beat) next_beat = now + kHeartbeatEvery;
    for (size_t i = 0; i < unnamed_.size();) {
      if (now - unnamed_[i].second > kHelloLimit) {
        unnamed_.erase(unnamed_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }

    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    fds.push_back({phase_ == Phase::kStarting ? listen_fd_ : -1, POLLIN, 0});
    {
      // Rank 0's stdin, read only as fast as its daemon's connection drains.
      const Host& h0 = hosts_[static_cast<size_t>(ranks_[0].node)];
      bool relay = phase_ == Phase::kRunning && stdin_fd_ >= 0 && h0.ch && !h0.gone && h0.ch->queued() < (8u << 20);
      fds.push_back({relay ? stdin_fd_ : -1, POLLIN, 0});
    }
    for (size_t n = 0; n < hosts_.size(); ++n) {
      const Host& h = hosts_[n];
      if (!h.ch || h.gone) continue;
      fds.push_back({h.ch->fd(), static_cast<short>(POLLIN | (h.ch->wants_write() ? POLLOUT : 0)), 0});
      owners.push_back(static_cast<int>(n));
    }
    for (size_t i = 0; i < unnamed_.size(); ++i) {
      fds.push_back({unnamed_[i].first->fd(), POLLIN, 0});
      owners.push_back(-1 - static_cast<int>(i));
    }
    auto next = std::min(now + 1s, next_beat);
    if ((phase_ == Phase::kRunning || phase_ == Phase::kStarting) && has_timeout) {
      next = std::min(next, timeout_at);
    }
    if (phase_ == Phase::kStarting) next = std::min(next, launch_limit);
    if (phase_ == Phase::kRunning && monitor_->next_tick()) next = std::min(next, *monitor_->next_tick());
    if (give_up_at_) next = std::min(next, *give_up_at_);
    if (drain_until) next = std::min(next, *drain_until);
    if (shutdown_until) next = std::min(next, *shutdown_until);
    if (auto due = output_due()) next = std::min(next, *due);
    auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    int n = poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 0)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[0].revents != 0) {
      signalfd_siginfo si;
      while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        handle_signal(si);
      }
    }
    if (fds[1].revents != 0) accept_hellos();
    if (fds[2].revents != 0) relay_stdin();
    std::vector<size_t> hello_done;
    for (size_t k = 3; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      if (owners[k - 3] < 0) {
        size_t i = static_cast<size_t>(-1 - owners[k - 3]);
        Channel& ch = *unnamed_[i].first;
        bool ok = ch.fill();
        try {
          if (auto m = ch.next(); m && m->first == Msg::kHello) {
            on_hello(std::move(unnamed_[i].first), m->second);
            ok = false;  // moved away (or rejected): drop the slot
          } else if (m) {
            ok = false;  // anything else first is not one of our daemons
          }
        } catch (const ProtocolError&) {
          ok = false;
        }
        if (!ok) hello_done.push_back(i);
        continue;
      }
      serve_host(static_cast<size_t>(owners[k - 3]), fds[k].revents);
    }
    std::sort(hello_done.rbegin(), hello_done.rend());
    for (size_t i : hello_done) unnamed_.erase(unnamed_.begin() + static_cast<std::ptrdiff_t>(i));
    flush_due_output(Clock::now());
  }
}

std::optional<MultiHostJob::Clock::time_point> MultiHostJob::output_due() const {
  std::optional<Clock::time_point> first;
  for (const Rank& r : ranks_) {
    for (const LineFramer& f : r.framer) {
      if (auto at = f.due(); at && (!first || *at < *first)) first = at;
    }
  }
  return first;
}

void MultiHostJob::flush_due_output(Clock::time_point now) {
  for (Rank& r : ranks_) {
    emit(1, r.framer[0].flush_if_due(now));
    emit(2, r.framer[1].flush_if_due(now));
  }
}

void MultiHostJob::finish_output() {
  for (Rank& r : ranks_) {
    emit(1, r.framer[0].finish());
    emit(2, r.framer[1].finish());
  }
}

}  // namespace sonde::mpiexec
