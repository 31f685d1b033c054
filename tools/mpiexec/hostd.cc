#include "tools/mpiexec/hostd.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/placement.h"
#include "tools/mpiexec/snapshot.h"
#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {
namespace {

using namespace std::chrono_literals;

constexpr auto kTermGrace = 1s;  // SIGTERM to SIGKILL, as mpiexec on one host
constexpr auto kKillGrace = 1s;  // SIGKILL to giving up on the kernel
constexpr auto kHeartbeatEvery = 1s;
constexpr int kConnectTimeoutMs = 5000;
// Rank output waiting for the connection beyond this stops being read, so
// the ranks block on their pipes instead of our memory growing.
constexpr size_t kMaxQueuedOutput = 8u << 20;

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// The callback awaiting answer `id` in `pending`, taken out; an answer
// nothing awaits is a protocol error.
template <class Map>
typename Map::mapped_type take_pending(Map& pending, uint32_t id, const char* what) {
  auto it = pending.find(id);
  if (it == pending.end()) throw ProtocolError(what);
  typename Map::mapped_type done = std::move(it->second);
  pending.erase(it);
  return done;
}

const char* env_value(const std::vector<std::string>& env, const char* name) {
  size_t len = std::strlen(name);
  for (const auto& e : env) {
    if (e.size() > len && e.compare(0, len, name) == 0 && e[len] == '=') return e.c_str() + len + 1;
  }
  return nullptr;
}

}  // namespace

HostdOptions parse_hostd_options(const std::vector<std::string>& args) {
  HostdOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--connect") {
      std::string list = value();
      size_t start = 0;
      while (start < list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) o.connect.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (a == "--node") {
      o.node = std::atoi(value().c_str());
    } else if (a == "--token") {
      o.token = value();
    } else if (a == "--heartbeat-limit") {
      double s = std::strtod(value().c_str(), nullptr);
      if (std::isfinite(s) && s > 0) o.heartbeat_limit = s;
    } else if (a == "--stdin") {
      o.stdin_to_rank0 = true;
    } else if (a == "--stdin-relay") {
      o.stdin_relay = true;
    } else {
      throw std::runtime_error("unknown argument '" + a + "'");
    }
  }
  if (o.connect.empty() || o.node < 0 || o.token.empty()) {
    throw std::runtime_error("needs --connect, --node and --token (it is started by mpiexec)");
  }
  return o;
}

HostDaemon::HostDaemon(HostdOptions options, int signal_fd)
    : opt_(std::move(options)), signal_fd_(signal_fd), hostname_(host_name()) {}

HostDaemon::~HostDaemon() {
  // Whatever path got us here, no rank outlives its daemon.
  kill_and_reap(pgid_, ranks_, running_, kKillGrace);
  pmix_.reset();
  remove_job_shm(job_id_);
  remove_tree(tmpdir_);
}

void HostDaemon::connected(int rank) {
  if (Rank* r = find(rank)) r->connected = true;
}

void HostDaemon::finalized(int rank) {
  if (Rank* r = find(rank)) r->finalized = true;
}

void HostDaemon::aborted(int rank, int status, const std::string& message) {
  pmix_->post([this, rank, status, message] {
    Writer w;
    w.i32(rank).i32(status).str(message);
    ch_->send(Msg::kAbort, w);
  });
}

void HostDaemon::fence(std::string data, FenceDone done) {
  uint32_t seq = next_fence_++;
  fences_[seq] = std::move(done);
  Writer w;
  w.u32(seq).str(data);
  ch_->send(Msg::kFence, w);
}

void HostDaemon::direct_modex(int rank, ModexDone done) {
  uint32_t id = next_modex_++;
  modex_[id] = std::move(done);
  Writer w;
  w.u32(id).i32(rank);
  ch_->send(Msg::kModexRequest, w);
}

HostDaemon::Rank* HostDaemon::find(int rank) {
  // Ranks are in ascending order (the job message guarantees it).
  auto it =
      std::lower_bound(ranks_.begin(), ranks_.end(), rank, [](const auto& r, int want) { return r->rank < want; });
  return it != ranks_.end() && (*it)->rank == rank ? it->get() : nullptr;
}

