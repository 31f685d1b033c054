// The timeline's per-rank state (trace.h): the bounded event buffer, the
// clock offsets rank 0 measures at MPI_Init and MPI_Finalize, and the
// descriptions of the communicators the events name.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

EventBuffer& g_buf = *new EventBuffer;
std::vector<ClockFit>& g_clocks = *new std::vector<ClockFit>;
std::map<int, CommInfo>& g_comm_infos = *new std::map<int, CommInfo>;
std::vector<FreedType>& g_freed_types = *new std::vector<FreedType>;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

TraceWanted parse_trace_list(const char* list) {
  TraceWanted w;
  if (!list) return w;
  std::string s = list;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    std::string word = s.substr(pos, comma - pos);
    if (word == "perfetto" || word == "json") {
      w.perfetto = true;
    } else if (word == "otf2") {
      w.otf2 = true;
    } else if (!word.empty()) {
      w.unknown += (w.unknown.empty() ? "" : ",") + word;
    }
    pos = comma + 1;
  }
  return w;
}

void allocate_buffer() {
  size_t cap = 262144;
  if (const char* v = std::getenv("SONDE_RESIDENCE_EVENTS"); v && *v) {
    char* end;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (!*end) cap = static_cast<size_t>(n);
  }
  if (cap > (size_t{1} << 28)) cap = size_t{1} << 28;
  if (cap == 0) return;
  // Touched now, so no callback pays for a first-touch page fault.
  g_buf.ev = static_cast<Event*>(std::malloc(cap * sizeof(Event)));
  if (!g_buf.ev) return;  // no timeline; the report says the buffer is off
  std::memset(static_cast<void*>(g_buf.ev), 0, cap * sizeof(Event));
  g_buf.cap = cap;
}

namespace {

// The same key on two processes means they read the same CLOCK_MONOTONIC:
// same host name and same boot (the kernel's boot_id).
uint64_t clock_domain() {
  char text[512] = {};
  gethostname(text, 255);
  size_t n = std::strlen(text);
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    n += std::fread(text + n, 1, sizeof text - 1 - n, f);
    std::fclose(f);
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 1099511628211ull;
  return h;
}

}  // namespace

void measure_clocks(bool final) {
  constexpr int kRounds = 12;
  constexpr int kTag = 7;
  MPI_Comm comm = g.report_comm;
  if (g.world_rank != 0) {
    uint64_t reply[2] = {0, clock_domain()};
    for (int k = 0; k < kRounds; ++k) {
      PMPI_Recv(nullptr, 0, MPI_BYTE, 0, kTag, comm, MPI_STATUS_IGNORE);
      reply[0] = now_ns();
      PMPI_Send(reply, sizeof reply, MPI_BYTE, 0, kTag, comm);
    }
    return;
  }
  const uint64_t domain = clock_domain();
  g_clocks.resize(static_cast<size_t>(g.world_size));
  uint64_t t0 = now_ns();
  ClockFit& self = g_clocks[0];
  (final ? self.t_final : self.t_init) = t0;
  for (int r = 1; r < g.world_size; ++r) {
    uint64_t best_rtt = UINT64_MAX, local = 0;
    int64_t offset = 0;
    bool same_clock = true;
    for (int k = 0; k < kRounds; ++k) {
      uint64_t t1 = now_ns();
      PMPI_Send(nullptr, 0, MPI_BYTE, r, kTag, comm);
      uint64_t reply[2] = {};
      PMPI_Recv(reply, sizeof reply, MPI_BYTE, r, kTag, comm, MPI_STATUS_IGNORE);
      uint64_t t2 = now_ns();
      same_clock = reply[1] == domain;
      if (t2 - t1 < best_rtt) {
        best_rtt = t2 - t1;
        local = reply[0];
        offset = static_cast<int64_t>(t1 + (t2 - t1) / 2) - static_cast<int64_t>(reply[0]);
      }
    }
    if (same_clock) {  // one clock: the offset is 0 exactly, whatever the round trips say
      offset = 0;
      best_rtt = 0;
    }
    ClockFit& c = g_clocks[static_cast<size_t>(r)];
    (final ? c.t_final : c.t_init) = local;
    (final ? c.off_final : c.off_init) = offset;
    (final ? c.err_final : c.err_init) = best_rtt / 2;
  }
}

std::vector<int> world_ranks_of(int comm_handle) {
  MPI_Comm comm = comm_handle;
  std::vector<int> out;
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size <= 0) return out;
  MPI_Group mine, world;
  if (PMPI_Comm_group(comm, &mine) != MPI_SUCCESS) return out;
  if (PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
    PMPI_Group_free(&mine);
    return out;
  }
  std::vector<int> ranks(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<size_t>(i)] = i;
  out.resize(static_cast<size_t>(size));
  if (PMPI_Group_translate_ranks(mine, size, ranks.data(), world, out.data()) != MPI_SUCCESS) out.clear();
  PMPI_Group_free(&mine);
  PMPI_Group_free(&world);
  return out;
}

}  // namespace sonde::residence
