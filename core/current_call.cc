// The current-call marker and the snapshot request flag (current_call.h).
#include "core/current_call.h"

namespace sonde::engine {

constinit const char* g_current_call = nullptr;
volatile sig_atomic_t g_snapshot_pending = 0;
void (*g_snapshot_serve)() = nullptr;

void serve_pending_snapshot() {
  g_snapshot_pending = 0;
  if (g_snapshot_serve) g_snapshot_serve();
}

}  // namespace sonde::engine
