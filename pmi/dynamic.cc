#include "pmi/dynamic.h"

#include "pmi/pmix_value.h"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace sonde::dynamic {
namespace {

constexpr std::string_view kPrefix = "sonde.";
static_assert(kMaxNspace == PMIX_MAX_NSLEN, "proc_list.h's namespace bound is PMIx's");

Error failure(const char* what, pmix_status_t rc) {
  Status s = Status::kFailed;
  if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_NOT_AVAILABLE) s = Status::kNotFound;
  if (rc == PMIX_ERR_NOT_SUPPORTED) s = Status::kNotSupported;
  if (rc == PMIX_ERR_DUPLICATE_KEY || rc == PMIX_EXISTS) s = Status::kDuplicate;
  return {s, std::string(what) + ": " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")"};
}

Error not_client() { return {Status::kNotSupported, "not started by a launcher with a PMIx server"}; }

void load(pmix_proc_t* p, const Proc& proc) {
  std::memset(p, 0, sizeof *p);
  PMIX_LOAD_PROCID(p, proc.nspace.c_str(), static_cast<pmix_rank_t>(proc.rank));
}

std::string full_key(std::string_view key) {
  std::string k(kPrefix);
  k += key;
  return k;
}

char** argv_of(const std::vector<std::string>& v) {
  // Freed by PMIX_APP_FREE, element by element and then the array.
  auto** out = static_cast<char**>(std::calloc(v.size() + 1, sizeof(char*)));
  for (size_t i = 0; i < v.size(); ++i) out[i] = strdup(v[i].c_str());
  return out;
}

}  // namespace

Error spawn(const std::vector<App>& apps, std::string* nspace) {
  if (!PMIx_Initialized()) return not_client();
  pmix_app_t* a = nullptr;
  PMIX_APP_CREATE(a, apps.size());
  for (size_t i = 0; i < apps.size(); ++i) {
    a[i].cmd = strdup(apps[i].command.c_str());
    std::vector<std::string> argv{apps[i].command};
    argv.insert(argv.end(), apps[i].args.begin(), apps[i].args.end());
    a[i].argv = argv_of(argv);
    a[i].env = argv_of(apps[i].env);
    if (!apps[i].wdir.empty()) a[i].cwd = strdup(apps[i].wdir.c_str());
    a[i].maxprocs = apps[i].procs;
    size_t n = (!apps[i].path.empty()) + (!apps[i].host.empty()) + (!apps[i].hostfile.empty());
    if (n > 0) {
      PMIX_INFO_CREATE(a[i].info, n);
      a[i].ninfo = n;
      size_t k = 0;
      if (!apps[i].path.empty()) PMIX_INFO_LOAD(&a[i].info[k++], "sonde.path", apps[i].path.c_str(), PMIX_STRING);
      if (!apps[i].host.empty()) PMIX_INFO_LOAD(&a[i].info[k++], PMIX_HOST, apps[i].host.c_str(), PMIX_STRING);
      if (!apps[i].hostfile.empty()) {
        PMIX_INFO_LOAD(&a[i].info[k++], PMIX_HOSTFILE, apps[i].hostfile.c_str(), PMIX_STRING);
      }
    }
  }
  pmix_nspace_t ns;
  std::memset(ns, 0, sizeof ns);
  pmix_status_t rc = PMIx_Spawn(nullptr, 0, a, apps.size(), ns);
  PMIX_APP_FREE(a, apps.size());
  if (rc != PMIX_SUCCESS) return failure("PMIx_Spawn", rc);
  *nspace = ns;
  return {};
}

Error put(std::string_view key, std::string_view value) {
  if (!PMIx_Initialized()) return not_client();
  std::string k = full_key(key);
  pmix_value_t v = pmi::byte_object(value);
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);
  if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
  return rc == PMIX_SUCCESS ? Error{} : failure("PMIx_Put", rc);
}

Error fence(const std::vector<Proc>& procs) {
  if (!PMIx_Initialized()) return not_client();
  std::vector<pmix_proc_t> p(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) load(&p[i], procs[i]);
  pmix_info_t info;
  bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  pmix_status_t rc = PMIx_Fence(p.data(), p.size(), &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  return rc == PMIX_SUCCESS ? Error{} : failure("PMIx_Fence across jobs", rc);
}

std::optional<std::string> get(const Proc& proc, std::string_view key) {
  if (!PMIx_Initialized()) return std::nullopt;
  pmix_proc_t p;
  load(&p, proc);
  std::string k = full_key(key);
  pmix_value_t* v = nullptr;
  pmix_info_t info;
  bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &yes, PMIX_BOOL);
  pmix_status_t rc = PMIx_Get(&p, k.c_str(), &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) {
    // Not held here: servers whose fences do not bring another host's
    // values of another namespace along fetch them from that host's server.
    int seconds = 30;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
    v = nullptr;
    rc = PMIx_Get(&p, k.c_str(), &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
  }
  if (rc != PMIX_SUCCESS || v == nullptr) return std::nullopt;
  std::optional<std::string> out;
  if (v->type == PMIX_BYTE_OBJECT) out = std::string(v->data.bo.bytes ? v->data.bo.bytes : "", v->data.bo.size);
  if (v->type == PMIX_STRING && v->data.string) out = std::string(v->data.string);
  PMIX_VALUE_RELEASE(v);
  return out;
}

Error publish(const std::string& key, const std::string& value) {
  if (!PMIx_Initialized()) return not_client();
  pmix_info_t info;
  PMIX_INFO_LOAD(&info, full_key(key).c_str(), value.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_Publish(&info, 1);
  PMIX_INFO_DESTRUCT(&info);
  return rc == PMIX_SUCCESS ? Error{} : failure("PMIx_Publish", rc);
}

Error lookup(const std::string& key, bool wait, std::string* value) {
  if (!PMIx_Initialized()) return not_client();
  pmix_pdata_t data;
  PMIX_PDATA_CONSTRUCT(&data);
  PMIX_LOAD_KEY(data.key, full_key(key).c_str());
  pmix_info_t info;
  PMIX_INFO_LOAD(&info, PMIX_WAIT, &wait, PMIX_BOOL);
  pmix_status_t rc = PMIx_Lookup(&data, 1, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  Error e;
  if (rc != PMIX_SUCCESS) {
    e = failure("PMIx_Lookup", rc);
  } else if (data.value.type == PMIX_STRING && data.value.data.string != nullptr) {
    *value = data.value.data.string;
  } else {
    e = {Status::kNotFound, "PMIx_Lookup: no value"};
  }
  PMIX_PDATA_DESTRUCT(&data);
  return e;
}

Error unpublish(const std::string& key) {
  if (!PMIx_Initialized()) return not_client();
  std::string k = full_key(key);
  char* keys[2] = {k.data(), nullptr};
  pmix_status_t rc = PMIx_Unpublish(keys, nullptr, 0);
  return rc == PMIX_SUCCESS ? Error{} : failure("PMIx_Unpublish", rc);
}

}  // namespace sonde::dynamic
