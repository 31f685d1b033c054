// Hostfiles and --host lists (tools/mpiexec/hosts.h): any text is either
// parsed or refused with a UsageError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/mpiexec/hosts.h"

using namespace sonde::mpiexec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& h : parse_hostfile(text, "fuzz")) {
      if (h.name.empty() || h.slots < 0) __builtin_trap();
    }
  } catch (const UsageError&) {
  }
  try {
    for (const auto& h : parse_host_list(text)) {
      if (h.name.empty() || h.slots < 0) __builtin_trap();
    }
  } catch (const UsageError&) {
  }
  return 0;
}
