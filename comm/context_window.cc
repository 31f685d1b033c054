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

std::string offer_text(const std::vector<uint64_t>& offer) {
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (uint64_t w : offer) {
    char digits[16];
    int n = 0;
    do {
      digits[n++] = kHex[w & 15];
      w >>= 4;
    } while (w);
    while (n) text += digits[--n];
    text += ' ';
  }
  return text;
}

std::string parse_offer_text(std::string_view text, size_t window, size_t space_words, std::vector<uint64_t>* offer) {
  offer->clear();
  std::vector<uint64_t> words;
  const size_t want = offer_size(window);
  size_t at = 0;
  while (at < text.size()) {
    if (words.size() == want) return "more than " + std::to_string(want) + " words";
    uint64_t w = 0;
    size_t digits = 0;
    for (; at < text.size() && text[at] != ' '; ++at, ++digits) {
      const char c = text[at];
      int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (v < 0) return "a character that is not a lower-case hex digit";
      if (digits == 16) return "a word of more than 16 hex digits";
      if (digits == 1 && w == 0) return "a word with a leading zero";
      w = w << 4 | uint64_t(v);
    }
    if (digits == 0) return "an empty word";
    if (at == text.size()) return "no space after the last word";
    ++at;
    words.push_back(w);
  }
  if (words.size() != want) return std::to_string(words.size()) + " words, not " + std::to_string(want);
  if (words[0] > words[1] || words[1] > std::min<uint64_t>(words[0] + window, space_words))
    return "a window outside the id space or larger than the round's";
  if (words[2] > 1) return "a completeness flag other than 0 or 1";
  *offer = std::move(words);
  return "";
}

}  // namespace sonde::engine::context_window
