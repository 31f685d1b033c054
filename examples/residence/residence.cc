// sonde-residence: a queue-residence profiler built from PMPI and PERUSE.
//
// Link it into a program or inject it into any unmodified MPI program built
// with Sonde's mpicc (LD_PRELOAD=libsonde_residence.so). It intercepts
//   MPI_Init, MPI_Init_thread   PMPI_Init*, PERUSE_Init, then one handle per
//                               watched event on MPI_COMM_WORLD and
//                               MPI_COMM_SELF, each propagating, so every
//                               later MPI_Comm_dup is covered by PERUSE
//   MPI_Comm_dup                names the copy (parent label + "/dupN")
//   MPI_Comm_split              registers handles on the new communicator
//                               (PERUSE propagates only to duplicates)
//   MPI_Comm_free               collects the communicator's figures while its
//                               name can still be read
//   MPI_Finalize                reports, then PMPI_Finalize
//
// Output (README.md in this folder has the formats): without
// SONDE_RESIDENCE_OUT, rank 0 prints every rank's table, then the job-wide
// summary, on stderr. With SONDE_RESIDENCE_OUT=<dir>, every rank writes
// <dir>/rank<R>.txt and <dir>/rank<R>.csv, and rank 0 also writes
// <dir>/summary.txt and <dir>/summary.csv.
//
// This file is the PMPI layer: the interceptors, set-up at MPI_Init, the
// labels of new communicators, and the report at MPI_Finalize. What is
// measured, and the other parts, are in residence.h.
#include <errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

// The globals of residence.h.
State& g = *new State;
std::atomic<uint64_t> g_dropped{0};
std::atomic<bool> g_collecting{false};
bool g_locking = false;

