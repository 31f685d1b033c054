// The process-state object and the engine lock (process.h).
#include "core/process.h"

#include <mutex>

namespace sonde::engine {

namespace {
std::recursive_mutex& engine_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}
}  // namespace

constinit ProcessState g_process_state;

void EngineLock::lock() { engine_mutex().lock(); }
void EngineLock::unlock() { engine_mutex().unlock(); }

}  // namespace sonde::engine
