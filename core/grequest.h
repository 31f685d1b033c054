// Generalized requests (MPI 4.1 13.2; RequestKind::kGeneralized): requests
// whose completion the user signals, with the user's query, free and cancel
// callbacks. Callers hold the engine lock.
#pragma once

#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine {

// MPI_Grequest_start: an active request owned by the callbacks; null when
// the request table is full.
Request* start_generalized(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free,
                           MPI_Grequest_cancel_function* cancel, void* extra_state);
// MPI_Grequest_complete: completes r; if the user already freed it, free_fn
// runs now and its code is returned.
int complete_generalized(Request* r);
// Wait/Test on a completed one: query_fn fills the status, then free_fn
// runs, then the request is released and *handle nulled. Returns the first
// failing callback's code.
int retire_generalized(MPI_Request* handle, Request* r, MPI_Status* status);
// MPI_Request_get_status on a completed one: query_fn only.
int query_generalized(Request* r, MPI_Status* status);
// MPI_Request_free: free_fn now if complete, else when it completes.
int free_generalized(Request* r);
// MPI_Cancel: cancel_fn(extra_state, complete).
int cancel_generalized(Request* r);

}  // namespace sonde::engine
