// The byte ring one local rank writes and one other local rank reads, living
// in POSIX shared memory and therefore mapped at different addresses in the
// two processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>

#include <boost/lockfree/spsc_queue.hpp>

namespace sonde::transport::shm {

// Usable bytes per ring. The one place to change the default; every size a
// job may choose must also be listed in kRingSizes (one instantiation each).
inline constexpr size_t kRingBytes = 64 * 1024;
// Small rings exist so tests can wrap around and fill rings cheaply.
inline constexpr size_t kRingSizes[] = {4 * 1024, kRingBytes};

// Boost 1.74 copies bulk push(const char*, n) with std::uninitialized_copy and
// pop(char*, n) with std::copy, both memmove for char, in at most two pieces
// around the wrap; so push/pop of n bytes is one or two memcpy's plus one
// release store of an index.
template <size_t Bytes>
using Ring = boost::lockfree::spsc_queue<char, boost::lockfree::capacity<Bytes>>;

// Cache-line aligned so two rings in a segment never share a line.
template <size_t Bytes>
struct alignas(128) RingSlot {
  Ring<Bytes> ring;
};

// A Ring must be usable from two address spaces at once: everything inline
// (no pointer to heap storage, no vtable), and atomics that work between
// processes, which only lock-free (address-free) atomics do.
template <size_t Bytes>
constexpr bool ring_is_position_independent() {
  using R = Ring<Bytes>;
  // Compile-time capacity selects inline storage of Bytes + 1 elements; the
  // runtime-sized variant would be a few pointers and much smaller.
  static_assert(sizeof(R) >= Bytes + 1, "spsc_queue storage is not inline");
  static_assert(sizeof(R) <= Bytes + 1 + 2 * 128, "spsc_queue holds more than indices and storage");
  static_assert(!std::is_polymorphic_v<R>, "spsc_queue has a vtable");
  static_assert(std::is_same_v<boost::lockfree::detail::atomic<size_t>, std::atomic<size_t>>,
                "spsc_queue must use std::atomic");
  static_assert(std::atomic<size_t>::is_always_lock_free, "ring indices must be lock-free");
  return true;
}

}  // namespace sonde::transport::shm
