// Wireup over PMIx, plus the singleton used when no PMIx server is around.
//
// Keys are stored under a "sonde." prefix so they never collide with the
// reserved "pmix.*" namespace or with another library in the same process
// that also speaks PMIx. Values travel as byte objects, so they may hold NULs.

#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "pmi/wireup.h"
#include "pmi/pmix_value.h"
#include "pmi/wireup_job_id.h"

extern char** environ;

namespace sonde {
namespace {

constexpr std::string_view kKeyPrefix = "sonde.";
// A get() from a rank on another node without a collecting fence waits at
// most this long for the key, so a key that never comes cannot hang us.
constexpr int kGetTimeoutSeconds = 60;
// After PMIx_Abort the server is expected to kill us; if it does not answer
// within this time we exit on our own.
constexpr int kAbortGraceSeconds = 5;

std::string pmix_error(const char* what, pmix_status_t rc) {
  return std::string("sonde wireup: ") + what + " failed: " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")";
}

std::string launcher_job_id() {
  const char* v = std::getenv(kJobIdEnv);
  return (v != nullptr && is_job_id(v)) ? std::string(v) : std::string();
}

std::string local_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

bool pmix_server_advertised() {
  if (std::getenv("PMIX_NAMESPACE") != nullptr) return true;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) return true;
  }
  return false;
}

std::string prefixed_key(std::string_view key) {
  std::string full(kKeyPrefix);
  full += key;
  if (full.size() > PMIX_MAX_KEYLEN) {
    throw std::invalid_argument("sonde wireup: key longer than " + std::to_string(PMIX_MAX_KEYLEN - kKeyPrefix.size()) +
                                " characters: " + std::string(key.substr(0, 40)) + "...");
  }
  return full;
}

// Exit codes 0 and >255 would read as success (or wrap to it) in the shell.
int abort_exit_code(int status) { return (status > 0 && status < 256) ? status : 1; }

void check_live(bool finalized, const char* what) {
  if (finalized) {
    throw std::logic_error(std::string("sonde wireup: ") + what + " after finalize()");
  }
}

void check_rank(int rank, int size, const char* what) {
  if (rank < 0 || rank >= size) {
    throw std::out_of_range(std::string("sonde wireup: ") + what + ": rank " + std::to_string(rank) + " outside 0.." +
                            std::to_string(size - 1));
  }
}

class SingletonWireup final : public Wireup {
 public:
  SingletonWireup() : job_id_(launcher_job_id()), hostname_(local_hostname()) {
    if (job_id_.empty()) job_id_ = random_job_id();
  }

  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string job_id() const override { return job_id_; }
  int node_of(int rank) const override {
    check_rank(rank, 1, "node_of");
    return 0;
  }
  std::string hostname() const override { return hostname_; }
  std::string nspace() const override { return {}; }
  int universe_size() const override { return 1; }
  int appnum() const override { return -1; }

  void put(std::string_view key, std::string_view value) override {
    check_live(finalized_, "put");
    kv_[prefixed_key(key)] = std::string(value);
  }
  void commit() override { check_live(finalized_, "commit"); }
  void fence(bool) override { check_live(finalized_, "fence"); }
  std::optional<std::string> get(int rank, std::string_view key) override {
    check_live(finalized_, "get");
    check_rank(rank, 1, "get");
    auto it = kv_.find(prefixed_key(key));
    if (it == kv_.end()) return std::nullopt;
    return it->second;
  }

  [[noreturn]] void abort(int status, std::string_view message) override {
    // Nobody else will report it: say it here.
    std::fprintf(stderr, "sonde: abort (status %d): %.*s\n", status, static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    _exit(abort_exit_code(status));
  }
  void finalize() override { finalized_ = true; }

 private:
  bool finalized_ = false;
  std::string job_id_;
  std::string hostname_;
  std::map<std::string, std::string, std::less<>> kv_;
};

struct ValueDeleter {
  void operator()(pmix_value_t* v) const {
    PMIx_Value_destruct(v);
    std::free(v);
  }
};
using ValuePtr = std::unique_ptr<pmix_value_t, ValueDeleter>;

// One directive for PMIx_Get/PMIx_Fence, released when it goes out of scope.
class Directive {
 public:
  Directive(const char* key, const void* data, pmix_data_type_t type) {
    std::memset(&info_, 0, sizeof info_);
    PMIx_Info_load(&info_, key, data, type);
  }
  ~Directive() { PMIx_Value_destruct(&info_.value); }
  Directive(const Directive&) = delete;
  Directive& operator=(const Directive&) = delete;
  const pmix_info_t* get() const { return &info_; }

