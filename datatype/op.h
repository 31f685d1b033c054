// Reduction operations (MPI_Op): the predefined ones of MPI 4.1 section 6.9.2
// and user-defined ones (MPI_Op_create), in one handle table.
//
// Every reduction in the engine goes through reduce_local(), which works on
// buffers laid out like the user's datatype (gaps included). That is the
// layout MPI_Reduce_local and user functions see, so the collectives keep
// their intermediate results in it too and one code path serves predefined
// and user-defined operations alike.
//
// Argument order follows MPI: inout[i] = in[i] op inout[i]. For a
// non-commutative operation `in` holds the lower ranks' contribution.
//
// Not thread-safe on its own: callers hold the engine lock (predefined
// lookups touch no mutable state).
#pragma once

#include <cstdint>

#include "datatype/datatype.h"
#include "include/mpi.h"

namespace sonde::engine {

struct Op {
  int handle = MPI_OP_NULL;
  bool commutative = true;
  // 1..14: a predefined operation (its index in mpi.h), applied by the
  // kernels in op.cc. 0: user-defined, applied by calling `user`.
  int predefined = 0;
  MPI_User_function* user = nullptr;
  int holds = 0;       // running nonblocking reductions using it
  bool freed = false;  // MPI_Op_free came while held
};

// MPI_Op_create: a new user-defined operation. MPI_ERR_INTERN when the
// table is full.
int op_create(MPI_User_function* fn, bool commutative, MPI_Op* out);
// MPI_Op_free: MPI_ERR_OP for predefined, null, freed or forged handles;
// otherwise *op becomes MPI_OP_NULL. An op held by a running nonblocking
// reduction (op_hold) lives on until the last op_release.
int op_free(MPI_Op* op);
// A nonblocking reduction holds its user op from start to completion, as
// MPI lets the user free the handle meanwhile. No-ops on predefined ops.
void op_hold(MPI_Op op);
void op_release(MPI_Op op);

// The operation behind a handle; null for MPI_OP_NULL, freed or forged handles.
const Op* find_op(MPI_Op h);
bool op_valid(MPI_Op h);
// False for invalid handles.
bool op_is_commutative(MPI_Op h);

// Whether `op` may be applied to `type`: MPI_SUCCESS, MPI_ERR_OP (invalid
// handle), or MPI_ERR_TYPE (a predefined op not defined on that type, e.g.
// MPI_SUM on MPI_BYTE, MAXLOC on MPI_INT, anything but REPLACE/NO_OP on a
// datatype that mixes basic types). User-defined ops accept every type.
int op_check(MPI_Op op, const Datatype& type);

// inout = in op inout over `count` elements of `type`, both buffers in the
// user's layout of that type. Returns op_check's errors, else MPI_SUCCESS.
// Non-contiguous types are reduced through bounded scratch (packed in
// pieces); contiguous ones in place, with vectorized loops.
int reduce_local(const void* in, void* inout, int64_t count, const Datatype& type, MPI_Op op);

// out = in op src over `count` elements of a contiguous `type`: what
// copying src to out and then reduce_local(in, out) gives, in one pass for
// the predefined operations. `out` is `src` or overlaps neither input.
// Returns op_check's errors, MPI_ERR_TYPE for a non-contiguous type, else
// MPI_SUCCESS.
int reduce_local_into(const void* in, const void* src, void* out, int64_t count, const Datatype& type, MPI_Op op);

// inout = in op inout over `n` packed basic elements of kind `basic`. Pair
// types (MAXLOC/MINLOC) are packed without padding: value, then int. Only
// predefined ops. For callers that already hold packed data.
int reduce_packed(const void* in, void* inout, int64_t n, Basic basic, MPI_Op op);

// Bytes of one packed basic element (pairs without padding; 0 for kNone and
// kPacked, on which no reduction is defined).
size_t packed_basic_size(Basic b);

}  // namespace sonde::engine