int HostDaemon::run() {
  std::string error;
  int fd = connect_first(opt_.connect, kConnectTimeoutMs, &error);
  if (fd < 0) {
    std::fprintf(stderr, "sonde-hostd on %s: cannot reach mpiexec (%s)\n", hostname_.c_str(), error.c_str());
    return 1;
  }
  ch_ = std::make_unique<Channel>(fd);
  Writer hello;
  hello.str(opt_.token).i32(opt_.node).str(hostname_).i32(static_cast<int32_t>(getpid()));
  hello.str(machine_identity());
  ch_->send(Msg::kHello, hello);

  JobMessage job;
  if (!wait_for_job(&job)) return told_to_go_ ? 0 : 1;
  try {
    start(job);
  } catch (const std::exception& e) {
    report_failure(1, std::string("cannot start the ranks: ") + e.what());
  }
  loop();
  // What we still owe mpiexec (last output, exits) goes before we close.
  auto until = Clock::now() + 2s;
  while (ch_->wants_write() && Clock::now() < until) {
    pollfd p{ch_->fd(), POLLOUT, 0};
    poll(&p, 1, 100);
    if (!ch_->flush()) break;
  }
  return exit_code_;
}

bool HostDaemon::wait_for_job(JobMessage* job) {
  const auto limit = std::chrono::duration<double>(opt_.heartbeat_limit);
  for (;;) {
    if (auto m = ch_->next()) {
      if (m->first == Msg::kJob) {
        *job = JobMessage::decode(m->second);
        return true;
      }
      if (m->first == Msg::kShutdown) {
        // Another daemon serves this machine (or the job ended early).
        told_to_go_ = true;
        return false;
      }
      continue;  // heartbeats
    }
    if (Clock::now() - ch_->last_heard() > limit) return false;
    pollfd fds[2] = {{ch_->fd(), POLLIN, 0}, {signal_fd_, POLLIN, 0}};
    if (ch_->wants_write()) fds[0].events |= POLLOUT;
    if (poll(fds, 2, 1000) < 0 && errno != EINTR) return false;
    if (fds[1].revents != 0) {
      signalfd_siginfo si;
      while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo != SIGCHLD) return false;
      }
    }
    if ((fds[0].revents & POLLOUT) != 0 && !ch_->flush()) return false;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !ch_->fill()) return false;
  }
}

