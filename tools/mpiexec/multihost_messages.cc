// MultiHostJob's side of the control conversation: the daemons' hellos, the
// job it sends them once all have said hello, and what it does with each
// message a daemon sends (output, exits, aborts, fences, modex requests,
// failures). The life cycle and the event loop are in multihost.cc.
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pmi/wireup_job_id.h"
#include "tools/mpiexec/multihost.h"
#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {
void MultiHostJob::merge_same_machines() {
  for (size_t n = 0; n < hosts_.size(); ++n) {
    Host& h = hosts_[n];
    if (h.retired || h.identity.empty()) continue;
    for (size_t m = n + 1; m < hosts_.size(); ++m) {
      Host& twin = hosts_[m];
      if (twin.retired || twin.identity != h.identity) continue;
      for (int r : twin.place.ranks) {
        h.place.ranks.push_back(r);
        ranks_[static_cast<size_t>(r)].node = static_cast<int>(n);
      }
      twin.place.ranks.clear();
      twin.retired = true;
    }
    std::sort(h.place.ranks.begin(), h.place.ranks.end());
  }
}

void MultiHostJob::send_job() {
  merge_same_machines();
  JobMessage job;
  job.job_id = spec_.job_id;
  job.apps = spec_.apps;
  // Host-specific variables stay with the host.
  for (auto& e : inherited_environment()) {
    if (e.rfind("HOSTNAME=", 0) != 0) job.env.push_back(std::move(e));
  }
  char cwd[PATH_MAX] = {};
  if (getcwd(cwd, sizeof cwd) != nullptr) job.cwd = cwd;
  job.binding = spec_.binding;
  job.report_bindings = spec_.report_bindings;
  job.launcher = spec_.program_name;
  job.size = static_cast<int>(ranks_.size());
  for (const auto& h : hosts_) {
    if (h.retired) {
      job.daemon_node.push_back(-1);
      continue;
    }
    job.daemon_node.push_back(static_cast<int>(job.hostnames.size()));
    job.hostnames.push_back(h.hostname);
    job.node_ranks.push_back(h.place.ranks);
  }
  serving_ = job.hostnames.size();
  daemon_node_ = job.daemon_node;
  nspaces_.push_back({"sonde-" + spec_.job_id, 0, job.size});
  broadcast(Msg::kJob, job.encode());
  // A daemon told to go has started nothing; its connection may close.
  for (auto& h : hosts_) {
    if (!h.retired) continue;
    h.ch->send(Msg::kShutdown);
    h.gone = true;
  }
  phase_ = Phase::kRunning;
}

void MultiHostJob::accept_hellos() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    unnamed_.emplace_back(std::make_unique<Channel>(fd), Clock::now());
  }
}

void MultiHostJob::on_hello(std::unique_ptr<Channel> ch, const std::string& payload) {
  Reader in(payload);
  std::string token = in.str();
  int node = in.i32();
  std::string hostname = in.str();
  in.i32();  // the daemon's pid
  std::string identity = in.str();
  if (token != token_ || node < 0 || node >= static_cast<int>(hosts_.size())) return;
  Host& h = hosts_[static_cast<size_t>(node)];
  if (h.ch || h.gone) return;
  h.ch = std::move(ch);
  h.hostname = hostname.empty() ? h.place.name : hostname;
  h.identity = identity;
  if (++hellos_ == hosts_.size() && phase_ == Phase::kStarting) send_job();
}

