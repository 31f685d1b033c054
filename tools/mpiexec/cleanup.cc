#include "tools/mpiexec/cleanup.h"

#include "tools/mpiexec/stale_dirs.h"

#include <dirent.h>
#include <ftw.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace sonde::mpiexec {

int remove_job_shm(const std::string& job_id, const std::string& shm_dir) {
  if (job_id.empty()) return 0;  // would match every job's objects
  const std::string prefix = "sonde-" + job_id + "-";
  DIR* d = opendir(shm_dir.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> doomed;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) doomed.emplace_back(e->d_name);
  }
  closedir(d);
  int removed = 0;
  for (const auto& name : doomed) {
    if (unlink((shm_dir + "/" + name).c_str()) == 0) ++removed;
  }
  return removed;
}

std::string make_private_tmpdir(const std::string& job_id) {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env != nullptr && *env != '\0' ? env : "/tmp";
  sweep_stale_dirs(base);
  std::string tmpl = base + "/sonde-mpiexec-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  // mkdtemp makes it mode 0700.
  if (mkdtemp(buf.data()) == nullptr) {
    throw std::runtime_error("cannot create a private directory " + tmpl + ": " + std::strerror(errno));
  }
  // Without the record the directory is merely never swept by others.
  write_owner(buf.data(), current_owner(job_id));
  return buf.data();
}

void remove_tree(const std::string& path) {
  if (path.empty()) return;
  nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int type, struct FTW*) {
        if (type == FTW_DP) {
          rmdir(p);
        } else {
          unlink(p);
        }
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace sonde::mpiexec
