// The one header the engine includes to fire PERUSE events.
//
// Per communicator, per event, the active handles form an immutable array
// published through an atomic pointer (CommEvents::slot). Firing an event
// nobody watches is one relaxed load and one predictable branch: no lock, no
// call, no allocation. Writers (register, activate, deactivate, release,
// propagate, communicator free) serialise among themselves in registry.cc,
// build a new array, publish it, and free the old one once no reader can
// hold it (see Reader below for the reader side of that protocol).
//
// Built with --define=peruse=off (the specification's production library,
// section 6.3) SONDE_FIRE expands to nothing and the API reports zero
// supported events.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "include/peruse.h"

namespace sonde::peruse {

inline constexpr int kNumEvents = PERUSE_COMM_REQ_XFER_CONTINUE + 1;

struct Entry {
  peruse_event_h handle;
  peruse_comm_callback_f* callback;
  void* param;
};

// Immutable once published. `event` and `comm` (the user's handle) are
// those of every entry: the dispatcher names them if a callback fails.
// `call` is what the dispatcher invokes, always one call: the only entry
// itself, or, with several, detail::fan_out with this set as its param
// (so the hot path has no count test).
struct ActiveSet {
  Entry call;
  uint32_t count;
  int event;
  MPI_Comm comm;
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
constexpr uint32_t bits_of(std::initializer_list<int> events) {
  uint32_t b = 0;
  for (int e : events) b |= bit(e);
  return b;
}

// Fills every field of a spec. The FIRE macros build their spec with it
// rather than with an initializer list, which has GCC zero the padding
// first (a `rep stos`, slow to start, on the message events).
[[gnu::always_inline]] inline void set_spec(peruse_comm_spec_t& s, MPI_Comm comm, const void* buf, int count,
                                            MPI_Datatype datatype, int peer, int tag, int operation) {
  s.comm = comm;
  s.buf = const_cast<void*>(buf);
  s.count = count;
  s.datatype = datatype;
  s.peer = peer;
  s.tag = tag;
  s.operation = operation;
}

// A spec with these fields (built in place where it initialises a spec).
[[gnu::always_inline]] inline peruse_comm_spec_t make_spec(MPI_Comm comm, const void* buf, int64_t count,
                                                           MPI_Datatype datatype, int peer, int tag, int operation) {
  peruse_comm_spec_t s;
  set_spec(s, comm, buf, static_cast<int>(count), datatype, peer, tag, operation);
  return s;
}

// ---- The reader side (the engine's firing path) ---------------------------
// Writers free a retired array once no thread is inside a reader section.
// A thread announces itself in its own depth word with plain stores (no
// read-modify-write, no fence on x86: the writer issues an asymmetric fence,
// membarrier, before it reads the depth words; registry.cc). The depth word
// doubles as the "inside an upcall" state PERUSE_Lock needs, and its top bit
// records that PERUSE_Lock refused the lock in the current upcall.
namespace detail {
struct alignas(64) ReaderSlot {
  std::atomic<uint32_t> depth{0};
};
inline constexpr uint32_t kDenied = 1u << 31;
struct ThreadState {
  // This thread's slot, registered on first use (it outlives the thread).
  // `reader` is set only where the writers' membarrier makes a reader fence
  // unnecessary; otherwise (no membarrier, TSan) the slot is `fenced` and
  // every section enters through enter_slow.
  ReaderSlot* reader = nullptr;
  ReaderSlot* fenced = nullptr;
  bool holds_tool_lock = false;
};
extern constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;
inline ReaderSlot* current_slot() { return t_state.reader ? t_state.reader : t_state.fenced; }
// Enters a section the slow way: registers the thread's slot on first use,
// and fences (or, under TSan, uses a seq_cst read-modify-write) where the
// writers cannot fence for the readers. Returns the slot and the depth
// before entering.
struct Entered {
  ReaderSlot* me;
  uint32_t outer;
};
[[gnu::noinline]] Entered enter_slow();
// ActiveSet::call of a set with several handles (`param` is the set): calls
// every entry, each its own upcall (any but the last gets a copy of spec),
// and returns the first value that is not MPI_SUCCESS.
int fan_out(peruse_event_h, MPI_Aint unique_id, peruse_comm_spec_t* spec, void* param);
// A callback returned an error: ends the job (specification 5.1.2).
[[noreturn, gnu::noinline, gnu::cold]] void callback_failed(const ActiveSet* set, int rc, ReaderSlot* me,
                                                            uint32_t outer);
}  // namespace detail

// A reader section on this thread: arrays loaded inside it stay valid until
// it ends. Sections nest. Entering is a TLS load and a plain store, leaving
// one store. Only reached when the caller's watched mask has a bit set.
class Reader {
 public:
  [[gnu::always_inline]] Reader() {
    using namespace detail;
    ReaderSlot* me = t_state.reader;
    if (__builtin_expect(me != nullptr, 1)) {
      outer_ = me->depth.load(std::memory_order_relaxed);
      me->depth.store((outer_ & ~kDenied) + 1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the writers' membarrier is our fence
    } else {
      const Entered e = enter_slow();
      me = e.me;
      outer_ = e.outer;
    }
    me_ = me;
    inside_ = (outer_ & ~kDenied) + 1;
  }
  [[gnu::always_inline]] ~Reader() { me_->depth.store(outer_, std::memory_order_release); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // As fire, with a fresh copy of `spec` for the callbacks.
  [[gnu::always_inline]] void fire_copy(const CommEvents& events, int event, uint64_t unique_id,
                                        const peruse_comm_spec_t& spec) {
    const ActiveSet* set = load(events, event);
    if (!set) return;
    peruse_comm_spec_t scratch = spec;
    dispatch(set, unique_id, scratch);
  }

  // Invokes every active handle of `event` on `events`, each callback one
  // upcall. The last (usually only) callback gets `spec` itself, which it
  // may modify; the others get copies. Nothing runs if the event was
  // deactivated since the caller loaded its mask.
  [[gnu::always_inline]] void fire(const CommEvents& events, int event, uint64_t unique_id, peruse_comm_spec_t& spec) {
    if (const ActiveSet* set = load(events, event)) dispatch(set, unique_id, spec);
  }
  // As fire, for the last event of the section: the section's end (which
  // restores the outer depth) also ends the upcall.
  // The active handles of `event` (null: none), for `call`. Tests the slot
  // itself rather than the caller's mask: with the event active that is
  // one test instead of two.
  [[gnu::always_inline]] static const ActiveSet* active(uint32_t, const CommEvents& events, int event) {
    return load(events, event);
  }
  [[gnu::always_inline]] void call(const ActiveSet* set, uint64_t unique_id, peruse_comm_spec_t& spec) {
    dispatch(set, unique_id, spec);
  }
  // As call, for the last event of the section (see fire_last).
  [[gnu::always_inline]] void call_last(const ActiveSet* set, uint64_t unique_id, peruse_comm_spec_t& spec) {
    dispatch<false>(set, unique_id, spec);
  }
  [[gnu::always_inline]] void fire_last(const CommEvents& events, int event, uint64_t unique_id,
                                        peruse_comm_spec_t& spec) {
    if (const ActiveSet* set = load(events, event)) dispatch<false>(set, unique_id, spec);
  }

 private:
  [[gnu::always_inline]] static const ActiveSet* load(const CommEvents& events, int event) {
#if defined(__SANITIZE_THREAD__)
    return events.slot[event].load(std::memory_order_seq_cst);
#else
    return events.slot[event].load(std::memory_order_acquire);
#endif
  }
  template <bool kEndUpcall = true>
  [[gnu::always_inline]] void dispatch(const ActiveSet* set, uint64_t unique_id, peruse_comm_spec_t& spec) {
    const Entry& e = set->call;
    int rc = e.callback(e.handle, static_cast<MPI_Aint>(unique_id), &spec, e.param);
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) detail::callback_failed(set, rc, me_, outer_);
    if constexpr (kEndUpcall) me_->depth.store(inside_, std::memory_order_relaxed);  // clears kDenied
  }

  detail::ReaderSlot* me_;
  uint32_t outer_, inside_;
};

#ifdef SONDE_PERUSE_OFF
inline constexpr bool kCompiledIn = false;
#else
inline constexpr bool kCompiledIn = true;
#endif

// For code compiled twice, watched and plain (the engine's twins): one
// reader section for all the events of an operation. ReaderIf<true> is a
// Reader, ReaderIf<false> (and anything with PERUSE compiled out) nothing.
struct NoReader {
  void fire(const CommEvents&, int, uint64_t, peruse_comm_spec_t&) {}
  static constexpr const ActiveSet* active(uint32_t, const CommEvents&, int) { return nullptr; }
  void call(const ActiveSet*, uint64_t, peruse_comm_spec_t&) {}
  void call_last(const ActiveSet*, uint64_t, peruse_comm_spec_t&) {}
};
template <bool kOpen>
using ReaderIf = std::conditional_t<kOpen && kCompiledIn, Reader, NoReader>;

// The same, out of line: for event sites in hot code shared with the
// unwatched path, whose registers an inlined dispatch would cost.
[[gnu::noinline, gnu::cold]] void fire_slow(const CommEvents& events, int event, uint64_t unique_id,
                                            peruse_comm_spec_t& spec);

// One event, in its own reader section.
[[gnu::always_inline]] inline void fire(const CommEvents& events, int event, uint64_t unique_id,
                                        peruse_comm_spec_t& spec) {
  Reader reader;
  reader.fire_last(events, event, unique_id, spec);
}

// Several events back to back with one spec and id, in firing order, in one
// reader section: those with an active handle, each but the last given a
// fresh copy of `spec` (a callback may have modified the previous one); the
// last gets `spec` itself.
template <int kEvent, int... kRest>
[[gnu::always_inline]] inline void fire_sequence_in(Reader& reader, const CommEvents& events, uint64_t unique_id,
                                                    peruse_comm_spec_t& spec) {
  if constexpr (sizeof...(kRest) == 0) {
    reader.fire_last(events, kEvent, unique_id, spec);
  } else {
    reader.fire_copy(events, kEvent, unique_id, spec);
    fire_sequence_in<kRest...>(reader, events, unique_id, spec);
  }
}
template <int... kEvents>
[[gnu::always_inline]] inline void fire_sequence(const CommEvents& events, uint64_t unique_id,
                                                 peruse_comm_spec_t& spec) {
  Reader reader;
  fire_sequence_in<kEvents...>(reader, events, unique_id, spec);
}

// unique_id values are the engine's (docs/peruse.md): requests use their
// descriptor's address (low 3 bits 0); messages, searches and request-less
// sends use counters tagged in the low bits, so kinds never coincide.

}  // namespace sonde::peruse

#ifndef SONDE_PERUSE_OFF
// Every form takes the spec as an expression (`spec`): a make_spec(...) of the
// fields, or a spec built earlier (a request's, Request::peruse_spec), which
// is copied, so each dispatch has its own. The _FIELDS forms below build it.
//
// `mask` is a value of peruse::watched(events), loaded once by the caller.
// The dispatch is inlined into the (unlikely) branch: use the _IF forms in
// code that runs only while something is watched (the engine's watched
// twins), where one handle then costs a TLS load, the array load, the call
// and three stores.
#define SONDE_FIRE_SPEC_IF(mask, events, event, unique_id, spec)            \
  do {                                                                      \
    if (__builtin_expect(((mask) & ::sonde::peruse::bit(event)) != 0, 0)) { \
      peruse_comm_spec_t sonde_spec_ = (spec);                              \
      ::sonde::peruse::fire((events), (event), (unique_id), sonde_spec_);   \
    }                                                                       \
  } while (0)
// In an open reader section (`reader`, a Reader or NoReader). The event's
// slot is tested, not a mask (one test, not two, when it is active).
#define SONDE_FIRE_SPEC_WITH(reader, events, event, unique_id, spec) \
  SONDE_FIRE_WITH_(call, reader, events, event, unique_id, spec)
// The same for the last event of the reader's section: the section's end
// also ends the upcall.
#define SONDE_FIRE_SPEC_LAST_WITH(reader, events, event, unique_id, spec) \
  SONDE_FIRE_WITH_(call_last, reader, events, event, unique_id, spec)
#define SONDE_FIRE_WITH_(method, reader, events, event, unique_id, spec)                        \
  do {                                                                                          \
    if (const ::sonde::peruse::ActiveSet* sonde_set_ = (reader).active(0, (events), (event))) { \
      peruse_comm_spec_t sonde_spec_ = (spec);                                                  \
      (reader).method(sonde_set_, (unique_id), sonde_spec_);                                    \
    }                                                                                           \
  } while (0)
// Several events back to back with one spec and id: `...` lists the events
// in firing order. One reader section for all of them.
#define SONDE_FIRE_SPEC_SEQUENCE_IF(mask, events, unique_id, spec, ...)                      \
  do {                                                                                       \
    const uint32_t sonde_mask_ = (mask);                                                     \
    if (__builtin_expect((sonde_mask_ & ::sonde::peruse::bits_of({__VA_ARGS__})) != 0, 0)) { \
      peruse_comm_spec_t sonde_spec_ = (spec);                                               \
      ::sonde::peruse::fire_sequence<__VA_ARGS__>((events), (unique_id), sonde_spec_);       \
    }                                                                                        \
  } while (0)
// Loads the mask itself; the dispatch is a call (fire_slow), for event sites
// in code shared with the unwatched path.
#define SONDE_FIRE_SPEC(events, event, unique_id, spec)                                               \
  do {                                                                                                \
    if (__builtin_expect((::sonde::peruse::watched(events) & ::sonde::peruse::bit(event)) != 0, 0)) { \
      peruse_comm_spec_t sonde_spec_ = (spec);                                                        \
      ::sonde::peruse::fire_slow((events), (event), (unique_id), sonde_spec_);                        \
    }                                                                                                 \
  } while (0)
// The watched mask of `events` (0 when nothing is active), for hoisting.
#define SONDE_WATCHED_MASK(events) ::sonde::peruse::watched(events)
#else
// Arguments are type-checked but never evaluated.
#define SONDE_FIRE_SPEC(events, event, unique_id, spec)                \
  do {                                                                 \
    if (false) {                                                       \
      (void)(events), (void)(event), (void)(unique_id);                \
      [[maybe_unused]] const peruse_comm_spec_t& sonde_spec_ = (spec); \
    }                                                                  \
  } while (0)
#define SONDE_FIRE_SPEC_IF(mask, events, event, unique_id, spec) SONDE_FIRE_SPEC(events, event, unique_id, spec)
#define SONDE_FIRE_SPEC_SEQUENCE_IF(mask, events, unique_id, spec, ...) SONDE_FIRE_SPEC(events, 0, unique_id, spec)
#define SONDE_FIRE_SPEC_WITH(reader, events, event, unique_id, spec) \
  do {                                                               \
    (void)(reader);                                                  \
    SONDE_FIRE_SPEC(events, event, unique_id, spec);                 \
  } while (0)
#define SONDE_FIRE_SPEC_LAST_WITH(reader, events, event, unique_id, spec) \
  SONDE_FIRE_SPEC_WITH(reader, events, event, unique_id, spec)
#define SONDE_WATCHED_MASK(events) 0u
#endif

// The same with the spec's fields (comm, buf, count, datatype, peer, tag,
// operation) instead of a spec.
#define SONDE_FIRE(events, event, unique_id, ...) \
  SONDE_FIRE_SPEC(events, event, unique_id, ::sonde::peruse::make_spec(__VA_ARGS__))
#define SONDE_FIRE_IF(mask, events, event, unique_id, ...) \
  SONDE_FIRE_SPEC_IF(mask, events, event, unique_id, ::sonde::peruse::make_spec(__VA_ARGS__))
#define SONDE_FIRE_WITH(reader, mask, events, event, unique_id, ...) \
  SONDE_FIRE_SPEC_WITH(reader, events, event, unique_id, ::sonde::peruse::make_spec(__VA_ARGS__))
#define SONDE_FIRE_LAST_WITH(reader, mask, events, event, unique_id, ...) \
  SONDE_FIRE_SPEC_LAST_WITH(reader, events, event, unique_id, ::sonde::peruse::make_spec(__VA_ARGS__))
#define SONDE_FIRE_SEQUENCE_IF(mask, events, unique_id, comm, buf, count, datatype, peer, tag, operation, ...) \
  SONDE_FIRE_SPEC_SEQUENCE_IF(mask, events, unique_id,                                                         \
                              ::sonde::peruse::make_spec(comm, buf, count, datatype, peer, tag, operation),    \
                              __VA_ARGS__)
