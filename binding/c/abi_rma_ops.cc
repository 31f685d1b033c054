// C ABI: one-sided operations and synchronization (MPI 4.1 sections
// 12.3-12.5). The engine side is rma/rma.h.
#include "binding/c/rma_args.h"
#include "comm/group.h"
#include "rma/rma.h"

using namespace sonde::engine;
using sonde::engine::rma::Window;

namespace {

// Looks up the window; on failure returns from the calling function.
#define WIN_OR_RAISE(w, win)         \
  Window* w = rma::find_window(win); \
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn)

// Checks a (count, datatype) pair of an operation: MPI_SUCCESS or a class.
int check_buffer(int64_t count, MPI_Datatype type, Datatype** out) {
  if (count < 0) return MPI_ERR_COUNT;
  Datatype* t = find_comm_datatype(type);
  if (!t) return MPI_ERR_TYPE;
  *out = t;
  return MPI_SUCCESS;
}

int make_access(const void* origin, int64_t ocount, MPI_Datatype otype, int target, MPI_Aint disp, int64_t tcount,
                MPI_Datatype ttype, rma::Access* a) {
  a->origin = origin;
  a->origin_count = ocount;
  a->target = target;
  a->disp = disp;
  a->target_count = tcount;
  if (int rc = check_buffer(ocount, otype, &a->origin_type)) return rc;
  return check_buffer(tcount, ttype, &a->target_type);
}

int rput(const void* o, int64_t oc, MPI_Datatype ot, int t, MPI_Aint d, int64_t tc, MPI_Datatype tt, MPI_Win win,
         MPI_Request* request, const char* fn) {
  WIN_OR_RAISE(w, win);
  rma::Access a;
  if (int rc = make_access(o, oc, ot, t, d, tc, tt, &a)) return raise_win(w, rc, fn);
  Request* r = nullptr;
  int rc = rma::put(w, a, request ? &r : nullptr);
  if (rc) return raise_win(w, rc, fn);
  if (request) *request = r->handle;
  return MPI_SUCCESS;
}

int rget(void* o, int64_t oc, MPI_Datatype ot, int t, MPI_Aint d, int64_t tc, MPI_Datatype tt, MPI_Win win,
         MPI_Request* request, const char* fn) {
  WIN_OR_RAISE(w, win);
  rma::Access a;
  if (int rc = make_access(o, oc, ot, t, d, tc, tt, &a)) return raise_win(w, rc, fn);
  Request* r = nullptr;
  int rc = rma::get(w, o, a, request ? &r : nullptr);
  if (rc) return raise_win(w, rc, fn);
  if (request) *request = r->handle;
  return MPI_SUCCESS;
}

int racc(const void* o, int64_t oc, MPI_Datatype ot, int t, MPI_Aint d, int64_t tc, MPI_Datatype tt, MPI_Op op,
         MPI_Win win, MPI_Request* request, const char* fn) {
  WIN_OR_RAISE(w, win);
  rma::Access a;
  if (int rc = make_access(o, oc, ot, t, d, tc, tt, &a)) return raise_win(w, rc, fn);
  Request* r = nullptr;
  int rc = rma::accumulate(w, a, op, request ? &r : nullptr);
  if (rc) return raise_win(w, rc, fn);
  if (request) *request = r->handle;
  return MPI_SUCCESS;
}

int rgetacc(const void* o, int64_t oc, MPI_Datatype ot, void* res, int64_t rc_, MPI_Datatype rt, int t, MPI_Aint d,
            int64_t tc, MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request* request, const char* fn) {
  WIN_OR_RAISE(w, win);
  rma::Access a;
  // With MPI_NO_OP the origin buffer is ignored (its datatype may be anything valid).
  int64_t ocount = op == MPI_NO_OP ? 0 : oc;
  MPI_Datatype otype = op == MPI_NO_OP ? tt : ot;
  if (int rc = make_access(o, ocount, otype, t, d, tc, tt, &a)) return raise_win(w, rc, fn);
  Datatype* result_type = nullptr;
  if (int rc = check_buffer(rc_, rt, &result_type)) return raise_win(w, rc, fn);
  Request* r = nullptr;
  int rc = rma::get_accumulate(w, a, res, rc_, result_type, op, request ? &r : nullptr);
  if (rc) return raise_win(w, rc, fn);
  if (request) *request = r->handle;
  return MPI_SUCCESS;
}

