// Error handlers, user-defined error classes and codes, and generalized
// requests: the parts of the C ABI that other ABI files call back into.
// Callers hold the engine lock.
#pragma once

#include "engine/objects.h"
#include "include/mpi.h"

namespace sonde::engine {

// If `handler` is a user error handler, call it for (comm, *code) -- comm
// null means MPI_COMM_WORLD -- and return true; the call's result stays *code.
bool call_user_errhandler(int handler, Comm* comm, int* code);

// User error codes (MPI_Add_error_class/code/string): the code's string (""
// until one is added) or null for codes that are not user codes; its class,
// or -1.
const char* user_error_string(int code);
int user_error_class(int code);
// The largest error code in use (MPI_LASTUSEDCODE).
int* last_used_code();

// Generalized requests (RequestKind::kGeneralized). Wait/Test on a completed
// one: query_fn fills the status, then free_fn runs, then the request is
// released. Returns the first failing callback's code.
int retire_generalized(MPI_Request* handle, Request* r, MPI_Status* status);
// MPI_Request_get_status on a completed one: query_fn only.
int query_generalized(Request* r, MPI_Status* status);
// MPI_Request_free: free_fn now if complete, else when it completes.
int free_generalized(Request* r);
// MPI_Cancel: cancel_fn(extra_state, complete).
int cancel_generalized(Request* r);

}  // namespace sonde::engine
