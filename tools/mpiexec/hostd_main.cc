// sonde-hostd: mpiexec's daemon on each host of a multi-host job (see
// tools/mpiexec/hostd.h). Not meant to be started by hand.

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/hostd.h"

int main(int argc, char** argv) {
  using namespace sonde::mpiexec;
  // A closed 0/1/2 would be handed out by pipe() and then clobbered by the
  // dup2 calls that set up a rank's stdio.
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
  }
  HostdOptions opt;
  try {
    opt = parse_hostd_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sonde-hostd: %s\n", e.what());
    return 2;
  }
  // Blocked before libpmix starts its threads, which inherit the mask.
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&handled, s);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    std::fprintf(stderr, "sonde-hostd: signalfd: %s\n", std::strerror(errno));
    return 1;
  }
  int code = 1;
  try {
    auto daemon = std::make_unique<HostDaemon>(opt, sfd);
    code = daemon->run();
    // Stopping the PMIx server is libpmix's business; if it ever hangs, the
    // job's files on this host still go and we still exit (mpiexec waits
    // only a few seconds for us).
    std::thread([code, id = daemon->job_id(), dir = daemon->tmpdir()] {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      remove_job_shm(id);
      remove_tree(dir);
      _exit(code);
    }).detach();
  } catch (const std::exception& e) {
    // The daemon's destructor has already ended its ranks.
    std::fprintf(stderr, "sonde-hostd: %s\n", e.what());
  }
  return code;
}
