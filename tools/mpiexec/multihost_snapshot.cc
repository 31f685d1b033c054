// Snapshots of a job on several hosts (multihost.h): mpiexec asks every
// daemon, each daemon asks its own ranks (snapshot.h) and sends their
// answers back; what the hang monitor gets is one answer per rank of the
// job, as on one host, with the ranks of a daemon that did not answer in
// time marked as such.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tools/mpiexec/multihost.h"

namespace sonde::mpiexec {

std::vector<SnapshotAnswer> MultiHostJob::collect_snapshot_across_hosts(uint64_t seq) {
  SnapshotWait wait;
  wait.seq = static_cast<uint32_t>(seq);
  wait.asked.assign(hosts_.size(), false);
  wait.answered.assign(hosts_.size(), false);
  Writer request;
  request.u32(wait.seq).u32(static_cast<uint32_t>(kSnapshotBound.count())).i32(snapshot_signal());
  for (size_t n = 0; n < hosts_.size(); ++n) {
    Host& h = hosts_[n];
    if (!h.ch || h.gone || h.retired) continue;
    h.ch->send(Msg::kSnapshotRequest, request);
    wait.asked[n] = true;
  }
  snapshot_ = std::move(wait);
  // The daemons' answers, and whatever else they send meanwhile (handled as
  // the main loop would: output, exits, fences).
  const auto give_up = Clock::now() + kSnapshotBound + kRelayGrace;
  std::vector<pollfd> fds;
  std::vector<size_t> owners;
  for (;;) {
    bool waiting = false;
    for (size_t n = 0; n < hosts_.size(); ++n)
      waiting = waiting || (snapshot_->asked[n] && !snapshot_->answered[n] && !hosts_[n].gone);
    const auto now = Clock::now();
    if (!waiting || now >= give_up) break;
    fds.clear();
    owners.clear();
    for (size_t n = 0; n < hosts_.size(); ++n) {
      const Host& h = hosts_[n];
      if (!h.ch || h.gone) continue;
      fds.push_back({h.ch->fd(), static_cast<short>(POLLIN | (h.ch->wants_write() ? POLLOUT : 0)), 0});
      owners.push_back(n);
    }
    const auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count();
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 0))) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents != 0) serve_host(owners[k], fds[k].revents);
    }
  }
  SnapshotWait done = std::move(*snapshot_);
  snapshot_.reset();
  std::vector<SnapshotAnswer> answers(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    SnapshotAnswer& a = answers[r];
    const size_t node = static_cast<size_t>(ranks_[r].node);
    const Host& h = hosts_[node];
    if (ranks_[r].exited) {
      a.running = false;
    } else if (done.answered[node]) {
      auto it = done.answers.find(static_cast<int>(r));
      // A rank its daemon did not list has not been started there yet.
      if (it != done.answers.end()) {
        a = std::move(it->second);
      } else {
        a.running = true;
      }
    } else {
      a.running = true;
      a.host_silent = true;
    }
    a.rank = static_cast<int>(r);
    a.host = h.hostname.empty() ? h.place.name : h.hostname;
  }
  return answers;
}

void MultiHostJob::on_snapshot(size_t node, Reader& in) {
  const uint32_t seq = in.u32();
  const uint32_t count = in.u32();
  // A late answer to a request given up on is dropped.
  const bool current = snapshot_ && snapshot_->seq == seq && snapshot_->asked[node] && !snapshot_->answered[node];
  for (uint32_t i = 0; i < count; ++i) {
    SnapshotAnswer a;
    a.rank = in.i32();
    a.running = in.u8() != 0;
    a.ready = in.u8() != 0;
    a.answered = in.u8() != 0;
    a.text = in.str();
    if (a.rank < 0 || a.rank >= static_cast<int>(ranks_.size()) ||
        ranks_[static_cast<size_t>(a.rank)].node != static_cast<int>(node)) {
      throw ProtocolError("snapshot of a rank not on that host");
    }
    if (current) snapshot_->answers[a.rank] = std::move(a);
  }
  if (current) snapshot_->answered[node] = true;
}

}  // namespace sonde::mpiexec
