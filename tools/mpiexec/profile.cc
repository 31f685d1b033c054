#include "tools/mpiexec/profile.h"

#include <unistd.h>

#include "tools/mpiexec/options.h"

namespace sonde::mpiexec {

namespace {

constexpr const char* kLibrary = "libsonde_residence.so";

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

std::string find_profiler_library(const std::string& self_exe, const char* override_path) {
  if (override_path != nullptr && *override_path != '\0') return readable(override_path) ? override_path : "";
  const std::string bin = dirname_of(self_exe);
  // An installed prefix (bin/mpiexec, lib/libsonde_residence.so), then the
  // Bazel output tree (tools/mpiexec/mpiexec, examples/residence/...).
  for (const std::string& candidate : {bin + "/../lib/" + kLibrary, bin + "/../../examples/residence/" + kLibrary}) {
    if (readable(candidate)) return candidate;
  }
  return "";
}

std::vector<std::string> profile_environment(const std::string& dir, const std::string& trace,
                                             const std::string& library, const std::string& cwd,
                                             const char* ld_preload) {
  if (dir.empty()) throw UsageError("--profile needs a directory");
  size_t pos = 0;
  while (pos <= trace.size() && !trace.empty()) {
    size_t comma = trace.find(',', pos);
    if (comma == std::string::npos) comma = trace.size();
    const std::string word = trace.substr(pos, comma - pos);
    if (word != "perfetto" && word != "otf2") {
      throw UsageError("--profile-trace wants perfetto, otf2 or perfetto,otf2, not '" + trace + "'");
    }
    pos = comma + 1;
  }
  if (library.empty()) {
    throw UsageError(std::string("--profile: cannot find ") + kLibrary +
                     " next to mpiexec (install Sonde with its profiler, or set SONDE_RESIDENCE_LIB)");
  }
  std::string preload = library;
  if (ld_preload != nullptr && *ld_preload != '\0') preload += std::string(":") + ld_preload;
  std::vector<std::string> env = {"LD_PRELOAD=" + preload,
                                  "SONDE_RESIDENCE_OUT=" + (dir[0] == '/' ? dir : cwd + "/" + dir)};
  if (!trace.empty()) env.push_back("SONDE_RESIDENCE_TRACE=" + trace);
  return env;
}

}  // namespace sonde::mpiexec