bool valid_assert(int a) {
  return (a & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) == 0;
}

}  // namespace

extern "C" {

int PMPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {
  SONDE_ENTER("MPI_Put");
  return rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              nullptr, fn);
}
SONDE_WEAK_ALIAS(Put_c)

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  SONDE_ENTER("MPI_Put");
  return rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              nullptr, fn);
}
SONDE_WEAK_ALIAS(Put)

int PMPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request* request) {
  SONDE_ENTER("MPI_Rput");
  if (!request) return raise_win(rma::find_window(win), MPI_ERR_ARG, fn);
  return rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request, fn);
}
SONDE_WEAK_ALIAS(Rput_c)

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PMPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
}
SONDE_WEAK_ALIAS(Rput)

int PMPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {
  SONDE_ENTER("MPI_Get");
  return rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              nullptr, fn);
}
SONDE_WEAK_ALIAS(Get_c)

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  SONDE_ENTER("MPI_Get");
  return rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              nullptr, fn);
}
SONDE_WEAK_ALIAS(Get)

int PMPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request* request) {
  SONDE_ENTER("MPI_Rget");
  if (!request) return raise_win(rma::find_window(win), MPI_ERR_ARG, fn);
  return rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request, fn);
}
SONDE_WEAK_ALIAS(Rget_c)

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PMPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
}
SONDE_WEAK_ALIAS(Rget)

int PMPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win) {
  SONDE_ENTER("MPI_Accumulate");
  return racc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, nullptr, fn);
}
SONDE_WEAK_ALIAS(Accumulate_c)

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  SONDE_ENTER("MPI_Accumulate");
  return racc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, nullptr, fn);
}
SONDE_WEAK_ALIAS(Accumulate)

int PMPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                       MPI_Win win, MPI_Request* request) {
  SONDE_ENTER("MPI_Raccumulate");
  if (!request) return raise_win(rma::find_window(win), MPI_ERR_ARG, fn);
  return racc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, request, fn);
}
SONDE_WEAK_ALIAS(Raccumulate_c)

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
  return PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, op, win, request);
}
SONDE_WEAK_ALIAS(Raccumulate)

int PMPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win) {
  SONDE_ENTER("MPI_Get_accumulate");
  return rgetacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                 target_disp, target_count, target_datatype, op, win, nullptr, fn);
}
SONDE_WEAK_ALIAS(Get_accumulate_c)

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  SONDE_ENTER("MPI_Get_accumulate");
  return rgetacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                 target_disp, target_count, target_datatype, op, win, nullptr, fn);
}
SONDE_WEAK_ALIAS(Get_accumulate)

int PMPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request* request) {
  SONDE_ENTER("MPI_Rget_accumulate");
  if (!request) return raise_win(rma::find_window(win), MPI_ERR_ARG, fn);
  return rgetacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                 target_disp, target_count, target_datatype, op, win, request, fn);
}
SONDE_WEAK_ALIAS(Rget_accumulate_c)

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return PMPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                target_rank, target_disp, target_count, target_datatype, op, win, request);
}
SONDE_WEAK_ALIAS(Rget_accumulate)

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  SONDE_ENTER("MPI_Fetch_and_op");
  WIN_OR_RAISE(w, win);
  Datatype* t = find_comm_datatype(datatype);
  if (!t || !t->predefined) return raise_win(w, MPI_ERR_TYPE, fn);
  return rgetacc(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op, win,
                 nullptr, fn);
}
SONDE_WEAK_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win) {
  SONDE_ENTER("MPI_Compare_and_swap");
  WIN_OR_RAISE(w, win);
  Datatype* t = find_comm_datatype(datatype);
  if (!t || !t->predefined) return raise_win(w, MPI_ERR_TYPE, fn);
  return finish_win(w, rma::compare_and_swap(w, origin_addr, compare_addr, result_addr, t, target_rank, target_disp),
                    fn);
}
SONDE_WEAK_ALIAS(Compare_and_swap)

