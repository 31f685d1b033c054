// The registry of progress hooks (progress_hooks.h).
#include "core/progress_hooks.h"

#include <cstdio>
#include <cstdlib>

namespace sonde::engine {

int g_hooked_in_flight = 0;

namespace {
// Zero-initialized before any constructor runs, so registration at load
// time works in any order.
ProgressHook* g_hooks[kMaxProgressHooks];
int g_hook_count = 0;
}  // namespace

void register_progress_hook(ProgressHook* hook) {
  if (g_hook_count == kMaxProgressHooks) {
    std::fprintf(stderr, "sonde: more than %d progress hooks registered\n", kMaxProgressHooks);
    std::abort();
  }
  g_hooks[g_hook_count++] = hook;
}

void set_in_flight(ProgressHook* hook, int n) {
  g_hooked_in_flight += n - hook->in_flight;
  hook->in_flight = n;
}

int run_progress_hooks() {
  int moved = 0;
  for (int i = 0; i < g_hook_count; ++i)
    if (g_hooks[i]->in_flight != 0) moved += g_hooks[i]->run();
  return moved;
}

}  // namespace sonde::engine
