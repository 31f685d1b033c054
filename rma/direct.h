// Direct access to the memory of node-local targets, without the target's
// progress (docs/rma.md, "Node-local targets"):
// - mapped memory: every rank's part of an MPI_Win_allocate_shared segment,
//   and the segment each rank's MPI_Win_allocate memory lives in, opened
//   by the ranks of its node. Put and Get are copies; the accumulate family
//   reads, combines and writes under the target's AccLock, which the target
//   also takes when it applies accumulates that arrived as messages, so
//   accumulates stay atomic with respect to each other whichever way they
//   came.
// - single copy (MPI_Win_create and MPI_Win_allocate memory a rank could
//   not map): Put and Get through core/remote_copy.h into the target's
//   address space. Accumulates go as messages.
// - dynamic windows: Put and Get whose every segment lies in regions the
//   target has attached, as its RegionTable (window.h) says when read by
//   single copy (this process's own regions: its list), copy to and from
//   those absolute addresses; any other access, and every accumulate, goes
//   as a message and the target checks it.
// An operation done here is complete, at the origin and at the target,
// when the call returns; the synchronization calls order it with memory
// fences.
#pragma once

#include <cstdint>
#include <vector>

#include "rma/am.h"
#include "rma/window.h"

namespace sonde::engine::rma {

// Copies between the segments of memory at `mem` (offsets from it) and
// packed bytes, in segment order.
void gather_from(uintptr_t mem, const Segment* segs, uint64_t n, uint8_t* out);
void scatter_to(uintptr_t mem, const Segment* segs, uint64_t n, const uint8_t* in);

// Holds and releases a target's accumulate lock (spins, then yields).
void acc_lock(AccLock* l);
void acc_unlock(AccLock* l);

// Applies an accumulate-family operation (kAcc, kGetAcc, kCas) to the
// memory at `mem` (segment offsets are from it): the old values go to
// `old` packed, then `data` (packed origin data; for kCas the new value
// then the compare value) is combined in. Under `lock` when not null.
// MPI_SUCCESS, or the reduction's error class with the memory unchanged.
int apply_accumulate(uintptr_t mem, const Segment* segs, uint64_t nsegs, Kind kind, int op, int basic,
                     const uint8_t* data, Bytes& old, AccLock* lock);

// Put and Get of `n` bytes between (buf, count, type) and the target
// segments. True when done here; false when the access must go as a
// message (no direct path to `target`, or the single copy was refused,
// which turns that path off for the window).
bool direct_put(Window* w, int target, const std::vector<Segment>& segs, const void* buf, int64_t count, Datatype* type,
                uint64_t n);
bool direct_get(Window* w, int target, const std::vector<Segment>& segs, void* buf, int64_t count, Datatype* type,
                uint64_t n);

// The accumulate family through mapped memory: false when `target`'s
// memory is not mapped here. Otherwise *rc is the result and, when `old`
// is given, it holds the packed values before the operation.
bool direct_accumulate(Window* w, int target, const std::vector<Segment>& segs, Kind kind, int op, int basic,
                       const uint8_t* data, Bytes* old, int* rc);

}  // namespace sonde::engine::rma
