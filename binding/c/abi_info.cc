// C ABI: MPI_Info (MPI 4.1 chapter 10) and MPI_INFO_ENV. Every call here may
// be made before MPI_Init and after MPI_Finalize (MPI 4.1 section 12.4.1).
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "binding/c/abi.h"
#include "core/engine.h"
#include "base/handles.h"
#include "comm/info.h"

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

std::vector<std::string> split_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    args.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

// The number of processes the job was started with: the engine's once MPI
// is initialized, before that what the launcher told us (Sonde's mpiexec
// sets SONDE_SIZE to its -n), and 1 for a singleton outside any launcher.
// Empty when unknown (another launcher, before MPI_Init).
std::string job_size() {
  if (init_state() != 0) return std::to_string(engine().world_size());
  if (const char* n = std::getenv("SONDE_SIZE")) return n;
  if (std::getenv("PMIX_NAMESPACE")) return "";
  return "1";
}

// The keys of MPI 4.1 section 11.2.3 this process knows, built the same way
// before MPI_Init, while initialized and after MPI_Finalize (MPI_Info_create_env
// must give the same answers every time): command and argv from `args`
// (argv[0] first), maxprocs and soft, host, arch, wdir. thread_level is
// MPI_INFO_ENV's alone (the level MPI_Init_thread provided).
InfoPairs env_pairs(const std::vector<std::string>& args) {
  InfoPairs p;
  if (!args.empty()) {
    info_set(p, "command", args[0]);
    std::string rest;
    for (size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    info_set(p, "argv", rest);
  }
  std::string n = job_size();
  if (!n.empty()) {
    info_set(p, "maxprocs", n);
    info_set(p, "soft", n);
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) info_set(p, "host", host);
  utsname u;
  if (uname(&u) == 0) info_set(p, "arch", u.machine);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) info_set(p, "wdir", cwd);
  return p;
}

// MPI_INFO_ENV; the command line comes from /proc because MPI_Init may be
// given NULLs. Used before MPI_Init it is rebuilt on each use, so that it
// gains what MPI_Init learns.
void fill_env() {
  InfoPairs& p = info_table().predefined(1).pairs;
  for (auto& [k, v] : env_pairs(split_cmdline())) info_set(p, k, v);
  if (init_state() == 0) return;
  g_env_filled = true;
  static const char* const kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                        "MPI_THREAD_MULTIPLE"};
  info_set(p, "thread_level", kLevels[engine().thread_level() & 3]);
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
  SONDE_ENTER_ANYTIME("MPI_Info_create");
  if (!info) return raise(nullptr, MPI_ERR_ARG, fn);
  return finish(nullptr, new_info({}, info), fn);
}
SONDE_WEAK_ALIAS(Info_create)

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  SONDE_ENTER_ANYTIME("MPI_Info_set");
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
  SONDE_ENTER_ANYTIME("MPI_Info_delete");
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
  SONDE_ENTER_ANYTIME("MPI_Info_get");
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
  SONDE_ENTER_ANYTIME("MPI_Info_get_valuelen");
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
  SONDE_ENTER_ANYTIME("MPI_Info_get_string");
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
  SONDE_ENTER_ANYTIME("MPI_Info_get_nkeys");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (!nkeys) return raise(nullptr, MPI_ERR_ARG, fn);
  *nkeys = int(p->size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  SONDE_ENTER_ANYTIME("MPI_Info_get_nthkey");
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
  SONDE_ENTER_ANYTIME("MPI_Info_dup");
  InfoPairs* p = find_info(info);
  if (!p) return raise(nullptr, MPI_ERR_INFO, fn);
  if (!newinfo) return raise(nullptr, MPI_ERR_ARG, fn);
  InfoPairs copy = *p;
  return finish(nullptr, new_info(std::move(copy), newinfo), fn);
}
SONDE_WEAK_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info* info) {
  SONDE_ENTER_ANYTIME("MPI_Info_free");
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

// MPI 4.1 11.2.3: the keys MPI_INFO_ENV would hold for this command line.
// argc/argv may be 0/NULL: the process's own command line then.
int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  SONDE_ENTER_ANYTIME("MPI_Info_create_env");
  if (!info || argc < 0) return raise(nullptr, MPI_ERR_ARG, fn);
  std::vector<std::string> args;
  if (argv && argc > 0) {
    for (int i = 0; i < argc; ++i)
      if (argv[i]) args.emplace_back(argv[i]);
  } else {
    args = split_cmdline();
  }
  return finish(nullptr, new_info(env_pairs(args), info), fn);
}
SONDE_WEAK_ALIAS(Info_create_env)

}  // extern "C"