void MultiHostJob::handle(size_t node, Msg type, const std::string& payload) {
  Reader in(payload);
  const std::string& host = hosts_[node].place.name;
  switch (type) {
    case Msg::kOutput: {
      int rank = in.i32();
      int stream = in.u8();
      std::string bytes = in.str();
      if (rank < 0 || rank >= static_cast<int>(ranks_.size()) || (stream != 1 && stream != 2)) {
        throw ProtocolError("output of an unknown rank");
      }
      Rank& r = ranks_[static_cast<size_t>(rank)];
      if (!r.open[stream - 1]) break;
      if (bytes.empty()) {
        emit(stream, r.framer[stream - 1].finish());
        r.open[stream - 1] = false;
      } else {
        emit(stream, r.framer[stream - 1].feed(bytes));
      }
      break;
    }
    case Msg::kExited: {
      int rank = in.i32();
      int status = in.i32();
      int exec_errno = in.i32();
      bool connected = in.u8() != 0;
      bool finalized = in.u8() != 0;
      if (rank < 0 || rank >= static_cast<int>(ranks_.size()) ||
          ranks_[static_cast<size_t>(rank)].node != static_cast<int>(node)) {
        throw ProtocolError("exit of an unknown rank");
      }
      on_exit(node, rank, status, exec_errno, connected, finalized);
      break;
    }
    case Msg::kAbort: {
      int rank = in.i32();
      int status = in.i32();
      std::string message = in.str();
      int code = (status > 0 && status < 256) ? status : 1;
      fail(code, "rank " + std::to_string(rank) + " (on " + host + ") called abort with status " +
                     std::to_string(status) + (message.empty() ? "" : ": " + message));
      break;
    }
    case Msg::kFence: {
      uint32_t seq = in.u32();
      Fence& f = fences_[seq];
      if (f.parts.empty()) f.parts.resize(hosts_.size());
      if (f.parts[node]) throw ProtocolError("a fence contributed twice");
      f.parts[node] = in.str();
      // Parts in host order: retired hosts have none, so this is node order.
      if (++f.have == serving_) {
        std::string all;
        for (const auto& p : f.parts) all += p.value_or("");
        Writer w;
        w.u32(seq).str(all);
        broadcast(Msg::kFenceDone, w);
        fences_.erase(seq);
      }
      break;
    }
    case Msg::kModexRequest: {
      uint32_t their_id = in.u32();
      int rank = in.i32();
      if (rank < 0 || rank >= static_cast<int>(ranks_.size())) {
        throw ProtocolError("modex request for an unknown rank");
      }
      Host& owner = hosts_[static_cast<size_t>(ranks_[static_cast<size_t>(rank)].node)];
      if (!owner.ch || owner.gone) break;  // the job is ending anyway
      uint32_t id = next_modex_++;
      modex_[id] = {node, their_id};
      Writer w;
      w.u32(id).i32(rank);
      owner.ch->send(Msg::kModexRequest, w);
      break;
    }
    case Msg::kModexReply: {
      auto it = modex_.find(in.u32());
      if (it == modex_.end()) throw ProtocolError("reply to an unknown modex request");
      auto [asker, their_id] = it->second;
      modex_.erase(it);
      int status = in.i32();
      std::string blob = in.str();
      Host& h = hosts_[asker];
      if (h.ch && !h.gone) {
        Writer w;
        w.u32(their_id).i32(status).str(blob);
        h.ch->send(Msg::kModexReply, w);
      }
      break;
    }
    case Msg::kSnapshot: on_snapshot(node, in); break;
    case Msg::kSpawnRequest: on_spawn_request(node, SpawnRequest::decode(payload)); break;
    case Msg::kSpawnStarted: on_spawn_started(node, in); break;
    case Msg::kGroupFence: on_group_fence(node, GroupFence::decode(payload)); break;
    case Msg::kNameRequest: on_name_request(node, NameRequest::decode(payload)); break;
    case Msg::kFailure: {
      int code = in.i32();
      std::string message = in.str();
      fail(code, "host " + host + ": " + message);
      break;
    }
    default: break;  // heartbeats
  }
}

void MultiHostJob::on_exit(size_t node, int rank, int status, int exec_errno, bool connected, bool finalized) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  if (r.exited) return;
  r.exited = true;
  --running_;
  if (phase_ != Phase::kRunning) return;  // we are ending it anyway
  const Namespace& ns = nspaces_[static_cast<size_t>(r.nspace)];
  const std::string who =
      (r.nspace == 0 ? "rank " + std::to_string(rank)
                     : "rank " + std::to_string(rank - ns.first_slot) + " of spawned job " + ns.name) +
      " (on " + hosts_[node].hostname + ")";
  if (exec_errno != 0) {
    std::string program = r.program, wdir = r.wdir;
    if (r.nspace == 0) {
      const App& app = spec_.apps[static_cast<size_t>(app_of(spec_.apps, rank))];
      program = app.argv[0];
      wdir = app.wdir;
    }
    fail(127, who + ": cannot execute '" + program + "'" + (wdir.empty() ? "" : " in " + wdir) + ": " +
                  std::strerror(exec_errno));
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    fail(128 + sig, who + " was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")");
  } else if (int code = WEXITSTATUS(status); code != 0) {
    fail(code, who + " exited with status " + std::to_string(code));
  } else if (connected && !finalized && running_ > 0) {
    fail(1, who + " exited without calling finalize while other ranks were still running");
  }
}

}  // namespace sonde::mpiexec
