// The job-wide summary: at MPI_Finalize every rank encodes its figures
// (per communicator its counters, one histogram per (traffic, metric) merged
// over peers, and its busiest pairs), rank 0 gathers them over the private
// g.report_comm, merges them by communicator label, and prints or writes the
// summary as text and CSV.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "codec.h"
#include "residence.h"

namespace sonde::residence {

namespace {

constexpr size_t kTopPairsPerRank = 16;
constexpr size_t kTopPairsShown = 10;

struct TopPair {
  int world_rank, rank, peer;  // rank and peer: ranks in the communicator
  uint64_t total;              // ns in both queues
  Histogram posted, unexpected;
};

struct CommSummary {
  std::string label, name;
  int size = -1, ranks = 0, serial = 0, merged = 0;
  bool freed = false;
  int64_t high_water[2][2] = {};
  int high_water_rank[2][2] = {};
  uint64_t filtered = 0, cancelled = 0, unmatched = 0, lost = 0;
  Histogram h[2][kMetrics];
  std::vector<TopPair> top;
};

std::string encode(const RankReport& rr, const std::string& text) {
  Writer w;
  w.u64(static_cast<uint64_t>(g.world_rank));
  w.u64(rr.dropped);
  w.u64(rr.table_full);
  w.u64(rr.lost_comms);
  w.str(text);
  w.u64(rr.comms.size());
  for (const CommReport& c : rr.comms) {
    w.str(c.label);
    w.str(c.name);
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(c.size)));
    w.u64(static_cast<uint64_t>(static_cast<int64_t>(c.rank)));
    w.u64(static_cast<uint64_t>(c.serial));
    w.u64(c.freed);
    w.u64(static_cast<uint64_t>(c.merged));
    for (int t = 0; t < 2; ++t)
      for (int q = 0; q < 2; ++q) w.u64(static_cast<uint64_t>(c.high_water[t][q]));
    w.u64(c.filtered);
    w.u64(c.cancelled);
    w.u64(c.unmatched);
    w.u64(c.lost);
    for (int t = 0; t < 2; ++t)
      for (int m = 0; m < kMetrics; ++m) {
        Histogram all;
        for (const CommReport::Pair& p : c.pairs)
          if (p.internal == t) all.merge(p.stats.h[m]);
        w.hist(all);
      }
    std::vector<const CommReport::Pair*> busiest;
    for (const CommReport::Pair& p : c.pairs)
      if (!p.internal && (p.stats.h[kPosted].count || p.stats.h[kUnexpected].count)) busiest.push_back(&p);
    auto total = [](const CommReport::Pair* p) { return p->stats.h[kPosted].sum + p->stats.h[kUnexpected].sum; };
    std::sort(busiest.begin(), busiest.end(), [&](auto* a, auto* b) { return total(a) > total(b); });
    if (busiest.size() > kTopPairsPerRank) busiest.resize(kTopPairsPerRank);
    w.u64(busiest.size());
    for (const CommReport::Pair* p : busiest) {
      w.u64(static_cast<uint64_t>(static_cast<int64_t>(p->peer)));
      w.hist(p->stats.h[kPosted]);
      w.hist(p->stats.h[kUnexpected]);
    }
  }
  return std::move(w.bytes());
}

struct Merged {
  std::vector<CommSummary> comms;
  std::vector<std::string> texts;  // per rank, in rank order
  uint64_t dropped = 0, table_full = 0, lost_comms = 0;
  int ranks = 0, unreadable = 0;
};

void decode_into(Merged& out, const std::string& blob) {
  Reader r(blob.data(), blob.size());
  int rank = static_cast<int>(r.u64());
  out.dropped += r.u64();
  out.table_full += r.u64();
  out.lost_comms += r.u64();
  out.texts.push_back(r.str());
  uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    std::string label = r.str(), name = r.str();
    auto it = std::find_if(out.comms.begin(), out.comms.end(), [&](const CommSummary& c) { return c.label == label; });
    if (it == out.comms.end()) {
      out.comms.emplace_back();
      it = out.comms.end() - 1;
      it->label = label;
      it->name = name;
    }
    CommSummary& c = *it;
    c.size = static_cast<int>(static_cast<int64_t>(r.u64()));
    int comm_rank = static_cast<int>(static_cast<int64_t>(r.u64()));
    int serial = static_cast<int>(r.u64());
    if (c.ranks == 0 || serial < c.serial) c.serial = serial;
    c.freed = r.u64() != 0;
    c.merged = std::max(c.merged, static_cast<int>(r.u64()));
    ++c.ranks;
    for (int t = 0; t < 2; ++t)
      for (int q = 0; q < 2; ++q) {
        int64_t v = static_cast<int64_t>(r.u64());
        if (c.ranks == 1 || v > c.high_water[t][q]) {
          c.high_water[t][q] = v;
          c.high_water_rank[t][q] = comm_rank;
        }
      }
    c.filtered += r.u64();
    c.cancelled += r.u64();
    c.unmatched += r.u64();
    c.lost += r.u64();
    for (int t = 0; t < 2; ++t)
      for (int m = 0; m < kMetrics; ++m) r.hist(c.h[t][m]);
    uint64_t pairs = r.u64();
    for (uint64_t k = 0; k < pairs && r.ok(); ++k) {
      TopPair tp{};
      tp.world_rank = rank;
      tp.rank = comm_rank;
      tp.peer = static_cast<int>(static_cast<int64_t>(r.u64()));
      r.hist(tp.posted);
      r.hist(tp.unexpected);
      tp.total = tp.posted.sum + tp.unexpected.sum;
      c.top.push_back(tp);
    }
  }
  if (!r.ok()) ++out.unreadable;
  ++out.ranks;
}