// ---------------------------------------------------------------- synchronization

int PMPI_Win_fence(int assert_flags, MPI_Win win) {
  SONDE_ENTER("MPI_Win_fence");
  WIN_OR_RAISE(w, win);
  if (!valid_assert(assert_flags)) return raise_win(w, MPI_ERR_ASSERT, fn);
  return finish_win(w, rma::fence(w, assert_flags), fn);
}
SONDE_WEAK_ALIAS(Win_fence)

int PMPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  SONDE_ENTER("MPI_Win_post");
  WIN_OR_RAISE(w, win);
  Group* g = find_group(group);
  if (!g) return raise_win(w, MPI_ERR_GROUP, fn);
  if (!valid_assert(assert_flags)) return raise_win(w, MPI_ERR_ASSERT, fn);
  return finish_win(w, rma::post(w, g->world, assert_flags), fn);
}
SONDE_WEAK_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  SONDE_ENTER("MPI_Win_start");
  WIN_OR_RAISE(w, win);
  Group* g = find_group(group);
  if (!g) return raise_win(w, MPI_ERR_GROUP, fn);
  if (!valid_assert(assert_flags)) return raise_win(w, MPI_ERR_ASSERT, fn);
  return finish_win(w, rma::start(w, g->world, assert_flags), fn);
}
SONDE_WEAK_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win) {
  SONDE_ENTER("MPI_Win_complete");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::complete(w), fn);
}
SONDE_WEAK_ALIAS(Win_complete)

int PMPI_Win_wait(MPI_Win win) {
  SONDE_ENTER("MPI_Win_wait");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::wait_exposure(w), fn);
}
SONDE_WEAK_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int* flag) {
  SONDE_ENTER("MPI_Win_test");
  WIN_OR_RAISE(w, win);
  if (!flag) return raise_win(w, MPI_ERR_ARG, fn);
  bool done = false;
  int rc = rma::test_exposure(w, &done);
  if (rc) return raise_win(w, rc, fn);
  *flag = done;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_test)

int PMPI_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  SONDE_ENTER("MPI_Win_lock");
  WIN_OR_RAISE(w, win);
  if (!valid_assert(assert_flags)) return raise_win(w, MPI_ERR_ASSERT, fn);
  return finish_win(w, rma::lock(w, lock_type, rank, assert_flags), fn);
}
SONDE_WEAK_ALIAS(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win) {
  SONDE_ENTER("MPI_Win_unlock");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::unlock(w, rank), fn);
}
SONDE_WEAK_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert_flags, MPI_Win win) {
  SONDE_ENTER("MPI_Win_lock_all");
  WIN_OR_RAISE(w, win);
  if (!valid_assert(assert_flags)) return raise_win(w, MPI_ERR_ASSERT, fn);
  return finish_win(w, rma::lock_all(w, assert_flags), fn);
}
SONDE_WEAK_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win) {
  SONDE_ENTER("MPI_Win_unlock_all");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::unlock_all(w), fn);
}
SONDE_WEAK_ALIAS(Win_unlock_all)

int PMPI_Win_flush(int rank, MPI_Win win) {
  SONDE_ENTER("MPI_Win_flush");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::flush(w, rank), fn);
}
SONDE_WEAK_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win) {
  SONDE_ENTER("MPI_Win_flush_all");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::flush_all(w), fn);
}
SONDE_WEAK_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  SONDE_ENTER("MPI_Win_flush_local");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::flush_local(w, rank), fn);
}
SONDE_WEAK_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win) {
  SONDE_ENTER("MPI_Win_flush_local_all");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::flush_local_all(w), fn);
}
SONDE_WEAK_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
  SONDE_ENTER("MPI_Win_sync");
  WIN_OR_RAISE(w, win);
  return finish_win(w, rma::sync(w), fn);
}
SONDE_WEAK_ALIAS(Win_sync)

}  // extern "C"
