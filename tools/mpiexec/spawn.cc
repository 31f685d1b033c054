#include "tools/mpiexec/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "pmi/wireup_job_id.h"

extern char** environ;

namespace sonde::mpiexec {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

struct ChildSetup {
  const char* path;
  const char* wdir;  // null: stay
  char* const* argv;
  char* const* envp;
  pid_t parent;
  pid_t pgid;
  int stdin_fd, out_fd, err_fd, exec_fd;
  const cpu_set_t* mask;
};

// Runs in the forked child. The parent has other threads (libpmix's), so
// only async-signal-safe calls until execve: no allocation, no locks.
[[noreturn]] void exec_child(const ChildSetup& c) {
  setpgid(0, c.pgid);
  // If the launcher dies without cleaning up, its ranks go with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != c.parent) _exit(127);
  dup2(c.stdin_fd, 0);
  dup2(c.out_fd, 1);
  dup2(c.err_fd, 2);
  // Ignored signals (SIGPIPE) and the blocked mask survive execve; the rank
  // must start with neither.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (c.mask != nullptr) sched_setaffinity(0, sizeof(cpu_set_t), c.mask);
  // Descriptors we inherited from our own caller do not belong to the ranks.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  // A directory that cannot be entered is reported like a failed execve
  // (the launchers check it first, so this is a race with its removal).
  if (c.wdir == nullptr || chdir(c.wdir) == 0) execve(c.path, c.argv, c.envp);
  int e = errno;
  (void)!write(c.exec_fd, &e, sizeof e);
  _exit(127);
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

bool inherited_entry_is_ours(const char* e) {
  static const char* const kPrefixes[] = {
      "PMIX_",       "PMI_",        "OMPI_COMM_WORLD_",  "OMPI_UNIVERSE_SIZE=", "SONDE_JOBID=",
      "SONDE_RANK=", "SONDE_SIZE=", "SONDE_LOCAL_RANK=", "SONDE_LOCAL_SIZE="};
  if (std::strncmp(e, "PMIX_MCA_", 9) == 0) return false;
  for (const char* p : kPrefixes) {
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  }
  return false;
}

std::vector<std::string> inherited_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!inherited_entry_is_ours(*e)) env.emplace_back(*e);
  }
  return env;
}

void set_entry(std::vector<std::string>& env, const std::string& entry) {
  size_t eq = entry.find('=');
  std::string_view name(entry.data(), eq == std::string::npos ? entry.size() : eq + 1);
  for (auto& e : env) {
    if (std::string_view(e).substr(0, name.size()) == name) {
      e = entry;
      return;
    }
  }
  env.push_back(entry);
}

std::vector<std::string> rank_identity_env(const std::string& job_id, int rank, int size, int local_rank,
                                           int local_size) {
  const std::string rs = std::to_string(rank), n = std::to_string(size);
  const std::string lr = std::to_string(local_rank), ln = std::to_string(local_size);
  return {std::string(kJobIdEnv) + "=" + job_id,
          "SONDE_RANK=" + rs,
          "SONDE_SIZE=" + n,
          "SONDE_LOCAL_RANK=" + lr,
          "SONDE_LOCAL_SIZE=" + ln,
          "OMPI_COMM_WORLD_RANK=" + rs,
          "OMPI_COMM_WORLD_SIZE=" + n,
          "OMPI_COMM_WORLD_LOCAL_RANK=" + lr,
          "OMPI_COMM_WORLD_LOCAL_SIZE=" + ln,
          "OMPI_COMM_WORLD_NODE_RANK=" + lr,
          "OMPI_UNIVERSE_SIZE=" + n,
          "PMI_RANK=" + rs,
          "PMI_SIZE=" + n};
}

