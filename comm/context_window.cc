#include "comm/context_window.h"

#include <algorithm>

namespace sonde::engine::context_window {

std::vector<uint64_t> window_of(const std::vector<uint64_t>& free_words, size_t from, size_t window, int keep,
                                bool complete) {
  std::vector<uint64_t> offer(offer_size(window), 0);
  const size_t space = free_words.size();
  size_t start = std::min(from, space);
  uint64_t first = 0;  // the start word without the kept ids
  for (; start < space; ++start) {
    first = free_words[start];
    while (first && keep > 0) {
      first &= first - 1;  // the lowest free id stays behind
      --keep;
    }
    if (first) break;
  }
  const size_t end = std::min(space, start + window);
  offer[0] = start;
  offer[1] = end;
  offer[2] = complete;
  for (size_t i = start; i < end; ++i) offer[kHeader + i - start] = i == start ? first : free_words[i];
  return offer;
}

std::vector<uint64_t> empty_offer(size_t window) { return std::vector<uint64_t>(offer_size(window), 0); }

void and_into(std::vector<uint64_t>& acc, const uint64_t* other) {
  const size_t window = acc.size() - kHeader;
  const uint64_t start = std::max(acc[0], other[0]);
  const uint64_t end = std::min(acc[1], other[1]);
  std::vector<uint64_t> words(window, 0);
  for (uint64_t i = start; i < end; ++i) words[i - start] = acc[kHeader + i - acc[0]] & other[kHeader + i - other[0]];
  acc[0] = start;
  acc[1] = std::max(start, end);
  acc[2] = acc[2] && other[2];
  std::copy(words.begin(), words.end(), acc.begin() + kHeader);
}

void decide(const std::vector<uint64_t>& offer, int want, size_t space_words, int pick[2]) {
  const uint64_t start = offer[0], end = offer[1];
  int found = 0;
  for (uint64_t i = start; i < end && found < want; ++i)
    for (uint64_t w = offer[kHeader + i - start]; w && found < want; w &= w - 1)
      pick[found++] = int(i * 64) + __builtin_ctzll(w);
  if (found == want) return;
  pick[1] = 0;
  if (!offer[2]) {
    pick[0] = kRetry;  // ids out on another round may be the common ones
  } else if (end >= space_words || start >= space_words) {
    pick[0] = kExhausted;
  } else {
    pick[0] = kGrow;
    // Nothing common below `end` when the overlap held nothing; a first of
    // two ids found stays inside the next window.
    pick[1] = int(found == 0 && end > start ? end : start);
  }
}

}  // namespace sonde::engine::context_window