void HostDaemon::start(const JobMessage& job) {
  job_id_ = job.job_id;
  base_env_ = job.env;
  launcher_ = job.launcher;
  if (opt_.node >= static_cast<int>(job.daemon_node.size()) || job.daemon_node[static_cast<size_t>(opt_.node)] < 0) {
    throw std::runtime_error("the job has no node for daemon " + std::to_string(opt_.node));
  }
  const int node = job.daemon_node[static_cast<size_t>(opt_.node)];
  const std::vector<int>& mine = job.node_ranks[static_cast<size_t>(node)];
  // Never reallocated (libpmix's thread looks ranks up), spawned ones included.
  ranks_.reserve(mine.size() + kMaxSpawnedSlots);
  for (int r : mine) {
    ranks_.push_back(std::make_unique<Rank>());
    ranks_.back()->rank = r;
  }
  // The ranks start where the user started mpiexec, if that exists here.
  if (!job.cwd.empty() && chdir(job.cwd.c_str()) != 0) {
    const char* home = env_value(job.env, "HOME");
    std::fprintf(stderr, "sonde-hostd on %s: no directory %s here; ranks start in %s\n", hostname_.c_str(),
                 job.cwd.c_str(), home != nullptr ? home : "/");
    if (home == nullptr || chdir(home) != 0) (void)!chdir("/");
  }
  // Each app with ranks here: its directory (relative to the one above) and
  // its program, looked up in the ranks' PATH from there.
  std::vector<App> apps = job.apps;
  std::vector<std::string> executables(apps.size());
  for (size_t a = 0; a < apps.size(); ++a) {
    bool here = std::any_of(mine.begin(), mine.end(),
                            [&](int r) { return r >= apps[a].first && r < apps[a].first + apps[a].size; });
    if (!here) continue;
    std::string why;
    const char* path = env_value(job.env, "PATH");
    if (int status = prepare_program(apps[a].wdir, apps[a].argv[0], path, &executables[a], &why)) {
      report_failure(status, why);
      return;
    }
  }

  tmpdir_ = make_private_tmpdir(job.job_id);
  pmix_ = std::make_unique<PmixHost>(tmpdir_, this);
  pmix_->relay_fences();
  JobLayout layout;
  layout.nspace = "sonde-" + job.job_id;
  layout.job_id = job.job_id;
  layout.tmpdir = tmpdir_;
  layout.size = job.size;
  for (size_t n = 0; n < job.node_ranks.size(); ++n) {
    layout.nodes.push_back({job.hostnames[n], job.node_ranks[n]});
  }
  layout.this_node = node;
  for (const auto& app : apps) layout.apps.push_back({app.first, app.size});
  pmix_->register_job(layout);
  snapshot_dir_ = snapshot_dir(tmpdir_);

  // This host's ranks, bound from this host's topology.
  std::vector<cpu_set_t> masks = host_binding_masks(job.binding, mine, job.report_bindings, job.launcher, hostname_);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int relay[2] = {-1, -1};
  if (opt_.stdin_relay && find(0) != nullptr && pipe2(relay, O_CLOEXEC) == 0) {
    stdin_fd_ = relay[1];
    set_nonblocking(stdin_fd_);
  }
  const int local_size = static_cast<int>(mine.size());
  for (int i = 0; i < local_size && !leaving_; ++i) {
    Rank& r = *ranks_[static_cast<size_t>(i)];
    const size_t app = static_cast<size_t>(app_of(apps, r.rank));
    std::vector<std::string> env = job.env;
    for (const auto& e : apps[app].env) set_entry(env, e);
    for (const auto& e : pmix_->client_env(r.rank)) set_entry(env, e);
    set_entry(env, "SONDE_SNAPSHOT_DIR=" + snapshot_dir_);
    for (const auto& e : rank_identity_env(job.job_id, r.rank, job.size, i, local_size)) {
      set_entry(env, e);
    }
    int stdin_fd = devnull;
    if (r.rank == 0 && opt_.stdin_to_rank0) stdin_fd = 0;
    if (r.rank == 0 && relay[0] >= 0) stdin_fd = relay[0];
    launch(r, executables[app], apps[app].argv, apps[app].wdir, env, stdin_fd,
           masks.empty() ? nullptr : &masks[static_cast<size_t>(i)]);
  }
  if (devnull >= 0) close(devnull);
  close_fd(relay[0]);
}

void HostDaemon::launch(Rank& r, const std::string& executable, const std::vector<std::string>& argv,
                        const std::string& wdir, const std::vector<std::string>& env, int stdin_fd,
                        const cpu_set_t* cpu_mask) {
  RankLaunch l;
  l.executable = &executable;
  l.argv = &argv;
  l.wdir = &wdir;
  l.env = &env;
  l.stdin_fd = stdin_fd;
  l.cpu_mask = cpu_mask;
  l.pgid = pgid_;
  adopt_started(r, start_rank(l), pgid_, running_);
}

void HostDaemon::write_stdin() {
  while (stdin_fd_ >= 0 && !stdin_buf_.empty()) {
    ssize_t n = write(stdin_fd_, stdin_buf_.data(), stdin_buf_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      close_fd(stdin_fd_);  // rank 0 is not reading any more (EPIPE)
      stdin_buf_.clear();
      return;
    }
    stdin_buf_.erase(0, static_cast<size_t>(n));
  }
  if (stdin_eof_ && stdin_buf_.empty()) close_fd(stdin_fd_);
}

void HostDaemon::report_failure(int code, const std::string& message) {
  Writer w;
  w.i32(code).str(message);
  ch_->send(Msg::kFailure, w);
  report_unstarted();
  terminate_ranks();
}

void HostDaemon::report_unstarted() {
  // Ranks that will never start are gone as far as mpiexec is concerned.
  for (auto& r : ranks_) {
    if (r->pid >= 0) continue;
    r->pid = 0;
    for (uint8_t stream : {1, 2}) {
      Writer end;  // no output will come either
      end.i32(r->rank).u8(stream).str("");
      ch_->send(Msg::kOutput, end);
    }
    Writer gone;
    gone.i32(r->rank).i32(0).i32(0).u8(0).u8(0);
    ch_->send(Msg::kExited, gone);
  }
}

