// The profiler's text: formatting helpers shared with the summary, one
// rank's report as a table (rank<R>.txt) and as CSV (rank<R>.csv), and
// writing files (README.md in this folder has the formats).
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "residence.h"

namespace sonde::residence {

std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string human(double ns) {
  if (ns < 1e3) return format("%.0f ns", ns);
  if (ns < 1e6) return format("%.3g us", ns / 1e3);
  if (ns < 1e9) return format("%.3g ms", ns / 1e6);
  return format("%.3g s", ns / 1e9);
}

std::string peer_text(int peer) { return peer == MPI_ANY_SOURCE ? std::string("ANY") : std::to_string(peer); }

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

}  // namespace

const char* const kCsvHeader = "rank,comm,name,size,peer,traffic,metric,count,min_ns,mean_ns,p50_ns,p99_ns,max_ns\n";

std::string csv_time_row(const std::string& rank, const CommReport& c, const std::string& peer, int internal,
                         int metric, const Histogram& h) {
  return csv_time_row(rank, c, peer, internal, kMetricKey[metric], h);
}

std::string csv_time_row(const std::string& rank, const CommReport& c, const std::string& peer, int internal,
                         const char* metric, const Histogram& h) {
  return format("%s,%s,%s,%d,%s,%s,%s,%llu,%llu,%.1f,%llu,%llu,%llu\n", rank.c_str(), csv_field(c.label).c_str(),
                csv_field(c.name).c_str(), c.size, peer.c_str(), internal ? "internal" : "user", metric,
                static_cast<unsigned long long>(h.count), static_cast<unsigned long long>(h.min), h.mean(),
                static_cast<unsigned long long>(h.percentile(0.5)), static_cast<unsigned long long>(h.percentile(0.99)),
                static_cast<unsigned long long>(h.max));
}

std::string csv_value_row(const std::string& rank, const CommReport* c, const char* traffic, const char* metric,
                          unsigned long long value) {
  return format("%s,%s,%s,%d,*,%s,%s,%llu,,,,,\n", rank.c_str(), c ? csv_field(c->label).c_str() : "*",
                c ? csv_field(c->name).c_str() : "", c ? c->size : -1, traffic, metric, value);
}

// Per-rank tables: "peer  metric  count mean p50 p99 max"; the summary has
// no peer column.
const char* const kRankRow = "    %6s  %-26s";
const char* const kSummaryRow = "    %-34s";
const char* const kCells = " %10s %10s %10s %10s %10s\n";

std::string time_cells(const Histogram& h) {
  return format(" %10llu %10s %10s %10s %10s\n", static_cast<unsigned long long>(h.count), human(h.mean()).c_str(),
                human(static_cast<double>(h.percentile(0.5))).c_str(),
                human(static_cast<double>(h.percentile(0.99))).c_str(), human(static_cast<double>(h.max)).c_str());
}

std::string quiet_line(const std::vector<std::string>& quiet) {
  if (quiet.empty()) return {};
  std::string out = "\n  no measured traffic on:";
  for (const std::string& q : quiet) out += " " + q;
  return out + "\n";
}

std::string filter_note(uint64_t filtered) {
  return g.keep_internal ? std::string("reported separately (traffic=internal)")
                         : format("filtered (%llu events not measured)", static_cast<unsigned long long>(filtered));
}

