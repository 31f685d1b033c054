// The liveness address an ofi rank publishes at wire-up and its peers
// connect to (transports/ofi/liveness.h): Liveness::parse_address must
// refuse what format_address would not write (an accepted address formats
// back to the same text, is IPv4 or IPv6 with a port in 1..65535), never
// crash or read out of bounds.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "transports/ofi/liveness.h"

using sonde::transport::Liveness;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sockaddr_storage a;
  socklen_t len = 0;
  if (!Liveness::parse_address(text, &a, &len)) return 0;
  if (Liveness::format_address(a) != text) std::abort();
  if (a.ss_family == AF_INET) {
    if (len != sizeof(sockaddr_in) || reinterpret_cast<const sockaddr_in*>(&a)->sin_port == 0) std::abort();
  } else if (a.ss_family == AF_INET6) {
    if (len != sizeof(sockaddr_in6) || reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port == 0) std::abort();
  } else {
    std::abort();
  }
  return 0;
}
