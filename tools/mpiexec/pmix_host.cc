#include "tools/mpiexec/pmix_host.h"

#include <dlfcn.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "tools/mpiexec/name_service.h"

namespace sonde::mpiexec {
namespace {

// Registration calls complete in microseconds; a library that has not
// answered by then never will.
constexpr auto kOpTimeout = std::chrono::seconds(10);

PmixHost* g_host = nullptr;

std::string pmix_failure(const char* what, pmix_status_t rc) {
  return std::string(what) + " failed: " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")";
}

// Waits for one pmix_op_cbfunc_t. Heap-allocated and leaked on timeout, so a
// late callback never writes into freed memory.
struct OpWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void callback(pmix_status_t status, void* cbdata) {
    auto* w = static_cast<OpWait*>(cbdata);
    std::lock_guard<std::mutex> lock(w->mu);
    w->status = status;
    w->done = true;
    w->cv.notify_all();
  }
  // Consumes `w` unless the wait timed out.
  static pmix_status_t finish(OpWait* w, const char* what) {
    std::unique_lock<std::mutex> lock(w->mu);
    if (!w->cv.wait_for(lock, kOpTimeout, [w] { return w->done; })) {
      throw std::runtime_error(std::string(what) + " did not complete within 10 s");
    }
    pmix_status_t st = w->status;
    lock.unlock();
    delete w;
    return st;
  }
};

// An info list under construction; converted once, released on scope exit.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) { std::memset(&array_, 0, sizeof array_); }
  ~InfoList() {
    if (converted_) PMIx_Data_array_destruct(&array_);
    PMIx_Info_list_release(list_);
  }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void add(const char* key, const void* value, pmix_data_type_t type) {
    pmix_status_t rc = PMIx_Info_list_add(list_, key, value, type);
    if (rc != PMIX_SUCCESS) throw std::runtime_error(pmix_failure(key, rc));
  }
  void add_string(const char* key, const std::string& v) { add(key, v.c_str(), PMIX_STRING); }
  void add_u32(const char* key, uint32_t v) { add(key, &v, PMIX_UINT32); }
  void add_u16(const char* key, uint16_t v) { add(key, &v, PMIX_UINT16); }
  void add_rank(const char* key, pmix_rank_t v) { add(key, &v, PMIX_PROC_RANK); }
  void add_bool(const char* key, bool v) { add(key, &v, PMIX_BOOL); }
  // Nests `inner` as a data array of infos under `key` (copied).
  void add_array(const char* key, InfoList& inner) {
    pmix_data_array_t* a = inner.array();
    add(key, a, PMIX_DATA_ARRAY);
  }

  pmix_data_array_t* array() {
    if (!converted_) {
      pmix_status_t rc = PMIx_Info_list_convert(list_, &array_);
      if (rc != PMIX_SUCCESS) throw std::runtime_error(pmix_failure("PMIx_Info_list_convert", rc));
      converted_ = true;
    }
    return &array_;
  }
  pmix_info_t* infos() { return static_cast<pmix_info_t*>(array()->array); }
  size_t size() { return array()->size; }

 private:
  void* list_;
  pmix_data_array_t array_;
  bool converted_ = false;
};

int rank_of(const pmix_proc_t* proc) {
  if (proc == nullptr || proc->rank > INT32_MAX) return -1;
  return g_host->slot_of(proc->nspace, proc->rank);
}

// ---- upcalls from libpmix's progress thread ----

void reply_later(pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) return;
  g_host->post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
}

pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  g_host->events()->connected(rank_of(proc));
  if (cbfunc == nullptr) return PMIX_OPERATION_SUCCEEDED;
  reply_later(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  // libpmix 4.2 calls this only for PMIx_Finalize, whose client then waits
  // for our reply; so the flag is set before that rank can exit. (Some older
  // releases also called it when a connection dropped, which would hide an
  // exit without finalize.) A call without a callback is no finalize.
  if (cbfunc == nullptr) return PMIX_OPERATION_SUCCEEDED;
  g_host->events()->finalized(rank_of(proc));
  reply_later(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[], size_t,
                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
  // Whatever subset the client named, the whole job ends: MPI_Abort's
  // behaviour in every implementation that matters.
  g_host->events()->aborted(rank_of(proc), status, msg != nullptr ? msg : "");
  if (cbfunc == nullptr) return PMIX_OPERATION_SUCCEEDED;
  reply_later(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

void free_copy(void* p) { std::free(p); }

// Hands `data` back to libpmix as a fence's (or direct modex's) result; libpmix keeps the
// pointer until it calls free_copy.
void complete_fence(pmix_modex_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, const std::string& data) {
  char* copy = nullptr;
  if (!data.empty()) {
    copy = static_cast<char*>(std::malloc(data.size()));
    if (copy == nullptr) {
      cbfunc(PMIX_ERR_NOMEM, nullptr, 0, cbdata, nullptr, nullptr);
      return;
    }
    std::memcpy(copy, data.data(), data.size());
  }
  cbfunc(status, copy, copy != nullptr ? data.size() : 0, cbdata, free_copy, copy);
}

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char* data, size_t ndata,
                       pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  std::string mine(data != nullptr ? data : "", data != nullptr ? ndata : 0);
  bool local_only = true, whole_job = false, job_only = true;
  std::vector<std::string> names;
  for (size_t i = 0; i < nprocs; ++i) {
    const bool wildcard = procs[i].rank == PMIX_RANK_WILDCARD;
    const bool ours = g_host->job_nspace() == procs[i].nspace;
    if (wildcard) {
      local_only = false;
      whole_job = whole_job || ours;
    } else if (!g_host->is_local(rank_of(&procs[i]))) {
      local_only = false;
    }
    job_only = job_only && ours;
    names.push_back(std::string(procs[i].nspace, strnlen(procs[i].nspace, PMIX_MAX_NSLEN)) + " " +
                    (wildcard ? std::string("*") : std::to_string(procs[i].rank)));
  }
  if (!g_host->relaying_fences() || local_only) {
    // Every participant is local, so libpmix has already gathered all the
    // contributions: handing them back completes the fence.
    g_host->post([=] { complete_fence(cbfunc, cbdata, PMIX_SUCCESS, mine); });
    return PMIX_SUCCESS;
  }
  auto done = [=](bool ok, const std::string& all) {
    complete_fence(cbfunc, cbdata, ok ? PMIX_SUCCESS : PMIX_ERROR, all);
  };
  if (whole_job && job_only) {
    // The job's own fences (every host takes part, in the same order).
    g_host->post([=] { g_host->events()->fence(mine, done); });
    return PMIX_SUCCESS;
  }
  // Any other set (a connection's union, a spawned job): mpiexec finds the
  // hosts it involves from the names, listed alike on every host.
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  g_host->post(
      [=, names = std::move(names)]() mutable { g_host->events()->group_fence(std::move(names), mine, done); });
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t, pmix_modex_cbfunc_t cbfunc,
                              void* cbdata) {
  if (!g_host->relaying_fences()) return PMIX_ERR_NOT_SUPPORTED;  // one host: nothing remote
  int rank = rank_of(proc);
  if (rank < 0) return PMIX_ERR_NOT_FOUND;  // no process of any job we know
  g_host->post([=] {
    g_host->events()->direct_modex(rank, [=](int status, const std::string& blob) {
      complete_fence(cbfunc, cbdata, status, blob);
    });
  });
  return PMIX_SUCCESS;
}

std::string text_value(const pmix_value_t& v) {
  if (v.type == PMIX_STRING && v.data.string != nullptr) return v.data.string;
  return {};
}

// PMIx_Spawn: the request is copied here and served on the launcher's thread.
pmix_status_t on_spawn(const pmix_proc_t*, const pmix_info_t[], size_t, const pmix_app_t apps[], size_t napps,
                       pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  std::vector<SpawnApp> copy;
  for (size_t a = 0; a < napps; ++a) {
    SpawnApp app;
    app.cmd = apps[a].cmd != nullptr ? apps[a].cmd : "";
    for (char** p = apps[a].argv; p != nullptr && *p != nullptr; ++p) app.argv.emplace_back(*p);
    if (app.argv.empty()) app.argv.push_back(app.cmd);
    for (char** p = apps[a].env; p != nullptr && *p != nullptr; ++p) app.env.emplace_back(*p);
    if (apps[a].cwd != nullptr) app.wdir = apps[a].cwd;
    app.procs = apps[a].maxprocs;
    for (size_t i = 0; i < apps[a].ninfo; ++i) {
      const pmix_info_t& in = apps[a].info[i];
      if (PMIX_CHECK_KEY(&in, PMIX_WDIR)) app.wdir = text_value(in.value);
      if (PMIX_CHECK_KEY(&in, PMIX_HOST)) app.host = text_value(in.value);
      if (PMIX_CHECK_KEY(&in, PMIX_HOSTFILE)) app.hostfile = text_value(in.value);
      if (PMIX_CHECK_KEY(&in, "sonde.path")) app.path = text_value(in.value);
    }
    copy.push_back(std::move(app));
  }
  g_host->post([copy = std::move(copy), cbfunc, cbdata] {
    g_host->events()->spawn(copy, [cbfunc, cbdata](int status, const std::string& nspace) {
      pmix_nspace_t ns;
      std::memset(ns, 0, sizeof ns);
      std::strncpy(ns, nspace.c_str(), PMIX_MAX_NSLEN);
      cbfunc(status, ns, cbdata);
    });
  });
  return PMIX_SUCCESS;
}

pmix_server_module_t make_module() {
  pmix_server_module_t m;
  std::memset(&m, 0, sizeof m);
  m.client_connected = on_connected;
  m.client_finalized = on_finalized;
  m.abort = on_abort;
  m.fence_nb = on_fence;
  m.direct_modex = on_direct_modex;
  m.spawn = on_spawn;
  install_name_service(m);
  return m;
}

pmix_server_module_t g_module = make_module();

// libpmix runs on libevent, which warns on stderr when a client dies while
// the server still has a write pending on its socket ("Epoll MOD ... Bad file
// descriptor"). Ranks dying is exactly when our one line about the cause must
// stand out, so warnings are dropped and only errors pass. The hook is looked
// up at run time: libevent is libpmix's private dependency, not ours.
void quiet_libevent() {
  using LogFn = void (*)(int severity, const char* msg);
  using SetLogFn = void (*)(LogFn);
  auto set = reinterpret_cast<SetLogFn>(dlsym(RTLD_DEFAULT, "event_set_log_callback"));
  if (set == nullptr) return;
  set([](int severity, const char* msg) {
    constexpr int kEventLogErr = 3;  // EVENT_LOG_ERR in event2/event.h
    if (severity >= kEventLogErr) std::fprintf(stderr, "mpiexec: libevent: %s\n", msg);
  });
}

}  // namespace

PmixHost::PmixHost(const std::string& tmpdir, ClientEvents* events) : events_(events) {
  if (g_host != nullptr) throw std::logic_error("only one PmixHost per process");
  InfoList info;
  info.add_string(PMIX_SERVER_TMPDIR, tmpdir);
  info.add_string(PMIX_SYSTEM_TMPDIR, tmpdir);
  std::string server_ns = "sonde-mpiexec-" + std::to_string(getpid());
  info.add_string(PMIX_SERVER_NSPACE, server_ns);
  info.add_rank(PMIX_SERVER_RANK, 0);

  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  g_host = this;
  quiet_libevent();
  pmix_status_t rc = PMIx_server_init(&g_module, info.infos(), info.size());
  if (rc != PMIX_SUCCESS) {
    g_host = nullptr;
    close(wake_fd_);
    throw std::runtime_error(pmix_failure("starting the PMIx server (PMIx_server_init)", rc));
  }
}

PmixHost::~PmixHost() {
  std::vector<std::string> names;
  if (job_registered_) names.push_back(nspace_);
  for (const auto& s : spawned_) names.push_back(s.nspace);
  for (const auto& name : names) {
    auto* w = new OpWait;
    PMIx_server_deregister_nspace(name.c_str(), OpWait::callback, w);
    try {
      OpWait::finish(w, "PMIx_server_deregister_nspace");
    } catch (const std::exception&) {
      // Teardown goes on regardless.
    }
  }
  PMIx_server_finalize();
  g_host = nullptr;
  close(wake_fd_);
}

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

}  // namespace