namespace {

void set_label(CommRec& c, const char* label) {
  size_t n = std::min(std::strlen(label), sizeof c.label - 1);  // deep nesting truncates
  std::memcpy(c.label, label, n);
  c.label[n] = 0;
}

// A new communicator the application made from `parent`: label it the same
// way on every rank (parent's label + n-th dup/split of that parent), and
// watch it if PERUSE does not propagate there (split).
void announce(MPI_Comm parent, MPI_Comm child, bool split, int color) {
  int size = -1, rank = -1;
  if (child != MPI_COMM_NULL) {
    PMPI_Comm_size(child, &size);
    PMPI_Comm_rank(child, &rank);
  }
  std::vector<int> world = g_buf.cap ? world_ranks_of(child) : std::vector<int>();
  peruse_event_h handles[kNumWatched];
  bool watched = child != MPI_COMM_NULL && split && watch(child, handles);
  ToolLock lock;
  int32_t pi = comm_index(parent, false);
  if (pi < 0) {
    if (watched) unwatch(handles);  // a parent we do not follow (none in practice)
    return;
  }
  int n = split ? ++g.comms[pi].splits : ++g.comms[pi].dups;
  if (child == MPI_COMM_NULL) return;
  int32_t ci = comm_index(child, true);
  if (ci < 0) {
    ++g.lost_comms;
    if (watched) unwatch(handles);
    return;
  }
  CommRec& c = g.comms[ci];
  warm_pairs(size);
  std::string label = g.comms[pi].label;
  label += split ? "/split" + std::to_string(n) + ":color" + std::to_string(color) : "/dup" + std::to_string(n);
  set_label(c, label.c_str());
  c.size = size;
  c.rank = rank;
  g_comm_infos[c.serial] = CommInfo{c.label, "", size, rank, std::move(world)};
  if (watched) {
    c.registered = true;
    std::memcpy(c.handles, handles, sizeof handles);
  }
}

// What the timeline's outputs call a communicator (lock held; not in a
// callback, so it may allocate).
void note_comm(const CommRec& c, const char* name) {
  CommInfo& info = g_comm_infos[c.serial];
  info.label = c.label;
  info.name = name ? name : "";
  info.size = c.size;
  info.rank = c.rank;
}

// At MPI_Init, once MPI is up: reads the settings, makes the private
// g.report_comm, allocates the tables and watches MPI_COMM_WORLD and
// MPI_COMM_SELF. When anything fails, g.problem says why and nothing is
// measured.
void start(int provided) {
  if (g.started) return;
  g.started = true;
  g.thread_level = provided;
  g_locking = provided == MPI_THREAD_MULTIPLE;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.world_size);
  const char* out = std::getenv("SONDE_RESIDENCE_OUT");
  if (out && *out) g.out_dir = out;
  const char* internal = std::getenv("SONDE_RESIDENCE_INTERNAL");
  g.keep_internal = internal && std::strcmp(internal, "1") == 0;
  // Before any handle exists: the report's traffic stays out of the figures.
  PMPI_Comm_dup(MPI_COMM_WORLD, &g.report_comm);
  g.trace = parse_trace_list(std::getenv("SONDE_RESIDENCE_TRACE"));
  allocate_buffer();
  measure_clocks(false);
  if (!allocate_tables()) {
    g.supported = false;
    g.problem = "out of memory for the tables";
    return;
  }
  warm_pairs(g.world_size + 1);  // MPI_COMM_WORLD's peers and MPI_COMM_SELF's
  if (PERUSE_Init() != PERUSE_SUCCESS) {
    g.supported = false;
    g.problem = "PERUSE_Init failed";
    return;
  }
  const MPI_Comm roots[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
  const char* const names[2] = {"MPI_COMM_WORLD", "MPI_COMM_SELF"};
  for (int k = 0; k < 2; ++k) {
    std::vector<int> world = world_ranks_of(roots[k]);
    peruse_event_h handles[kNumWatched];
    if (!watch(roots[k], handles)) {
      g.supported = false;
      g.problem = "this library does not support the PERUSE events needed (built without PERUSE?)";
      return;
    }
    ToolLock lock;
    int32_t ci = comm_index(roots[k], true);
    CommRec& c = g.comms[ci];
    set_label(c, names[k]);
    c.registered = true;
    std::memcpy(c.handles, handles, sizeof handles);
    c.size = k == 0 ? g.world_size : 1;
    c.rank = k == 0 ? g.world_rank : 0;
    g_comm_infos[c.serial] = CommInfo{c.label, "", c.size, c.rank, std::move(world)};
  }
  g_collecting.store(true);
}

// At MPI_Finalize, before PMPI_Finalize: snapshots every communicator,
// releases the handles, writes this rank's report, then the job-wide summary.
void finish() {
  if (!g.started || g.finished) return;
  g.finished = true;
  RankReport rr;
  if (g.supported) {
    // Names first (an MPI call each, so outside the lock).
    std::vector<std::pair<int32_t, MPI_Comm>> live;
    {
      ToolLock lock;
      for (int32_t i = 0; i < kMaxComms; ++i)
        if (g.comms[i].used) live.emplace_back(i, g.comms[i].handle);
    }
    std::vector<std::string> names;
    for (auto& [i, h] : live) {
      char name[MPI_MAX_OBJECT_NAME] = "";
      int len = 0;
      if (PMPI_Comm_get_name(h, name, &len) != MPI_SUCCESS) name[0] = 0;
      names.emplace_back(name);
    }
    std::vector<peruse_event_h> to_release;
    {
      ToolLock lock;
      flush_pending();
      g_collecting.store(false);
      for (size_t k = 0; k < live.size(); ++k) {
        const CommRec& c = g.comms[live[k].first];
        if (!c.used || c.handle != live[k].second) continue;
        rr.comms.push_back(snapshot(c, live[k].first, names[k].c_str()));
        note_comm(c, names[k].c_str());
        if (c.registered) to_release.insert(to_release.end(), c.handles, c.handles + kNumWatched);
      }
      for (CommReport& c : g.closed) rr.comms.push_back(std::move(c));
      if (!g.overflow.label.empty()) rr.comms.push_back(std::move(g.overflow));
      rr.dropped = g_dropped.load();
      rr.table_full = g.table_full;
      rr.lost_comms = g.lost_comms;
      rr.open_requests = g.requests.size();
      rr.open_messages = g.messages.size();
    }
    for (peruse_event_h& h : to_release)
      if (h != PERUSE_EVENT_HANDLE_NULL) PERUSE_Event_release(&h);
    std::stable_sort(rr.comms.begin(), rr.comms.end(),
                     [](const CommReport& a, const CommReport& b) { return a.serial < b.serial; });
  }

  std::string text = rank_text(rr);
  bool to_files = !g.out_dir.empty();
  if (to_files && !make_dirs(g.out_dir)) {
    say(format("sonde-residence: cannot create %s (%s); reporting on stderr\n", g.out_dir.c_str(),
               std::strerror(errno)));
    to_files = false;
  }
  // Every rank joins the gather in summarise_job; a rank that could not
  // write its files sends its text to rank 0 instead.
  std::string prefix = g.out_dir + "/rank" + std::to_string(g.world_rank);
  bool wrote = to_files && write_file(prefix + ".txt", text) && write_file(prefix + ".csv", rank_csv(rr));
  if (to_files && !wrote) say(format("sonde-residence: rank %d could not write %s.*\n", g.world_rank, prefix.c_str()));

  measure_clocks(true);
  Timeline tl = gather_timeline();
  summarise_job(rr, wrote ? std::string() : text, to_files, tl);
}

}  // namespace

}  // namespace sonde::residence

using namespace sonde::residence;

// ---------------------------------------------------------------- the interceptors

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start(MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int level = MPI_THREAD_SINGLE;
  int rc = PMPI_Init_thread(argc, argv, required, &level);
  if (provided) *provided = level;
  if (rc == MPI_SUCCESS) start(level);
  return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && g_collecting.load() && newcomm) announce(comm, *newcomm, false, 0);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS && g_collecting.load() && newcomm) announce(comm, *newcomm, true, color);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (!g_collecting.load() || !comm) return PMPI_Comm_free(comm);
  MPI_Comm handle = *comm;
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  if (PMPI_Comm_get_name(handle, name, &len) != MPI_SUCCESS) name[0] = 0;
  int rc = PMPI_Comm_free(comm);
  if (rc != MPI_SUCCESS) return rc;
  peruse_event_h handles[kNumWatched];
  bool registered = false;
  {
    ToolLock lock;
    int32_t ci = comm_index(handle, false);
    if (ci >= 0) {
      CommRec& c = g.comms[ci];
      registered = c.registered;
      if (registered) std::memcpy(handles, c.handles, sizeof handles);
      keep_closed(snapshot(c, ci, name));
      note_comm(c, name);
      retire(ci);
    }
  }
  // Our own handles on it (split results); PERUSE released propagated ones.
  if (registered) unwatch(handles);
  return rc;
}

int MPI_Finalize(void) {
  finish();
  return PMPI_Finalize();
}

}  // extern "C"
