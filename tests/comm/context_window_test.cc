// The windowed context-id offers (comm/context_window.h): members whose
// free sets differ meet on their lowest common id, windows grow only when
// the overlap is empty, and exhaustion is a complete search to the end.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "comm/context_window.h"

#include <vector>

using namespace sonde::engine::context_window;

namespace {

constexpr size_t kSpace = 2048;  // words: 131072 ids

std::vector<uint64_t> all_free() { return std::vector<uint64_t>(kSpace, ~uint64_t(0)); }
void take(std::vector<uint64_t>& f, size_t id) { f[id / 64] &= ~(uint64_t(1) << (id % 64)); }
void take_range(std::vector<uint64_t>& f, size_t from, size_t to) {
  for (size_t id = from; id < to; ++id) take(f, id);
}

// Runs rounds as the leader would, all members complete: the agreed id or
// kExhausted, and how many rounds it took.
int agree(const std::vector<std::vector<uint64_t>>& members, int* rounds) {
  size_t window = kFirstWords, from = 0;
  for (*rounds = 1;; ++*rounds) {
    std::vector<uint64_t> acc = window_of(members[0], from, window, 0, true);
    for (size_t m = 1; m < members.size(); ++m) {
      std::vector<uint64_t> o = window_of(members[m], from, window, 0, true);
      REQUIRE(o.size() == acc.size());
      and_into(acc, o.data());
    }
    int pick[2] = {0, 0};
    decide(acc, 1, kSpace, pick);
    if (pick[0] != kGrow) return pick[0];
    REQUIRE(size_t(pick[1]) >= from);
    from = size_t(pick[1]);
    window = grown(window, kSpace);
    REQUIRE(*rounds < 64);
  }
}

// The lowest id free on every member, by brute force.
int lowest_common(const std::vector<std::vector<uint64_t>>& members) {
  for (size_t id = 0; id < kSpace * 64; ++id) {
    bool all = true;
    for (const auto& f : members) all = all && (f[id / 64] >> (id % 64) & 1);
    if (all) return int(id);
  }
  return kExhausted;
}

}  // namespace

TEST_CASE("an offer is a few words from the lowest free id, not the whole free map") {
  auto f = all_free();
  take_range(f, 0, 1000);
  std::vector<uint64_t> o = window_of(f, 0, kFirstWords, 0, true);
  CHECK(o.size() == kHeader + kFirstWords);
  CHECK(o[0] == 1000 / 64);
  CHECK(o[1] == 1000 / 64 + kFirstWords);
  CHECK(o[kHeader] == f[1000 / 64]);
}

TEST_CASE("kept ids stay out of the window") {
  auto f = all_free();
  std::vector<uint64_t> o = window_of(f, 0, kFirstWords, 64, true);
  CHECK(o[0] == 1);  // the whole first word is kept
  o = window_of(f, 0, kFirstWords, 3, true);
  CHECK(o[0] == 0);
  CHECK(o[kHeader] == (~uint64_t(0) << 3));
}

TEST_CASE("members with the same free set agree in one round") {
  auto f = all_free();
  take_range(f, 0, 70);
  int rounds = 0;
  CHECK(agree({f, f, f}, &rounds) == 70);
  CHECK(rounds == 1);
}

TEST_CASE("fragmented free sets that differ meet on the lowest common id") {
  // Member 0: every even id taken up to 40000; member 1: every odd one up
  // to 30000, and 30000..40005 taken; member 2: lowest free far below.
  auto a = all_free(), b = all_free(), c = all_free();
  for (size_t id = 0; id < 40000; id += 2) take(a, id);
  for (size_t id = 1; id < 30000; id += 2) take(b, id);
  take_range(b, 30000, 40005);
  take_range(c, 5, 9);
  int rounds = 0;
  int id = agree({a, b, c}, &rounds);
  CHECK(id == lowest_common({a, b, c}));
  CHECK(id == 40005);
  CHECK(rounds > 1);
  CHECK(rounds < 16);
}

TEST_CASE("windows that do not overlap move up to the higher start") {
  auto a = all_free(), b = all_free();
  take_range(a, 0, 64 * 100);  // a's lowest free word is 100; b's is 0
  std::vector<uint64_t> acc = window_of(a, 0, kFirstWords, 0, true);
  std::vector<uint64_t> o = window_of(b, 0, kFirstWords, 0, true);
  and_into(acc, o.data());
  int pick[2] = {0, 0};
  decide(acc, 1, kSpace, pick);
  CHECK(pick[0] == kGrow);
  CHECK(pick[1] == 100);
}

