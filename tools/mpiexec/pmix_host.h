// The PMIx server that mpiexec hosts for the ranks it starts on this host.
//
// libpmix runs the server on its own progress thread and calls up into us
// from there. Upcalls only record what happened (through ClientEvents) and
// queue the library's reply; the launcher's loop sends the replies when
// wake_fd() turns readable. That keeps the library's thread from ever
// waiting on ours, and ours the only one that touches the job's state
// beyond the few flags ClientEvents sets.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace sonde::mpiexec {

// Told on libpmix's thread; implementations must only record and return.
class ClientEvents {
 public:
  virtual void connected(int rank) = 0;
  virtual void finalized(int rank) = 0;
  virtual void aborted(int rank, int status, const std::string& message) = 0;

 protected:
  ~ClientEvents() = default;
};

struct JobLayout {
  std::string nspace;    // PMIx namespace of the job
  std::string job_id;    // SONDE_JOBID, also published as PMIX_JOBID
  std::string hostname;  // this host; every rank runs here
  std::string tmpdir;    // session directory the ranks may use
  int size = 0;
};

class PmixHost {
 public:
  // Starts libpmix's server with all its files under `tmpdir` (which the
  // caller removes afterwards). Only one may exist per process, as libpmix
  // keeps the server in globals. Throws std::runtime_error on failure.
  PmixHost(const std::string& tmpdir, ClientEvents* events);
  // Deregisters the job and stops the server; bounded.
  ~PmixHost();
  PmixHost(const PmixHost&) = delete;
  PmixHost& operator=(const PmixHost&) = delete;

  // Describes the job to libpmix: sizes, local peers, node and per-rank data,
  // so clients resolve PMIX_JOB_SIZE, PMIX_NODEID, PMIX_LOCAL_RANK... locally.
  void register_job(const JobLayout& job);
  // Registers `rank` as an expected client and returns the NAME=value entries
  // its environment needs to find this server. Call before forking it.
  std::vector<std::string> client_env(int rank);

  // Readable while replies for libpmix are queued.
  int wake_fd() const { return wake_fd_; }
  void run_pending();

  // For the C upcalls; not for general use.
  void post(std::function<void()> reply);
  ClientEvents* events() const { return events_; }

 private:
  ClientEvents* events_;
  std::string nspace_;
  int wake_fd_ = -1;
  std::mutex mu_;
  std::vector<std::function<void()>> pending_;
  bool job_registered_ = false;
};

}  // namespace sonde::mpiexec