 private:
  pmix_info_t info_;
};

std::optional<uint64_t> as_number(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_UINT8: return v.data.uint8;
    case PMIX_UINT16: return v.data.uint16;
    case PMIX_UINT32: return v.data.uint32;
    case PMIX_UINT64: return v.data.uint64;
    case PMIX_SIZE: return v.data.size;
    case PMIX_PROC_RANK: return v.data.rank;
    case PMIX_INT: return v.data.integer < 0 ? std::nullopt : std::optional<uint64_t>(v.data.integer);
    case PMIX_INT8: return v.data.int8 < 0 ? std::nullopt : std::optional<uint64_t>(v.data.int8);
    case PMIX_INT16: return v.data.int16 < 0 ? std::nullopt : std::optional<uint64_t>(v.data.int16);
    case PMIX_INT32: return v.data.int32 < 0 ? std::nullopt : std::optional<uint64_t>(v.data.int32);
    case PMIX_INT64: return v.data.int64 < 0 ? std::nullopt : std::optional<uint64_t>(v.data.int64);
    default: return std::nullopt;
  }
}

std::optional<std::string> as_string(const pmix_value_t& v) {
  if (v.type == PMIX_STRING && v.data.string != nullptr) return std::string(v.data.string);
  if (v.type == PMIX_BYTE_OBJECT) {
    return std::string(v.data.bo.bytes != nullptr ? v.data.bo.bytes : "", v.data.bo.size);
  }
  return std::nullopt;
}

class PmixWireup final : public Wireup {
 public:
  PmixWireup() {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      const char* ns = std::getenv("PMIX_NAMESPACE");
      throw std::runtime_error(
          pmix_error("PMIx_Init", rc) +
          "; the environment advertises a PMIx server (PMIX_NAMESPACE=" + (ns != nullptr ? ns : "<unset>") +
          ") but it cannot be reached. Start the program with mpiexec, or unset the PMIX_* "
          "variables to run it as a single process.");
    }
    initialized_ = true;
    std::memset(&wildcard_, 0, sizeof wildcard_);
    PMIX_LOAD_PROCID(&wildcard_, me_.nspace, PMIX_RANK_WILDCARD);

