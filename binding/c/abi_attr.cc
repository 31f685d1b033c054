// C ABI: attribute caching on communicators and datatypes (MPI 4.1 7.7),
// the MPI-1 names MPICH keeps, predefined attributes of MPI_COMM_WORLD and
// the predefined copy/delete callbacks.
#include <climits>

#include "binding/c/abi.h"
#include "runtime/lifecycle.h"
#include "comm/attributes.h"
#include "core/engine.h"
#include "runtime/errors.h"

using namespace sonde::engine;

namespace {

bool predefined_key(int keyval) {
  switch (keyval) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_LASTUSEDCODE:
    case MPI_APPNUM: return true;
    default: return false;
  }
}

// Values of the predefined attributes: MPI hands out pointers to them.
struct WorldAttrs {
  int tag_ub = INT_MAX;
  int host = MPI_PROC_NULL;  // no process is "the host"
  int io = MPI_ANY_SOURCE;   // every process can do I/O
  int wtime_is_global = 0;   // clocks are per process (their origins differ)
  int universe_size = 1;
  int appnum = 0;
};
WorldAttrs g_world_attrs;

// *flag and the value for a predefined key; only MPI_COMM_WORLD has them
// (MPI_APPNUM only when the launcher reports one through PMIx).
void get_predefined(Comm* c, int keyval, void* attribute_val, int* flag) {
  *flag = 0;
  if (c->handle != MPI_COMM_WORLD) return;
  Engine& e = engine();
  int* p = nullptr;
  switch (keyval) {
    case MPI_TAG_UB: p = &g_world_attrs.tag_ub; break;
    case MPI_HOST: p = &g_world_attrs.host; break;
    case MPI_IO: p = &g_world_attrs.io; break;
    case MPI_WTIME_IS_GLOBAL: p = &g_world_attrs.wtime_is_global; break;
    case MPI_UNIVERSE_SIZE:
      g_world_attrs.universe_size = job_wireup() ? job_wireup()->universe_size() : e.world_size();
      p = &g_world_attrs.universe_size;
      break;
    case MPI_LASTUSEDCODE: p = last_used_code(); break;
    case MPI_APPNUM:
      g_world_attrs.appnum = job_wireup() ? job_wireup()->appnum() : -1;
      if (g_world_attrs.appnum >= 0) p = &g_world_attrs.appnum;
      break;
  }
  *static_cast<void**>(attribute_val) = p;
  *flag = p != nullptr;
}

int comm_set(MPI_Comm comm, int keyval, void* value, const char* fn) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (predefined_key(keyval)) return raise(c, MPI_ERR_KEYVAL, fn);  // read-only
  return finish(c, attr::set(attr::Kind::kComm, comm, c->attrs, keyval, value), fn);
}

int comm_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag, const char* fn) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!attribute_val || !flag) return raise(c, MPI_ERR_ARG, fn);
  if (predefined_key(keyval)) {
    get_predefined(c, keyval, attribute_val, flag);
    return MPI_SUCCESS;
  }
  return finish(c, attr::get(attr::Kind::kComm, c->attrs, keyval, static_cast<void**>(attribute_val), flag), fn);
}

int comm_delete(MPI_Comm comm, int keyval, const char* fn) {
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (predefined_key(keyval)) return raise(c, MPI_ERR_KEYVAL, fn);
  return finish(c, attr::remove(attr::Kind::kComm, comm, c->attrs, keyval), fn);
}

int comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval, void* extra,
                       const char* fn) {
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, attr::create_keyval(attr::Kind::kComm, copy, del, extra, keyval), fn);
}

int comm_free_keyval(int* keyval, const char* fn) {
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, attr::free_keyval(attr::Kind::kComm, keyval), fn);
}

}  // namespace

namespace sonde::engine::attr {
int finalize_comm_attributes() {
  Engine& e = engine();
  int rc = delete_all(Kind::kComm, MPI_COMM_SELF, e.self()->attrs);
  int rw = delete_all(Kind::kComm, MPI_COMM_WORLD, e.world()->attrs);
  return rc ? rc : rw;
}
}  // namespace sonde::engine::attr

