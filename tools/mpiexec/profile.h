// --profile DIR [--profile-trace LIST]: every rank runs under the
// queue-residence profiler (examples/residence) without relinking. mpiexec
// only adds to the ranks' environment what any launcher could:
//   LD_PRELOAD=<profiler library>[:the LD_PRELOAD mpiexec itself has]
//   SONDE_RESIDENCE_OUT=<DIR, made absolute against mpiexec's directory>
//   SONDE_RESIDENCE_TRACE=<LIST>          (with --profile-trace)
// The library is found from mpiexec's own location: <bin>/../lib/ in an
// installed prefix, or beside it in a Bazel output tree; SONDE_RESIDENCE_LIB
// names it explicitly.
#pragma once

#include <string>
#include <vector>

namespace sonde::mpiexec {

// The profiler library next to the mpiexec at `self_exe` (an absolute
// path), or `override_path` when given (non-null, non-empty); empty if
// there is none.
std::string find_profiler_library(const std::string& self_exe, const char* override_path);

// The NAME=VALUE entries for the ranks. `trace` is checked word by word
// (perfetto, otf2, comma-separated). Throws UsageError (options.h) when the
// list names another format or the library cannot be found.
std::vector<std::string> profile_environment(const std::string& dir, const std::string& trace,
                                             const std::string& library, const std::string& cwd,
                                             const char* ld_preload);

}  // namespace sonde::mpiexec
