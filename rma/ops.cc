// One-sided data operations at the origin (rma.h): checks, target
// segments, packing, and the message to the target (am.h).
#include <algorithm>
#include <cstring>

#include "core/grequest.h"
#include "core/lookup.h"
#include "datatype/op.h"
#include "rma/am.h"
#include "rma/direct.h"
#include "rma/events.h"
#include "rma/net.h"
#include "rma/rma.h"

namespace sonde::engine::rma {

namespace {

bool in_epoch(const Window* w, int target) {
  if (w->fence_epoch || w->locks[size_t(target)] != 0) return true;
  return w->started && std::find(w->access.begin(), w->access.end(), target) != w->access.end();
}

// A request that is complete already (MPI_PROC_NULL targets, Put and
// Accumulate, whose data is copied out at once).
Request* done_request() {
  Request* r = start_generalized(nullptr, nullptr, nullptr, nullptr);
  if (r) complete_generalized(r);
  return r;
}

// The checks every access shares; fills the target segments. Returns
// MPI_SUCCESS, an error class, or -1 for an access with nothing to do
// (MPI_PROC_NULL).
int prepare(Window* w, const Access& a, std::vector<Segment>& segs) {
  if (a.target == MPI_PROC_NULL) return -1;
  if (a.target < 0 || a.target >= w->comm->size) return MPI_ERR_RANK;
  if (!in_epoch(w, a.target)) return MPI_ERR_RMA_SYNC;
  if (a.target_count < 0) return MPI_ERR_COUNT;
  const bool dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
  const int64_t unit = dynamic ? 1 : w->disp_units[size_t(a.target)];
  if (!dynamic && a.disp < 0) return MPI_ERR_DISP;
  target_segments(*a.target_type, a.target_count, a.disp * unit, segs);
  if (!dynamic) {
    const uint64_t size = uint64_t(w->sizes[size_t(a.target)]);
    for (const Segment& s : segs)
      if (s.offset > size || s.length > size - s.offset) return MPI_ERR_RMA_RANGE;
  }
  return MPI_SUCCESS;
}

uint64_t bytes_of(int64_t count, const Datatype* t) { return uint64_t(count) * uint64_t(t->size); }

int finish_request(int rc, Request** request) {
  if (rc == -1) rc = MPI_SUCCESS;
  if (!rc && request && !*request) {
    *request = done_request();
    if (!*request) return MPI_ERR_INTERN;
  }
  return rc;
}

// The op of an accumulate against its datatypes. An access of no bytes
// (a zero count or a zero-size type) combines no element, so only the op
// itself is checked: any predefined datatypes pass, as with MPICH.
int check_acc_op(MPI_Op op, const Datatype& origin, const Datatype& target, int64_t target_count, bool origin_used) {
  const Op* o = find_op(op);
  if (!o) return MPI_ERR_OP;
  if (o->predefined == 0) return MPI_ERR_OP;  // user operations are not allowed in RMA
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
  if (bytes_of(target_count, &target) == 0) return MPI_SUCCESS;  // no element to combine
  if (target.basic == Basic::kNone) return MPI_ERR_TYPE;
  if (origin_used && origin.size != 0 && origin.basic != target.basic) return MPI_ERR_TYPE;
  return op_check(op, target);
}

// Sends an operation whose answer comes back into (result, count, type).
int send_answered(Window* w, Header h, const std::vector<Segment>& segs, const uint8_t* data, uint64_t bytes,
                  int target, void* result, int64_t count, Datatype* type, Request** request) {
  h.id = w->next_id++;
  Pending p;
  p.target = target;
  p.result = result;
  p.count = count;
  p.type = type;
  retain_datatype(type);
  if (request) {
    p.request = start_generalized(nullptr, nullptr, nullptr, nullptr);
    if (!p.request) {
      release_datatype(type);
      return MPI_ERR_INTERN;
    }
    *request = p.request;
  }
  int rc = send_message(w, target, h, segs, data, bytes);
  if (rc) {
    release_datatype(type);
    if (p.request) complete_generalized(p.request);
    return rc;
  }
  w->pending[h.id] = p;
  w->dirty[size_t(target)] = 1;
  return MPI_SUCCESS;
}

// Put and Accumulate: directly into a node-local target's memory where
// direct.h can, else the origin data packed and sent with header `h`;
// locally complete at once.
int send_origin_data(Window* w, const Access& a, const Header& h, int operation, Request** request) {
  std::vector<Segment> segs;
  int rc = prepare(w, a, segs);
  if (rc) return finish_request(rc, request);
  const uint64_t n = bytes_of(a.origin_count, a.origin_type);
  if (n != bytes_of(a.target_count, a.target_type)) return MPI_ERR_ARG;
  if (h.kind == Kind::kPut && direct_put(w, a.target, segs, a.origin, a.origin_count, a.origin_type, n)) {
    fire_issue(w, operation, a.origin, a.origin_count, a.origin_type, a.target, n, false, 0);
    return finish_request(MPI_SUCCESS, request);
  }
  Bytes data(n);
  if (n) pack(*a.origin_type, a.origin, a.origin_count, 0, data.data(), n);
  if (h.kind == Kind::kAcc && direct_accumulate(w, a.target, segs, h.kind, h.op, h.basic, data.data(), nullptr, &rc)) {
    if (rc) return rc;
  } else if (h.kind == Kind::kPut && net_put(w, a.target, segs, data)) {
    // written through network RMA (net.h); flushes wait for its completion
  } else {
    rc = send_message(w, a.target, h, segs, data.data(), n, &data);
    if (rc) return rc;
    w->dirty[size_t(a.target)] = 1;
  }
  fire_issue(w, operation, a.origin, a.origin_count, a.origin_type, a.target, n, false, 0);
  return finish_request(MPI_SUCCESS, request);
}

// The fetching accumulates through mapped memory: the old values go to
// (result, count, type) at once. False when the target is not mapped.
bool fetch_direct(Window* w, int target, const std::vector<Segment>& segs, Kind kind, int op, int basic,
                  const uint8_t* data, void* result, int64_t count, Datatype* type, int* rc) {
  Bytes old;
  if (!direct_accumulate(w, target, segs, kind, op, basic, data, &old, rc)) return false;
  if (!*rc && !old.empty()) unpack(*type, result, count, 0, old.data(), old.size());
  return true;
}

}  // namespace

int put(Window* w, const Access& a, Request** request) {
  Header h;
  h.kind = Kind::kPut;
  return send_origin_data(w, a, h, PERUSE_PUT, request);
}

int get(Window* w, void* origin, const Access& a, Request** request) {
  std::vector<Segment> segs;
  int rc = prepare(w, a, segs);
  if (rc) return finish_request(rc, request);
  const uint64_t n = bytes_of(a.origin_count, a.origin_type);
  if (n != bytes_of(a.target_count, a.target_type)) return MPI_ERR_ARG;
  if (direct_get(w, a.target, segs, origin, a.origin_count, a.origin_type, n)) {
    fire_issue(w, PERUSE_GET, origin, a.origin_count, a.origin_type, a.target, n, false, 0);
    return finish_request(MPI_SUCCESS, request);
  }
  if (net_get(w, a.target, segs, origin, a.origin_count, a.origin_type, n, request)) return MPI_SUCCESS;
  Header h;
  h.kind = Kind::kGet;
  rc = send_answered(w, h, segs, nullptr, 0, a.target, origin, a.origin_count, a.origin_type, request);
  if (rc) return rc;
  fire_issue(w, PERUSE_GET, origin, a.origin_count, a.origin_type, a.target, n, true, w->next_id - 1);
  return MPI_SUCCESS;
}

int accumulate(Window* w, const Access& a, MPI_Op op, Request** request) {
  if (int rc = check_acc_op(op, *a.origin_type, *a.target_type, a.target_count, true)) return rc;
  Header h;
  h.kind = Kind::kAcc;
  h.op = op;
  h.basic = int32_t(a.target_type->basic);
  return send_origin_data(w, a, h, PERUSE_ACC, request);
}

int get_accumulate(Window* w, const Access& a, void* result, int64_t result_count, Datatype* result_type, MPI_Op op,
                   Request** request) {
  const bool uses_origin = op != MPI_NO_OP;
  if (int rc =
          check_acc_op(op, uses_origin ? *a.origin_type : *a.target_type, *a.target_type, a.target_count, uses_origin))
    return rc;
  std::vector<Segment> segs;
  int rc = prepare(w, a, segs);
  if (rc) return finish_request(rc, request);
  const uint64_t target_bytes = bytes_of(a.target_count, a.target_type);
  const uint64_t n = uses_origin ? bytes_of(a.origin_count, a.origin_type) : 0;
  if ((uses_origin && n != target_bytes) || bytes_of(result_count, result_type) != target_bytes) return MPI_ERR_ARG;
  Bytes data(n);
  if (n) pack(*a.origin_type, a.origin, a.origin_count, 0, data.data(), n);
  Header h;
  h.kind = Kind::kGetAcc;
  h.op = op;
  h.basic = int32_t(a.target_type->basic);
  if (fetch_direct(w, a.target, segs, h.kind, h.op, h.basic, data.data(), result, result_count, result_type, &rc)) {
    if (rc) return rc;
    fire_issue(w, PERUSE_ACC, a.origin, a.origin_count, a.origin_type, a.target, target_bytes, false, 0);
    return finish_request(MPI_SUCCESS, request);
  }
  rc = send_answered(w, h, segs, data.data(), n, a.target, result, result_count, result_type, request);
  if (rc) return rc;
  fire_issue(w, PERUSE_ACC, a.origin, a.origin_count, a.origin_type, a.target, target_bytes, true, w->next_id - 1);
  return MPI_SUCCESS;
}

int compare_and_swap(Window* w, const void* origin, const void* compare, void* result, Datatype* type, int target,
                     int64_t disp) {
  Access a;
  a.origin = origin;
  a.origin_count = 1;
  a.origin_type = type;
  a.target = target;
  a.disp = disp;
  a.target_count = 1;
  a.target_type = type;
  std::vector<Segment> segs;
  int rc = prepare(w, a, segs);
  if (rc == -1) return MPI_SUCCESS;
  if (rc) return rc;
  const uint64_t n = uint64_t(type->size);
  Bytes data(2 * n);
  pack(*type, origin, 1, 0, data.data(), n);
  pack(*type, compare, 1, 0, data.data() + n, n);
  Header h;
  h.kind = Kind::kCas;
  if (fetch_direct(w, target, segs, h.kind, h.op, h.basic, data.data(), result, 1, type, &rc)) {
    if (rc) return rc;
    fire_issue(w, PERUSE_ACC, origin, 1, type, target, n, false, 0);
    return MPI_SUCCESS;
  }
  rc = send_answered(w, h, segs, data.data(), 2 * n, target, result, 1, type, nullptr);
  if (rc) return rc;
  fire_issue(w, PERUSE_ACC, origin, 1, type, target, n, true, w->next_id - 1);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::rma
