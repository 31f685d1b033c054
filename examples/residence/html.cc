// report.html: one self-contained page (inline SVG, a few lines of inline
// script to switch the heat maps; no network, no external file), built from
// the timeline on rank 0. Per communicator: a receiver x sender heat map of
// posted- and unexpected-queue residence (p50, p99, count), the queue depth
// over time per rank with its high-water marks, the residence distributions
// (log-scale histograms), the worst waits, and the wait states per pair.
// Job-wide: what was measured, the buffer overflow, the clock error and the
// wait states per rank, then the text summary. Every mark has hover text
// (SVG <title>) with the exact value, and data-* attributes with the raw
// numbers for tools (tests/residence reads them).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

namespace {

const char* const kStyle =
    "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}h2{font-size:1.2em;"
    "border-top:2px solid #ccc;padding-top:.6em}h3{font-size:1em;margin-bottom:.2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f3f3f3}.warn{color:#b00;"
    "font-weight:bold}.variant{display:none}.variant.on{display:block}button.on{background:#246;color:#fff}"
    "pre{background:#f7f7f7;padding:.6em;overflow:auto}svg text{font:11px sans-serif}";

// Switches a heat map's variant: the buttons carry data-variant.
const char* const kScript =
    "document.querySelectorAll('.heatmap').forEach(function(h){h.querySelectorAll('button').forEach(function(b){"
    "b.onclick=function(){h.querySelectorAll('button,.variant').forEach(function(e){e.classList.toggle('on',"
    "e.dataset.variant===b.dataset.variant);});};});});";

std::string ns_text(int64_t ns) { return human(static_cast<double>(ns)); }

// Exact percentile of sorted values (rank ceil(p n)).
int64_t pct(const std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

// The rank in comm of a world rank (-1 if not a member).
int comm_rank(const TimelineComm& c, int world) {
  auto it = std::find(c.world.begin(), c.world.end(), world);
  return it == c.world.end() ? -1 : static_cast<int>(it - c.world.begin());
}

// Cell colour: white to dark red on a log scale of v/max.
std::string heat(double v, double max) {
  double x = (v <= 0 || max <= 0) ? 0 : std::log1p(v) / std::log1p(max);
  int g = static_cast<int>(245 - 200 * x), r = static_cast<int>(250 - 60 * x);
  return format("rgb(%d,%d,%d)", r, g, g);
}

struct Cell {
  std::vector<int64_t> d[2];  // durations per queue
};

std::string heatmap(const Timeline& tl, int ci, const std::map<std::pair<int, int>, Cell>& cells) {
  const TimelineComm& c = tl.comms[static_cast<size_t>(ci)];
  int n = c.size > 0 ? c.size : 1;
  for (auto& [k, cell] : cells) n = std::max({n, k.first + 1, k.second + 1});
  const char* queue_name[2] = {"posted", "unexpected"};
  const char* stat_name[3] = {"p50", "p99", "count"};
  std::string o = "<div class=\"chart heatmap\" data-comm=\"" + html_escape(c.label) +
                  "\"><h3>Residence by receiver (rows) and sender (columns)</h3><div>";
  for (int q = 0; q < 2; ++q)
    for (int s = 0; s < 3; ++s)
      o += format("<button data-variant=\"%s-%s\"%s>%s queue %s</button>", queue_name[q], stat_name[s],
                  q == 0 && s == 0 ? " class=\"on\"" : "", queue_name[q], stat_name[s]);
  o += "</div>";
  int cw = std::max(28, std::min(60, 640 / n)), left = 60, top = 30;
  for (int q = 0; q < 2; ++q)
    for (int s = 0; s < 3; ++s) {
      double max = 0;
      auto value = [&](const Cell& cell) -> double {
        const std::vector<int64_t>& v = cell.d[q];
        return s == 2 ? static_cast<double>(v.size()) : static_cast<double>(pct(v, s == 0 ? 0.5 : 0.99));
      };
      for (auto& [k, cell] : cells) max = std::max(max, value(cell));
      o += format("<svg class=\"variant%s\" data-variant=\"%s-%s\" data-queue=\"%s\" data-stat=\"%s\" width=\"%d\" "
                  "height=\"%d\">",
                  q == 0 && s == 0 ? " on" : "", queue_name[q], stat_name[s], queue_name[q], stat_name[s],
                  left + n * cw + 10, top + n * cw + 10);
      o += format("<text x=\"%d\" y=\"12\">sender (rank in %s) &#8594;</text>", left, html_escape(c.label).c_str());
      for (int i = 0; i < n; ++i) {
        o += format("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>", left + i * cw + cw / 2, top - 4, i);
        o += format("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%d &#8592;</text>", left - 4,
                    top + i * cw + cw / 2 + 4, i);
      }
      for (auto& [k, cell] : cells) {
        const std::vector<int64_t>& v = cell.d[q];
        if (v.empty()) continue;
        double x = value(cell);
        std::string shown = s == 2 ? format("%zu", v.size()) : ns_text(static_cast<int64_t>(x));
        std::string exact = s == 2 ? format("%zu", v.size()) : format("%.0f", x);
        o += format("<g class=\"cell\" data-receiver=\"%d\" data-sender=\"%d\" data-value=\"%s\" data-count=\"%zu\">"
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#999\"/>"
                    "<title>receiver %d &#8592; sender %d, %s queue: %s %s (%s ns), %zu samples</title>"
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text></g>",
                    k.first, k.second, exact.c_str(), v.size(), left + k.second * cw, top + k.first * cw, cw, cw,
                    heat(x, max).c_str(), k.first, k.second, queue_name[q], stat_name[s], shown.c_str(), exact.c_str(),
                    v.size(), left + k.second * cw + cw / 2, top + k.first * cw + cw / 2 + 4,
                    cw >= 44 || s == 2 ? shown.c_str() : "");
      }
      o += "</svg>";
    }
  return o + "</div>";
}

// A rank's queue depths as step lines: exact when there are few points,
// else the largest depth in each pixel column (high-water marks survive).
std::string depth_chart(const Timeline& tl, const TimelineComm& c) {
  const int w = 760, h = 90, left = 50;
  double span = static_cast<double>(std::max<int64_t>(tl.end, 1));
  std::string o = "<div class=\"chart depth\" data-comm=\"" + html_escape(c.label) +
                  "\"><h3>Queue depth over time (blue: posted, orange: unexpected)</h3>";
  for (auto& [rank, pts] : c.depth) {
    int32_t hp = c.hwm_posted.count(rank) ? c.hwm_posted.at(rank) : 0;
    int32_t hu = c.hwm_unexpected.count(rank) ? c.hwm_unexpected.at(rank) : 0;
    int32_t top = std::max({hp, hu, 1});
    auto px = [&](int64_t t) {
      return left + static_cast<int>(static_cast<double>(w) * std::clamp(static_cast<double>(t) / span, 0.0, 1.0));
    };
    auto py = [&](int32_t v) { return 10 + h - static_cast<int>(static_cast<double>(h) * v / top); };
    std::string path[2];
    path[0] = path[1] = format("M%d %d", left, py(0));
    std::vector<int32_t> colmax[2];
    bool sample = pts.size() > 3000;
    if (sample) colmax[0].assign(w + 1, -1), colmax[1].assign(w + 1, -1);
    for (const DepthPoint& p : pts) {
      int x = px(p.t);
      int32_t v[2] = {p.posted, p.unexpected};
      for (int k = 0; k < 2; ++k) {
        if (sample) {
          colmax[k][static_cast<size_t>(x - left)] = std::max(colmax[k][static_cast<size_t>(x - left)], v[k]);
        } else {
          path[k] += format(" H%d V%d", x, py(v[k]));
        }
      }
    }
    if (sample)
      for (int k = 0; k < 2; ++k) {
        int32_t cur = 0;
        for (int x = 0; x <= w; ++x)
          if (colmax[k][static_cast<size_t>(x)] >= 0) {
            cur = colmax[k][static_cast<size_t>(x)];
            path[k] += format(" H%d V%d", left + x, py(cur));
          }
      }
    for (int k = 0; k < 2; ++k) path[k] += format(" H%d", left + w);
    o += format("<svg class=\"rank-depth\" data-rank=\"%d\" data-hwm-posted=\"%d\" data-hwm-unexpected=\"%d\" "
                "data-points=\"%zu\" width=\"%d\" height=\"%d\">",
                rank, hp, hu, pts.size(), left + w + 10, h + 30);
    o += format("<text x=\"0\" y=\"20\">rank %d</text><text x=\"0\" y=\"%d\">%d</text><text x=\"0\" y=\"%d\">0</text>",
                rank, 14, top, h + 10);
    // (format() cuts at 1023 characters: the paths are appended whole.)
    o += "<path class=\"posted\" d=\"" + path[0] + "\" fill=\"none\" stroke=\"#1f77b4\">" +
         format("<title>rank %d posted queue: high-water mark %d</title></path>", rank, hp);
    o += "<path class=\"unexpected\" d=\"" + path[1] + "\" fill=\"none\" stroke=\"#ff7f0e\">" +
         format("<title>rank %d unexpected queue: high-water mark %d</title></path>", rank, hu);
    o += format("<text x=\"%d\" y=\"%d\">high-water: posted %d, unexpected %d; time 0 .. %s</text></svg>", left, h + 26,
                hp, hu, ns_text(tl.end).c_str());
  }
  return o + "</div>";
}

// Log-scale histogram: 4 bins per decade from 100 ns.
std::string distribution(const TimelineComm& c, const std::vector<int64_t> d[2]) {
  const int bins = 36, bw = 16, h = 100, left = 40;
  std::string o = "<div class=\"chart distribution\" data-comm=\"" + html_escape(c.label) +
                  "\"><h3>Residence distribution (log scale, 4 bins per decade)</h3>";
  const char* names[2] = {"posted", "unexpected"};
  const char* colours[2] = {"#1f77b4", "#ff7f0e"};
  for (int q = 0; q < 2; ++q) {
    std::vector<uint64_t> n(bins, 0);
    auto bin = [&](int64_t v) {
      double x = v <= 100 ? 0 : 4 * std::log10(static_cast<double>(v) / 100.0);
      return std::min(bins - 1, static_cast<int>(x));
    };
    for (int64_t v : d[q]) ++n[static_cast<size_t>(bin(v))];
    uint64_t top = std::max<uint64_t>(1, *std::max_element(n.begin(), n.end()));
    o += format(
        "<svg class=\"hist\" data-queue=\"%s\" data-count=\"%zu\" width=\"%d\" height=\"%d\"><text x=\"0\" y=\"12\">%s "
        "queue, %zu samples</text>",
        names[q], d[q].size(), left + bins * bw + 10, h + 40, names[q], d[q].size());
    for (int b = 0; b < bins; ++b) {
      if (!n[static_cast<size_t>(b)]) continue;
      int bh = static_cast<int>(static_cast<double>(h) * static_cast<double>(n[static_cast<size_t>(b)]) /
                                static_cast<double>(top));
      double lo = 100 * std::pow(10.0, b / 4.0), hi = 100 * std::pow(10.0, (b + 1) / 4.0);
      o += format("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s .. %s: %llu</title></rect>",
                  left + b * bw, 20 + h - bh, bw - 1, std::max(bh, 1), colours[q],
                  b == 0 ? "0" : ns_text(static_cast<int64_t>(lo)).c_str(), ns_text(static_cast<int64_t>(hi)).c_str(),
                  static_cast<unsigned long long>(n[static_cast<size_t>(b)]));
    }
    for (int b = 0; b <= bins; b += 8)
      o += format("<text x=\"%d\" y=\"%d\">%s</text>", left + b * bw, h + 36,
                  ns_text(static_cast<int64_t>(100 * std::pow(10.0, b / 4.0))).c_str());
    o += "</svg>";
  }
  return o + "</div>";
}

std::string worst_table(const Timeline& tl, int ci) {
  std::vector<const Slice*> v;
  for (const Slice& s : tl.slices)
    if (s.comm == ci) v.push_back(&s);
  std::partial_sort(v.begin(), v.begin() + static_cast<long>(std::min<size_t>(10, v.size())), v.end(),
                    [](const Slice* a, const Slice* b) { return a->end - a->begin > b->end - b->begin; });
  if (v.size() > 10) v.resize(10);
  std::string o = "<h3>Worst waits</h3><table class=\"worst\"><tr><th>rank</th><th>queue</th><th>peer</th><th>tag</th>"
                  "<th>bytes</th><th>when</th><th>how long</th></tr>";
  for (const Slice* s : v)
    o += format("<tr data-ns=\"%lld\" data-rank=\"%d\" "
                "data-queue=\"%s\"><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%lld</td><td>%s</td><td "
                "title=\"%lld ns\">%s%s</td></tr>",
                static_cast<long long>(s->end - s->begin), s->rank, s->queue ? "unexpected" : "posted", s->rank,
                s->queue ? "unexpected" : "posted", s->peer >= 0 ? std::to_string(s->peer).c_str() : "ANY", s->tag,
                static_cast<long long>(s->bytes), ns_text(s->begin).c_str(), static_cast<long long>(s->end - s->begin),
                ns_text(s->end - s->begin).c_str(), s->open ? " (still queued)" : "");
  return o + "</table>";
}

std::string waits_table(const Timeline& tl, const TimelineComm& c) {
  std::string o =
      "<h3>Wait states by pair</h3><table class=\"waits\" data-comm=\"" + html_escape(c.label) +
      "\"><tr><th>rank</th><th>peer</th><th>late sender</th><th>calls</th><th>max</th><th>late receiver</th>"
      "<th>calls</th><th>max</th><th>share of rank's run</th></tr>";
  for (auto& [pair, w] : c.waits) {
    const RankInfo& r = tl.ranks[static_cast<size_t>(pair.first)];
    double run = static_cast<double>(std::max<int64_t>(1, r.end - r.begin));
    o += format(
        "<tr data-rank=\"%d\" data-peer=\"%d\" data-late-sender-ns=\"%llu\" data-late-receiver-ns=\"%llu\">"
        "<td>%d</td><td>%d</td><td title=\"%llu ns\">%s</td><td>%llu</td><td>%s</td><td title=\"%llu ns\">%s</td>"
        "<td>%llu</td><td>%s</td><td>%.2f%%</td></tr>",
        pair.first, comm_rank(c, pair.second), static_cast<unsigned long long>(w.late_sender),
        static_cast<unsigned long long>(w.late_receiver), pair.first, comm_rank(c, pair.second),
        static_cast<unsigned long long>(w.late_sender), ns_text(static_cast<int64_t>(w.late_sender)).c_str(),
        static_cast<unsigned long long>(w.ls.count), ns_text(static_cast<int64_t>(w.ls.max)).c_str(),
        static_cast<unsigned long long>(w.late_receiver), ns_text(static_cast<int64_t>(w.late_receiver)).c_str(),
        static_cast<unsigned long long>(w.lr.count), ns_text(static_cast<int64_t>(w.lr.max)).c_str(),
        100.0 * static_cast<double>(w.late_sender + w.late_receiver) / run);
  }
  return o + "</table>";
}

std::string overview(const Timeline& tl) {
  uint64_t buffered = 0;
  for (const RankInfo& r : tl.ranks) buffered += r.buffered;
  std::string o = "<table id=\"overview\">";
  auto row = [&](const char* key, const std::string& label, const std::string& value, bool warn = false) {
    o += format("<tr data-key=\"%s\"><th>%s</th><td%s>%s</td></tr>", key, label.c_str(), warn ? " class=\"warn\"" : "",
                value.c_str());
  };
  row("ranks", "ranks", std::to_string(tl.ranks.size()));
  row("run", "run (rank 0's MPI_Init to MPI_Finalize)", ns_text(tl.end));
  row("buffered", "events buffered", std::to_string(buffered));
  row("overflow", "events that did not fit the buffer (not in the timeline)", std::to_string(tl.overflow),
      tl.overflow > 0);
  row("clock_error", "clock alignment error (rank 0's clock, offsets at MPI_Init and MPI_Finalize)",
      "&#177; " + ns_text(static_cast<int64_t>(tl.clock_error)));
  row("backward_flows", "arrows running backwards in time", std::to_string(tl.backward_flows), tl.backward_flows > 0);
  row("unjoined", "sends / receives not joined",
      format("%llu / %llu", static_cast<unsigned long long>(tl.unjoined_sends),
             static_cast<unsigned long long>(tl.unjoined_matches)));
  o += "</table><h2>Wait states per rank</h2><p>Late sender: time blocked in a receive or wait while the receive sat "
       "in the posted queue (receiver's clock). Late receiver: time blocked in a blocking send (rendezvous or "
       "synchronous) from its start until the receiver posted the matching receive (across clocks: within the clock "
       "error).</p><table id=\"rank-waits\"><tr><th>rank</th><th>late sender</th>"
       "<th>share</th><th>late receiver</th><th>share</th><th>run</th></tr>";
  for (const RankInfo& r : tl.ranks) {
    double run = static_cast<double>(std::max<int64_t>(1, r.end - r.begin));
    o += format(
        "<tr data-rank=\"%d\" data-late-sender-ns=\"%llu\" data-late-receiver-ns=\"%llu\"><td>%d</td>"
        "<td title=\"%llu ns\">%s</td><td>%.2f%%</td><td title=\"%llu ns\">%s</td><td>%.2f%%</td><td>%s</td></tr>",
        r.rank, static_cast<unsigned long long>(r.late_sender), static_cast<unsigned long long>(r.late_receiver),
        r.rank, static_cast<unsigned long long>(r.late_sender), ns_text(static_cast<int64_t>(r.late_sender)).c_str(),
        100.0 * static_cast<double>(r.late_sender) / run, static_cast<unsigned long long>(r.late_receiver),
        ns_text(static_cast<int64_t>(r.late_receiver)).c_str(), 100.0 * static_cast<double>(r.late_receiver) / run,
        ns_text(r.end - r.begin).c_str());
  }
  return o + "</table>";
}

}  // namespace

std::string write_html(const Timeline& tl, const std::string& summary_text, const std::string& path) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sonde-residence report</title><style>";
  o += kStyle;
  o += format("</style></head><body><h1>Where receives and messages waited: %zu ranks</h1>\n", tl.ranks.size());
  if (!tl.enabled) {
    o += "<p class=\"warn\">The event buffer was off (SONDE_RESIDENCE_EVENTS=0): no timeline, charts or wait states; "
         "the summary is below.</p>";
  } else {
    o += overview(tl);
    if (tl.overflow)
      o += format("<p class=\"warn\" id=\"overflow-note\">%llu events did not fit the per-rank buffer "
                  "(SONDE_RESIDENCE_EVENTS): charts and wait states cover the start of the run only.</p>",
                  static_cast<unsigned long long>(tl.overflow));
    for (size_t ci = 0; ci < tl.comms.size(); ++ci) {
      const TimelineComm& c = tl.comms[ci];
      std::map<std::pair<int, int>, Cell> cells;
      std::vector<int64_t> all[2];
      for (const Slice& s : tl.slices) {
        if (s.comm != static_cast<int>(ci) || s.open) continue;
        all[s.queue].push_back(s.end - s.begin);
        int me = comm_rank(c, s.rank);
        if (me >= 0 && s.peer >= 0) cells[{me, s.peer}].d[s.queue].push_back(s.end - s.begin);
      }
      if (all[0].empty() && all[1].empty() && c.waits.empty()) continue;
      for (auto& [k, cell] : cells)
        for (auto& v : cell.d) std::sort(v.begin(), v.end());
      o += "<section class=\"comm\" data-comm=\"" + html_escape(c.label) + "\"><h2>" + html_escape(c.label);
      if (!c.name.empty() && c.name != c.label) o += " &#8220;" + html_escape(c.name) + "&#8221;";
      o += format(" (size %d)</h2>", c.size);
      o += heatmap(tl, static_cast<int>(ci), cells) + depth_chart(tl, c) + distribution(c, all) +
           worst_table(tl, static_cast<int>(ci)) + waits_table(tl, c) + "</section>\n";
    }
  }
  o += "<h2>Summary</h2><pre id=\"summary\">" + html_escape(summary_text) + "</pre><script>" + kScript +
       "</script></body></html>\n";
  return write_file(path, o) ? std::string() : "cannot write " + path;
}

}  // namespace sonde::residence
