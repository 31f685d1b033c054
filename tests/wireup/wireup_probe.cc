// A rank program for launcher and wire-up tests: it exchanges values with
// every peer through sonde::Wireup and checks what comes back, then optionally
// misbehaves in one of the ways the launcher must survive.
//
// Exit codes: 0 all checks passed; 10 a check failed; 11 connect/exchange threw;
// 99 a --hang rank was never stopped by its launcher; anything else was asked
// for on the command line.

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "pmi/wireup.h"

namespace {

struct Options {
  std::string info_dir;  // write <dir>/rank<R>: "<job_id> <pid>"; <dir>/failing
  bool shm = false;      // create /sonde-<job_id>-probe<R> and leave it behind
  bool hang = false;     // ranks not told to fail wait to be killed
  bool print = false;    // one line on stdout and one on stderr
  bool print_affinity = false;
  int expect_size = -1;
  int exit_rank = -1, exit_code = 0;
  int kill_rank = -1;
  int abort_rank = -1, abort_code = 0;
  int no_finalize_rank = -1;
};

int rank_for_messages = -1;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "wireup_probe: rank %d: CHECK FAILED: %s\n", rank_for_messages, what.c_str());
  std::exit(10);
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

int int_arg(int& i, int argc, char** argv) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "wireup_probe: %s needs a value\n", argv[i]);
    std::exit(2);
  }
  return std::atoi(argv[++i]);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--info-dir" && i + 1 < argc) {
      o.info_dir = argv[++i];
    } else if (a == "--shm") {
      o.shm = true;
    } else if (a == "--hang") {
      o.hang = true;
    } else if (a == "--print") {
      o.print = true;
    } else if (a == "--print-affinity") {
      o.print_affinity = true;
    } else if (a == "--expect-size") {
      o.expect_size = int_arg(i, argc, argv);
    } else if (a == "--exit-rank") {
      o.exit_rank = int_arg(i, argc, argv);
    } else if (a == "--exit-code") {
      o.exit_code = int_arg(i, argc, argv);
    } else if (a == "--kill-rank") {
      o.kill_rank = int_arg(i, argc, argv);
    } else if (a == "--abort-rank") {
      o.abort_rank = int_arg(i, argc, argv);
    } else if (a == "--abort-code") {
      o.abort_code = int_arg(i, argc, argv);
    } else if (a == "--no-finalize-rank") {
      o.no_finalize_rank = int_arg(i, argc, argv);
    } else {
      std::fprintf(stderr, "wireup_probe: unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Values of different lengths with embedded NULs and high bytes, so a
// truncating or string-based transport shows up.
std::string value_of(int rank) {
  std::string v = "value-of-" + std::to_string(rank);
  v += std::string("\0\x01\xff", 3);
  v += std::string(static_cast<size_t>(rank % 7) * 100, static_cast<char>('a' + rank % 26));
  return v;
}

bool env_equals(const char* name, const std::string& expected) {
  const char* v = std::getenv(name);
  return v == nullptr || expected == v;
}

void check_identity(const sonde::Wireup& w, const Options& o) {
  int r = w.rank(), n = w.size();
  check(n >= 1, "size " + std::to_string(n) + " < 1");
  check(r >= 0 && r < n, "rank " + std::to_string(r) + " outside the job of " + std::to_string(n));
  if (o.expect_size >= 0) check(n == o.expect_size, "size " + std::to_string(n));
  check(w.universe_size() >= n, "universe size smaller than the job");
  std::string id = w.job_id();
  check(!id.empty() && id.size() <= 64, "job id length " + std::to_string(id.size()));
  for (char c : id) check(std::isalnum(static_cast<unsigned char>(c)) != 0, "job id " + id);
  check(env_equals("SONDE_JOBID", id), "job id differs from SONDE_JOBID");
  check(env_equals("SONDE_RANK", std::to_string(r)), "rank differs from SONDE_RANK");
  check(env_equals("SONDE_SIZE", std::to_string(n)), "size differs from SONDE_SIZE");
  check(!w.hostname().empty(), "empty host name");
  for (int p = 0; p < n; ++p) {
    int node = w.node_of(p);
    check(node >= 0 && node < n, "node_of(" + std::to_string(p) + ") = " + std::to_string(node));
  }
  bool threw = false;
  try {
    (void)w.node_of(n);
  } catch (const std::out_of_range&) {
    threw = true;
  }
  check(threw, "node_of(size) did not throw");
}

void exchange(sonde::Wireup& w) {
  int r = w.rank(), n = w.size();
  w.put("probe.value", value_of(r));
  w.put("probe.job", w.job_id());
  w.put("probe.node", std::to_string(w.node_of(r)));
  w.put("probe.host", w.hostname());
  check(w.get(r, "probe.value") == value_of(r), "own value not visible before the fence");
  w.commit();
  w.fence(true);
  for (int p = 0; p < n; ++p) {
    std::string ps = std::to_string(p);
    check(w.get(p, "probe.value") == value_of(p), "value of rank " + ps);
    check(w.get(p, "probe.node") == std::to_string(w.node_of(p)), "node_of disagrees for " + ps);
    if (w.node_of(p) == w.node_of(r)) {
      check(w.get(p, "probe.job") == w.job_id(), "job id differs on same-node rank " + ps);
      check(w.get(p, "probe.host") == w.hostname(), "host name differs on same-node rank " + ps);
    }
    check(!w.get(p, "probe.never-put").has_value(), "a key nobody put has a value");
  }
  // Second round without collection: peers' values come on demand.
  w.put("probe.round2", "second-" + std::to_string(r));
  w.commit();
  w.fence(false);
  for (int p = (r + 1) % n, i = 0; i < n; ++i, p = (p + 1) % n) {
    check(w.get(p, "probe.round2") == "second-" + std::to_string(p), "round-2 value of rank " + std::to_string(p));
    check(!w.get(p, "probe.never-put-2").has_value(), "round 2: a key nobody put has a value");
  }
}

void create_shm(const sonde::Wireup& w) {
  std::string name = "/sonde-" + w.job_id() + "-probe" + std::to_string(w.rank());
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  check(fd >= 0, "shm_open " + name + ": " + std::strerror(errno));
  check(ftruncate(fd, 4096) == 0, "ftruncate " + name);
  close(fd);
}

void write_info(const sonde::Wireup& w, const std::string& dir) {
  std::string path = dir + "/rank" + std::to_string(w.rank());
  {
    std::ofstream f(path + ".tmp");
    f << w.job_id() << " " << getpid() << "\n";
    check(static_cast<bool>(f), "write " + path);
  }
  check(std::rename((path + ".tmp").c_str(), path.c_str()) == 0, "rename " + path);
}

std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out += (out.empty() ? "" : ",") + std::to_string(c);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::unique_ptr<sonde::Wireup> w;
  try {
    w = sonde::Wireup::connect();
    rank_for_messages = w->rank();
    check_identity(*w, o);
    exchange(*w);
    if (o.shm) create_shm(*w);
    if (!o.info_dir.empty()) write_info(*w, o.info_dir);
    // Everyone's files exist before anyone misbehaves.
    w->fence(true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup_probe: rank %d: %s\n", rank_for_messages, e.what());
    return 11;
  }
  int r = w->rank();
  if (o.print) {
    std::printf("rank %d of %d ok\n", r, w->size());
    std::fflush(stdout);
    std::fprintf(stderr, "rank %d says hello on stderr\n", r);
  }
  if (o.print_affinity) {
    std::printf("rank %d cpus %s\n", r, affinity().c_str());
    std::fflush(stdout);
  }
  // Lets a test time how fast the launcher reacts, from this moment on.
  if (!o.info_dir.empty() && (r == o.exit_rank || r == o.kill_rank || r == o.abort_rank || r == o.no_finalize_rank)) {
    std::ofstream(o.info_dir + "/failing") << r << "\n";
  }
  if (r == o.exit_rank) std::exit(o.exit_code);
  if (r == o.kill_rank) raise(SIGKILL);
  if (r == o.abort_rank) w->abort(o.abort_code, "wireup_probe asked to abort");
  if (r == o.no_finalize_rank) std::exit(0);
  if (o.hang) {
    // Bounded, so a launcher that forgets us fails the test instead of hanging it.
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 99;
  }
  w->finalize();
  return 0;
}