    auto job_size = lookup_number(wildcard_, PMIX_JOB_SIZE, /*local_only=*/false);
    if (!job_size || *job_size == 0 || *job_size > INT32_MAX) {
      PMIx_Finalize(nullptr, 0);
      throw std::runtime_error("sonde wireup: the PMIx server did not report a job size");
    }
    size_ = static_cast<int>(*job_size);
    auto univ = lookup_number(wildcard_, PMIX_UNIV_SIZE, true);
    universe_ = (univ && *univ >= static_cast<uint64_t>(size_) && *univ <= INT32_MAX) ? static_cast<int>(*univ) : size_;
    auto app = lookup_number(me_, PMIX_APPNUM, true);
    appnum_ = app && *app <= INT32_MAX ? static_cast<int>(*app) : -1;
    hostname_ = lookup_text(me_, PMIX_HOSTNAME, true)
                    .value_or(lookup_text(wildcard_, PMIX_HOSTNAME, true).value_or(local_hostname()));
    job_id_ = launcher_job_id();
    if (job_id_.empty()) job_id_ = derived_job_id();
  }

  // Not finalizing here is deliberate: a rank that leaves without finalize()
  // must look abnormal to its launcher.
  ~PmixWireup() override = default;

  int rank() const override { return static_cast<int>(me_.rank); }
  int size() const override { return size_; }
  std::string job_id() const override { return job_id_; }
  std::string hostname() const override { return hostname_; }
  std::string nspace() const override { return me_.nspace; }
  int universe_size() const override { return universe_; }
  int appnum() const override { return appnum_; }

  int node_of(int rank) const override {
    check_rank(rank, size_, "node_of");
    std::lock_guard<std::mutex> lock(node_mu_);
    if (nodes_.empty()) resolve_nodes();
    return nodes_[rank];
  }

  void put(std::string_view key, std::string_view value) override {
    check_live(finalized_, "put");
    std::string full = prefixed_key(key);
    pmix_value_t v = pmi::byte_object(value);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, full.c_str(), &v);
    if (rc != PMIX_SUCCESS) throw std::runtime_error(pmix_error("PMIx_Put", rc));
  }

  void commit() override {
    check_live(finalized_, "commit");
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) throw std::runtime_error(pmix_error("PMIx_Commit", rc));
  }

  void fence(bool collect) override {
    check_live(finalized_, "fence");
    Directive d(PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(nullptr, 0, d.get(), 1);
    if (rc != PMIX_SUCCESS) {
      throw std::runtime_error(pmix_error("PMIx_Fence", rc) + " (a rank of the job has probably died)");
    }
    collected_ = collect;
  }

  std::optional<std::string> get(int rank, std::string_view key) override {
    check_live(finalized_, "get");
    check_rank(rank, size_, "get");
    std::string full = prefixed_key(key);
    pmix_proc_t p = proc(rank);
    pmix_value_t* raw = nullptr;
    pmix_status_t rc;
    if (collected_ || rank == rank_int()) {
      // Every value is already here; asking the server about a key nobody
      // put would only wait for it to appear.
      bool yes = true;
      Directive d(PMIX_OPTIONAL, &yes, PMIX_BOOL);
      rc = PMIx_Get(&p, full.c_str(), d.get(), 1, &raw);
    } else if (node_of(rank) == node_of(rank_int())) {
      // Our server holds what the peer committed before the fence, so it
      // can answer "not there" at once instead of waiting for a later put.
      bool yes = true;
      Directive d(PMIX_IMMEDIATE, &yes, PMIX_BOOL);
      rc = PMIx_Get(&p, full.c_str(), d.get(), 1, &raw);
    } else {
      // Fetched from the peer's server, which cannot tell "not yet" from
      // "never": bound the wait.
      int timeout = kGetTimeoutSeconds;
      Directive d(PMIX_TIMEOUT, &timeout, PMIX_INT);
      rc = PMIx_Get(&p, full.c_str(), d.get(), 1, &raw);
    }
    ValuePtr v(raw);
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND) return std::nullopt;
    if (rc == PMIX_ERR_TIMEOUT) {
      throw std::runtime_error("sonde wireup: rank " + std::to_string(rank) +
                               " (on another node) has not published \"" + std::string(key) + "\" within " +
                               std::to_string(kGetTimeoutSeconds) + " s");
    }
    if (rc != PMIX_SUCCESS) throw std::runtime_error(pmix_error("PMIx_Get", rc));
    if (!v) return std::nullopt;
    return as_string(*v);
  }

  [[noreturn]] void abort(int status, std::string_view message) override {
    int code = abort_exit_code(status);
    if (initialized_ && !finalized_) {
      std::thread([code] {
        sleep(kAbortGraceSeconds);
        _exit(code);
      }).detach();
      std::string msg(message);
      PMIx_Abort(status, msg.c_str(), nullptr, 0);
    } else {
      std::fprintf(stderr, "sonde: abort (status %d): %.*s\n", status, static_cast<int>(message.size()),
                   message.data());
      std::fflush(stderr);
    }
    _exit(code);
  }

  void finalize() override {
    if (!initialized_ || finalized_) return;
    finalized_ = true;
    // Nothing useful can be done about a failure this late; the process is
    // leaving either way.
    (void)PMIx_Finalize(nullptr, 0);
  }

 private:
  int rank_int() const { return static_cast<int>(me_.rank); }

  pmix_proc_t proc(int rank) const {
    pmix_proc_t p;
    std::memset(&p, 0, sizeof p);
    PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(rank));
    return p;
  }

  static ValuePtr lookup(const pmix_proc_t& p, const char* key, bool local_only) {
    pmix_value_t* raw = nullptr;
    pmix_status_t rc;
    if (local_only) {
      bool yes = true;
      Directive d(PMIX_OPTIONAL, &yes, PMIX_BOOL);
      rc = PMIx_Get(&p, key, d.get(), 1, &raw);
    } else {
      rc = PMIx_Get(&p, key, nullptr, 0, &raw);
    }
    ValuePtr v(raw);
    if (rc != PMIX_SUCCESS) return nullptr;
    return v;
  }
  static std::optional<uint64_t> lookup_number(const pmix_proc_t& p, const char* key, bool local_only) {
    ValuePtr v = lookup(p, key, local_only);
    return v ? as_number(*v) : std::nullopt;
  }
  static std::optional<std::string> lookup_text(const pmix_proc_t& p, const char* key, bool local_only) {
    ValuePtr v = lookup(p, key, local_only);
    return v ? as_string(*v) : std::nullopt;
  }

  // The namespace alone can repeat (Open MPI derives it from mpirun's pid),
  // so mix in what only this server instance has: its contact URI (listening
  // port) as every local rank sees it, and the boot id of this host.
  std::string derived_job_id() const {
    std::string seed = me_.nspace;
    std::vector<std::string> uris;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) uris.emplace_back(*e);
    }
    std::sort(uris.begin(), uris.end());
    for (const auto& u : uris) seed += "\n" + u;
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    if (boot >> boot_id) seed += "\n" + boot_id;
    return job_id_from_seed(seed);
  }

  // Nodes are identified by the resource manager's PMIX_NODEID of each rank,
  // else by each rank's PMIX_HOSTNAME; else, if every rank is local, all are
  // node 0. Identifiers are renumbered by first appearance in rank order, which
  // gives the promised 0..nodes-1 and the same answer on every rank.
  void resolve_nodes() const {
    std::vector<int> ids(size_, -1);
    auto number_by = [&](auto key_of) {
      std::unordered_map<std::string, int> index;
      for (int r = 0; r < size_; ++r) {
        std::optional<std::string> key = key_of(r);
        if (!key) return false;
        ids[r] = index.emplace(*key, static_cast<int>(index.size())).first->second;
      }
      return true;
    };
    bool complete = number_by([&](int r) -> std::optional<std::string> {
                      auto id = lookup_number(proc(r), PMIX_NODEID, true);
                      return id ? std::optional<std::string>(std::to_string(*id)) : std::nullopt;
                    }) ||
                    number_by([&](int r) { return lookup_text(proc(r), PMIX_HOSTNAME, true); });
    if (!complete) {
      auto local = lookup_number(wildcard_, PMIX_LOCAL_SIZE, true);
      if (!local || *local != static_cast<uint64_t>(size_)) {
        throw std::runtime_error("sonde wireup: the PMIx server reports neither PMIX_NODEID nor PMIX_HOSTNAME for "
                                 "every rank, so the node of each rank is unknown");
      }
      std::fill(ids.begin(), ids.end(), 0);
    }
    nodes_ = std::move(ids);
  }

  pmix_proc_t me_{};
  pmix_proc_t wildcard_{};
  int size_ = 1;
  int universe_ = 1;
  int appnum_ = -1;
  std::string hostname_;
  std::string job_id_;
  bool initialized_ = false;
  bool finalized_ = false;
  bool collected_ = false;
  mutable std::mutex node_mu_;
  mutable std::vector<int> nodes_;
};

}  // namespace

std::unique_ptr<Wireup> Wireup::connect() {
  if (pmix_server_advertised()) return std::make_unique<PmixWireup>();
  return std::make_unique<SingletonWireup>();
}

}  // namespace sonde
