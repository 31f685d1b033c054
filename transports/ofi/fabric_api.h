// libfabric's exported entry points, loaded on first use.
//
// libsonde.so does not link libfabric: Debian's libfabric links its PSM
// providers' libraries, whose constructors install SIGSEGV/SIGBUS handlers
// that turn a rank's crash into exit status 1 and write *.btr files into
// the working directory. Loading libfabric only when the ofi transport
// opens (a peer on another host, or SONDE_TRANSPORT=ofi) keeps single-host
// jobs free of it; before loading it, fabric_api() asks those libraries not
// to install their handlers (IPATH_NO_BACKTRACE, unless the user set it).
// Everything else the transport calls is an inline function of libfabric's
// headers, dispatched through the objects these return.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>

namespace sonde::transport::ofi {

struct FabricApi {
  int (*getinfo)(uint32_t version, const char* node, const char* service, uint64_t flags, const fi_info* hints,
                 fi_info** info);
  void (*freeinfo)(fi_info* info);
  fi_info* (*dupinfo)(const fi_info* info);  // dupinfo(nullptr) is fi_allocinfo()
  int (*fabric)(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
  const char* (*strerror)(int errnum);
};

// Loads libfabric.so.1 once (thread-safe); throws std::runtime_error naming
// the library and dlerror()'s reason if it or an entry point is missing.
const FabricApi& fabric_api();

// True once fabric_api() has loaded the library (tests: single-host jobs
// must never load it).
bool fabric_loaded();

}  // namespace sonde::transport::ofi