void PmixHost::register_job(const JobLayout& job) {
  nspace_ = job.nspace;
  job_size_ = job.size;
  const NodeLayout& here = job.nodes.at(static_cast<size_t>(job.this_node));
  {
    std::lock_guard<std::mutex> lock(mu_);
    local_.assign(static_cast<size_t>(job.size), false);
    for (int r : here.ranks) local_.at(static_cast<size_t>(r)) = true;
  }
  register_nspace(job, false);
  job_registered_ = true;
}

void PmixHost::register_spawned(const JobLayout& job, int first_slot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    spawned_.push_back({job.nspace, first_slot, job.size});
    if (job.this_node >= 0) {
      const size_t end = static_cast<size_t>(first_slot) + static_cast<size_t>(job.size);
      if (local_.size() < end) local_.resize(end, false);
      for (int r : job.nodes.at(static_cast<size_t>(job.this_node)).ranks) {
        local_.at(static_cast<size_t>(first_slot + r)) = true;
      }
    }
  }
  register_nspace(job, true);
}

int PmixHost::slot_of(const char* nspace, uint32_t rank) {
  if (nspace_ == nspace) return rank < static_cast<uint32_t>(job_size_) ? static_cast<int>(rank) : -1;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : spawned_)
    if (s.nspace == nspace && rank < static_cast<uint32_t>(s.size)) return s.first_slot + static_cast<int>(rank);
  return -1;
}

