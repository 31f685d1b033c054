// Removing the private directories of launchers that died
// (tools/mpiexec/stale_dirs.h): only Sonde's own, only when the owner is
// certainly gone.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/stale_dirs.h"

using namespace sonde::mpiexec;

namespace {

std::string scratch_dir() {
  const char* t = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(t != nullptr ? t : "/tmp") + "/stale-dirs-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  REQUIRE(mkdtemp(buf.data()) != nullptr);
  return buf.data();
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

void touch(const std::string& path) {
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  close(fd);
}

// A pid that certainly belonged to a process that is gone now.
long dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  REQUIRE(pid > 0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string make_dir(const std::string& base, const std::string& name, mode_t mode = 0700) {
  std::string dir = base + "/" + name;
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(chmod(dir.c_str(), mode) == 0);
  touch(dir + "/pmix-file");
  return dir;
}

}  // namespace

TEST_CASE("an owner record reads back as written, and nothing else reads at all") {
  DirOwner o = current_owner("0123abcd");
  CHECK(o.pid == getpid());
  CHECK(o.start > 0);
  CHECK_FALSE(o.pid_ns.empty());
  std::string text = format_owner(o);
  auto back = parse_owner(text);
  REQUIRE(back.has_value());
  CHECK(back->host == o.host);
  CHECK(back->boot_id == o.boot_id);
  CHECK(back->pid_ns == o.pid_ns);
  CHECK(back->pid == o.pid);
  CHECK(back->start == o.start);
  CHECK(back->job_id == "0123abcd");
  CHECK_FALSE(parse_owner(text.substr(0, text.size() - 1)).has_value());  // last line unterminated
  CHECK_FALSE(parse_owner("").has_value());
  CHECK_FALSE(parse_owner("sonde-owner 2\n").has_value());
  std::string bad_pid = text;
  bad_pid.replace(bad_pid.find("\npid ") + 5, 1, "-");
  CHECK_FALSE(parse_owner(bad_pid).has_value());
  DirOwner shady = o;
  shady.job_id = "../etc";
  CHECK_FALSE(parse_owner(format_owner(shady)).has_value());
}

TEST_CASE("an owner is dead only on this host, in this pid namespace, and gone") {
  const DirOwner self = current_owner("");
  DirOwner o = self;
  CHECK_FALSE(owner_is_dead(o, self));  // ourselves
  o.pid = getppid();
  o.start = 1;  // a live process with another start time: a reused pid
  CHECK(owner_is_dead(o, self));
  o = self;
  o.pid = dead_pid();
  CHECK(owner_is_dead(o, self));
  DirOwner elsewhere = o;
  elsewhere.host += "-other";
  CHECK_FALSE(owner_is_dead(elsewhere, self));
  DirOwner other_ns = o;
  other_ns.pid_ns = "pid:[1]";
  CHECK_FALSE(owner_is_dead(other_ns, self));
  DirOwner earlier_boot = self;
  earlier_boot.boot_id = "another-boot";
  CHECK(owner_is_dead(earlier_boot, self));
}

TEST_CASE("a live owner stays alive while its memory grows") {
  // The child records itself, then grows its address space (which changes
  // the fields of /proc/PID/stat after its start time) and waits.
  int to_parent[2], to_child[2];
  REQUIRE(pipe(to_parent) == 0);
  REQUIRE(pipe(to_child) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::string text = format_owner(current_owner("job"));
    std::vector<char> grow(64 << 20, 1);
    if (write(to_parent[1], text.data(), text.size()) != ssize_t(text.size())) _exit(1);
    close(to_parent[1]);
    char c;
    ssize_t n = read(to_child[0], &c, 1);
    _exit(n == 1 && grow[1000] == 1 ? 0 : 2);
  }
  close(to_parent[1]);
  std::string text(4096, '\0');
  ssize_t got = 0, n;
  while ((n = read(to_parent[0], text.data() + got, text.size() - size_t(got))) > 0) got += n;
  text.resize(size_t(got));
  std::optional<DirOwner> owner = parse_owner(text);
  REQUIRE(owner.has_value());
  CHECK(owner->pid == child);
  CHECK_FALSE(owner_is_dead(*owner, current_owner("")));
  REQUIRE(write(to_child[1], "x", 1) == 1);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(owner_is_dead(*owner, current_owner("")));
}

TEST_CASE("only directories of dead owners are swept, with their job's shared memory") {
  const std::string base = scratch_dir(), shm = scratch_dir();
  DirOwner dead = current_owner("feedbeef");
  dead.pid = dead_pid();
  const std::string stale = make_dir(base, "sonde-mpiexec-stale1");
  REQUIRE(write_owner(stale, dead));
  touch(shm + "/sonde-feedbeef-ring0");
  touch(shm + "/sonde-feedbee-other-job");

  const std::string alive = make_dir(base, "sonde-mpiexec-alive1");
  REQUIRE(write_owner(alive, current_owner("")));
  const std::string unowned = make_dir(base, "sonde-mpiexec-unowned");    // being made right now
  const std::string loose = make_dir(base, "sonde-mpiexec-loose", 0755);  // not a private directory
  REQUIRE(write_owner(loose, dead));
  const std::string other_name = make_dir(base, "someone-else");
  REQUIRE(write_owner(other_name, dead));
  const std::string damaged = make_dir(base, "sonde-mpiexec-damaged");
  {
    int fd = open((damaged + "/" + kOwnerFile).c_str(), O_CREAT | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, "sonde-owner 1\nhost", 18) == 18);
    close(fd);
  }
  // A symlink to a dead owner's directory is not followed.
  const std::string target = make_dir(base, "elsewhere");
  REQUIRE(write_owner(target, dead));
  REQUIRE(symlink(target.c_str(), (base + "/sonde-mpiexec-link").c_str()) == 0);

  CHECK(sweep_stale_dirs(base, shm) == 1);
  CHECK_FALSE(exists(stale));
  CHECK_FALSE(exists(shm + "/sonde-feedbeef-ring0"));
  CHECK(exists(shm + "/sonde-feedbee-other-job"));
  for (const auto& d : {alive, unowned, loose, other_name, damaged, target}) CHECK(exists(d + "/pmix-file"));
  remove_tree(base);
  remove_tree(shm);
}

TEST_CASE("making a private directory sweeps its neighbours first and records us") {
  const std::string base = scratch_dir();
  DirOwner dead = current_owner("");
  dead.pid = dead_pid();
  const std::string stale = make_dir(base, "sonde-mpiexec-stale2");
  REQUIRE(write_owner(stale, dead));
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", base.c_str(), 1);
  const std::string mine = make_private_tmpdir("cafe");
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  CHECK_FALSE(exists(stale));
  CHECK(exists(mine + "/" + kOwnerFile));
  CHECK(sweep_stale_dirs(base) == 0);  // ours, and we live
  CHECK(exists(mine));
  remove_tree(base);
}
