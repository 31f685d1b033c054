// The PMIx server that mpiexec hosts for the ranks it starts on this host.
//
// libpmix runs the server on its own progress thread and calls up into us
// from there. Upcalls only record what happened (through ClientEvents) and
// queue the library's reply; the launcher's loop sends the replies when
// wake_fd() turns readable. That keeps the library's thread from ever
// waiting on ours, and ours the only one that touches the job's state
// beyond the few flags ClientEvents sets.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tools/mpiexec/apps.h"
#include "tools/mpiexec/name_table.h"

namespace sonde::mpiexec {

// Told on libpmix's thread; implementations must only record and return.
// Ranks are *slots*: a rank of the launched job is its own slot; ranks of
// jobs spawned later (PmixHost::register_spawned) follow after them.
class ClientEvents {
 public:
  virtual void connected(int rank) = 0;
  virtual void finalized(int rank) = 0;
  virtual void aborted(int rank, int status, const std::string& message) = 0;

  // Fences that span hosts (see PmixHost::relay_fences). Called on the
  // launcher's thread (from run_pending), never on libpmix's: `data` is this
  // host's part; `done` must be called exactly once, also on the launcher's
  // thread, with every host's parts concatenated in host order (libpmix
  // reads them as a sequence of per-server blobs), or with ok = false.
  using FenceDone = std::function<void(bool ok, const std::string& all)>;
  virtual void fence(std::string data, FenceDone done) { done(true, data); }

  // A client asked for data of `rank`, on another host, that no collecting
  // fence brought here (PMIx "direct modex"). Also on the launcher's thread;
  // `done` gets a PMIx status and the blob that rank's server produced
  // (PmixHost::serve_modex on that host). Default: not supported.
  using ModexDone = std::function<void(int status, const std::string& blob)>;
  virtual void direct_modex(int rank, ModexDone done);

  // Any other fence that spans hosts (PmixHost::relay_fences): over
  // `procs`, "NSPACE RANK" or "NSPACE *" each, sorted (control.h,
  // GroupFence). As `fence`, on the launcher's thread, `done` exactly once
  // with every involved host's parts concatenated in host order. Default:
  // refused.
  virtual void group_fence(std::vector<std::string> procs, std::string data, FenceDone done);

  // PMIx_Spawn from a client (MPI_Comm_spawn): start `apps` as a new job,
  // a new namespace. On the launcher's thread; `done` gets a PMIx status and
  // the new namespace (empty on failure), exactly once. Default: refused.
  using SpawnDone = std::function<void(int status, const std::string& nspace)>;
  virtual void spawn(const std::vector<SpawnApp>& apps, SpawnDone done);

  // PMIx_Publish, PMIx_Lookup, PMIx_Unpublish of a client (name_table.h).
  // On the launcher's thread; `done` exactly once, on it too. Default: a
  // table of this process (mpiexec's own, on one host).
  virtual void names(const NameRequest& request, NameTable::Done done);

 protected:
  ~ClientEvents() = default;
};

struct NodeLayout {
  std::string hostname;    // as the host itself reports it (gethostname)
  std::vector<int> ranks;  // global ranks on it, ascending; never empty
};

struct JobLayout {
  std::string nspace;  // PMIx namespace of the job
  std::string job_id;  // SONDE_JOBID, also published as PMIX_JOBID
  std::string tmpdir;  // session directory the ranks may use
  int size = 0;
  // Every host of the job, indexed by node id; every rank on exactly one.
  std::vector<NodeLayout> nodes;
  // The host this server runs on; -1 (spawned jobs only): none of the
  // job's ranks run here, but its clients' peers must know it.
  int this_node = 0;
  // PMIX_NODEID of each entry of `nodes`; empty: its index.
  std::vector<uint32_t> node_ids;
  // MPMD: (first rank, size) of each application, contiguous and in rank
  // order; empty: one application of every rank. Each rank's PMIX_APPNUM
  // is its application's index (MPI_APPNUM).
  std::vector<std::pair<int, int>> apps;
  // MPI_UNIVERSE_SIZE (PMIX_UNIV_SIZE): processes the launcher would start
  // without oversubscribing; 0 or less than size: size.
  int universe = 0;
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

  // Describes the job to libpmix: sizes, local peers, node and per-rank data
  // of every host, so clients resolve PMIX_JOB_SIZE, PMIX_NODEID,
  // PMIX_HOSTNAME, PMIX_LOCAL_RANK... of any rank locally.
  void register_job(const JobLayout& job);
  // Registers `rank` as an expected client and returns the NAME=value entries
  // its environment needs to find this server. Call before forking it.
  std::vector<std::string> client_env(int rank);
  // A job spawned by a client: registered under `job.nspace`, its rank r
  // being slot `first_slot` + r. Call on the launcher's thread, before
  // client_env_in for its ranks.
  void register_spawned(const JobLayout& job, int first_slot);
  // The namespace and rank of `slot`; false for a slot we do not know.
  bool proc_of(int slot, std::string* nspace, int* rank);
  std::vector<std::string> client_env_in(const std::string& nspace, int rank);
  // The slot of (nspace, rank), or -1 for a process we do not serve.
  int slot_of(const char* nspace, uint32_t rank);

  // From now on, fences over the whole job go to ClientEvents::fence instead
  // of completing here (a job on several hosts). Fences among ranks of this
  // host alone still complete here; other partial fences are refused.
  void relay_fences() { relay_fences_ = true; }
  bool relaying_fences() const { return relay_fences_; }
  // The launched job's namespace (register_job).
  const std::string& job_nspace() const { return nspace_; }
  // Whether `slot` runs on this host (any thread).
  bool is_local(int slot);

  // Another host asks for the data our `slot` committed: libpmix
  // answers once the rank has committed (it waits for that). `reply` runs on
  // the launcher's thread, through run_pending.
  void serve_modex(int slot, ClientEvents::ModexDone reply);

  // Readable while replies for libpmix are queued.
  int wake_fd() const { return wake_fd_; }
  void run_pending();

  // For the C upcalls; not for general use.
  void post(std::function<void()> reply);
  ClientEvents* events() const { return events_; }

 private:
  void register_nspace(const JobLayout& job, bool spawned);

  ClientEvents* events_;
  std::string nspace_;
  int wake_fd_ = -1;
  std::mutex mu_;
  std::vector<std::function<void()>> pending_;
  bool job_registered_ = false;
  int job_size_ = 0;
  bool relay_fences_ = false;
  // Under mu_ (libpmix's thread reads them): by slot, on this host;
  // spawned jobs' namespace, first slot and size.
  std::vector<bool> local_;
  struct Spawned {
    std::string nspace;
    int first_slot = 0, size = 0;
  };
  std::vector<Spawned> spawned_;
};

}  // namespace sonde::mpiexec
