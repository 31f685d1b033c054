// Context-id offers as windows: the pure part of the agreement rounds
// (comm_build.h describes the protocol). No engine state; tested on its own.
//
// An offer covers a window of the id space, in 64-id words:
//   [0] the window's first word, [1] one past its last (clipped to the id
//   space; equal to [0] for an empty offer), [2] 1 when the offer is
//   complete (the member gives, and no other round of its process holds
//   ids), then the window's free-id words, word k for ids 64 * ([0] + k) on.
// Every member of a round offers a window of the same number of words,
// starting at its lowest free word at or above the round's start. Combining
// two offers keeps their overlap: a common free id is at or above the higher
// start (the member with it has nothing free below) and below the lower end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::engine::context_window {

inline constexpr size_t kHeader = 3;
inline constexpr size_t kFirstWords = 4;  // a first round's window: 256 ids

// decide()'s answers besides an id (>= 0).
inline constexpr int kRetry = -1;      // an offer was incomplete: progress, then again from the lowest
inline constexpr int kExhausted = -2;  // complete offers up to the end of the id space, nothing common
inline constexpr int kGrow = -3;       // again, from word pick[1], with a window twice as large

// An offer's length for a window of `window` words.
inline size_t offer_size(size_t window) { return kHeader + window; }

// The window of `window` words starting at the lowest word at or above
// `from` of `free_words` with a free id (an empty window at the end when
// none), as an offer of `complete`. `keep`: that many of the lowest free ids
// are left out (the window starts after them). Bits are copied, not taken.
std::vector<uint64_t> window_of(const std::vector<uint64_t>& free_words, size_t from, size_t window, int keep,
                                bool complete);

// An empty offer (a member that does not give this round): never complete.
std::vector<uint64_t> empty_offer(size_t window);

// acc becomes the combination of acc and other (same window size): their
// overlap, ANDed; complete only when both are.
void and_into(std::vector<uint64_t>& acc, const uint64_t* other);

// The leader's decision on a combined offer, wanting `want` (1 or 2) ids
// of an id space of `space_words` words: pick[0..want) the lowest common
// ids, or pick[0] kRetry / kExhausted, or kGrow with pick[1] the next
// round's start word.
void decide(const std::vector<uint64_t>& offer, int want, size_t space_words, int pick[2]);

// An offer as text, for members that agree through a channel other than
// messages (runtime/dynamic.h: the two groups of a connection agree through
// PMIx): each word in lower-case hex without leading zeros, one space after
// each.
std::string offer_text(const std::vector<uint64_t>& offer);
// "" with *offer the offer of a window of `window` words that offer_text
// wrote, or what is wrong with `text` (another process's; *offer then
// empty): anything but offer_size(window) words written as above, or a
// header outside [0] <= [1] <= min([0] + window, space_words), [2] 0 or 1.
std::string parse_offer_text(std::string_view text, size_t window, size_t space_words, std::vector<uint64_t>* offer);

// The next round's window size after kGrow.
inline size_t grown(size_t window, size_t space_words) { return window * 2 < space_words ? window * 2 : space_words; }

}  // namespace sonde::engine::context_window