std::string summary_text(Merged& m) {
  uint64_t filtered = 0;
  for (const CommSummary& c : m.comms) filtered += c.filtered;
  std::string out = format("sonde-residence summary: %d ranks, every communicator merged over its ranks\n", m.ranks);
  out += "  times: count, mean and max exact; p50 and p99 from log-scaled histograms (within 6.25%)\n";
  out += "  internal collective traffic (tag <= -16): " + filter_note(filtered) + "\n";
  out += format("  dropped records: %llu (PERUSE lock not grantable), %llu (tables full), %llu (too many "
                "communicators)\n",
                static_cast<unsigned long long>(m.dropped), static_cast<unsigned long long>(m.table_full),
                static_cast<unsigned long long>(m.lost_comms));
  if (m.unreadable) out += format("  %d rank reports could not be read\n", m.unreadable);
  if (!g.supported) out += "  nothing measured: " + g.problem + "\n";
  std::vector<std::string> quiet;
  for (CommSummary& c : m.comms) {
    bool any = false;
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k) any = any || c.h[t][k].count;
    if (!any) {
      quiet.push_back(c.label);
      continue;
    }
    out += "\n  " + c.label;
    if (!c.name.empty() && c.name != c.label) out += " \"" + c.name + "\"";
    out += format(" (size %d, seen on %d ranks%s)\n", c.size, c.ranks, c.freed ? ", freed before MPI_Finalize" : "");
    out += format("    queue high-water marks: posted %lld (rank %d), unexpected %lld (rank %d)",
                  static_cast<long long>(c.high_water[0][0]), c.high_water_rank[0][0],
                  static_cast<long long>(c.high_water[0][1]), c.high_water_rank[0][1]);
    if (g.keep_internal)
      out += format(" (internal: posted %lld, unexpected %lld)", static_cast<long long>(c.high_water[1][0]),
                    static_cast<long long>(c.high_water[1][1]));
    out += format("; cancelled receives %llu\n", static_cast<unsigned long long>(c.cancelled));
    out += format(kSummaryRow, "metric (all ranks and peers)") + format(kCells, "count", "mean", "p50", "p99", "max");
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k)
        if (c.h[t][k].count)
          out +=
              format(kSummaryRow, (std::string(t ? "internal " : "") + kMetricText[k]).c_str()) + time_cells(c.h[t][k]);
    if (!c.top.empty()) {
      std::sort(c.top.begin(), c.top.end(), [](const TopPair& a, const TopPair& b) { return a.total > b.total; });
      out += "    where receives and messages waited longest (receiver <- sender, ranks in this communicator):\n";
      out += format("    %-13s %9s %10s %10s %14s %10s %10s\n", "rank <- peer", "posted n", "mean", "max",
                    "unexpected n", "mean", "max");
      for (size_t i = 0; i < c.top.size() && i < kTopPairsShown; ++i) {
        const TopPair& p = c.top[i];
        std::string who = format("%d <- %s", p.rank, peer_text(p.peer).c_str());
        auto mean = [](const Histogram& h) { return h.count ? human(h.mean()) : std::string("-"); };
        auto max = [](const Histogram& h) { return h.count ? human(static_cast<double>(h.max)) : std::string("-"); };
        out += format("    %-13s %9llu %10s %10s %14llu %10s %10s\n", who.c_str(),
                      static_cast<unsigned long long>(p.posted.count), mean(p.posted).c_str(), max(p.posted).c_str(),
                      static_cast<unsigned long long>(p.unexpected.count), mean(p.unexpected).c_str(),
                      max(p.unexpected).c_str());
      }
    }
  }
  return out + quiet_line(quiet);
}

