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

ProcessState& process() {
  static auto* p = new ProcessState;
  return *p;
}

int init_state() {
  const ProcessState& p = process();
  return p.world_model == 1 || (p.engine_up && p.sessions > 0) ? 1 : p.world_model;
}

void EngineLock::lock() { engine_mutex().lock(); }
void EngineLock::unlock() { engine_mutex().unlock(); }

}  // namespace sonde::engine
