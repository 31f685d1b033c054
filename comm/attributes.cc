#include "comm/attributes.h"

#include <unordered_map>

namespace sonde::engine::attr {

namespace {

struct Keyval {
  Kind kind;
  CopyFn copy;
  DeleteFn del;
  void* extra;
  bool user_freed = false;
  int attached = 0;  // attributes currently using it
};

std::unordered_map<int, Keyval>& keyvals() {
  static auto* k = new std::unordered_map<int, Keyval>;  // outlives static destructors (atexit callers)
  return *k;
}
int g_next_keyval = 1;

Keyval* find(Kind kind, int keyval) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end() || it->second.kind != kind) return nullptr;
  return &it->second;
}

void unref(int keyval) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end()) return;
  if (--it->second.attached == 0 && it->second.user_freed) keyvals().erase(it);
}

int call_delete(int handle, int keyval, void* value) {
  Keyval* k = nullptr;
  auto it = keyvals().find(keyval);
  if (it != keyvals().end()) k = &it->second;
  if (!k || !k->del) return MPI_SUCCESS;
  // Copy out: the callback may create keyvals and rehash the table.
  DeleteFn del = k->del;
  void* extra = k->extra;
  return del(handle, keyval, value, extra);
}

long find_index(const AttrList& list, int keyval) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].first == keyval) return long(i);
  return -1;
}

std::unordered_map<int, AttrList>& type_lists() {
  static auto* m = new std::unordered_map<int, AttrList>;
  return *m;
}

}  // namespace

int create_keyval(Kind kind, CopyFn copy, DeleteFn del, void* extra_state, int* keyval) {
  if (g_next_keyval >= (1 << 30)) return MPI_ERR_INTERN;
  int k = g_next_keyval++;
  keyvals().emplace(k, Keyval{kind, copy, del, extra_state});
  *keyval = k;
  return MPI_SUCCESS;
}

int free_keyval(Kind kind, int* keyval) {
  Keyval* k = find(kind, *keyval);
  if (!k) return MPI_ERR_KEYVAL;
  if (k->user_freed) {
    // Freed already, still alive for its attributes: another free (through
    // a copy of the handle, e.g. from a delete callback) changes nothing.
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
  }
  k->user_freed = true;
  if (k->attached == 0) keyvals().erase(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

bool valid_keyval(Kind kind, int keyval) { return find(kind, keyval) != nullptr; }

int set(Kind kind, int handle, AttrList& list, int keyval, void* value) {
  Keyval* k = find(kind, keyval);
  if (!k || k->user_freed) return MPI_ERR_KEYVAL;
  long i = find_index(list, keyval);
  if (i >= 0) {
    int rc = call_delete(handle, keyval, list[size_t(i)].second);
    if (rc) return rc;
    // The callback may have changed the list; look again.
    i = find_index(list, keyval);
    if (i >= 0) {
      list[size_t(i)].second = value;
      return MPI_SUCCESS;
    }
  }
  list.emplace_back(keyval, value);
  ++find(kind, keyval)->attached;
  return MPI_SUCCESS;
}

int get(Kind kind, const AttrList& list, int keyval, void** value, int* flag) {
  if (!find(kind, keyval)) return MPI_ERR_KEYVAL;
  long i = find_index(list, keyval);
  *flag = i >= 0;
  if (i >= 0) *value = list[size_t(i)].second;
  return MPI_SUCCESS;
}

int remove(Kind kind, int handle, AttrList& list, int keyval) {
  if (!find(kind, keyval)) return MPI_ERR_KEYVAL;
  long i = find_index(list, keyval);
  if (i < 0) return MPI_ERR_KEYVAL;  // MPICH and Open MPI answer a missing attribute this way
  int rc = call_delete(handle, keyval, list[size_t(i)].second);
  if (rc) return rc;
  i = find_index(list, keyval);
  if (i >= 0) {
    list.erase(list.begin() + i);
    unref(keyval);
  }
  return MPI_SUCCESS;
}

int copy_all(Kind kind, int old_handle, const AttrList& from, int new_handle, AttrList& to) {
  AttrList snapshot = from;  // callbacks may touch the old object's list
  for (auto& [keyval, value] : snapshot) {
    Keyval* k = find(kind, keyval);
    if (!k || !k->copy) continue;
    CopyFn copy = k->copy;
    void* extra = k->extra;
    void* out = nullptr;
    int flag = 0;
    int rc = copy(old_handle, keyval, extra, value, &out, &flag);
    if (rc) {
      delete_all(kind, new_handle, to);
      return rc;
    }
    if (flag) {
      to.emplace_back(keyval, out);
      if (Keyval* again = find(kind, keyval)) ++again->attached;
    }
  }
  return MPI_SUCCESS;
}

int delete_all(Kind kind, int handle, AttrList& list) {
  (void)kind;
  while (!list.empty()) {
    auto [keyval, value] = list.back();
    int rc = call_delete(handle, keyval, value);
    if (rc) return rc;
    // The callback may have deleted attributes itself: remove this one by key.
    long i = find_index(list, keyval);
    if (i >= 0) {
      list.erase(list.begin() + i);
      unref(keyval);
    }
  }
  return MPI_SUCCESS;
}

AttrList& type_list(MPI_Datatype handle) { return type_lists()[handle]; }

void drop_type_list(MPI_Datatype handle) { type_lists().erase(handle); }

int on_type_dup(MPI_Datatype oldtype, MPI_Datatype newtype) {
  auto it = type_lists().find(oldtype);
  if (it == type_lists().end() || it->second.empty()) return MPI_SUCCESS;
  AttrList copied;
  int rc = copy_all(Kind::kType, oldtype, it->second, newtype, copied);
  if (rc) return rc;
  if (!copied.empty()) type_lists()[newtype] = std::move(copied);
  return MPI_SUCCESS;
}

int on_type_free(MPI_Datatype type) {
  auto it = type_lists().find(type);
  if (it == type_lists().end()) return MPI_SUCCESS;
  int rc = delete_all(Kind::kType, type, it->second);
  if (rc) return rc;
  drop_type_list(type);
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::attr