void HostDaemon::lost(const std::string& why) {
  if (!leaving_) {
    std::fprintf(stderr, "sonde-hostd on %s: %s; ending this host's ranks\n", hostname_.c_str(), why.c_str());
  }
  leaving_ = true;
  exit_code_ = 1;
  terminate_ranks();
}

void HostDaemon::signal_all(int sig) {
  std::vector<pid_t> running;
  for (auto& r : ranks_) {
    if (r->running) running.push_back(r->pid);
  }
  if (!running.empty()) signal_ranks(pgid_, running, sig);
}

void HostDaemon::terminate_ranks() {
  if (kill_at_) return;
  kill_at_ = Clock::now() + kTermGrace;
  signal_all(SIGTERM);
}

void HostDaemon::loop() {
  const auto limit = std::chrono::duration<double>(opt_.heartbeat_limit);
  auto next_beat = Clock::now();
  std::vector<pollfd> fds;
  std::vector<std::pair<Rank*, int>> owners;
  bool channel_open = true;
  for (;;) {
    auto now = Clock::now();
    if (kill_at_ && !give_up_at_ && now >= *kill_at_) {
      signal_all(SIGKILL);
      give_up_at_ = now + kKillGrace;
    }
    if (leaving_ && (running_ == 0 || (give_up_at_ && now >= *give_up_at_))) return;
    if (channel_open) {
      if (now - ch_->last_heard() > limit) {
        lost("no word from mpiexec for " + std::to_string(static_cast<int>(opt_.heartbeat_limit)) + " s");
        channel_open = false;
      } else if (now >= next_beat) {
        ch_->send(Msg::kHeartbeat);
        next_beat = now + kHeartbeatEvery;
      }
    }

    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    fds.push_back({pmix_ ? pmix_->wake_fd() : -1, POLLIN, 0});
    fds.push_back({channel_open ? ch_->fd() : -1, static_cast<short>(POLLIN | (ch_->wants_write() ? POLLOUT : 0)), 0});
    fds.push_back({!stdin_buf_.empty() ? stdin_fd_ : -1, POLLOUT, 0});
    const bool take_output = !channel_open || ch_->queued() < kMaxQueuedOutput;
    for (auto& r : ranks_) {
      const int streams[3] = {r->out_fd, r->err_fd, r->exec_fd};
      for (int s = 0; s < 3; ++s) {
        if (streams[s] >= 0 && (take_output || s == 2)) {
          fds.push_back({streams[s], POLLIN, 0});
          owners.emplace_back(r.get(), s);
        }
      }
    }
    auto next = std::min(now + 1s, next_beat);
    if (kill_at_ && !give_up_at_) next = std::min(next, *kill_at_);
    if (give_up_at_) next = std::min(next, *give_up_at_);
    auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    int n = poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 0)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[0].revents != 0) {
      signalfd_siginfo si;
      while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo == SIGCHLD) {
          reap();
        } else {
          lost("received " + signal_name(static_cast<int>(si.ssi_signo)));
        }
      }
    }
    if (fds[1].revents != 0) pmix_->run_pending();
    if (channel_open && fds[2].revents != 0) {
      bool ok = true;
      if ((fds[2].revents & POLLOUT) != 0) ok = ch_->flush();
      if (ok && (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) != 0) ok = ch_->fill();
      try {
        while (auto m = ch_->next()) handle(m->first, m->second);
      } catch (const ProtocolError& e) {
        ok = false;
      }
      if (!ok) {
        channel_open = false;
        // After kShutdown the close is expected; otherwise mpiexec is gone.
        if (!leaving_) lost("lost the connection to mpiexec");
      }
    }
    if (fds[3].revents != 0) write_stdin();
    for (size_t k = 4; k < fds.size(); ++k) {
      if (fds[k].revents != 0) read_stream(*owners[k - 4].first, owners[k - 4].second);
    }
  }
}