bool PmixHost::proc_of(int slot, std::string* nspace, int* rank) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : spawned_) {
    if (slot >= s.first_slot && slot < s.first_slot + s.size) {
      *nspace = s.nspace;
      *rank = slot - s.first_slot;
      return true;
    }
  }
  if (!job_registered_ || slot < 0 || slot >= job_size_) return false;
  *nspace = nspace_;
  *rank = slot;
  return true;
}

bool PmixHost::is_local(int slot) {
  std::lock_guard<std::mutex> lock(mu_);
  return slot >= 0 && slot < static_cast<int>(local_.size()) && local_[static_cast<size_t>(slot)];
}

void PmixHost::register_nspace(const JobLayout& job, bool spawned) {
  const uint32_t n = static_cast<uint32_t>(job.size);
  // A spawned job may have no rank here (this_node -1): then only what
  // every host shares is registered, and no local peers.
  const NodeLayout* here = job.this_node >= 0 ? &job.nodes.at(static_cast<size_t>(job.this_node)) : nullptr;
  auto node_id = [&](size_t index) {
    return index < job.node_ids.size() ? job.node_ids[index] : static_cast<uint32_t>(index);
  };
  InfoList info;
  info.add_string(PMIX_JOBID, job.job_id);
  info.add_u32(PMIX_UNIV_SIZE, static_cast<uint32_t>(std::max(job.universe, job.size)));
  info.add_u32(PMIX_JOB_SIZE, n);
  info.add_u32(PMIX_MAX_PROCS, n);
  info.add_bool(PMIX_SPAWNED, spawned);
  info.add_u32(PMIX_JOB_NUM_APPS, static_cast<uint32_t>(job.apps.empty() ? 1 : job.apps.size()));
  info.add_u32(PMIX_NUM_NODES, static_cast<uint32_t>(job.nodes.size()));
  if (here != nullptr) {
    info.add_u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(here->ranks.size()));
    info.add_u32(PMIX_NODE_SIZE, static_cast<uint32_t>(here->ranks.size()));
    info.add_string(PMIX_LOCAL_PEERS, rank_list(here->ranks));
    info.add_rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(here->ranks.front()));
    info.add_string(PMIX_HOSTNAME, here->hostname);
    info.add_u32(PMIX_NODEID, node_id(static_cast<size_t>(job.this_node)));
  }
  info.add_string(PMIX_TMPDIR, job.tmpdir);

  std::string hosts, ppn_input;
  for (const auto& node : job.nodes) {
    hosts += (hosts.empty() ? "" : ",") + node.hostname;
    ppn_input += (ppn_input.empty() ? "" : ";") + rank_list(node.ranks);
  }
  char* regex = nullptr;
  if (PMIx_generate_regex(hosts.c_str(), &regex) == PMIX_SUCCESS && regex != nullptr) {
    info.add(PMIX_NODE_MAP, regex, PMIX_REGEX);
    std::free(regex);
  }
  char* ppn = nullptr;
  if (PMIx_generate_ppn(ppn_input.c_str(), &ppn) == PMIX_SUCCESS && ppn != nullptr) {
    info.add(PMIX_PROC_MAP, ppn, PMIX_REGEX);
    std::free(ppn);
  }

  std::vector<std::pair<int, int>> apps = job.apps;
  if (apps.empty()) apps.push_back({0, job.size});
  std::vector<uint32_t> app_of(n, 0);
  for (size_t a = 0; a < apps.size(); ++a) {
    for (int r = apps[a].first; r < apps[a].first + apps[a].second; ++r) {
      app_of.at(static_cast<size_t>(r)) = static_cast<uint32_t>(a);
    }
    InfoList app;
    app.add_u32(PMIX_APPNUM, static_cast<uint32_t>(a));
    app.add_u32(PMIX_APP_SIZE, static_cast<uint32_t>(apps[a].second));
    app.add_rank(PMIX_APPLDR, static_cast<pmix_rank_t>(apps[a].first));
    info.add_array(PMIX_APP_INFO_ARRAY, app);
  }
  for (size_t id = 0; id < job.nodes.size(); ++id) {
    const NodeLayout& node_layout = job.nodes[id];
    InfoList node;
    node.add_u32(PMIX_NODEID, node_id(id));
    node.add_string(PMIX_HOSTNAME, node_layout.hostname);
    node.add_u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(node_layout.ranks.size()));
    node.add_u32(PMIX_NODE_SIZE, static_cast<uint32_t>(node_layout.ranks.size()));
    node.add_string(PMIX_LOCAL_PEERS, rank_list(node_layout.ranks));
    node.add_rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(node_layout.ranks.front()));
    info.add_array(PMIX_NODE_INFO_ARRAY, node);
  }
  for (size_t id = 0; id < job.nodes.size(); ++id) {
    const NodeLayout& node_layout = job.nodes[id];
    for (size_t local = 0; local < node_layout.ranks.size(); ++local) {
      const auto r = static_cast<pmix_rank_t>(node_layout.ranks[local]);
      // libpmix requires PMIX_RANK first in each proc's array.
      InfoList proc;
      proc.add_rank(PMIX_RANK, r);
      proc.add_rank(PMIX_GLOBAL_RANK, r);
      const uint32_t a = app_of.at(r);
      proc.add_rank(PMIX_APP_RANK, r - static_cast<pmix_rank_t>(apps[a].first));
      proc.add_u32(PMIX_APPNUM, a);
      proc.add_u16(PMIX_LOCAL_RANK, static_cast<uint16_t>(local));
      proc.add_u16(PMIX_NODE_RANK, static_cast<uint16_t>(local));
      proc.add_u32(PMIX_NODEID, node_id(id));
      proc.add_string(PMIX_HOSTNAME, node_layout.hostname);
      info.add_array(PMIX_PROC_DATA, proc);
    }
  }

  auto* w = new OpWait;
  const int local_count = here != nullptr ? static_cast<int>(here->ranks.size()) : 0;
  pmix_status_t rc =
      PMIx_server_register_nspace(job.nspace.c_str(), local_count, info.infos(), info.size(), OpWait::callback, w);
  if (rc == PMIX_SUCCESS) {
    rc = OpWait::finish(w, "PMIx_server_register_nspace");
  } else {
    delete w;  // no callback is coming
  }
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    throw std::runtime_error(pmix_failure("registering the job with the PMIx server", rc));
  }
}

