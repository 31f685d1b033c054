// The current-call markers, probe records and the snapshot request flag
// (current_call.h).
#include "core/current_call.h"

namespace sonde::engine {

constinit const char* g_current_call = nullptr;
constinit thread_local const char* t_current_call SONDE_SIGNAL_TLS = nullptr;
constinit thread_local ProbeWait t_probe_wait SONDE_SIGNAL_TLS{};
constinit thread_local ProbeWait t_probe_polling SONDE_SIGNAL_TLS{};
volatile sig_atomic_t g_snapshot_pending = 0;
void (*g_snapshot_serve)() = nullptr;

void serve_pending_snapshot() {
  g_snapshot_pending = 0;
  if (g_snapshot_serve) g_snapshot_serve();
}

}  // namespace sonde::engine
