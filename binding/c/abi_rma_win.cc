// C ABI: windows (MPI 4.1 sections 12.2, 12.6-12.7): creation, attributes,
// names, info, error handlers, groups. The engine side is rma/window.h.
#include <cstring>

#include "binding/c/object_name.h"
#include "binding/c/rma_args.h"
#include "comm/attributes.h"
#include "comm/group.h"
#include "comm/info.h"
#include "rma/rma.h"

using namespace sonde::engine;
using sonde::engine::rma::Window;

namespace {

// The window's predefined attribute values from its state.
void refresh_attrs(Window* w) {
  w->attr_size = MPI_Aint(w->size);
  w->attr_disp_unit = int(w->disp_unit);
  w->attr_flavor = w->flavor;
  w->attr_model = MPI_WIN_UNIFIED;
}

int create_common(void** base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, int flavor,
                  MPI_Win* win, const char* fn) {
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!win) return raise(c, MPI_ERR_ARG, fn);
  if (size < 0) return raise(c, MPI_ERR_SIZE, fn);
  if (disp_unit <= 0) return raise(c, MPI_ERR_DISP, fn);
  const InfoPairs* hints = nullptr;
  if (info != MPI_INFO_NULL) {
    hints = find_info(info);
    if (!hints) return raise(c, MPI_ERR_INFO, fn);
  }
  Window* w = nullptr;
  int rc = rma::create(c, flavor, base, size, disp_unit, hints, &w);
  if (rc) return raise(c, rc, fn);
  refresh_attrs(w);
  *win = w->handle;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  SONDE_ENTER("MPI_Win_create");
  if (size > 0 && !base) return raise(find_comm(comm), MPI_ERR_BASE, fn);
  return create_common(&base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, win, fn);
}
SONDE_WEAK_ALIAS(Win_create_c)

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
}
SONDE_WEAK_ALIAS(Win_create)

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  SONDE_ENTER("MPI_Win_allocate");
  if (!baseptr) return raise(find_comm(comm), MPI_ERR_ARG, fn);
  void* base = nullptr;
  int rc = create_common(&base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, win, fn);
  if (!rc) *static_cast<void**>(baseptr) = base;
  return rc;
}
SONDE_WEAK_ALIAS(Win_allocate_c)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
}
SONDE_WEAK_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                               MPI_Win* win) {
  SONDE_ENTER("MPI_Win_allocate_shared");
  if (!baseptr) return raise(find_comm(comm), MPI_ERR_ARG, fn);
  void* base = nullptr;
  int rc = create_common(&base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, win, fn);
  if (!rc) *static_cast<void**>(baseptr) = base;
  return rc;
}
SONDE_WEAK_ALIAS(Win_allocate_shared_c)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
}
SONDE_WEAK_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit, void* baseptr) {
  SONDE_ENTER("MPI_Win_shared_query");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!size || !disp_unit || !baseptr) return raise_win(w, MPI_ERR_ARG, fn);
  int64_t s = 0, u = 0;
  void* b = nullptr;
  int rc = rma::shared_query(w, rank, &s, &u, &b);
  if (rc) return raise_win(w, rc, fn);
  *size = MPI_Aint(s);
  *disp_unit = MPI_Aint(u);
  *static_cast<void**>(baseptr) = b;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_shared_query_c)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  MPI_Aint unit = 0;
  int rc = PMPI_Win_shared_query_c(win, rank, size, disp_unit ? &unit : nullptr, baseptr);
  if (!rc) *disp_unit = int(unit);
  return rc;
}
SONDE_WEAK_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  SONDE_ENTER("MPI_Win_create_dynamic");
  void* base = nullptr;
  return create_common(&base, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, win, fn);
}
SONDE_WEAK_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  SONDE_ENTER("MPI_Win_attach");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (size > 0 && !base) return raise_win(w, MPI_ERR_BASE, fn);
  return finish_win(w, rma::attach(w, base, size), fn);
}
SONDE_WEAK_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void* base) {
  SONDE_ENTER("MPI_Win_detach");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  return finish_win(w, rma::detach(w, base), fn);
}
SONDE_WEAK_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win* win) {
  SONDE_ENTER("MPI_Win_free");
  if (!win) return raise(nullptr, MPI_ERR_ARG, fn);
  Window* w = rma::find_window(*win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (int rc = attr::delete_all(attr::Kind::kWin, *win, w->attrs)) return raise_win(w, rc, fn);
  int errhandler = w->errhandler;
  int rc = rma::free(w);
  if (rc == MPI_ERR_RMA_SYNC) return raise_win(w, rc, fn);  // the window stays
  *win = MPI_WIN_NULL;
  if (rc && errhandler != MPI_ERRORS_RETURN) return raise(nullptr, rc, fn);
  return rc;
}
SONDE_WEAK_ALIAS(Win_free)

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  SONDE_ENTER("MPI_Win_get_group");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!group) return raise_win(w, MPI_ERR_ARG, fn);
  return finish_win(w, new_group(w->comm->world, group), fn);
}
SONDE_WEAK_ALIAS(Win_get_group)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  SONDE_ENTER("MPI_Win_set_info");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  InfoPairs* p = find_info(info);
  if (!p) return raise_win(w, MPI_ERR_INFO, fn);
  for (auto& [k, v] : *p) info_set(w->info, k, v);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_set_info)

