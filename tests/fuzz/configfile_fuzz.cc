// -configfile / --app files (tools/mpiexec/options.h): any text is either
// a job or a UsageError, read both by app_file_words and through
// parse_options as `mpiexec -configfile FILE` would.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/mpiexec/options.h"

using namespace sonde::mpiexec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    app_file_words(text, "fuzz");
  } catch (const UsageError&) {
  }
  try {
    Options o = parse_options({"-configfile", "job.conf"}, [&](const std::string&) { return text; });
    if (o.ranks < 1) __builtin_trap();
  } catch (const UsageError&) {
  }
  return 0;
}
