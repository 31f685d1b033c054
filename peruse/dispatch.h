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
#include <cstddef>
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
// `watched` has bit e set exactly when slot[e] is non-null: the hot path
// tests bits of this one word (loaded once per engine operation) and touches
// the slots only when a bit is set.
struct CommEvents {
  std::atomic<uint32_t> watched{0};
  std::atomic<const ActiveSet*> slot[kNumEvents] = {};
};
static_assert(kNumEvents <= 32);

inline uint32_t watched(const CommEvents& e) { return e.watched.load(std::memory_order_relaxed); }
inline constexpr uint32_t bit(int event) { return 1u << event; }
template <size_t N>
constexpr uint32_t bits_of(const uint8_t (&events)[N]) {
  uint32_t b = 0;
  for (uint8_t e : events) b |= bit(e);
  return b;
}

// Invokes every active handle of `event` on `events`, each with its own
// copy of `spec` (the last one gets `spec` itself, which it may modify). Out
// of line: only reached when something is active.
void fire_slow(CommEvents& events, int event, uint64_t unique_id, peruse_comm_spec_t& spec);

// The same, for several events in a row that share one spec and id (those
// of `event_list` whose bit is set in `mask`), in one reader section.
void fire_sequence(CommEvents& events, uint32_t mask, const uint8_t* event_list, int n, uint64_t unique_id,
                   peruse_comm_spec_t& spec);

// unique_id values are the engine's (docs/peruse.md): requests use their
// descriptor's address (low 3 bits 0); messages, searches and request-less
// sends use counters tagged in the low bits, so kinds never coincide.

}  // namespace sonde::peruse

#ifndef SONDE_PERUSE_OFF
// `mask` is a value of peruse::watched(events), loaded once by the caller.
#define SONDE_FIRE_IF(mask, events, event, unique_id, comm, buf, count, datatype, peer, tag, operation)      \
  do {                                                                                                        \
    if (__builtin_expect(((mask) & ::sonde::peruse::bit(event)) != 0, 0)) {                                   \
      peruse_comm_spec_t sonde_spec_{(comm), const_cast<void*>(static_cast<const void*>(buf)),         \
                                           static_cast<int>(count), (datatype), (peer), (tag), (operation)}; \
      ::sonde::peruse::fire_slow((events), (event), (unique_id), sonde_spec_);                                \
    }                                                                                                         \
  } while (0)
// Several events back to back with one spec and id: `...` lists the events
// in firing order. One reader section for all of them.
#define SONDE_FIRE_SEQUENCE_IF(mask, events, unique_id, comm, buf, count, datatype, peer, tag, operation, ...)    \
  do {                                                                                                            \
    static constexpr uint8_t sonde_events_[] = {__VA_ARGS__};                                                     \
    constexpr uint32_t sonde_bits_ = ::sonde::peruse::bits_of(sonde_events_);                                     \
    if (__builtin_expect(((mask) & sonde_bits_) != 0, 0)) {                                                       \
      peruse_comm_spec_t sonde_spec_{(comm), const_cast<void*>(static_cast<const void*>(buf)),                   \
                                     static_cast<int>(count), (datatype), (peer), (tag), (operation)};           \
      ::sonde::peruse::fire_sequence((events), (mask), sonde_events_, int(sizeof sonde_events_), (unique_id),     \
                                     sonde_spec_);                                                                \
    }                                                                                                             \
  } while (0)
#define SONDE_FIRE(events, event, unique_id, comm, buf, count, datatype, peer, tag, operation) \
  SONDE_FIRE_IF(::sonde::peruse::watched(events), events, event, unique_id, comm, buf, count, datatype, peer, tag, \
                operation)
// The watched mask of `events` (0 when nothing is active), for hoisting.
#define SONDE_WATCHED_MASK(events) ::sonde::peruse::watched(events)
#else
// Arguments are type-checked but never evaluated.
#define SONDE_FIRE(events, event, unique_id, comm, buf, count, datatype, peer, tag, operation)           \
  do {                                                                                                   \
    if (false) {                                                                                         \
      (void)(events), (void)(event), (void)(unique_id), (void)(comm), (void)(buf), (void)(count),        \
          (void)(datatype), (void)(peer), (void)(tag), (void)(operation);                                \
    }                                                                                                    \
  } while (0)
#define SONDE_FIRE_IF(mask, events, event, unique_id, comm, buf, count, datatype, peer, tag, operation) \
  SONDE_FIRE(events, event, unique_id, comm, buf, count, datatype, peer, tag, operation)
#define SONDE_FIRE_SEQUENCE_IF(mask, events, unique_id, comm, buf, count, datatype, peer, tag, operation, ...) \
  SONDE_FIRE(events, 0, unique_id, comm, buf, count, datatype, peer, tag, operation)
#define SONDE_WATCHED_MASK(events) 0u
#endif
