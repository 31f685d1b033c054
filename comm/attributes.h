// Attribute caching (MPI 4.1 section 7.7), shared by communicators and
// datatypes and windows.
//
// A keyval is a small positive int naming (object kind, copy callback,
// delete callback, extra_state). Its number is never reused, so a stale
// keyval is always detected. A keyval freed by the user stays valid for the
// attributes still attached to it (MPI 7.7.2) and disappears with the last.
//
// An object's attributes are an AttrList in the order they were set.
// - copy_all (MPI_Comm_dup/_with_info/idup, MPI_Type_dup) calls each copy
//   callback in that order and keeps the values whose flag is set;
// - delete_all (MPI_Comm_free, MPI_Type_free, MPI_Finalize on MPI_COMM_SELF)
//   calls the delete callbacks in reverse order of setting (what MPI 4.1
//   section 11.2.3 requires for MPI_COMM_SELF at finalize; the order for
//   other objects is unspecified, so we use the same one everywhere).
// A callback that returns an error stops the operation and that error is
// returned (callers report it with the object's error handler).
//
// Callbacks may call MPI (MPI_Comm_get_attr, ...); this module keeps no
// iterator across a callback. Callers hold the engine lock; it is recursive.
#pragma once

#include <utility>
#include <vector>

#include "include/mpi.h"

namespace sonde::engine::attr {

enum class Kind : int { kComm = 1, kType = 2, kWin = 3 };

// Same shape for communicators and datatypes (both handles are ints).
using CopyFn = int (*)(int, int, void*, void*, void*, int*);
using DeleteFn = int (*)(int, int, void*, void*);
using AttrList = std::vector<std::pair<int, void*>>;

int create_keyval(Kind kind, CopyFn copy, DeleteFn del, void* extra_state, int* keyval);
// MPI_ERR_KEYVAL for a keyval that is not a live user keyval of `kind`.
// Freeing a keyval the user freed already while attributes still use it
// succeeds and does nothing more (as MPICH: programs free keyvals from
// delete callbacks through copies of the handle); once the last attribute
// is gone the keyval is gone and a free is MPI_ERR_KEYVAL.
int free_keyval(Kind kind, int* keyval);
// Is this a live user keyval of this kind (freed-but-attached ones included)?
bool valid_keyval(Kind kind, int keyval);

// Set (replacing an old value runs its delete callback first), get, delete.
int set(Kind kind, int handle, AttrList& list, int keyval, void* value);
int get(Kind kind, const AttrList& list, int keyval, void** value, int* flag);
int remove(Kind kind, int handle, AttrList& list, int keyval);

// Copy `from` (attributes of old_handle) onto the empty list `to` of
// new_handle. On error the copies made so far are deleted again.
int copy_all(Kind kind, int old_handle, const AttrList& from, int new_handle, AttrList& to);
// Delete every attribute, newest first.
int delete_all(Kind kind, int handle, AttrList& list);

// Datatype attribute lists are kept here, by handle (datatype.h stays
// independent of this module); drop_type_list forgets one after its
// attributes are deleted.
AttrList& type_list(MPI_Datatype handle);
void drop_type_list(MPI_Datatype handle);

// The hooks datatype code calls: MPI_Type_dup copies, MPI_Type_free deletes
// (returns the error of a failing delete callback; the type is then kept).
int on_type_dup(MPI_Datatype oldtype, MPI_Datatype newtype);
int on_type_free(MPI_Datatype type);

// MPI_Finalize: delete MPI_COMM_SELF's attributes, then MPI_COMM_WORLD's
// (binding/c/abi_attr.cc). Returns the first failing delete callback's code.
int finalize_comm_attributes();

}  // namespace sonde::engine::attr