std::string summary_csv(const Merged& m) {
  std::string out = kCsvHeader;
  for (const CommSummary& s : m.comms) {
    CommReport c;  // the columns csv_*_row print
    c.label = s.label;
    c.name = s.name;
    c.size = s.size;
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < kMetrics; ++k)
        if (s.h[t][k].count) out += csv_time_row("all", c, "*", t, k, s.h[t][k]);
    for (int t = 0; t < (g.keep_internal ? 2 : 1); ++t) {
      const char* traffic = t ? "internal" : "user";
      out +=
          csv_value_row("all", &c, traffic, "posted_q_high_water", static_cast<unsigned long long>(s.high_water[t][0]));
      out += csv_value_row("all", &c, traffic, "unexpected_q_high_water",
                           static_cast<unsigned long long>(s.high_water[t][1]));
    }
    out += csv_value_row("all", &c, "user", "cancelled_receives", s.cancelled);
    out += csv_value_row("all", &c, "internal", "filtered_events", s.filtered);
    out += csv_value_row("all", &c, "user", "unmatched_events", s.unmatched);
    out += csv_value_row("all", &c, "user", "lost_samples", s.lost);
    out += csv_value_row("all", &c, "*", "ranks", static_cast<unsigned long long>(s.ranks));
    // The busiest pairs, per rank (rank = receiver, peer = sender).
    for (const TopPair& p : s.top) {
      if (p.posted.count) out += csv_time_row(std::to_string(p.world_rank), c, peer_text(p.peer), 0, kPosted, p.posted);
      if (p.unexpected.count)
        out += csv_time_row(std::to_string(p.world_rank), c, peer_text(p.peer), 0, kUnexpected, p.unexpected);
    }
  }
  out += csv_value_row("all", nullptr, "*", "dropped_lock_not_grantable", m.dropped);
  out += csv_value_row("all", nullptr, "*", "dropped_table_full", m.table_full);
  out += csv_value_row("all", nullptr, "*", "dropped_too_many_comms", m.lost_comms);
  return out;
}

}  // namespace

// Everyone's blob to rank 0 over the private communicator.
std::vector<std::string> gather_blobs(const std::string& mine) {
  std::vector<std::string> all;
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(g.world_rank == 0 ? static_cast<size_t>(g.world_size) : 1);
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, g.report_comm);
  if (g.world_rank != 0) {
    PMPI_Send(mine.data(), len, MPI_BYTE, 0, 1, g.report_comm);
    return all;
  }
  all.push_back(mine);
  for (int r = 1; r < g.world_size; ++r) {
    std::string blob(static_cast<size_t>(lens[static_cast<size_t>(r)]), '\0');
    PMPI_Recv(blob.data(), lens[static_cast<size_t>(r)], MPI_BYTE, r, 1, g.report_comm, MPI_STATUS_IGNORE);
    all.push_back(std::move(blob));
  }
  return all;
}

namespace {

// report.html and the traces asked for, into g.out_dir; what was written
// (or why not) as lines for the user.
std::string write_extras(const Timeline& tl, const std::string& summary) {
  std::string out;
  auto done = [&](const std::string& what, const std::string& path, const std::string& error) {
    out += error.empty() ? format("sonde-residence: %s: %s\n", what.c_str(), path.c_str())
                         : format("sonde-residence: no %s: %s\n", what.c_str(), error.c_str());
  };
  std::string html = g.out_dir + "/report.html";
  done("report (open in any browser, works offline)", html, write_html(tl, summary, html));
  if (g.trace.perfetto) {
    std::string path = g.out_dir + "/trace.json";
    std::string error = tl.enabled ? write_perfetto(tl, path) : "the event buffer is off (SONDE_RESIDENCE_EVENTS=0)";
    done("Perfetto trace (open at https://ui.perfetto.dev or chrome://tracing)", path, error);
  }
  if (g.trace.otf2) {
    std::string dir = g.out_dir + "/otf2";
    std::string error = tl.enabled ? write_otf2(tl, dir) : "the event buffer is off (SONDE_RESIDENCE_EVENTS=0)";
    done("OTF2 trace (open with Vampir, or otf2-print)", dir + "/traces.otf2", error);
  }
  if (!g.trace.unknown.empty())
    out +=
        "sonde-residence: SONDE_RESIDENCE_TRACE: not a trace format: " + g.trace.unknown + " (known: perfetto, otf2)\n";
  return out;
}

}  // namespace

void summarise_job(const RankReport& rr, const std::string& text, bool to_files, const Timeline& tl) {
  std::vector<std::string> blobs = gather_blobs(encode(rr, text));
  if (g.world_rank != 0) return;
  Merged m;
  for (const std::string& b : blobs) decode_into(m, b);
  std::stable_sort(m.comms.begin(), m.comms.end(),
                   [](const CommSummary& a, const CommSummary& b) { return a.serial < b.serial; });
  std::string summary = summary_text(m) + timeline_text(tl);
  std::string out;
  for (const std::string& t : m.texts) out += t.empty() ? "" : t + "\n";
  if (!to_files || !write_file(g.out_dir + "/summary.txt", summary) ||
      !write_file(g.out_dir + "/summary.csv", summary_csv(m) + timeline_csv(tl))) {
    out += summary;
    if (g.trace.perfetto || g.trace.otf2) out += "sonde-residence: traces need SONDE_RESIDENCE_OUT (a directory)\n";
  } else {
    out += format("sonde-residence: reports of %d ranks in %s/rank<R>.{txt,csv}, job summary in %s/summary.{txt,csv}\n",
                  m.ranks, g.out_dir.c_str(), g.out_dir.c_str());
    out += write_extras(tl, summary);
  }
  say(out);
}

}  // namespace sonde::residence
