// POSIX shared-memory objects that the ranks of one node map, for the
// layers above the transports: collectives' segments (coll/shared.h) and
// windows' segments (rma/window.cc). Each is made by one rank, opened by
// name by the others, and checked against a nonce its maker wrote at its
// head (a namesake made on another node, or left by an earlier job, is
// then refused).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sonde::engine {

// Creates `name` (O_EXCL, mode 0600), `len` bytes, zero-filled, with its
// pages reserved (a full /dev/shm fails here rather than with a SIGBUS at
// the first store), and maps it read/write. Null, with no object left
// behind, when any step fails.
uint8_t* create_node_segment(const char* name, size_t len);

// Maps the existing object `name` read/write when it is exactly `len`
// bytes long; otherwise null.
uint8_t* open_node_segment(const char* name, size_t len);

// A value for a maker to write at its segment's head: this process's id,
// the clock and a counter, so no other segment's maker picks it.
uint64_t node_segment_nonce();

}  // namespace sonde::engine
