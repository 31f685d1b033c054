// Owner records of launchers' private directories
// (tools/mpiexec/stale_dirs.h): a record parse_owner accepts must be one
// format_owner writes (so nothing else makes a directory look abandoned).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/mpiexec/stale_dirs.h"

using namespace sonde::mpiexec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto o = parse_owner(text)) {
    if (format_owner(*o) != text) __builtin_trap();
  }
  return 0;
}
