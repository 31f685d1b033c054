// Errors: the strings of the predefined error classes, the user's error
// classes, codes and strings (MPI_Add_error_*), user error handlers, and
// raising an error from an MPI call through the handler that applies.
// Callers hold the engine lock (or the lock of the calls MPI allows at any
// time, binding/c/abi.h).
#pragma once

#include "core/objects.h"
#include "include/mpi.h"

namespace sonde::engine {

// Report an error class from function `fn` on `comm` (null: no communicator
// involved -> MPI_COMM_WORLD's handler, as MPI says). With
// MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT this prints one line naming the
// function and error and ends the job; otherwise it returns `code`.
int raise(Comm* comm, int code, const char* fn);
inline int finish(Comm* comm, int code, const char* fn) {
  return code == MPI_SUCCESS ? MPI_SUCCESS : raise(comm, code, fn);
}

// Prints `message`, asks the launcher to end the job with `code` (1 if 0)
// and exits.
[[noreturn]] void end_job(int code, const char* message);

// The string of any error code: predefined, user-added, or "unknown error
// code".
const char* error_string(int code);
// A predefined error class or code (they coincide).
bool predefined_error(int code);

// If `handler` is a user error handler, call it for (comm, *code) -- comm
// null means MPI_COMM_WORLD -- and return true; the call's result stays *code.
bool call_user_errhandler(int handler, Comm* comm, int* code);

// User error classes and codes (MPI_Add_error_class/code/string and
// MPI_Remove_error_*). add_error_code: -1 if `error_class` is not a class.
// The set/remove calls answer false when MPI says the call is erroneous
// (unknown code, predefined code, a class with codes left).
int add_error_class();
int add_error_code(int error_class);
bool set_error_string(int code, const char* text);
bool remove_error_class(int error_class);
bool remove_error_code(int code);
bool remove_error_string(int code);
// The code's string ("" until one is added), or null for codes that are not
// user codes; its class, or -1.
const char* user_error_string(int code);
int user_error_class(int code);
// The largest error code in use (MPI_LASTUSEDCODE).
int* last_used_code();

}  // namespace sonde::engine
