// A PMIx byte-object value over a caller's bytes, for PMIx_Put (which copies
// the value, so pointing into the caller's buffer is fine). Internal to pmi/.
#pragma once

#include <pmix.h>

#include <cstring>
#include <string_view>

namespace sonde::pmi {

inline pmix_value_t byte_object(std::string_view bytes) {
  pmix_value_t v;
  std::memset(&v, 0, sizeof v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(bytes.data());
  v.data.bo.size = bytes.size();
  return v;
}

}  // namespace sonde::pmi