namespace {

std::string comm_title(const CommReport& c) {
  std::string t = c.label;
  if (!c.name.empty() && c.name != c.label) t += " \"" + c.name + "\"";
  t += format(" (size %d", c.size);
  if (c.rank >= 0) t += format(", my rank %d", c.rank);
  if (c.freed) t += c.merged > 1 ? format(", %d communicators freed", c.merged) : ", freed before MPI_Finalize";
  return t + ")";
}

bool has_samples(const CommReport& c) {
  for (const CommReport::Pair& p : c.pairs)
    for (int m = 0; m < kMetrics; ++m)
      if (p.stats.h[m].count) return true;
  return false;
}

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

std::string rank_text(const RankReport& rr) {
  uint64_t filtered = 0;
  for (const CommReport& c : rr.comms) filtered += c.filtered;
  std::string out = format("sonde-residence: rank %d of %d (pid %d, %s)\n", g.world_rank, g.world_size,
                           static_cast<int>(getpid()), level_name(g.thread_level));
  if (!g.supported) return out + "  nothing measured: " + g.problem + "\n";
  out += "  internal collective traffic (tag <= -16): " + filter_note(filtered) + "\n";
  out +=
      format("  dropped records: %llu (PERUSE lock not grantable), %llu (tables full), %llu (too many communicators)\n",
             static_cast<unsigned long long>(rr.dropped), static_cast<unsigned long long>(rr.table_full),
             static_cast<unsigned long long>(rr.lost_comms));
  out += format("  timeline buffer: %llu events kept (cap %llu), %llu did not fit\n",
                static_cast<unsigned long long>(g_buf.used), static_cast<unsigned long long>(g_buf.cap),
                static_cast<unsigned long long>(g_buf.overflow));
  std::vector<std::string> quiet;
  for (const CommReport& c : rr.comms) {
    if (!has_samples(c)) {
      quiet.push_back(c.label);
      continue;
    }
    out += "\n  " + comm_title(c) + "\n";
    out += format("    queue high-water marks: posted %lld, unexpected %lld",
                  static_cast<long long>(c.high_water[0][0]), static_cast<long long>(c.high_water[0][1]));
    if (g.keep_internal)
      out += format(" (internal: posted %lld, unexpected %lld)", static_cast<long long>(c.high_water[1][0]),
                    static_cast<long long>(c.high_water[1][1]));
    out += format("; cancelled receives %llu", static_cast<unsigned long long>(c.cancelled));
    if (c.unmatched) out += format("; end events without a start %llu", static_cast<unsigned long long>(c.unmatched));
    if (c.lost) out += format("; samples lost (no pair slot) %llu", static_cast<unsigned long long>(c.lost));
    out += "\n";
    out += format(kRankRow, "peer", "metric") + format(kCells, "count", "mean", "p50", "p99", "max");
    for (const CommReport::Pair& p : c.pairs) {
      bool first = true;
      for (int m = 0; m < kMetrics; ++m) {
        if (!p.stats.h[m].count) continue;
        std::string who = first ? peer_text(p.peer) + (p.internal ? "i" : "") : "";
        out += format(kRankRow, who.c_str(), kMetricText[m]) + time_cells(p.stats.h[m]);
        first = false;
      }
    }
  }
  return out + quiet_line(quiet);
}

std::string rank_csv(const RankReport& rr) {
  std::string out = kCsvHeader;
  std::string rank = std::to_string(g.world_rank);
  for (const CommReport& c : rr.comms) {
    for (const CommReport::Pair& p : c.pairs)
      for (int m = 0; m < kMetrics; ++m)
        if (p.stats.h[m].count) out += csv_time_row(rank, c, peer_text(p.peer), p.internal, m, p.stats.h[m]);
    for (int t = 0; t < (g.keep_internal ? 2 : 1); ++t) {
      const char* traffic = t ? "internal" : "user";
      out +=
          csv_value_row(rank, &c, traffic, "posted_q_high_water", static_cast<unsigned long long>(c.high_water[t][0]));
      out += csv_value_row(rank, &c, traffic, "unexpected_q_high_water",
                           static_cast<unsigned long long>(c.high_water[t][1]));
    }
    out += csv_value_row(rank, &c, "user", "cancelled_receives", c.cancelled);
    out += csv_value_row(rank, &c, "internal", "filtered_events", c.filtered);
    out += csv_value_row(rank, &c, "user", "unmatched_events", c.unmatched);
    out += csv_value_row(rank, &c, "user", "lost_samples", c.lost);
  }
  out += csv_value_row(rank, nullptr, "*", "dropped_lock_not_grantable", rr.dropped);
  out += csv_value_row(rank, nullptr, "*", "dropped_table_full", rr.table_full);
  out += csv_value_row(rank, nullptr, "*", "dropped_too_many_comms", rr.lost_comms);
  out += csv_value_row(rank, nullptr, "*", "open_requests_at_finalize", rr.open_requests);
  out += csv_value_row(rank, nullptr, "*", "open_messages_at_finalize", rr.open_messages);
  out += csv_value_row(rank, nullptr, "*", "buffered_events", g_buf.used);
  out += csv_value_row(rank, nullptr, "*", "buffer_overflow_events", g_buf.overflow);
  return out;
}

bool make_dirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) std::remove(tmp.c_str());
  return ok;
}

void say(const std::string& text) {
  std::fflush(stdout);  // the program's own output first
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace sonde::residence