void HostDaemon::handle(Msg type, const std::string& payload) {
  Reader in(payload);
  switch (type) {
    case Msg::kFenceDone: {
      FenceDone done = take_pending(fences_, in.u32(), "completion of an unknown fence");
      done(true, in.str());
      break;
    }
    case Msg::kModexRequest: {
      uint32_t id = in.u32();
      int rank = in.i32();
      if (!pmix_ || find(rank) == nullptr) throw ProtocolError("modex request for a rank not here");
      pmix_->serve_modex(rank, [this, id](int status, const std::string& blob) {
        Writer w;
        w.u32(id).i32(status).str(blob);
        ch_->send(Msg::kModexReply, w);
      });
      break;
    }
    case Msg::kModexReply: {
      ModexDone done = take_pending(modex_, in.u32(), "reply to an unknown modex request");
      const int status = in.i32();
      done(status, in.str());
      break;
    }
    case Msg::kStdin: {
      std::string bytes = in.str();
      if (bytes.empty()) {
        stdin_eof_ = true;
      } else if (stdin_fd_ >= 0) {
        stdin_buf_ += bytes;
      }
      write_stdin();
      break;
    }
    case Msg::kSnapshotRequest: {
      const uint32_t seq = in.u32();
      const uint32_t bound_ms = in.u32();
      const int sig = in.i32();
      answer_snapshot(seq, std::chrono::milliseconds(std::min<uint32_t>(bound_ms, 60000)), sig);
      break;
    }
    case Msg::kSpawnJob: start_children(SpawnJobMessage::decode(payload)); break;
    case Msg::kSpawnReply: {
      SpawnDone done = take_pending(spawns_, in.u32(), "reply to an unknown spawn");
      const int status = in.i32();
      done(status, in.str());
      break;
    }
    case Msg::kGroupFenceDone: {
      FenceDone done = take_pending(group_fences_, in.u32(), "completion of an unknown fence");
      const int status = in.i32();
      done(status == 0, in.str());
      break;
    }
    case Msg::kNameReply: {
      NameReply reply = NameReply::decode(payload);
      NameTable::Done done = take_pending(names_, reply.id, "reply to an unknown name request");
      done(std::move(reply));
      break;
    }
    case Msg::kSignal: signal_all(in.i32()); break;
    case Msg::kTerminate: terminate_ranks(); break;
    case Msg::kShutdown:
      leaving_ = true;
      if (running_ > 0) signal_all(SIGKILL);
      if (!give_up_at_) give_up_at_ = Clock::now() + kKillGrace;
      break;
    default: break;  // heartbeats
  }
}

void HostDaemon::answer_snapshot(uint32_t seq, std::chrono::milliseconds bound, int sig) {
  std::vector<SnapshotAnswer> answers;
  if (!snapshot_dir_.empty() && sig > 0 && sig < NSIG) {
    std::vector<SnapshotTarget> targets;
    for (const auto& r : ranks_) targets.push_back({r->rank, r->pid, r->running, r->snapshot_dir, r->snapshot_rank});
    answers = collect_snapshot(snapshot_dir_, seq, targets, bound, sig);
  }
  Writer w;
  w.u32(seq).u32(static_cast<uint32_t>(answers.size()));
  for (const auto& a : answers) {
    w.i32(a.rank).u8(a.running ? 1 : 0).u8(a.ready ? 1 : 0).u8(a.answered ? 1 : 0).str(a.text);
  }
  ch_->send(Msg::kSnapshot, w);
}

void HostDaemon::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto& r : ranks_) {
      if (r->pid != pid || !r->running) continue;
      r->running = false;
      --running_;
      if (int e = read_exec_errno(r->exec_fd); e > 0) r->exec_errno = e;
      Writer w;
      w.i32(r->rank).i32(status).i32(r->exec_errno);
      w.u8(r->connected ? 1 : 0).u8(r->finalized ? 1 : 0);
      ch_->send(Msg::kExited, w);
      break;
    }
  }
}

void HostDaemon::read_stream(Rank& r, int stream) {
  if (stream == 2) {
    if (int e = read_exec_errno(r.exec_fd); e > 0) r.exec_errno = e;
    return;
  }
  int& fd = stream == 0 ? r.out_fd : r.err_fd;
  char buf[64 * 1024];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    Writer w;
    w.i32(r.rank).u8(static_cast<uint8_t>(stream + 1)).str(std::string_view(buf, n));
    ch_->send(Msg::kOutput, w);
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    close_fd(fd);
    Writer w;
    w.i32(r.rank).u8(static_cast<uint8_t>(stream + 1)).str("");
    ch_->send(Msg::kOutput, w);
  }
}

}  // namespace sonde::mpiexec
