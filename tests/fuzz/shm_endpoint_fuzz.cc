// The shm endpoint a peer publishes at wire-up (transports/shm/endpoint.h):
// parse_shm_endpoint must refuse what format_shm_endpoint would not write
// (a parsed endpoint formats back to the same text), never crash or read
// out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "transports/shm/endpoint.h"

using namespace sonde::transport::shm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Endpoint e;
  if (parse_shm_endpoint(text, &e).empty()) {
    if (format_shm_endpoint(e) != text || e.pid <= 0 || e.segment.empty()) std::abort();
  }
  return 0;
}
