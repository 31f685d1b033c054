// A job on several hosts: mpiexec starts a sonde-hostd on each (directly on
// its own host, through the launch agent elsewhere), which connects back
// over TCP (control.h). mpiexec then only coordinates: it sends the job,
// relays PMIx fences (every host's share gathered, concatenated, handed to
// all), writes the ranks' output, and applies the single-host rules to the
// ranks' exits (job.h): the first failure decides the exit status and ends
// the job everywhere. A daemon that disconnects, falls silent longer than
// the heartbeat limit, or whose agent exits, ends the job with status 1.
// Snapshots and hang reports (hang_monitor.h) work as on one host: mpiexec
// asks every daemon for its ranks' answers (multihost_snapshot.cc).
// MPI_Comm_spawn from any rank (multihost_spawn.cc): mpiexec places the
// children on the job's hosts and every daemon learns their namespace;
// the children become slots after the job's ranks, with the same output,
// exit and snapshot handling. mpiexec keeps the name service
// (name_table.h) for the ranks of every host.
#pragma once

#include <sys/signalfd.h>
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/mpiexec/apps.h"
#include "tools/mpiexec/control.h"
#include "tools/mpiexec/hang_monitor.h"
#include "tools/mpiexec/hosts.h"
#include "tools/mpiexec/name_table.h"
#include "tools/mpiexec/output.h"

namespace sonde::mpiexec {

struct MultiHostSpec {
  std::string program_name;          // for messages
  std::vector<App> apps;             // programs as given (each host looks them up), env, wdir
  std::vector<Placement> placement;  // hosts in node order, with their ranks
  std::vector<std::string> agent;    // launch agent command, split into words
  std::string hostd;                 // path of sonde-hostd (the same on every host)
  BindPolicy binding;                // each daemon binds its own ranks (placement.h)
  bool report_bindings = false;
  // MPI_Comm_spawn's default placement: the slots of each placement host
  // (as --host, a hostfile or -ppn gave them), filled as --map-by says.
  std::vector<int> slots;
  MapBy map_by = MapBy::kSlot;
  bool tag_output = false;
  double timeout_seconds = 0;
  double hang_report_seconds = 0;  // hang_monitor.h
  bool report_json = false;
  std::string job_id;
};

// The words of `hostd` and its arguments as one shell command string, each
// single-quoted, for agents that run a string through a remote shell (ssh).
std::string shell_command(const std::vector<std::string>& words);

class MultiHostJob {
 public:
  // `signal_fd` as for Job (SIGCHLD and the forwarded signals).
  MultiHostJob(MultiHostSpec spec, int signal_fd);
  // Kills whatever agents and daemons are still running.
  ~MultiHostJob();
  MultiHostJob(const MultiHostJob&) = delete;
  MultiHostJob& operator=(const MultiHostJob&) = delete;

  int run();

 private:
  using Clock = std::chrono::steady_clock;
  enum class Phase { kStarting, kRunning, kTerminating, kDone };

  struct Host {
    Placement place;
    bool local = false;
    pid_t agent = -1;  // the agent (or the local daemon); -1 once reaped
    int agent_status = 0;
    std::unique_ptr<Channel> ch;  // after its hello
    std::string hostname;         // as the daemon reported it
    std::string identity;         // machine_identity() as the daemon reported it
    bool gone = false;            // connection lost or closed
    // Its machine is an earlier host's under another name: that daemon
    // took its ranks, and it was told to go.
    bool retired = false;
  };
  // A rank of the job or, after them, of a spawned job (a slot).
  struct Rank {
    int node = 0;
    int nspace = 0;  // index in nspaces_
    // Spawned ranks: what they run, for messages.
    std::string program, wdir;
    bool exited = false;
    bool open[2] = {true, true};  // stdout, stderr still to end
    LineFramer framer[2];
  };
  struct Fence {
    std::vector<std::optional<std::string>> parts;  // by node
    size_t have = 0;
  };