extern "C" {

// ---------------------------------------------------------------- predefined callbacks

int MPI_Comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_Comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_Comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int MPI_Type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_Type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_Type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }

// ---------------------------------------------------------------- communicators

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval, void* extra_state) {
  SONDE_ENTER("MPI_Comm_create_keyval");
  return comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state, fn);
}
SONDE_WEAK_ALIAS(Comm_create_keyval)

int PMPI_Comm_free_keyval(int* comm_keyval) {
  SONDE_ENTER("MPI_Comm_free_keyval");
  return comm_free_keyval(comm_keyval, fn);
}
SONDE_WEAK_ALIAS(Comm_free_keyval)

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  SONDE_ENTER("MPI_Comm_set_attr");
  return comm_set(comm, comm_keyval, attribute_val, fn);
}
SONDE_WEAK_ALIAS(Comm_set_attr)

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  SONDE_ENTER("MPI_Comm_get_attr");
  return comm_get(comm, comm_keyval, attribute_val, flag, fn);
}
SONDE_WEAK_ALIAS(Comm_get_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  SONDE_ENTER("MPI_Comm_delete_attr");
  return comm_delete(comm, comm_keyval, fn);
}
SONDE_WEAK_ALIAS(Comm_delete_attr)

// MPI-1 names, mapped onto the calls above.
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state) {
  SONDE_ENTER("MPI_Keyval_create");
  return comm_create_keyval(copy_fn, delete_fn, keyval, extra_state, fn);
}
SONDE_WEAK_ALIAS(Keyval_create)

int PMPI_Keyval_free(int* keyval) {
  SONDE_ENTER("MPI_Keyval_free");
  return comm_free_keyval(keyval, fn);
}
SONDE_WEAK_ALIAS(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  SONDE_ENTER("MPI_Attr_put");
  return comm_set(comm, keyval, attribute_val, fn);
}
SONDE_WEAK_ALIAS(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  SONDE_ENTER("MPI_Attr_get");
  return comm_get(comm, keyval, attribute_val, flag, fn);
}
SONDE_WEAK_ALIAS(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  SONDE_ENTER("MPI_Attr_delete");
  return comm_delete(comm, keyval, fn);
}
SONDE_WEAK_ALIAS(Attr_delete)

// ---------------------------------------------------------------- datatypes

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval, void* extra_state) {
  SONDE_ENTER("MPI_Type_create_keyval");
  if (!type_keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr,
                attr::create_keyval(attr::Kind::kType, type_copy_attr_fn, type_delete_attr_fn, extra_state,
                                    type_keyval),
                fn);
}
SONDE_WEAK_ALIAS(Type_create_keyval)

int PMPI_Type_free_keyval(int* type_keyval) {
  SONDE_ENTER("MPI_Type_free_keyval");
  if (!type_keyval) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, attr::free_keyval(attr::Kind::kType, type_keyval), fn);
}
SONDE_WEAK_ALIAS(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  SONDE_ENTER("MPI_Type_set_attr");
  if (!find_datatype(datatype)) return raise(nullptr, MPI_ERR_TYPE, fn);
  return finish(nullptr, attr::set(attr::Kind::kType, datatype, attr::type_list(datatype), type_keyval, attribute_val),
                fn);
}
SONDE_WEAK_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  SONDE_ENTER("MPI_Type_get_attr");
  if (!find_datatype(datatype)) return raise(nullptr, MPI_ERR_TYPE, fn);
  if (!attribute_val || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr,
                attr::get(attr::Kind::kType, attr::type_list(datatype), type_keyval, static_cast<void**>(attribute_val),
                          flag),
                fn);
}
SONDE_WEAK_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  SONDE_ENTER("MPI_Type_delete_attr");
  if (!find_datatype(datatype)) return raise(nullptr, MPI_ERR_TYPE, fn);
  return finish(nullptr, attr::remove(attr::Kind::kType, datatype, attr::type_list(datatype), type_keyval), fn);
}
SONDE_WEAK_ALIAS(Type_delete_attr)

}  // extern "C"
