#include "pmi/wireup_job_id.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace sonde {
namespace {

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

std::string random_job_id() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  return hex(bytes, sizeof bytes);
}

bool is_job_id(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

// Two seeded FNV-1a passes, each finished with the splitmix64 mixer so that
// similar seeds give unrelated halves.
std::string job_id_from_seed(std::string_view seed) {
  auto pass = [&](uint64_t h) {
    for (unsigned char c : seed) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
  };
  const uint64_t halves[2] = {pass(0xcbf29ce484222325ULL), pass(0x84222325cbf29ce4ULL)};
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(halves[i / 8] >> (8 * (i % 8)));
  return hex(bytes, sizeof bytes);
}

}  // namespace sonde
