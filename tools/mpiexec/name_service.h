// The PMIx name service mpiexec serves to its clients: PMIx_Publish,
// PMIx_Lookup and PMIx_Unpublish (MPI_Publish_name, MPI_Lookup_name,
// MPI_Unpublish_name, and the port exchange of MPI_Comm_accept/connect).
//
// One table per launcher: every job it serves, spawned ones included, sees
// the same names. A key is published once (a second publish of a key that
// exists fails with PMIX_ERR_DUPLICATE_KEY) and only its publisher's
// namespace may unpublish it. A lookup with PMIX_WAIT waits until every key
// it asks for exists; without it, missing keys answer PMIX_ERR_NOT_FOUND.
// Values are kept as PMIx values (copied in, copied out).
#pragma once

#include <pmix_server.h>

#include <functional>

namespace sonde::mpiexec {

// Sets the publish, lookup and unpublish entries of `m`.
void install_name_service(pmix_server_module_t& m);

// Runs `reply` on the launcher's thread (PmixHost::post); defined beside
// the server.
void name_service_post(std::function<void()> reply);

}  // namespace sonde::mpiexec
