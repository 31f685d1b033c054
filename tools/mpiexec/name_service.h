// The PMIx face of the name service (name_table.h): the publish, lookup and
// unpublish upcalls of a PMIx server, mpiexec's or a sonde-hostd's. Each
// request becomes a NameRequest, its values packed with PMIx_Data_pack,
// and goes to ClientEvents::names on the launcher's thread; the reply goes
// back to libpmix from there, lookups' values unpacked again.
#pragma once

#include <pmix_server.h>

#include <functional>

#include "tools/mpiexec/name_table.h"

namespace sonde::mpiexec {

// Sets the publish, lookup and unpublish entries of `m`.
void install_name_service(pmix_server_module_t& m);

// Runs `reply` on the launcher's thread (PmixHost::post); defined beside
// the server.
void name_service_post(std::function<void()> reply);

// Hands `request` to whoever keeps the launch's names (ClientEvents::names
// of the server's events); defined beside the server.
void name_service_forward(NameRequest request, NameTable::Done done);

}  // namespace sonde::mpiexec
