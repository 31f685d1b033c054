// Snapshots asked for from another shell (snapshot_request.h).
#include "tools/mpiexec/snapshot_request.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "tools/mpiexec/cleanup.h"

namespace sonde::mpiexec {
namespace {

// Long enough for a snapshot across hosts (kSnapshotBound + kRelayGrace)
// taken while the job's mpiexec is busy.
constexpr int kAnswerLimitMs = 30000;

// Whether `pid` blocks or catches SIGUSR1 (/proc/PID/status: SigBlk,
// SigCgt), i.e. SIGUSR1 will not kill it.
bool keeps_sigusr1(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const unsigned long long bit = 1ull << (SIGUSR1 - 1);
  bool keeps = false;
  while (std::getline(in, line)) {
    if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigCgt:", 0) == 0) {
      keeps = keeps || (std::strtoull(line.c_str() + 7, nullptr, 16) & bit) != 0;
    }
  }
  return keeps;
}

}  // namespace

int request_snapshot(const std::string& program_name, pid_t pid, bool json) {
  const char* who = program_name.c_str();
  if (pid <= 0 || kill(pid, 0) != 0) {
    std::fprintf(stderr, "%s: --snapshot %d: no such process%s\n", who, static_cast<int>(pid),
                 pid > 0 && errno == EPERM ? " of yours" : "");
    return 1;
  }
  if (!keeps_sigusr1(pid)) {
    std::fprintf(stderr,
                 "%s: --snapshot %d: that process is not Sonde's mpiexec running a job (SIGUSR1 would end it)\n", who,
                 static_cast<int>(pid));
    return 1;
  }
  const char* env = std::getenv("TMPDIR");
  std::string tmpl = std::string(env != nullptr && *env != '\0' ? env : "/tmp") + "/sonde-snapshot-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "%s: cannot create a directory %s: %s\n", who, tmpl.c_str(), std::strerror(errno));
    return 1;
  }
  const std::string fifo = tmpl + "/report";
  int fd = -1;
  if (mkfifo(fifo.c_str(), 0600) == 0) fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  const int open_errno = errno;
  remove_tree(tmpl);  // our descriptor keeps the FIFO
  if (fd < 0) {
    std::fprintf(stderr, "%s: cannot make a FIFO in %s: %s\n", who, tmpl.c_str(), std::strerror(open_errno));
    return 1;
  }
  sigval value{};
  value.sival_int = (fd << 1) | (json ? 1 : 0);
  if (sigqueue(pid, SIGUSR1, value) != 0) {
    std::fprintf(stderr, "%s: --snapshot %d: %s\n", who, static_cast<int>(pid), std::strerror(errno));
    close(fd);
    return 1;
  }
  // Until the writer has come and gone: a FIFO that never had a writer
  // reads as empty, so the end counts only once something arrived.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAnswerLimitMs);
  bool got = false;
  char buf[64 * 1024];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), got ? kAnswerLimitMs : 100))) < 0 &&
        errno != EINTR)
      break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      got = true;
      if (std::fwrite(buf, 1, static_cast<size_t>(n), stdout) != static_cast<size_t>(n)) break;
      continue;
    }
    if (n == 0 && got) {
      close(fd);
      std::fflush(stdout);
      return 0;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
  }
  close(fd);
  std::fflush(stdout);
  std::fprintf(stderr, "%s: --snapshot %d: %s\n", who, static_cast<int>(pid),
               got ? "the report was cut short" : "no answer (is it Sonde's mpiexec, and is its job running?)");
  return 1;
}

std::optional<SnapshotReply> open_snapshot_reply(const signalfd_siginfo& si) {
  if (si.ssi_code != SI_QUEUE || si.ssi_pid == 0) return std::nullopt;
  if (si.ssi_uid != getuid() && si.ssi_uid != 0) return std::nullopt;
  const int value = si.ssi_int;
  if (value < 0) return std::nullopt;
  const std::string path = "/proc/" + std::to_string(si.ssi_pid) + "/fd/" + std::to_string(value >> 1);
  int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
    close(fd);
    return std::nullopt;
  }
  return SnapshotReply{fd, (value & 1) != 0};
}

}  // namespace sonde::mpiexec
