// The handle registry PERUSE's writers share (registry.cc, the engine side;
// api.cc, the C interface): user and internal handles, the engine's hooks,
// and the calls that create handles and publish the dispatch arrays. Not
// for use outside peruse/.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "peruse/registry.h"

namespace sonde::peruse {

struct Handle {
  uint32_t generation = 0;
  bool live = false;
  int event = PERUSE_EVENT_INVALID;
  CommEvents* events = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  bool comm_freed = false;
  peruse_comm_callback_f* callback = nullptr;
  void* param = nullptr;
  bool active = false;
  bool propagate = false;
  bool twin = false;      // made by propagation, released with its communicator
  bool internal = false;  // an MPI_T bridge subscription (subscribe()): not a user handle
};

// Everything writers touch. Readers (dispatch.h, Reader) never take this lock.
struct Registry {
  std::mutex mutex;
  std::vector<Handle> handles{1};  // slot 0 is PERUSE_EVENT_HANDLE_NULL
  std::vector<uint32_t> free_slots;
  std::vector<const ActiveSet*> retired;
  EngineHooks hooks;
  bool initialized = false;
  std::vector<std::string> env;
  std::vector<char*> env_ptrs;
  CommObserver observer;
};

inline Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: callbacks may fire at exit
  return *r;
}

// A new live, inactive handle (caller holds registry().mutex); *out (if
// given) is valid until the handle table next grows.
peruse_event_h new_handle(Registry& r, int event, CommEvents* events, MPI_Comm comm, peruse_comm_callback_f* callback,
                          void* param, Handle** out);
// Rebuilds and publishes the array of active handles of (events, event).
// Caller holds r.mutex.
void republish(Registry& r, CommEvents* events, int event);
// PERUSE_Lock / PERUSE_Unlock's lock.
std::mutex& tool_lock();

}  // namespace sonde::peruse
