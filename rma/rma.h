// One-sided operations and synchronization (MPI 4.1 sections 12.3-12.5),
// what the C binding calls. Arguments the binding can check without the
// window (handles, counts, committed datatypes) are checked there; these
// check what needs the window: the epoch, the target rank, the range of the
// target memory, the operation against the datatypes. Results are MPI
// error classes. Callers hold the engine lock.
#pragma once

#include <cstdint>
#include <vector>

#include "rma/window.h"

namespace sonde::engine::rma {

// One access: origin buffer, target rank and displacement, target layout.
struct Access {
  const void* origin = nullptr;
  int64_t origin_count = 0;
  Datatype* origin_type = nullptr;
  int target = 0;  // rank in the window's group, or MPI_PROC_NULL
  int64_t disp = 0;
  int64_t target_count = 0;
  Datatype* target_type = nullptr;
};

// `request` (may be null): the request form; it completes at local
// completion (Put, Accumulate: at once; the others: when the answer is in
// the result buffer).
int put(Window* w, const Access& a, Request** request);
int get(Window* w, void* origin, const Access& a, Request** request);
int accumulate(Window* w, const Access& a, MPI_Op op, Request** request);
int get_accumulate(Window* w, const Access& a, void* result, int64_t result_count, Datatype* result_type, MPI_Op op,
                   Request** request);
int compare_and_swap(Window* w, const void* origin, const void* compare, void* result, Datatype* type, int target,
                     int64_t disp);

int fence(Window* w, int assert_flags);
// Post/start take the group's world ranks.
int post(Window* w, const std::vector<int>& group_world, int assert_flags);
int start(Window* w, const std::vector<int>& group_world, int assert_flags);
int complete(Window* w);
int wait_exposure(Window* w);
int test_exposure(Window* w, bool* done);
int lock(Window* w, int type, int rank, int assert_flags);
int unlock(Window* w, int rank);
int lock_all(Window* w, int assert_flags);
int unlock_all(Window* w);
int flush(Window* w, int rank);  // MPI_PROC_NULL: nothing to do
int flush_all(Window* w);
int flush_local(Window* w, int rank);
int flush_local_all(Window* w);
int sync(Window* w);

}  // namespace sonde::engine::rma
