// Context-id offers other processes publish in a dynamic-process
// connection's agreement (comm/context_window.h, parse_offer_text; read
// from PMIx by runtime/dynamic.cc): what is accepted prints back to the same
// text, has the round's length and a header inside the id space, and ANDs
// into a valid offer without reading outside either; anything else is
// refused with nothing taken.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "comm/context_window.h"

using namespace sonde::engine::context_window;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  // The first byte picks the round's window (4 to 64 words) and the id
  // space (as large as the engine's, or a small one the header can reach).
  const size_t window = kFirstWords << (data[0] % 5);
  const size_t space = data[0] & 0x80 ? 2048 : 64;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<uint64_t> offer{7};
  const std::string why = parse_offer_text(text, window, space, &offer);
  if (!why.empty()) {
    if (!offer.empty()) std::abort();  // refused: nothing half taken
    return 0;
  }
  if (offer.size() != offer_size(window) || offer_text(offer) != text) std::abort();
  if (offer[0] > offer[1] || offer[1] > space || offer[1] - offer[0] > window || offer[2] > 1) std::abort();
  std::vector<uint64_t> free_words(space, 0x5555555555555555ull);
  std::vector<uint64_t> acc = window_of(free_words, 0, window, 0, true);
  and_into(acc, offer.data());
  int pick[2] = {0, 0};
  decide(acc, 2, space, pick);
  return 0;
}
