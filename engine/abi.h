// Helpers shared by the C ABI files (engine/abi_*.cc): the entry guard,
// handle lookup, error reporting through error handlers, and the weak
// MPI_ -> PMPI_ aliasing that makes every call interceptable.
//
// Pattern of every ABI function:
//
//   extern "C" int PMPI_Barrier(MPI_Comm comm) {
//     SONDE_ENTER("MPI_Barrier");           // not initialized -> error; takes the lock
//     Comm* c = find_comm(comm);
//     if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
//     return finish(c, coll::barrier(c), fn);  // errhandler applied on failure
//   }
//   SONDE_WEAK_ALIAS(Barrier)
//
// Inside the library nothing calls an MPI_ symbol: internal code calls the
// engine directly, so tools see exactly the user's calls.
#pragma once

#include <mutex>

#include "engine/objects.h"
#include "include/mpi.h"

#define SONDE_STR2(x) #x
#define SONDE_STR(x) SONDE_STR2(x)
#define SONDE_WEAK_ALIAS(name) _Pragma(SONDE_STR(weak MPI_##name = PMPI_##name))

namespace sonde::engine {

// The engine lock. Held by every ABI call when the thread level is
// MPI_THREAD_MULTIPLE (a coarse lock for now); waits release it between
// progress passes so other threads move too.
class EngineLock {
 public:
  static void lock();
  static void unlock();
  static bool enabled();
};

class ApiGuard {
 public:
  ApiGuard() { if (EngineLock::enabled()) { EngineLock::lock(); held_ = true; } }
  ~ApiGuard() { if (held_) EngineLock::unlock(); }
  ApiGuard(const ApiGuard&) = delete;
  ApiGuard& operator=(const ApiGuard&) = delete;
 private:
  bool held_ = false;
};

// 0 before MPI_Init, 1 while initialized, 2 after MPI_Finalize.
int init_state();

// Report an error class from function `fn` on `comm` (null: no communicator
// involved -> MPI_COMM_WORLD's handler, as MPI says). With
// MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT this prints one line naming the
// function and error and ends the job; otherwise it returns `code`.
int raise(Comm* comm, int code, const char* fn);
inline int finish(Comm* comm, int code, const char* fn) {
  return code == MPI_SUCCESS ? MPI_SUCCESS : raise(comm, code, fn);
}

Comm* find_comm(MPI_Comm h);
// Datatypes (engine/abi_datatype.cc). A live, not user-freed type, or null.
Datatype* find_datatype(MPI_Datatype h);
// Committed datatype usable for communication, or null.
Datatype* find_comm_datatype(MPI_Datatype h);
// References that keep a derived type alive after MPI_Type_free (requests
// using it, parents naming it); no-ops on predefined types.
void retain_datatype(Datatype* t);
void release_datatype(Datatype* t);

}  // namespace sonde::engine

// First line of every ABI function (except those legal outside init/finalize).
#define SONDE_ENTER(name)                                                     \
  static constexpr const char* fn = name;                                     \
  if (::sonde::engine::init_state() != 1)                                     \
    return ::sonde::engine::raise(nullptr, MPI_ERR_OTHER, fn);                \
  ::sonde::engine::ApiGuard sonde_api_guard_

// ---- helper `comm`: calls MPI allows at any time ----
// MPI 4.1 section 12.4.1 (table 9): the MPI_Info calls, MPI_Errhandler_free,
// the error class/code/string calls may be made before MPI_Init and after
// MPI_Finalize, by several threads at once. They take the engine lock when
// it is on, else a lock of their own (which serializes them among
// themselves only). No state check: errors before MPI_Init are fatal (the
// initial error handler).
namespace sonde::engine {
class AnytimeGuard {
 public:
  AnytimeGuard() : engine_(EngineLock::enabled()) {
    if (engine_) EngineLock::lock();
    else own().lock();
  }
  ~AnytimeGuard() {
    if (engine_) EngineLock::unlock();
    else own().unlock();
  }
  AnytimeGuard(const AnytimeGuard&) = delete;
  AnytimeGuard& operator=(const AnytimeGuard&) = delete;
 private:
  static std::recursive_mutex& own() {
    static std::recursive_mutex m;
    return m;
  }
  bool engine_;
};
}  // namespace sonde::engine

#define SONDE_ENTER_ANYTIME(name)         \
  static constexpr const char* fn = name; \
  ::sonde::engine::AnytimeGuard sonde_api_guard_
