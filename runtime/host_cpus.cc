// The host's CPUs for the job (host_cpus.h).
#include "runtime/host_cpus.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace sonde::engine {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

// The cpuset cgroup's CPU list, or "" where none can be read.
std::string cgroup_cpu_list() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    // "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1 names the cpuset controller.
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path == "/") path.clear();
    std::string list;
    if (controllers.empty()) {
      list = read_first_line("/sys/fs/cgroup" + path + "/cpuset.cpus.effective");
    } else {
      std::stringstream names(controllers);
      for (std::string name; std::getline(names, name, ',');) {
        if (name != "cpuset") continue;
        list = read_first_line("/sys/fs/cgroup/cpuset" + path + "/cpuset.effective_cpus");
        if (list.empty()) list = read_first_line("/sys/fs/cgroup/cpuset" + path + "/cpuset.cpus");
      }
    }
    if (!list.empty()) return list;
  }
  return "";
}

}  // namespace

int count_cpu_list(std::string_view list) {
  while (!list.empty() && (list.front() == ' ' || list.front() == '\t')) list.remove_prefix(1);
  while (!list.empty() && (list.back() == ' ' || list.back() == '\n' || list.back() == '\t')) list.remove_suffix(1);
  if (list.empty()) return -1;
  long total = 0;
  size_t i = 0;
  auto number = [&](long& out) {
    if (i >= list.size() || list[i] < '0' || list[i] > '9') return false;
    out = 0;
    while (i < list.size() && list[i] >= '0' && list[i] <= '9') {
      out = out * 10 + (list[i++] - '0');
      if (out > (1L << 30)) return false;
    }
    return true;
  };
  for (;;) {
    long lo = 0, hi = 0;
    if (!number(lo)) return -1;
    hi = lo;
    if (i < list.size() && list[i] == '-') {
      ++i;
      if (!number(hi) || hi < lo) return -1;
    }
    total += hi - lo + 1;
    if (total > (1L << 30)) return -1;
    if (i == list.size()) return int(total);
    if (list[i++] != ',') return -1;
  }
}

int host_cpus() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int cgroup = count_cpu_list(cgroup_cpu_list());
  long n = cgroup > 0 ? cgroup : online;
  if (online > 0 && n > online) n = online;
  return n < 1 ? 1 : int(n);
}

}  // namespace sonde::engine