std::vector<std::string> PmixHost::client_env(int rank) { return client_env_in(nspace_, rank); }

std::vector<std::string> PmixHost::client_env_in(const std::string& nspace, int rank) {
  pmix_proc_t proc;
  std::memset(&proc, 0, sizeof proc);
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));

  auto* w = new OpWait;
  pmix_status_t rc = PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, OpWait::callback, w);
  if (rc == PMIX_SUCCESS) {
    rc = OpWait::finish(w, "PMIx_server_register_client");
  } else {
    delete w;  // no callback is coming
  }
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    throw std::runtime_error(pmix_failure("registering a rank with the PMIx server", rc));
  }

  char** env = nullptr;
  rc = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> out;
  if (env != nullptr) {
    for (char** e = env; *e != nullptr; ++e) {
      out.emplace_back(*e);
      std::free(*e);
    }
    std::free(env);
  }
  if (rc != PMIX_SUCCESS) {
    throw std::runtime_error(pmix_failure("preparing a rank's PMIx environment", rc));
  }
  return out;
}

void ClientEvents::direct_modex(int, ModexDone done) { done(PMIX_ERR_NOT_SUPPORTED, {}); }

void ClientEvents::spawn(const std::vector<SpawnApp>&, SpawnDone done) { done(PMIX_ERR_NOT_SUPPORTED, {}); }

