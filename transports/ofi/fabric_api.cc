#include "transports/ofi/fabric_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace sonde::transport::ofi {
namespace {

FabricApi g_api{};
bool g_loaded = false;
std::string g_error;

// The versions the header's declarations bind to at link time, so the
// loaded functions have the signatures this file was compiled against.
template <typename F>
bool bind(void* lib, F*& out, const char* name, const char* version) {
  out = reinterpret_cast<F*>(dlvsym(lib, name, version));
  if (out == nullptr) out = reinterpret_cast<F*>(dlsym(lib, name));
  return out != nullptr;
}

void load() {
  // libinfinipath (under the psm provider) installs a backtrace handler for
  // SIGSEGV, SIGBUS and others in its constructor unless this is set.
  setenv("IPATH_NO_BACKTRACE", "1", /*overwrite=*/0);
  void* lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    g_error = std::string("sonde ofi: cannot load libfabric.so.1: ") + (why ? why : "unknown reason");
    return;
  }
  const bool ok =
      bind(lib, g_api.getinfo, "fi_getinfo", "FABRIC_1.3") && bind(lib, g_api.freeinfo, "fi_freeinfo", "FABRIC_1.3") &&
      bind(lib, g_api.dupinfo, "fi_dupinfo", "FABRIC_1.3") && bind(lib, g_api.fabric, "fi_fabric", "FABRIC_1.1") &&
      bind(lib, g_api.strerror, "fi_strerror", "FABRIC_1.0");
  if (!ok) {
    g_error = "sonde ofi: libfabric.so.1 lacks an entry point Sonde needs (fi_getinfo, fi_freeinfo, fi_dupinfo, "
              "fi_fabric, fi_strerror)";
    g_api = FabricApi{};
    return;
  }
  g_loaded = true;
}

}  // namespace

const FabricApi& fabric_api() {
  static std::once_flag once;
  std::call_once(once, load);
  if (!g_loaded) throw std::runtime_error(g_error);
  return g_api;
}

bool fabric_loaded() {
  // Read after fabric_api()'s call_once, or never set: no race on the
  // paths that ask (tests, after MPI_Init).
  return g_loaded;
}

}  // namespace sonde::transport::ofi
