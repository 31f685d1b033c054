// The process-state object and the engine lock (process.h).
#include "core/process.h"

#include <atomic>
#include <mutex>

namespace sonde::engine {

namespace {
std::recursive_mutex& engine_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

// Which thread holds the engine lock and how often (written under it).
std::atomic<pthread_t> g_lock_owner{};
int g_lock_depth = 0;
std::atomic<CallReturnHook> g_call_return_hook{nullptr};
}  // namespace

constinit ProcessState g_process_state;
std::atomic<bool> g_call_return_pending{false};

void EngineLock::lock() {
  engine_mutex().lock();
  if (g_lock_depth++ == 0) g_lock_owner.store(pthread_self(), std::memory_order_relaxed);
}
void EngineLock::unlock() {
  if (--g_lock_depth == 0) g_lock_owner.store(pthread_t{}, std::memory_order_relaxed);
  engine_mutex().unlock();
}
bool EngineLock::held_by_me() {
  return enabled() && pthread_equal(g_lock_owner.load(std::memory_order_relaxed), pthread_self());
}

void set_call_return_hook(CallReturnHook hook) { g_call_return_hook.store(hook, std::memory_order_release); }

void run_call_return() {
  if (CallReturnHook h = g_call_return_hook.load(std::memory_order_acquire)) h();
}

}  // namespace sonde::engine
