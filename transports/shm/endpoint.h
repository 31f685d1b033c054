// The shm endpoint a rank publishes at wire-up (the modex) and its peers
// read: "v2 <ring bytes> <local set hash> <segment name> <pid> <cookie
// address> <cookie>" (numbers after the ring size in hex). Written by
// format_shm_endpoint, read by parse_shm_endpoint, which accepts exactly
// what the former writes: another process's bytes are checked, never
// trusted (fuzzed: tests/fuzz/shm_endpoint_fuzz.cc).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sonde::transport::shm {

struct Endpoint {
  size_t ring_bytes = 0;
  uint64_t local_hash = 0;
  std::string segment;  // a POSIX shm name ("/..."), or "-" (none)
  int pid = 0;          // > 0
  uint64_t cookie_addr = 0;
  uint64_t cookie = 0;
};

inline std::string format_shm_endpoint(const Endpoint& e) {
  char text[512];
  std::snprintf(text, sizeof text, "v2 %zu %" PRIx64 " %s %d %" PRIx64 " %" PRIx64, e.ring_bytes, e.local_hash,
                e.segment.c_str(), e.pid, e.cookie_addr, e.cookie);
  return text;
}

// What is wrong with `text`, or "" with *out filled.
inline std::string parse_shm_endpoint(std::string_view text, Endpoint* out) {
  if (text.size() >= 512 || text.find('\0') != std::string_view::npos) return "unreadable shm endpoint";
  const std::string s(text);
  char name[256];
  int used = -1;
  Endpoint e;
  if (std::sscanf(s.c_str(), "v2 %zu %" SCNx64 " %255s %d %" SCNx64 " %" SCNx64 "%n", &e.ring_bytes, &e.local_hash,
                  name, &e.pid, &e.cookie_addr, &e.cookie, &used) != 6 ||
      used != int(s.size())) {
    return "unreadable shm endpoint '" + s + "'";
  }
  e.segment = name;
  const bool none = e.segment == "-";
  if (!none && (e.segment.size() < 2 || e.segment[0] != '/' || e.segment.find('/', 1) != std::string::npos))
    return "shm endpoint names no shared-memory segment: '" + s + "'";
  if (e.pid <= 0) return "shm endpoint with pid " + std::to_string(e.pid);
  // The exact text format_shm_endpoint writes for these fields: no leading
  // zeros, signs or spaces of sscanf's leniency.
  if (format_shm_endpoint(e) != s) return "shm endpoint not in its canonical form: '" + s + "'";
  *out = e;
  return "";
}

}  // namespace sonde::transport::shm
