#include "pmi/proc_list.h"

#include <cstdint>
#include <set>
#include <utility>

namespace sonde::dynamic {
namespace {

bool nspace_ok(std::string_view ns) {
  if (ns.empty() || ns.size() > kMaxNspace) return false;
  for (char c : ns) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

// The canonical decimal of a number in [min, max]: digits only, no
// leading zero (but "0" itself).
bool decimal(std::string_view s, int64_t min, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
    if (v > max) return false;
  }
  if (v < min) return false;
  *out = v;
  return true;
}

}  // namespace

std::string format_procs(const std::vector<Proc>& procs) {
  std::string out;
  for (const auto& p : procs) out += p.nspace + ":" + std::to_string(p.rank) + " ";
  return out;
}

std::string parse_procs(std::string_view text, std::vector<Proc>* out) {
  out->clear();
  std::vector<Proc> procs;
  std::set<std::pair<std::string_view, int64_t>> seen;
  if (text.empty()) return "empty process list";
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find(' ', start);
    if (end == std::string_view::npos) return "process list does not end with a space";
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    const size_t colon = item.rfind(':');
    if (colon == std::string_view::npos) return "process without a rank in the list";
    const std::string_view ns = item.substr(0, colon);
    if (!nspace_ok(ns)) return "malformed namespace in the process list";
    int64_t rank = 0;
    if (!decimal(item.substr(colon + 1), 0, INT32_MAX, &rank)) return "malformed rank in the process list";
    if (!seen.emplace(ns, rank).second) return "process named twice in the list";
    procs.push_back({std::string(ns), int(rank)});
  }
  *out = std::move(procs);
  return "";
}

std::string make_nonce(long pid, int counter) { return std::to_string(pid) + "." + std::to_string(counter); }

std::string format_offer(std::string_view nonce, const std::vector<Proc>& group) {
  return std::string(nonce) + "|" + format_procs(group);
}

std::string parse_offer(std::string_view text, std::string* nonce, std::vector<Proc>* group) {
  const size_t bar = text.find('|');
  if (bar == std::string_view::npos) return "offer without a group";
  const std::string_view n = text.substr(0, bar);
  const size_t dot = n.find('.');
  int64_t pid = 0, counter = 0;
  if (dot == std::string_view::npos || !decimal(n.substr(0, dot), 1, INT32_MAX, &pid) ||
      !decimal(n.substr(dot + 1), 0, INT32_MAX, &counter))
    return "malformed nonce in the offer";
  if (std::string why = parse_procs(text.substr(bar + 1), group); !why.empty()) return why;
  *nonce = std::string(n);
  return "";
}

}  // namespace sonde::dynamic