TEST_CASE("random fragmented free sets agree on the brute-force lowest common id") {
  uint64_t s = 12345;
  auto rnd = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull, s >> 33; };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::vector<uint64_t>> members(2 + rnd() % 4, all_free());
    for (auto& f : members) {
      size_t dense = rnd() % 50000;
      take_range(f, 0, dense);
      for (int k = 0; k < 2000; ++k) take(f, dense + rnd() % 20000);
    }
    int rounds = 0;
    CHECK(agree(members, &rounds) == lowest_common(members));
  }
}

TEST_CASE("two ids for an intercommunicator: a first one found stays in the next window") {
  auto f = all_free();
  take_range(f, 0, 64 * (3 + kFirstWords));
  f[3] |= uint64_t(1) << 63;  // id 255: the only one free in the first window
  std::vector<uint64_t> acc = window_of(f, 0, kFirstWords, 0, true);
  int pick[2] = {0, 0};
  decide(acc, 2, kSpace, pick);
  CHECK(pick[0] == kGrow);
  CHECK(pick[1] == 3);
}

TEST_CASE("used up: complete offers to the end of the id space are kExhausted") {
  auto a = all_free(), b = all_free();
  take_range(a, 0, kSpace * 64);
  int rounds = 0;
  CHECK(agree({a, a}, &rounds) == kExhausted);
  // Disjoint halves: nothing common anywhere.
  for (size_t w = 0; w < kSpace; ++w) a[w] = 0x5555555555555555ull, b[w] = 0xaaaaaaaaaaaaaaaaull;
  CHECK(agree({a, b}, &rounds) == kExhausted);
  CHECK(rounds <= 12);
}

TEST_CASE("an incomplete offer is a retry, never exhaustion") {
  auto a = all_free();
  take_range(a, 0, kSpace * 64);
  std::vector<uint64_t> acc = window_of(a, 0, kFirstWords, 0, true);
  std::vector<uint64_t> o = empty_offer(kFirstWords);
  and_into(acc, o.data());
  int pick[2] = {0, 0};
  decide(acc, 1, kSpace, pick);
  CHECK(pick[0] == kRetry);
}

TEST_CASE("an offer as text reads back as the same words, and nothing else is taken") {
  uint64_t s = 777;
  auto rnd = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull, s; };
  for (int trial = 0; trial < 200; ++trial) {
    auto f = all_free();
    take_range(f, 0, rnd() % 5000);
    for (int k = 0; k < 300; ++k) take(f, rnd() % 9000);
    const size_t window = kFirstWords << (trial % 4);
    std::vector<uint64_t> offer = window_of(f, rnd() % 200, window, 0, trial % 3 != 0), back;
    REQUIRE(parse_offer_text(offer_text(offer), window, kSpace, &back) == "");
    CHECK(back == offer);
  }
  std::vector<uint64_t> empty = empty_offer(kFirstWords), back;
  CHECK(offer_text(empty) == "0 0 0 0 0 0 0 ");
  CHECK(parse_offer_text("0 0 0 0 0 0 0 ", kFirstWords, kSpace, &back) == "");
  CHECK(back == empty);
  CHECK(parse_offer_text("1 5 1 ff 0 0 ffffffffffffffff ", kFirstWords, kSpace, &back) == "");
  CHECK(back == std::vector<uint64_t>{1, 5, 1, 0xff, 0, 0, ~uint64_t(0)});
}

TEST_CASE("malformed offer texts are refused whole") {
  const char* bad[] = {
      "",                                // no words
      "0 0 0 0 0 0 ",                    // too few
      "0 0 0 0 0 0 0 0 ",                // too many
      "0 0 0 0 0 0 0",                   // no space after the last
      "0 0 0 0 0 0  0 ",                 // an empty word
      "0 0 0 0 0 0 00 ",                 // a leading zero
      "0 0 0 0 0 0 FF ",                 // upper case
      "0 0 0 0 0 0 -1 ",                 // a sign
      "0 0 0 0 0 0 1ffffffffffffffff ",  // more than 64 bits
      "5 4 1 0 0 0 0 ",                  // the window ends before it starts
      "0 5 1 0 0 0 0 ",                  // wider than the round's window
      "800 801 1 0 0 0 0 ",              // past the id space
      "0 4 2 0 0 0 0 ",                  // a flag other than 0/1
      "0 4 1 0 0 0 0\n",                 // anything but a space
  };
  for (const char* text : bad) {
    std::vector<uint64_t> out{42};
    CHECK_MESSAGE(parse_offer_text(text, kFirstWords, kSpace, &out) != "", text);
    CHECK(out.empty());
  }
}
