#include "tools/mpiexec/name_service.h"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sonde::mpiexec {
namespace {

struct Entry {
  pmix_proc_t publisher;
  pmix_value_t* value = nullptr;  // owned
};

struct Waiter {
  pmix_proc_t requester;
  std::vector<std::string> keys;
  pmix_lookup_cbfunc_t cbfunc;
  void* cbdata;
};

// Touched on libpmix's thread only (every upcall runs there); the mutex
// keeps that true even if a library calls from elsewhere.
std::mutex g_mu;
std::map<std::string, Entry>* g_table = new std::map<std::string, Entry>;
std::vector<Waiter>* g_waiters = new std::vector<Waiter>;

bool has_flag(const pmix_info_t info[], size_t ninfo, const char* key) {
  for (size_t i = 0; i < ninfo; ++i)
    if (PMIX_CHECK_KEY(&info[i], key)) return info[i].value.type != PMIX_BOOL || info[i].value.data.flag;
  return false;
}

bool all_present(const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (g_table->find(k) == g_table->end()) return false;
  return true;
}

// Answers a lookup with copies of the values present (under g_mu); the
// callback runs on the launcher's thread.
void answer(const Waiter& w) {
  size_t n = 0;
  for (const auto& k : w.keys) n += g_table->count(k);
  pmix_pdata_t* data = nullptr;
  if (n > 0) PMIX_PDATA_CREATE(data, n);
  size_t i = 0;
  for (const auto& k : w.keys) {
    auto it = g_table->find(k);
    if (it == g_table->end()) continue;
    PMIX_LOAD_PROCID(&data[i].proc, it->second.publisher.nspace, it->second.publisher.rank);
    PMIX_LOAD_KEY(data[i].key, k.c_str());
    PMIx_Value_xfer(&data[i].value, it->second.value);
    ++i;
  }
  pmix_status_t status = n == w.keys.size() ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
  auto cbfunc = w.cbfunc;
  void* cbdata = w.cbdata;
  name_service_post([=] {
    cbfunc(status, data, n, cbdata);
    pmix_pdata_t* d = data;
    if (d != nullptr) PMIX_PDATA_FREE(d, n);
  });
}

void wake_waiters() {
  for (size_t i = 0; i < g_waiters->size();) {
    if (all_present((*g_waiters)[i].keys)) {
      answer((*g_waiters)[i]);
      g_waiters->erase(g_waiters->begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
}

void reply_op(pmix_op_cbfunc_t cbfunc, void* cbdata, pmix_status_t status) {
  if (cbfunc != nullptr) name_service_post([=] { cbfunc(status, cbdata); });
}

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void* cbdata) {
  std::lock_guard<std::mutex> lock(g_mu);
  // Directives (range, persistence...) are pmix.* keys; everything else is data.
  std::vector<size_t> data;
  for (size_t i = 0; i < ninfo; ++i) {
    if (std::strncmp(info[i].key, "pmix.", 5) == 0) continue;
    if (g_table->count(info[i].key) != 0) {
      reply_op(cbfunc, cbdata, PMIX_ERR_DUPLICATE_KEY);
      return PMIX_SUCCESS;
    }
    data.push_back(i);
  }
  for (size_t i : data) {
    Entry e;
    PMIX_LOAD_PROCID(&e.publisher, proc->nspace, proc->rank);
    PMIX_VALUE_CREATE(e.value, 1);
    PMIx_Value_xfer(e.value, &info[i].value);
    (*g_table)[info[i].key] = e;
  }
  wake_waiters();
  reply_op(cbfunc, cbdata, PMIX_SUCCESS);
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                        pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  std::lock_guard<std::mutex> lock(g_mu);
  Waiter w{*proc, {}, cbfunc, cbdata};
  for (char** k = keys; k != nullptr && *k != nullptr; ++k) w.keys.emplace_back(*k);
  if (w.keys.empty()) return PMIX_ERR_BAD_PARAM;
  if (all_present(w.keys) || !has_flag(info, ninfo, PMIX_WAIT)) {
    answer(w);
  } else {
    g_waiters->push_back(std::move(w));
  }
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                           void* cbdata) {
  std::lock_guard<std::mutex> lock(g_mu);
  pmix_status_t status = PMIX_SUCCESS;
  for (char** k = keys; k != nullptr && *k != nullptr; ++k) {
    auto it = g_table->find(*k);
    if (it == g_table->end()) {
      status = PMIX_ERR_NOT_FOUND;
    } else if (std::strcmp(it->second.publisher.nspace, proc->nspace) != 0) {
      status = PMIX_ERR_NO_PERMISSIONS;
    } else {
      PMIX_VALUE_RELEASE(it->second.value);
      g_table->erase(it);
    }
  }
  reply_op(cbfunc, cbdata, status);
  return PMIX_SUCCESS;
}

}  // namespace

void install_name_service(pmix_server_module_t& m) {
  m.publish = on_publish;
  m.lookup = on_lookup;
  m.unpublish = on_unpublish;
}

}  // namespace sonde::mpiexec
