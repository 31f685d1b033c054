// PERUSE event handles and the writers of the per-communicator dispatch
// slots (dispatch.h has the readers' side; registry.cc the engine side,
// api.cc the PERUSE_* C functions).
//
// peruse/ is a leaf: it knows communicators only as the CommEvents block the
// engine embeds in each one and as MPI_Comm handle values. The engine tells it
// what it needs through EngineHooks and the comm_* life-cycle calls.
#pragma once

#include <string>
#include <vector>

#include "peruse/dispatch.h"

namespace sonde::peruse {

struct EngineHooks {
  int (*mpi_state)() = nullptr;                  // 0 before MPI_Init, 1 initialized, 2 finalized
  CommEvents* (*find_comm)(MPI_Comm) = nullptr;  // a live communicator's events, or null
  std::string (*comm_name)(MPI_Comm) = nullptr;  // for messages
  // The engine's own lock, taken around communicator lookups so a
  // concurrent MPI_Comm_free/dup cannot race them. Recursive: callbacks run
  // with it held. Lock order: engine, then the registry.
  void (*lock_engine)() = nullptr;
  void (*unlock_engine)() = nullptr;
  // Ends the whole job with `message` (a callback returned an error).
  void (*fatal)(const char* message, int code) = nullptr;  // does not return
};

// Called by the engine at MPI_Init.
void install_hooks(const EngineHooks& hooks);
// "NAME=value" of every environment variable that changed the library's
// behaviour, captured at MPI_Init (PERUSE_Query_environment).
void set_environment(const std::vector<std::string>& env);

// Communicator life cycle, called by the engine (serialised by it).
// `child` is a duplicate of `parent` (MPI_Comm_dup, dup_with_info, idup):
// every propagating handle of parent gets a twin on child.
void comm_duplicated(CommEvents& parent, CommEvents& child, MPI_Comm child_handle);
// The communicator is gone: its handles answer PERUSE_ERR_MPI_OBJECT from
// now on, nothing fires for it, and twins made by propagation are released.
void comm_freed(CommEvents& events, MPI_Comm handle = MPI_COMM_NULL);

// ---- Internal subscribers: the MPI_T bridge (mpit/) --------------------------
// A callback placed on a communicator's dispatch table beside the tools'
// PERUSE handles, invisible to the PERUSE API (its id never resolves as a
// peruse_event_h, it does not propagate, PERUSE_Init is not needed). Its
// presence sets the event's watched bit exactly as a tool's active handle
// does, so MPI_T pvars and events are fed by the same instrumentation points
// and cost nothing while nothing subscribes. Serialised with the other
// writers; call with the engine lock held. Released automatically when the
// communicator is freed (unsubscribe of a released id is a no-op).
peruse_event_h subscribe(CommEvents& events, MPI_Comm comm, int event, peruse_comm_callback_f* callback, void* param);
void unsubscribe(peruse_event_h id);

// The engine reports every communicator that comes into being (after
// comm_duplicated for a duplicate) and, through comm_freed, every one that
// goes; the observer (the MPI_T bridge) follows them. One observer.
struct CommObserver {
  void (*created)(CommEvents& events, MPI_Comm handle) = nullptr;
  void (*freed)(CommEvents& events, MPI_Comm handle) = nullptr;
};
void set_comm_observer(const CommObserver& observer);
// True while this thread runs a callback of a PERUSE dispatch (a tool's
// handle or an internal subscriber), i.e. inside the engine.
bool inside_upcall();
void comm_created(CommEvents& events, MPI_Comm handle);

}  // namespace sonde::peruse
