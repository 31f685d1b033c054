// Starting one rank: environment, CPU binding, fork/exec with its stdio on
// pipes. Shared by mpiexec (ranks on its own host) and sonde-hostd (ranks on
// the host it serves), so both treat a rank's process identically.
#pragma once

#include <sched.h>
#include <csignal>
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace sonde::mpiexec {

// Our end of a started rank. Descriptors are non-blocking and close-on-exec.
struct StartedRank {
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  // Carries execve's errno if the child could not exec; EOF once it did.
  int exec_fd = -1;
};

struct RankLaunch {
  const std::string* executable = nullptr;
  const std::vector<std::string>* argv = nullptr;
  const std::vector<std::string>* env = nullptr;
  const std::string* wdir = nullptr;    // directory to start in; null or empty: ours
  int stdin_fd = -1;                    // becomes the rank's fd 0
  const cpu_set_t* cpu_mask = nullptr;  // null: no binding
  // Process group to join; 0 makes the rank the leader of a new one.
  pid_t pgid = 0;
};

// Forks and execs one rank; the child dies with us (PR_SET_PDEATHSIG) and
// starts with default signal dispositions and an empty mask. Throws
// std::runtime_error if pipes or fork fail; an exec failure is reported
// later through exec_fd (see read_exec_errno).
StartedRank start_rank(const RankLaunch& l);

// After the child is reaped or exec_fd is readable: the child's execve
// errno, 0 if it exec'ed, -1 if it has not got that far yet (exec_fd kept).
// Closes exec_fd once the answer is known.
int read_exec_errno(int& exec_fd);

// The environment a rank inherits from us: ours minus what a launcher sets
// (PMIX_*, PMI_*, OMPI_COMM_WORLD_*, SONDE_JOBID, SONDE_RANK...), which
// would point the rank at another job's server. PMIX_MCA_* stays.
std::vector<std::string> inherited_environment();
bool inherited_entry_is_ours(const char* entry);

// Sets NAME=value in `env`, replacing an entry of the same name.
void set_entry(std::vector<std::string>& env, const std::string& entry);

// The NAME=value entries (besides the PMIx server's own) that tell a rank
// who it is: SONDE_*, and the OMPI_/PMI_ names some programs read.
std::vector<std::string> rank_identity_env(const std::string& job_id, int rank, int size, int local_rank,
                                           int local_size);

// Checks that `dir` is a directory this process could start a rank in
// (relative to our working directory) and returns its absolute path;
// throws std::runtime_error saying why not.
std::string check_directory(const std::string& dir);

// Finds `program` like execvp would (PATH search when it has no '/', with
// `path` as PATH, or $PATH if null). Returns the path, or throws
// std::runtime_error saying why it cannot run.
std::string resolve_executable(const std::string& program, const char* path = nullptr);

// The same for a rank that starts in `wdir` (absolute, or empty for ours):
// a relative path with a '/' ("./a.out") is taken from there, as the rank
// would see it after changing directory.
std::string resolve_executable_in(const std::string& program, const std::string& wdir, const char* path = nullptr);

// Readies one program block for starting: makes its working directory
// `wdir` absolute (check_directory; empty stays ours) and finds its program
// as a rank starting there would (resolve_executable_in). Returns 0 with the
// path in *executable, or the status mpiexec ends with (1: no such
// directory, 127: no program to run) and the reason in *error.
int prepare_program(std::string& wdir, const std::string& program, const char* path, std::string* executable,
                    std::string* error);

// Sends `sig` to the ranks (pids still unreaped): to their process group
// `pgid`, which also reaches what they started, while one of them is in it
// (so the id cannot have been reused), and directly to any that left it.
void signal_ranks(pid_t pgid, const std::vector<pid_t>& running, int sig);

std::string signal_name(int sig);
void set_nonblocking(int fd);
void close_fd(int& fd);

// Records a started rank in `r` (pid, running, out_fd, err_fd, exec_fd, as
// kill_and_reap's Rank): the first rank's pid becomes the ranks' process
// group `pgid`, and `running` counts one more.
template <class Rank>
void adopt_started(Rank& r, const StartedRank& s, pid_t& pgid, int& running) {
  if (pgid == 0) pgid = s.pid;
  r.pid = s.pid;
  r.running = true;
  r.out_fd = s.out_fd;
  r.err_fd = s.err_fd;
  r.exec_fd = s.exec_fd;
  ++running;
}

// Teardown shared by mpiexec and sonde-hostd: SIGKILL every rank still
// running (see signal_ranks), reap them for at most `grace` (a rank stuck in
// the kernel is given up on rather than waited for forever), and close our
// ends of their pipes. `Rank` has pid, running, out_fd, err_fd, exec_fd;
// `running` counts the unreaped ones and is kept in step.
template <class Rank>
void kill_and_reap(pid_t pgid, std::vector<std::unique_ptr<Rank>>& ranks, int& running,
                   std::chrono::steady_clock::duration grace) {
  std::vector<pid_t> alive;
  for (auto& r : ranks) {
    if (r->running) alive.push_back(r->pid);
  }
  if (!alive.empty()) signal_ranks(pgid, alive, SIGKILL);
  auto give_up = std::chrono::steady_clock::now() + grace;
  while (running > 0 && std::chrono::steady_clock::now() < give_up) {
    for (auto& r : ranks) {
      if (r->running && waitpid(r->pid, nullptr, WNOHANG) == r->pid) {
        r->running = false;
        --running;
      }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& r : ranks) {
    close_fd(r->out_fd);
    close_fd(r->err_fd);
    close_fd(r->exec_fd);
  }
}

}  // namespace sonde::mpiexec
