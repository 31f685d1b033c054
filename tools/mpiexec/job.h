// One job: N ranks of one program on this host, from fork to the last reap.
//
// A single thread runs everything with poll(): child output, signals (through
// a signalfd, so nothing happens in signal handlers), libpmix's replies and
// the deadlines. The first failure (a rank's non-zero exit or death, an
// abort, an exit without finalize while others run, the timeout) decides the
// exit status; then every rank gets SIGTERM, SIGKILL one second later, and
// after one more second we stop waiting.
#pragma once

#include <sys/signalfd.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tools/mpiexec/apps.h"
#include "tools/mpiexec/hang_monitor.h"
#include "tools/mpiexec/output.h"
#include "tools/mpiexec/placement.h"
#include "tools/mpiexec/pmix_host.h"
#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {

struct JobSpec {
  std::string program_name;  // "mpiexec" or "mpirun", for messages
  // The job's applications (one unless MPMD), their env and wdir final
  // (wdir absolute or empty), and the resolved path of each one's program.
  std::vector<App> apps;
  std::vector<std::string> executables;
  int ranks = 1;
  BindPolicy binding;
  bool report_bindings = false;
  bool tag_output = false;
  double timeout_seconds = 0;
  double hang_report_seconds = 0;  // hang_monitor.h
  bool report_json = false;
  std::string job_id;
  std::string tmpdir;
};

class Job final : public ClientEvents {
 public:
  // `signal_fd` is a signalfd for SIGCHLD and the forwarded signals, which the
  // caller has blocked in every thread.
  Job(JobSpec spec, int signal_fd);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Starts the ranks and returns the job's exit status once they are gone.
  int run();

  // ClientEvents, on libpmix's thread.
  void connected(int rank) override;
  void finalized(int rank) override;
  void aborted(int rank, int status, const std::string& message) override;
  // PMIx_Spawn (job_spawn.cc): the children join this job's slots, output
  // and fate; a program that cannot be found or a wrong host or directory
  // starts nothing and answers an error.
  void spawn(const std::vector<SpawnApp>& apps, SpawnDone done) override;

 private:
  using Clock = std::chrono::steady_clock;
  enum class Phase { kRunning, kTerminating, kKilling };

  struct Rank {
    pid_t pid = -1;
    bool running = false;
    int out_fd = -1, err_fd = -1, exec_fd = -1;  // our ends, non-blocking
    int exec_errno = 0;                          // set if execve failed in the child
    LineFramer out, err;
    std::atomic<bool> connected{false}, finalized{false};
    // Spawned ranks (PMIx_Spawn): what they run, for messages; the
    // directory of their job's snapshot answers and their rank there.
    std::string executable, wdir;
    std::string snapshot_dir;
    int snapshot_rank = -1;
  };
  // Slots are never reallocated: libpmix's thread reads them by index.
  static constexpr size_t kMaxSlots = 4096;

  void spawn(int rank, const std::vector<std::string>& env, const void* cpu_mask);
  void start_slot(int slot, const std::string& executable, const std::vector<std::string>& argv,
                  const std::string& wdir, const std::vector<std::string>& env, const void* cpu_mask);
  int spawned_jobs_ = 0;
  void loop();
  void reap();
  void on_rank_exit(int rank, int wait_status);
  // SIGUSR1 from `mpiexec --snapshot` also answers its sender
  // (snapshot_request.h).
  void handle_signal(const signalfd_siginfo& si);
  void forward(int sig);
  void begin_termination();
  void read_stream(int rank, int which);
  void drain_exec_status(Rank& r);
  void emit(int fd, const std::string& bytes);
  // Output held in the framers: when the first held line is due, writing
  // those due, and (once the ranks are gone) writing what is left.
  std::optional<Clock::time_point> output_due() const;
  void flush_due_output(Clock::time_point now);
  void finish_output();

  // Records the first failure (any thread); later ones are ignored.
  bool fail(int exit_code, const std::string& message);
  bool failed() const;

  JobSpec spec_;
  int signal_fd_;
  std::unique_ptr<PmixHost> host_;
  std::unique_ptr<HangMonitor> monitor_;  // snapshots (SIGUSR1, --timeout, --hang-report)
  std::string snapshot_dir_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  int running_ = 0;
  pid_t pgid_ = 0;
  Phase phase_ = Phase::kRunning;
  Clock::time_point start_, kill_at_, give_up_at_;
  int interrupts_ = 0;
  bool stdout_ok_ = true, stderr_ok_ = true;
  // Shared by the framers of each descriptor (output.h: LineFramer).
  std::shared_ptr<bool> stdout_open_line_ = std::make_shared<bool>(false);
  std::shared_ptr<bool> stderr_open_line_ = std::make_shared<bool>(false);

  mutable std::mutex fail_mu_;
  bool failed_ = false;
  int exit_code_ = 0;
};

}  // namespace sonde::mpiexec
