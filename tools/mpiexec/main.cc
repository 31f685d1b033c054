// mpiexec / mpirun: starts the ranks of one job on this host. See usage().

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/wireup_job_id.h"
#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/job.h"
#include "tools/mpiexec/options.h"

namespace {

using namespace sonde::mpiexec;

// Stopping the PMIx server is libpmix's business; if it ever hangs, the job's
// files still go and we still exit with the job's status.
constexpr auto kTeardownLimit = std::chrono::seconds(5);

// A closed 0/1/2 would be handed out by pipe() and then clobbered by the
// dup2 calls that set up a rank's stdio.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
  }
}

void arm_teardown_watchdog(const std::string& job_id, const std::string& tmpdir, int code) {
  std::thread([job_id, tmpdir, code] {
    std::this_thread::sleep_for(kTeardownLimit);
    remove_job_shm(job_id);
    remove_tree(tmpdir);
    _exit(code);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = argc > 0 ? argv[0] : "mpiexec";
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  ensure_standard_fds();

  Options opt;
  try {
    opt = parse_options(std::vector<std::string>(argv + 1, argv + argc));
    apply_timeout_environment(opt, std::getenv("MPIEXEC_TIMEOUT"));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", name.c_str(), e.what(), name.c_str());
    return 2;
  }
  if (opt.help) {
    std::fputs(usage(name).c_str(), stdout);
    return 0;
  }

  JobSpec spec;
  spec.program_name = name;
  spec.argv = opt.command;
  spec.ranks = opt.ranks;
  spec.bind_to_core = opt.bind_to_core;
  spec.tag_output = opt.tag_output;
  spec.timeout_seconds = opt.timeout_seconds;
  try {
    spec.executable = resolve_executable(opt.command[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 127;
  }

  // Blocked before libpmix starts its threads, which inherit the mask, so
  // these signals reach us only through the signalfd.
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&handled, s);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    std::fprintf(stderr, "%s: signalfd: %s\n", name.c_str(), std::strerror(errno));
    return 1;
  }

  int code = 1;
  try {
    spec.job_id = sonde::random_job_id();
    spec.tmpdir = make_private_tmpdir();
    Job job(spec, sfd);
    code = job.run();
    arm_teardown_watchdog(spec.job_id, spec.tmpdir, code);
  } catch (const std::exception& e) {
    // ~Job has already killed and reaped whatever it started.
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    code = 1;
  }
  remove_job_shm(spec.job_id);
  remove_tree(spec.tmpdir);
  return code;
}
