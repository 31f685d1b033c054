// The one header the engine includes to fire PERUSE events.
//
// Per communicator, per event, the active handles form an immutable array
// published through an atomic pointer (CommEvents::slot). Firing an event
// nobody watches is one relaxed load and one predictable branch: no lock, no
// call, no allocation. Writers (register, activate, deactivate, release,
// propagate, communicator free) serialise among themselves in registry.cc,
// build a new array, publish it, and free the old one once no reader can
// hold it (see fire_slow for the reader side of that protocol).
//
// Built with --define=peruse=off (the specification's production library,
// section 6.3) SONDE_FIRE expands to nothing and the API reports zero
// supported events.
#pragma once

#include <atomic>
#include <cstdint>

#include "include/peruse.h"

namespace sonde::peruse {

inline constexpr int kNumEvents = PERUSE_COMM_REQ_XFER_CONTINUE + 1;

struct Entry {
  peruse_event_h handle;
  peruse_comm_callback_f* callback;
  void* param;
};

// Immutable once published.
struct ActiveSet {
  uint32_t count;
  Entry entries[1];  // `count` of them
};

// Lives inside each communicator; zero-initialised means "nothing active".
struct CommEvents {
  std::atomic<const ActiveSet*> slot[kNumEvents] = {};
};

// Invokes every active handle of `event` on `events`. Out of line: only
// reached when something is active.
void fire_slow(CommEvents& events, int event, uint64_t unique_id, MPI_Comm comm, const void* buf, int64_t count,
               MPI_Datatype datatype, int peer, int tag, int operation);

// unique_id spaces: requests and messages use their descriptor's address
// (8-byte aligned, so the low 3 bits are 0); searches and request-less sends
// draw from counters tagged in the low bits, so ids of different kinds never
// coincide and none is 0.
uint64_t next_search_id();
uint64_t next_transient_request_id();

}  // namespace sonde::peruse

#ifndef SONDE_PERUSE_OFF
#define SONDE_FIRE(events, event, unique_id, comm, buf, count, datatype, peer, tag, operation)                   \
  do {                                                                                                           \
    if (__builtin_expect((events).slot[(event)].load(std::memory_order_relaxed) != nullptr, 0))                 \
      ::sonde::peruse::fire_slow((events), (event), (unique_id), (comm), (buf), (count), (datatype), (peer), (tag), \
                                 (operation));                                                                   \
  } while (0)
// True when any handle of `event` is active on `events` (to skip preparing
// arguments that cost something, e.g. a search id).
#define SONDE_WATCHED(events, event) \
  (__builtin_expect((events).slot[(event)].load(std::memory_order_relaxed) != nullptr, 0))
#else
#define SONDE_FIRE(events, event, unique_id, comm, buf, count, datatype, peer, tag, operation) \
  do {                                                                                         \
  } while (0)
#define SONDE_WATCHED(events, event) false
#endif