  void launch(size_t node, const std::string& endpoints);
  void loop();
  void accept_hellos();
  void on_hello(std::unique_ptr<Channel> ch, const std::string& payload);
  void send_job();
  // Daemons reporting one machine: the first gets the others' ranks.
  void merge_same_machines();
  void handle(size_t node, Msg type, const std::string& payload);
  // multihost_spawn.cc: a daemon's kSpawnRequest, kSpawnStarted and
  // kGroupFence.
  void on_spawn_request(size_t node, const SpawnRequest& request);
  void on_spawn_started(size_t node, Reader& in);
  void on_group_fence(size_t node, const GroupFence& fence);
  // A daemon's kNameRequest, served from names_; the reply goes to that
  // daemon (now, or when a waiting lookup's names appear).
  void on_name_request(size_t node, const NameRequest& request);
  // The hosts (indices) a spawn's "host" info names ("a,b:2"), in its
  // order, and in *slots (by host) the slot counts it gives; false and
  // what is wrong in *why if a name is not among the job's hosts or the
  // list is malformed.
  bool named_hosts(const std::string& list, std::vector<int>* hosts, std::vector<int>* slots, std::string* why) const;
  void on_exit(size_t node, int rank, int status, int exec_errno, bool connected, bool finalized);
  // The host's connection is gone: its ranks with it (a failure while the
  // job runs).
  void host_lost(size_t node, const std::string& why);
  // Serves a daemon's connection after poll() set `revents` on it: writes
  // what is queued, reads and handles its messages; a bad message or a
  // closed connection loses the host.
  void serve_host(size_t node, short revents);
  // Stops waiting for the host's ranks; returns how many were still running.
  int forget_ranks(size_t node);
  void reap_agents();
  // SIGUSR1 from `mpiexec --snapshot` also answers its sender
  // (snapshot_request.h).
  void handle_signal(const signalfd_siginfo& si);
  void broadcast(Msg type, const Writer& w = Writer());
  void begin_termination();
  void emit(int fd, const std::string& bytes);
  // Output held in the framers: when the first held line is due, writing
  // those due, and (once the ranks are gone) writing what is left.
  std::optional<Clock::time_point> output_due() const;
  void flush_due_output(Clock::time_point now);
  void finish_output();
  bool fail(int code, const std::string& message);
  bool output_open() const;

  MultiHostSpec spec_;
  int signal_fd_;
  int listen_fd_ = -1;
  std::string token_;
  std::vector<Host> hosts_;
  std::vector<Rank> ranks_;
  std::vector<std::pair<std::unique_ptr<Channel>, Clock::time_point>> unnamed_;
  std::map<uint32_t, Fence> fences_;
  // Direct modex requests in flight: our id -> (asking node, its id).
  uint32_t next_modex_ = 0;
  std::map<uint32_t, std::pair<size_t, uint32_t>> modex_;
  // Every namespace of the job: [0] its own, then one per spawn.
  struct Namespace {
    std::string name;
    int first_slot = 0, size = 0;
  };
  std::vector<Namespace> nspaces_;
  std::vector<int> daemon_node_;  // by host: its node id (kJob), -1 when retired
  int spawned_slots_ = 0;
  // Spawns whose daemons have not all answered kSpawnStarted, by our id.
  struct PendingSpawn {
    size_t asker = 0;      // host whose rank asked
    uint32_t request = 0;  // its daemon's id
    std::string nspace;
    std::vector<bool> waiting;  // by host
    size_t left = 0;
    bool failed = false;
  };
  uint32_t next_spawn_ = 0;
  std::map<uint32_t, PendingSpawn> spawns_;
  // Group fences gathering, by their participants (one list per set, in
  // arrival order: a host's next contribution goes to the first one it has
  // not contributed to).
  struct GroupWait {
    std::vector<bool> involved;                     // by host
    std::vector<std::optional<std::string>> parts;  // by host
    std::vector<uint32_t> ids;                      // by host: its daemon's id
    size_t need = 0, have = 0;
  };
  std::map<std::string, std::deque<GroupWait>> group_fences_;
  // The launch's name service, for the ranks of every host.
  NameTable names_;
  int running_ = 0;  // ranks not yet reported gone
  size_t hellos_ = 0;
  size_t serving_ = 0;  // hosts not retired: one per node, each has a share of every fence
  Phase phase_ = Phase::kStarting;
  Clock::time_point start_;
  std::optional<Clock::time_point> give_up_at_;
  int interrupts_ = 0;
  bool stdout_ok_ = true, stderr_ok_ = true;
  // Shared by the framers of each descriptor (output.h: LineFramer).
  std::shared_ptr<bool> stdout_open_line_ = std::make_shared<bool>(false);
  std::shared_ptr<bool> stderr_open_line_ = std::make_shared<bool>(false);
  // Our stdin goes to rank 0's daemon when rank 0 runs on another host;
  // -1 once it has ended (or when it stays here).
  int stdin_fd_ = -1;
  void relay_stdin();
  // Snapshots: request `seq` goes to every daemon; their answers are
  // awaited (other messages handled meanwhile) until all have come or
  // kSnapshotBound + kRelayGrace has passed. One answer per rank.
  std::vector<SnapshotAnswer> collect_snapshot_across_hosts(uint64_t seq);
  void on_snapshot(size_t node, Reader& in);
  std::unique_ptr<HangMonitor> monitor_;
  struct SnapshotWait {
    uint32_t seq = 0;
    std::vector<bool> asked, answered;      // by node
    std::map<int, SnapshotAnswer> answers;  // by rank
  };
  std::optional<SnapshotWait> snapshot_;
  bool failed_ = false;
  int exit_code_ = 0;
  double heartbeat_limit_;
};

// Where sonde-hostd is: $SONDE_HOSTD, else next to this executable.
std::string default_hostd_path();

}  // namespace sonde::mpiexec
