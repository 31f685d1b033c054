// PERUSE request events of one-sided operations and the counters MPI_T
// reads (core/introspect.h, rma_counters).
//
// Every operation fires, on the window's communicator (the hidden
// duplicate, which carries the user communicator's propagating handles),
// with `operation` PERUSE_PUT, PERUSE_GET or PERUSE_ACC, `peer` the target
// rank, `tag` MPI_ANY_TAG and the origin's buffer, count and datatype
// (docs/peruse.md, "One-sided operations"):
//   REQ_ACTIVATE, REQ_XFER_BEGIN when the operation is issued;
//   REQ_XFER_END, REQ_COMPLETE when its data has left (Put, Accumulate:
//   at once, the data is copied out) or its answer has arrived (Get,
//   Get_accumulate, Fetch_and_op, Compare_and_swap).
#pragma once

#include <cstdint>

#include "rma/window.h"

namespace sonde::engine::rma {

// An operation is issued: fires its first events and counts it. `answered`:
// its last events wait for the target's answer to operation `id`.
void fire_issue(Window* w, int operation, const void* buf, int64_t count, Datatype* type, int target, uint64_t bytes,
                bool answered, uint64_t id);
// The answer of operation `id` arrived and was unpacked.
void fire_remote_done(Window* w, uint64_t id);
// An epoch ended.
void count_epoch();

}  // namespace sonde::engine::rma
