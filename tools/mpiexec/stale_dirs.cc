#include "tools/mpiexec/stale_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tools/mpiexec/cleanup.h"

namespace sonde::mpiexec {
namespace {

constexpr std::string_view kMagic = "sonde-owner 1";
constexpr std::string_view kDirPrefix = "sonde-mpiexec-";

std::string read_small_file(const std::string& path, size_t limit = 4096) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  std::string text(limit, '\0');
  size_t have = 0;
  while (have < limit) {
    ssize_t n = read(fd, text.data() + have, limit - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(have);
  return text;
}

std::string first_line(std::string s) {
  if (size_t nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

// Field 22 of /proc/PID/stat (starttime, fixed for the process's life); 0 if
// there is no such process.
unsigned long long start_time(long pid) {
  std::string stat = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  // The command name (field 2) may hold spaces and parentheses: count from
  // the last ')', which is followed by " " and field 3.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 > stat.size()) return 0;
  size_t pos = close_paren + 2;  // start of field 3
  for (int field = 3; field < 22; ++field) {
    pos = stat.find(' ', pos);
    if (pos == std::string::npos) return 0;
    ++pos;  // start of the next field
  }
  unsigned long long v = 0;
  std::from_chars(stat.data() + pos, stat.data() + stat.size(), v);
  return v;
}

// Printable, no spaces or newlines, bounded: what every field must be.
bool plain_token(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  for (char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  // Canonical decimal only (what format_owner writes): no sign, no leading zero.
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

DirOwner current_owner(const std::string& job_id) {
  DirOwner o;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  o.host = host;
  o.boot_id = first_line(read_small_file("/proc/sys/kernel/random/boot_id"));
  char ns[128] = {};
  ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  o.pid_ns = n > 0 ? std::string(ns, static_cast<size_t>(n)) : "";
  o.pid = getpid();
  o.start = start_time(o.pid);
  o.job_id = job_id;
  return o;
}

std::string format_owner(const DirOwner& o) {
  return std::string(kMagic) + "\nhost " + o.host + "\nboot " + o.boot_id + "\npidns " + o.pid_ns + "\npid " +
         std::to_string(o.pid) + "\nstart " + std::to_string(o.start) + "\njob " + o.job_id + "\n";
}

std::optional<DirOwner> parse_owner(std::string_view text) {
  static constexpr std::string_view kKeys[] = {"host", "boot", "pidns", "pid", "start", "job"};
  if (text.size() > 4096) return std::nullopt;
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return std::nullopt;  // every line ends
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (lines.size() != 1 + std::size(kKeys) || lines[0] != kMagic) return std::nullopt;
  std::string_view values[std::size(kKeys)];
  for (size_t i = 0; i < std::size(kKeys); ++i) {
    std::string_view line = lines[i + 1];
    const std::string_view key = kKeys[i];
    if (line.size() < key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
      return std::nullopt;
    }
    values[i] = line.substr(key.size() + 1);
  }
  DirOwner o;
  if (!plain_token(values[0]) || !plain_token(values[1]) || !plain_token(values[2])) return std::nullopt;
  o.host = values[0];
  o.boot_id = values[1];
  o.pid_ns = values[2];
  if (!parse_number(values[3], o.pid) || o.pid <= 0) return std::nullopt;
  if (!parse_number(values[4], o.start)) return std::nullopt;
  if (!values[5].empty() && !plain_token(values[5])) return std::nullopt;
  // The job id becomes part of a /dev/shm name pattern: letters and digits only.
  for (char c : values[5]) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return std::nullopt;
  }
  o.job_id = values[5];
  return o;
}

bool owner_is_dead(const DirOwner& o, const DirOwner& self) {
  if (o.host != self.host || o.pid_ns != self.pid_ns || o.pid_ns.empty()) return false;
  if (o.boot_id != self.boot_id) return !o.boot_id.empty() && !self.boot_id.empty();
  if (o.pid == self.pid) return false;
  if (kill(static_cast<pid_t>(o.pid), 0) != 0 && errno == ESRCH) return true;
  // A process of that pid exists (perhaps another user's): ours only if it
  // started when ours did.
  unsigned long long now_start = start_time(o.pid);
  return now_start != 0 && now_start != o.start;
}

bool write_owner(const std::string& dir, const DirOwner& o) {
  const std::string tmp = dir + "/" + kOwnerFile + ".tmp";
  const std::string text = format_owner(o);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = close(fd) == 0 && ok;
  if (ok) ok = rename(tmp.c_str(), (dir + "/" + kOwnerFile).c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

int sweep_stale_dirs(const std::string& base, const std::string& shm_dir) {
  DIR* d = opendir(base.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> candidates;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, kDirPrefix.data(), kDirPrefix.size()) == 0) candidates.emplace_back(e->d_name);
  }
  closedir(d);
  const DirOwner self = current_owner("");
  int removed = 0;
  for (const auto& name : candidates) {
    const std::string dir = base + "/" + name;
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 07777) != 0700) {
      continue;
    }
    std::optional<DirOwner> owner = parse_owner(read_small_file(dir + "/" + kOwnerFile));
    if (!owner || !owner_is_dead(*owner, self)) continue;
    if (!owner->job_id.empty()) remove_job_shm(owner->job_id, shm_dir);
    remove_tree(dir);
    ++removed;
  }
  return removed;
}

}  // namespace sonde::mpiexec