void ClientEvents::group_fence(std::vector<std::string>, std::string, FenceDone done) { done(false, {}); }

void PmixHost::serve_modex(int slot, ClientEvents::ModexDone reply) {
  std::string nspace;
  int rank = 0;
  if (!proc_of(slot, &nspace, &rank)) return reply(PMIX_ERR_NOT_FOUND, {});
  pmix_proc_t proc;
  std::memset(&proc, 0, sizeof proc);
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
  auto* pending = new ClientEvents::ModexDone(std::move(reply));
  pmix_status_t rc = PMIx_server_dmodex_request(
      &proc,
      [](pmix_status_t status, char* data, size_t size, void* cbdata) {
        // libpmix's thread; it frees `data` when we return.
        auto* done = static_cast<ClientEvents::ModexDone*>(cbdata);
        std::string blob(data != nullptr ? data : "", data != nullptr ? size : 0);
        g_host->post([done, status, blob] {
          (*done)(status, blob);
          delete done;
        });
      },
      pending);
  if (rc != PMIX_SUCCESS) {
    ClientEvents::ModexDone done = std::move(*pending);
    delete pending;
    done(rc, {});
  }
}

void PmixHost::post(std::function<void()> reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(reply));
  }
  uint64_t one = 1;
  // A full counter means a wake-up is pending already.
  (void)!write(wake_fd_, &one, sizeof one);
}

void PmixHost::run_pending() {
  uint64_t count;
  (void)!read(wake_fd_, &count, sizeof count);
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(pending_);
  }
  for (auto& reply : batch) reply();
}

}  // namespace sonde::mpiexec

namespace sonde::mpiexec {
void name_service_post(std::function<void()> reply) { g_host->post(std::move(reply)); }

void name_service_forward(NameRequest request, NameTable::Done done) {
  g_host->events()->names(request, std::move(done));
}

void ClientEvents::names(const NameRequest& request, NameTable::Done done) {
  static NameTable* table = new NameTable;  // the launcher's, for its whole life
  table->serve(request, std::move(done));
}
}  // namespace sonde::mpiexec
