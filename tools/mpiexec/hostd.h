// sonde-hostd: serves one host of a job that mpiexec runs on several hosts.
//
// Started by mpiexec (directly on its own host, through the launch agent on
// the others), it connects back over TCP (tools/mpiexec/control.h), says
// which host it is, receives the job, hosts a PMIx server for the ranks of
// its host, forks them with their binding and environment, and from then on
// only reports: their output, their exits (with whether they connected to
// and finalized with PMIx), aborts, its share of every PMIx fence, which
// mpiexec gathers from all hosts and hands back, and its ranks' snapshots
// when mpiexec asks (snapshot.h: it takes them as mpiexec does on one
// host, blocking its loop for at most the bound mpiexec gives). Its ranks'
// PMIx_Spawn and fences with other jobs go to mpiexec too, and it starts
// the children mpiexec places on its host (hostd_spawn.cc). Decisions (which failure
// ends the job, the exit status) are mpiexec's; the daemon obeys kSignal,
// kTerminate and kShutdown.
//
// Losing mpiexec (the connection closes, or nothing arrives within the
// heartbeat limit) or a SIGTERM/SIGHUP/SIGINT of its own ends its ranks
// (SIGTERM, SIGKILL a second later) and the daemon. Its ranks die with it
// if it is killed outright (PR_SET_PDEATHSIG). It removes the job's shared
// memory and its private directory on this host before it exits.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "tools/mpiexec/control.h"
#include "tools/mpiexec/pmix_host.h"

namespace sonde::mpiexec {

struct HostdOptions {
  std::vector<std::string> connect;  // "a.b.c.d:port" endpoints of mpiexec
  int node = -1;                     // this host's node id
  std::string token;                 // proves to mpiexec that we are its daemon
  double heartbeat_limit = 30;       // seconds of silence that mean mpiexec is gone
  bool stdin_to_rank0 = false;       // give our stdin to rank 0 if it is ours
  bool stdin_relay = false;          // rank 0's stdin comes as kStdin messages
};

// Reads the daemon's command line; throws std::runtime_error.
HostdOptions parse_hostd_options(const std::vector<std::string>& args);

class HostDaemon final : public ClientEvents {
 public:
  // `signal_fd`: a signalfd for SIGCHLD, SIGTERM, SIGINT, SIGHUP, blocked
  // in every thread.
  HostDaemon(HostdOptions options, int signal_fd);
  ~HostDaemon();
  HostDaemon(const HostDaemon&) = delete;
  HostDaemon& operator=(const HostDaemon&) = delete;

  // Runs the host's part of the job; returns the daemon's exit status (0
  // when mpiexec ended the job, 1 when it was lost).
  int run();
  // What the destructor removes: the job's id (for its shared memory) and
  // the PMIx server's private directory; empty until known.
  const std::string& job_id() const { return job_id_; }
  const std::string& tmpdir() const { return tmpdir_; }

  // ClientEvents, on libpmix's thread: record only.
  void connected(int rank) override;
  void finalized(int rank) override;
  void aborted(int rank, int status, const std::string& message) override;
  // On our thread.
  void fence(std::string data, FenceDone done) override;
  void direct_modex(int rank, ModexDone done) override;
  // MPI_Comm_spawn and the fences of connections (hostd_spawn.cc): through
  // mpiexec, which places the children on the job's hosts.
  void spawn(const std::vector<SpawnApp>& apps, SpawnDone done) override;
  void group_fence(std::vector<std::string> procs, std::string data, FenceDone done) override;
  // The name service: mpiexec keeps the launch's names for every host.
  void names(const NameRequest& request, NameTable::Done done) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Rank {
    int rank = -1;  // its slot: the job's rank, or after them a spawned job's
    // A spawned rank answers snapshots in its job's directory, under its
    // rank there (snapshot.h); "" and -1 for the job's ranks.
    std::string snapshot_dir;
    int snapshot_rank = -1;
    pid_t pid = -1;
    bool running = false;
    int out_fd = -1, err_fd = -1, exec_fd = -1;
    int exec_errno = 0;
    std::atomic<bool> connected{false}, finalized{false};
  };

  bool wait_for_job(JobMessage* job);
  void start(const JobMessage& job);
  void loop();
  void handle(Msg type, const std::string& payload);
  void reap();
  void read_stream(Rank& r, int stream);
  void terminate_ranks();
  void signal_all(int sig);
  void lost(const std::string& why);
  void report_failure(int code, const std::string& message);
  // Tells mpiexec that the ranks never started (no pid) are gone.
  void report_unstarted();
  // Forks `r` (its pid, pipes and the count of running ranks).
  void launch(Rank& r, const std::string& executable, const std::vector<std::string>& argv, const std::string& wdir,
              const std::vector<std::string>& env, int stdin_fd, const cpu_set_t* cpu_mask);
  // kSpawnJob: registers the children's namespace and starts those placed
  // here; answers kSpawnStarted.
  void start_children(const SpawnJobMessage& m);
  void write_stdin();
  // Takes request `seq` of this host's ranks and sends the answers.
  void answer_snapshot(uint32_t seq, std::chrono::milliseconds bound, int sig);
  Rank* find(int rank);

  HostdOptions opt_;
  int signal_fd_;
  std::unique_ptr<Channel> ch_;
  std::string hostname_, job_id_, tmpdir_;
  std::string snapshot_dir_;  // the ranks' SONDE_SNAPSHOT_DIR
  std::unique_ptr<PmixHost> pmix_;
  std::vector<std::unique_ptr<Rank>> ranks_;  // this host's, in rank order
  int running_ = 0;
  pid_t pgid_ = 0;
  bool leaving_ = false;  // shut down, lost or signalled: exit once ranks are gone
  int exit_code_ = 0;
  bool told_to_go_ = false;  // kShutdown before any job
  std::optional<Clock::time_point> kill_at_, give_up_at_;
  uint32_t next_fence_ = 0;
  std::map<uint32_t, FenceDone> fences_;
  // Rank 0's stdin relayed from mpiexec: our end of its pipe, what waits to
  // go in, and whether mpiexec's stdin has ended.
  int stdin_fd_ = -1;
  std::string stdin_buf_;
  bool stdin_eof_ = false;
  uint32_t next_modex_ = 0;
  std::map<uint32_t, ModexDone> modex_;
  // The first job's base environment (children get it too) and mpiexec's
  // name, for messages.
  std::vector<std::string> base_env_;
  std::string launcher_;
  // Spawns and group fences in flight, by our id.
  uint32_t next_spawn_ = 0, next_group_fence_ = 0;
  std::map<uint32_t, SpawnDone> spawns_;
  std::map<uint32_t, FenceDone> group_fences_;
  uint32_t next_name_ = 0;
  std::map<uint32_t, NameTable::Done> names_;
};

}  // namespace sonde::mpiexec
