// C ABI: MPI_Info (MPI 4.1 chapter 10) and MPI_INFO_ENV.
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/abi.h"
#include "engine/engine.h"
#include "engine/handles.h"
#include "engine/info.h"

namespace sonde::engine {

namespace {

struct Info {
  InfoPairs pairs;
};

HandleTable<Info, SONDE_KIND_INFO>& info_table() {
  static auto* t = new HandleTable<Info, SONDE_KIND_INFO>(1);  // 1: MPI_INFO_ENV
  return *t;
}

bool g_env_filled = false;

// MPI_INFO_ENV from what this process knows (MPI 4.1 section 11.2.3); the
// command line comes from /proc because MPI_Init may be given NULLs.
void fill_env() {
  g_env_filled = true;
  Engine& e = engine();
  InfoPairs& p = info_table().predefined(1).pairs;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    args.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  if (!args.empty()) {
    info_set(p, "command", args[0]);
    std::string rest;
    for (size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    info_set(p, "argv", rest);
  }
  info_set(p, "maxprocs", std::to_string(e.world_size));
  info_set(p, "soft", std::to_string(e.world_size));
  info_set(p, "host", e.processor_name);
  utsname u;
  if (uname(&u) == 0) info_set(p, "arch", u.machine);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) info_set(p, "wdir", cwd);
  static const char* const kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                        "MPI_THREAD_MULTIPLE"};
  info_set(p, "thread_level", kLevels[e.thread_level & 3]);
}

}  // namespace

InfoPairs* find_info(MPI_Info h) {
  Info* i = info_table().lookup(h);
  if (!i) return nullptr;
  if (h == MPI_INFO_ENV && !g_env_filled) fill_env();
  return &i->pairs;
}

int new_info(InfoPairs pairs, MPI_Info* out) {
  Info* i = nullptr;
  int h = info_table().allocate(&i);
  if (!h) return MPI_ERR_INTERN;
  i->pairs = std::move(pairs);
  *out = h;
  return MPI_SUCCESS;
}

void info_set(InfoPairs& pairs, const std::string& key, const std::string& value) {
  for (auto& kv : pairs) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  pairs.emplace_back(key, value);
}

}  // namespace sonde::engine

using namespace sonde::engine;

namespace {

// Keys are at most MPI_MAX_INFO_KEY characters and not empty (MPI 10).
int check_key(const char* key) {
  if (!key) return MPI_ERR_INFO_KEY;
  size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
  return n == 0 || n > MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

const std::string* lookup(const InfoPairs& p, const char* key) {
  for (auto& kv : p)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

}  // namespace

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  SONDE_ENTER("MPI_Info_create");
  if (!info) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, new_info({}, info), fn);
}
SONDE_WEAK_ALIAS(Info_create)

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  SONDE_ENTER("MPI_Info_set");
  InfoPairs* p = find_info(info);
  if (!p || info == MPI_INFO_ENV) return raise(nullptr, MPI_ERR_INFO, fn);
  if (int rc = check_key(key)) return raise(nullptr, rc, fn);
  if (!value) return raise(nullptr, MPI_ERR_INFO_VALUE, fn);
  size_t n = strnlen(value, MPI_MAX_INFO_VAL + 1);
  if (n > MPI_MAX_INFO_VAL) return raise(nullptr, MPI_ERR_INFO_VALUE, fn);
  info_set(*p, key, value);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_set)

int PMPI_Info_delete(MPI_Info info, const char* key) {
  SONDE_ENTER("MPI_Info_delete");
  InfoPairs* p = find_info(info);
  if (!p || info == MPI_INFO_ENV) return raise(nullptr, MPI_ERR_INFO, fn);
  if (int rc = check_key(key)) return raise(nullptr, rc, fn);
  for (auto it = p->begin(); it != p->end(); ++it) {
    if (it->first == key) {
      p->erase(it);
      return MPI_SUCCESS;
    }
  }
  return raise(nullptr, MPI_ERR_INFO_NOKEY, fn);
}
SONDE_WEAK_ALIAS(Info_delete)

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  SONDE_ENTER("MPI_Info_get");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (int rc = check_key(key)) return raise(nullptr, rc, fn);
  if (!flag || valuelen < 0 || (!value && valuelen > 0)) return raise(nullptr, MPI_ERR_ARG, fn);
  const std::string* v = lookup(*p, key);
  *flag = v != nullptr;
  if (v && value) {
    // valuelen excludes the terminating NUL (MPI 10): value has valuelen+1 bytes.
    size_t n = std::min(v->size(), size_t(valuelen));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get)

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  SONDE_ENTER("MPI_Info_get_valuelen");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (int rc = check_key(key)) return raise(nullptr, rc, fn);
  if (!valuelen || !flag) return raise(nullptr, MPI_ERR_ARG, fn);
  const std::string* v = lookup(*p, key);
  *flag = v != nullptr;
  if (v) *valuelen = int(v->size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get_valuelen)

int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  SONDE_ENTER("MPI_Info_get_string");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (int rc = check_key(key)) return raise(nullptr, rc, fn);
  if (!buflen || !flag || *buflen < 0 || (*buflen > 0 && !value)) return raise(nullptr, MPI_ERR_ARG, fn);
  const std::string* v = lookup(*p, key);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  // MPI 4.1 10: copy at most buflen-1 characters plus NUL; report the full
  // length including the NUL so the caller can size a second call.
  if (*buflen > 0) {
    size_t n = std::min(v->size(), size_t(*buflen - 1));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  *buflen = int(v->size()) + 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get_string)

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  SONDE_ENTER("MPI_Info_get_nkeys");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (!nkeys) return raise(nullptr, MPI_ERR_ARG, fn);
  *nkeys = int(p->size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  SONDE_ENTER("MPI_Info_get_nthkey");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (!key) return raise(nullptr, MPI_ERR_ARG, fn);
  if (n < 0 || n >= int(p->size())) return raise(nullptr, MPI_ERR_ARG, fn);
  const std::string& k = (*p)[size_t(n)].first;
  std::memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get_nthkey)

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  SONDE_ENTER("MPI_Info_dup");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (!newinfo) return raise(nullptr, MPI_ERR_ARG, fn);
  InfoPairs copy = *p;
  return finish(nullptr, new_info(std::move(copy), newinfo), fn);
}
SONDE_WEAK_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info* info) {
  SONDE_ENTER("MPI_Info_free");
  if (!info) return raise(nullptr, MPI_ERR_ARG, fn);
  InfoPairs* p = find_info(*info);
  if (!p || *info == MPI_INFO_ENV) return raise(nullptr, MPI_ERR_INFO, fn);
  p->clear();
  p->shrink_to_fit();
  info_table().release(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_free)

}  // extern "C"
