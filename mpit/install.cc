// Installs the bridge's communicator observer when the library loads, so
// MPI_COMM_WORLD and MPI_COMM_SELF are followed from MPI_Init on whether or
// not MPI_T is initialized yet.
#include "mpit/bridge.h"

namespace {
struct InstallBridge {
  InstallBridge() { sonde::mpit::bridge::install(); }
} g_install_bridge;
}  // namespace