// The hints given at creation and by MPI_Win_set_info; none changes what
// the window does.
int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  SONDE_ENTER("MPI_Win_get_info");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!info_used) return raise_win(w, MPI_ERR_ARG, fn);
  return finish_win(w, new_info(w->info, info_used), fn);
}
SONDE_WEAK_ALIAS(Win_get_info)

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  SONDE_ENTER("MPI_Win_set_name");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!win_name) return raise_win(w, MPI_ERR_ARG, fn);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  SONDE_ENTER("MPI_Win_get_name");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!win_name || !resultlen) return raise_win(w, MPI_ERR_ARG, fn);
  return object_name::copy_name(w->name, win_name, resultlen);
}
SONDE_WEAK_ALIAS(Win_get_name)

// ---------------------------------------------------------------- attributes

int MPI_Win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_Win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_Win_null_delete_fn(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy, MPI_Win_delete_attr_function* del, int* keyval,
                           void* extra_state) {
  SONDE_ENTER("MPI_Win_create_keyval");
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, attr::create_keyval(attr::Kind::kWin, copy, del, extra_state, keyval), fn);
}
SONDE_WEAK_ALIAS(Win_create_keyval)

int PMPI_Win_free_keyval(int* keyval) {
  SONDE_ENTER("MPI_Win_free_keyval");
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, attr::free_keyval(attr::Kind::kWin, keyval), fn);
}
SONDE_WEAK_ALIAS(Win_free_keyval)

static bool predefined_win_key(int keyval) {
  return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

int PMPI_Win_set_attr(MPI_Win win, int keyval, void* value) {
  SONDE_ENTER("MPI_Win_set_attr");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (predefined_win_key(keyval)) return raise_win(w, MPI_ERR_KEYVAL, fn);
  return finish_win(w, attr::set(attr::Kind::kWin, win, w->attrs, keyval, value), fn);
}
SONDE_WEAK_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  SONDE_ENTER("MPI_Win_get_attr");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!attribute_val || !flag) return raise_win(w, MPI_ERR_ARG, fn);
  void* p = nullptr;
  switch (keyval) {
    case MPI_WIN_BASE: p = w->base; break;
    case MPI_WIN_SIZE: p = &w->attr_size; break;
    case MPI_WIN_DISP_UNIT: p = &w->attr_disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: p = &w->attr_flavor; break;
    case MPI_WIN_MODEL: p = &w->attr_model; break;
    default:
      return finish_win(w, attr::get(attr::Kind::kWin, w->attrs, keyval, static_cast<void**>(attribute_val), flag), fn);
  }
  *static_cast<void**>(attribute_val) = p;
  *flag = 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int keyval) {
  SONDE_ENTER("MPI_Win_delete_attr");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (predefined_win_key(keyval)) return raise_win(w, MPI_ERR_KEYVAL, fn);
  return finish_win(w, attr::remove(attr::Kind::kWin, win, w->attrs, keyval), fn);
}
SONDE_WEAK_ALIAS(Win_delete_attr)

// ---------------------------------------------------------------- error handlers

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Win_create_errhandler");
  if (!function || !errhandler) return raise(nullptr, MPI_ERR_ARG, fn);
  Errhandler* e = nullptr;
  int h = engine().tables().errhandlers.allocate(&e);
  if (!h) return raise(nullptr, MPI_ERR_INTERN, fn);
  e->live = true;
  e->fn = reinterpret_cast<MPI_Comm_errhandler_function*>(function);  // both take (int*, int*, ...)
  e->user_refs = 1;
  *errhandler = h;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_create_errhandler)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  SONDE_ENTER("MPI_Win_set_errhandler");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  Errhandler* e = engine().tables().errhandlers.lookup(errhandler);
  if (!e || (e->fn && e->user_refs <= 0)) return raise_win(w, MPI_ERR_ARG, fn);
  w->errhandler = errhandler;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Win_get_errhandler");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  if (!errhandler) return raise_win(w, MPI_ERR_ARG, fn);
  *errhandler = w->errhandler;
  if (Errhandler* e = engine().tables().errhandlers.lookup(w->errhandler); e && e->fn) ++e->user_refs;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  SONDE_ENTER("MPI_Win_call_errhandler");
  Window* w = rma::find_window(win);
  if (!w) return raise_win(nullptr, MPI_ERR_WIN, fn);
  // Once the handler has been called and returned the call succeeded
  // (MPI 4.1 section 9.3.6); fatal handlers end the job.
  raise_win(w, errorcode, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Win_call_errhandler)

}  // extern "C"
