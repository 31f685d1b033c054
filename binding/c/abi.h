// What every file of the C binding (binding/c/abi_*.cc) shares: the entry
// guards, handle lookup (core/lookup.h), error reporting through error
// handlers (runtime/errors.h), and the weak MPI_ -> PMPI_ aliasing that
// makes every call interceptable.
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

#include "base/weak_alias.h"
#include "core/current_call.h"
#include "core/lookup.h"
#include "core/objects.h"
#include "core/process.h"
#include "include/mpi.h"
#include "runtime/errors.h"

namespace sonde::engine {

// Takes the engine lock where one is on and marks the call in progress
// for snapshots (core/current_call.h): the process's marker, or under
// MPI_THREAD_MULTIPLE the calling thread's, while it holds the lock.
class ApiGuard {
 public:
  explicit ApiGuard(const char* name) {
    if (EngineLock::enabled()) {
      EngineLock::lock();
      held_ = true;
      outer_ = CurrentCall::enter(t_current_call, name);
    } else {
      outer_ = CurrentCall::enter(g_current_call, name);
    }
  }
  ~ApiGuard() {
    if (held_) {
      CurrentCall::leave(t_current_call, outer_);
      EngineLock::unlock();
    } else {
      CurrentCall::leave(g_current_call, outer_);
    }
  }
  ApiGuard(const ApiGuard&) = delete;
  ApiGuard& operator=(const ApiGuard&) = delete;
 private:
  bool held_ = false;
  const char* outer_;
};

}  // namespace sonde::engine

// First line of every ABI function (except those legal outside init/finalize).
// The CallReturn is declared before the guard, so it is destroyed after the
// engine lock is released: work queued for the return (core/process.h)
// runs outside the lock, before the call returns to the user.
#define SONDE_ENTER(name)                                                                            \
  static constexpr const char* fn = name;                                                            \
  if (::sonde::engine::init_state() != 1) return ::sonde::engine::raise(nullptr, MPI_ERR_OTHER, fn); \
  ::sonde::engine::CallReturn sonde_call_return_;                                                    \
  ::sonde::engine::ApiGuard sonde_api_guard_(fn)

// ---- calls MPI allows at any time ----
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

// Last: the definitions QMPI dispatches to get their internal names
// (binding/c/qmpi.h); binding/c/qmpi_dispatch.cc defines PMPI_ and MPI_.
#include "binding/c/qmpi_rename.h"
