// Installs the bridge's communicator observer when the library loads, so
// MPI_COMM_WORLD and MPI_COMM_SELF are followed from MPI_Init on whether or
// not MPI_T is initialized yet; and the hook that delivers buffered MPI_T
// event instances when an MPI call returns (core/process.h).
#include "core/process.h"
#include "mpit/bridge.h"
#include "mpit/state.h"

namespace {
struct InstallBridge {
  InstallBridge() {
    sonde::mpit::bridge::install();
    sonde::engine::set_call_return_hook(sonde::mpit::deliver_at_call_return);
  }
} g_install_bridge;
}  // namespace