StartedRank start_rank(const RankLaunch& l) {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, ex[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1], ex[0], ex[1]}) {
      if (fd >= 0) close(fd);
    }
    throw std::runtime_error("pipe: " + errno_text(e));
  }
  std::vector<char*> argv, envp;
  for (const auto& a : *l.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : *l.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const char* wdir = l.wdir != nullptr && !l.wdir->empty() ? l.wdir->c_str() : nullptr;
  ChildSetup c{l.executable->c_str(),
               wdir,
               argv.data(),
               envp.data(),
               getpid(),
               l.pgid,
               l.stdin_fd,
               out[1],
               err[1],
               ex[1],
               l.cpu_mask};
  pid_t pid = fork();
  if (pid == 0) exec_child(c);
  int fork_errno = errno;
  close(out[1]);
  close(err[1]);
  close(ex[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    close(ex[0]);
    throw std::runtime_error("fork: " + errno_text(fork_errno));
  }
  // Also here, so the group exists before we might signal it; the child's own
  // call and ours race harmlessly.
  setpgid(pid, l.pgid == 0 ? pid : l.pgid);
  for (int fd : {out[0], err[0], ex[0]}) set_nonblocking(fd);
  return StartedRank{pid, out[0], err[0], ex[0]};
}

void signal_ranks(pid_t pgid, const std::vector<pid_t>& running, int sig) {
  bool group_alive = false;
  for (pid_t pid : running) {
    if (pgid > 0 && getpgid(pid) == pgid) {
      group_alive = true;
    } else {
      kill(pid, sig);
    }
  }
  if (group_alive) kill(-pgid, sig);
}

int read_exec_errno(int& exec_fd) {
  if (exec_fd < 0) return 0;
  int e = 0;
  ssize_t n = read(exec_fd, &e, sizeof e);
  if (n < 0 && errno == EAGAIN) return -1;  // the child has not reached execve yet
  close_fd(exec_fd);
  return n == static_cast<ssize_t>(sizeof e) ? e : 0;
}

std::string check_directory(const std::string& dir) {
  struct stat st;
  int e = 0;
  if (stat(dir.c_str(), &st) != 0) {
    e = errno;
  } else if (!S_ISDIR(st.st_mode)) {
    e = ENOTDIR;
  } else if (access(dir.c_str(), X_OK) != 0) {
    e = errno;
  }
  if (e != 0) throw std::runtime_error("cannot start ranks in '" + dir + "': " + errno_text(e));
  char* real = realpath(dir.c_str(), nullptr);
  if (real == nullptr) {
    throw std::runtime_error("cannot start ranks in '" + dir + "': " + errno_text(errno));
  }
  std::string out = real;
  std::free(real);
  return out;
}

std::string resolve_executable_in(const std::string& program, const std::string& wdir, const char* path) {
  if (!wdir.empty() && !program.empty() && program[0] != '/' && program.find('/') != std::string::npos) {
    return resolve_executable(wdir + "/" + program, path);
  }
  return resolve_executable(program, path);
}

int prepare_program(std::string& wdir, const std::string& program, const char* path, std::string* executable,
                    std::string* error) {
  try {
    if (!wdir.empty()) wdir = check_directory(wdir);
  } catch (const std::exception& e) {
    *error = e.what();
    return 1;
  }
  try {
    *executable = resolve_executable_in(program, wdir, path);
  } catch (const std::exception& e) {
    *error = e.what();
    return 127;
  }
  return 0;
}

std::string resolve_executable(const std::string& program, const char* path) {
  auto problem = [](const std::string& p) -> int {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (access(p.c_str(), X_OK) != 0) return errno;
    return 0;
  };
  if (program.empty()) throw std::runtime_error("the program name is empty");
  if (program.find('/') != std::string::npos) {
    if (int e = problem(program)) {
      throw std::runtime_error("cannot execute '" + program + "': " + errno_text(e));
    }
    return program;
  }
  if (path == nullptr) path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int first_error = ENOENT;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    int e = problem(candidate);
    if (e == 0) return candidate;
    if (e != ENOENT && e != ENOTDIR && first_error == ENOENT) first_error = e;
    start = end + 1;
  }
  throw std::runtime_error("cannot execute '" + program + "': " +
                           (first_error == ENOENT ? std::string("not found in PATH") : errno_text(first_error)));
}

}  // namespace sonde::mpiexec
