#include "tools/mpiexec/name_service.h"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace sonde::mpiexec {
namespace {

// A PMIx value as bytes, or false if libpmix cannot pack it.
bool pack(const pmix_value_t& v, std::string* out) {
  pmix_data_buffer_t buf;
  PMIX_DATA_BUFFER_CONSTRUCT(&buf);
  bool ok = PMIx_Data_pack(nullptr, &buf, const_cast<pmix_value_t*>(&v), 1, PMIX_VALUE) == PMIX_SUCCESS;
  if (ok) {
    pmix_byte_object_t bo;
    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    ok = PMIx_Data_unload(&buf, &bo) == PMIX_SUCCESS;
    if (ok) out->assign(bo.bytes != nullptr ? bo.bytes : "", bo.size);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
  }
  PMIX_DATA_BUFFER_DESTRUCT(&buf);
  return ok;
}

// The value pack() made of `bytes`, into *out.
bool unpack(const std::string& bytes, pmix_value_t* out) {
  pmix_data_buffer_t buf;
  PMIX_DATA_BUFFER_CONSTRUCT(&buf);
  pmix_byte_object_t bo;
  PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
  bo.bytes = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (bo.bytes == nullptr) return false;
  std::memcpy(bo.bytes, bytes.data(), bytes.size());
  bo.size = bytes.size();
  bool ok = PMIx_Data_load(&buf, &bo) == PMIX_SUCCESS;  // the buffer owns the bytes now
  int32_t count = 1;
  ok = ok && PMIx_Data_unpack(nullptr, &buf, out, &count, PMIX_VALUE) == PMIX_SUCCESS && count == 1;
  PMIX_BYTE_OBJECT_DESTRUCT(&bo);
  PMIX_DATA_BUFFER_DESTRUCT(&buf);
  return ok;
}

pmix_status_t to_pmix(NameStatus s) {
  switch (s) {
    case NameStatus::kOk: return PMIX_SUCCESS;
    case NameStatus::kDuplicate: return PMIX_ERR_DUPLICATE_KEY;
    case NameStatus::kNotFound: return PMIX_ERR_NOT_FOUND;
    case NameStatus::kNoPermission: return PMIX_ERR_NO_PERMISSIONS;
    case NameStatus::kBadRequest: return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_ERROR;
}

NameRequest request_of(NameRequest::Op op, const pmix_proc_t* proc) {
  NameRequest r;
  r.op = op;
  r.nspace.assign(proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN));
  r.rank = proc->rank;
  return r;
}

bool has_flag(const pmix_info_t info[], size_t ninfo, const char* key) {
  for (size_t i = 0; i < ninfo; ++i)
    if (PMIX_CHECK_KEY(&info[i], key)) return info[i].value.type != PMIX_BOOL || info[i].value.data.flag;
  return false;
}

void forward_op(NameRequest r, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  name_service_post([r = std::move(r), cbfunc, cbdata]() mutable {
    name_service_forward(std::move(r), [cbfunc, cbdata](NameReply reply) {
      if (cbfunc != nullptr) cbfunc(to_pmix(reply.status), cbdata);
    });
  });
}

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void* cbdata) {
  NameRequest r = request_of(NameRequest::Op::kPublish, proc);
  // Directives (range, persistence...) are pmix.* keys; everything else is data.
  for (size_t i = 0; i < ninfo; ++i) {
    if (std::strncmp(info[i].key, "pmix.", 5) == 0) continue;
    std::string bytes;
    if (!pack(info[i].value, &bytes)) return PMIX_ERR_BAD_PARAM;
    r.keys.emplace_back(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
    r.values.push_back(std::move(bytes));
  }
  if (r.keys.empty()) return PMIX_ERR_BAD_PARAM;
  forward_op(std::move(r), cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                        pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  NameRequest r = request_of(NameRequest::Op::kLookup, proc);
  for (char** k = keys; k != nullptr && *k != nullptr; ++k) r.keys.emplace_back(*k);
  if (r.keys.empty()) return PMIX_ERR_BAD_PARAM;
  r.wait = has_flag(info, ninfo, PMIX_WAIT);
  name_service_post([r = std::move(r), cbfunc, cbdata]() mutable {
    name_service_forward(std::move(r), [cbfunc, cbdata](NameReply reply) {
      const size_t n = reply.found.size();
      pmix_pdata_t* data = nullptr;
      if (n > 0) PMIX_PDATA_CREATE(data, n);
      pmix_status_t status = to_pmix(reply.status);
      for (size_t i = 0; i < n; ++i) {
        const NameEntry& e = reply.found[i];
        PMIX_LOAD_PROCID(&data[i].proc, e.nspace.c_str(), e.rank);
        PMIX_LOAD_KEY(data[i].key, e.key.c_str());
        if (!unpack(e.value, &data[i].value)) status = PMIX_ERR_UNPACK_FAILURE;
      }
      cbfunc(status, data, n, cbdata);
      if (data != nullptr) PMIX_PDATA_FREE(data, n);
    });
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                           void* cbdata) {
  NameRequest r = request_of(NameRequest::Op::kUnpublish, proc);
  // No keys: every key this process published.
  for (char** k = keys; k != nullptr && *k != nullptr; ++k) r.keys.emplace_back(*k);
  forward_op(std::move(r), cbfunc, cbdata);
  return PMIX_SUCCESS;
}

}  // namespace

void install_name_service(pmix_server_module_t& m) {
  m.publish = on_publish;
  m.lookup = on_lookup;
  m.unpublish = on_unpublish;
}

}  // namespace sonde::mpiexec
