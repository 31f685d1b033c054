// A fixed-size, log-scaled histogram of durations in nanoseconds: the
// profiler keeps one per (communicator, peer, metric), so its memory is the
// same after a second or a week of running.
//
// Buckets: exact below 16 ns; from 16 ns on, every power of two is split
// into 8 equal sub-buckets (HDR-histogram style), up to 2^41 ns (about 36
// minutes); anything longer lands in the last bucket. A percentile reports the
// middle of its bucket, clamped to the exact min and max, so it is within
// 1/16 (6.25 %) of a true sample value at that rank. Count, sum (hence the
// mean), min and max are exact. 312 buckets of 8 bytes: 2.5 KiB.
#pragma once

#include <cstdint>
#include <cstring>

namespace sonde::residence {

struct Histogram {
  static constexpr int kExact = 16;       // values below this have their own bucket
  static constexpr int kSubBits = 3;      // 2^3 sub-buckets per power of two
  static constexpr int kFirstOctave = 4;  // 2^4 == kExact
  static constexpr int kLastOctave = 40;  // [2^40, 2^41) ns is the last full octave
  static constexpr int kBuckets = kExact + (kLastOctave - kFirstOctave + 1) * (1 << kSubBits);

  uint64_t count = 0;
  uint64_t sum = 0;  // ns; overflows after 584 years of accumulated time
  uint64_t min = 0;  // meaningful when count > 0
  uint64_t max = 0;
  uint64_t bins[kBuckets] = {};

  static int bucket(uint64_t v) {
    if (v < kExact) return static_cast<int>(v);
    int octave = 63 - __builtin_clzll(v);
    if (octave > kLastOctave) return kBuckets - 1;
    int sub = static_cast<int>((v >> (octave - kSubBits)) & ((1 << kSubBits) - 1));
    return kExact + (octave - kFirstOctave) * (1 << kSubBits) + sub;
  }
  // Smallest value of bucket b.
  static uint64_t lower(int b) {
    if (b < kExact) return static_cast<uint64_t>(b);
    int octave = kFirstOctave + (b - kExact) / (1 << kSubBits);
    uint64_t sub = static_cast<uint64_t>((b - kExact) % (1 << kSubBits));
    return ((uint64_t{1} << kSubBits) + sub) << (octave - kSubBits);
  }
  // Largest value of bucket b (the last bucket is open-ended: max bounds it).
  static uint64_t upper(int b) {
    if (b < kExact) return static_cast<uint64_t>(b);
    if (b == kBuckets - 1) return UINT64_MAX;
    return lower(b + 1) - 1;
  }

  void add(uint64_t v) {
    if (count == 0 || v < min) min = v;
    if (v > max) max = v;
    ++count;
    sum += v;
    ++bins[bucket(v)];
  }

  void merge(const Histogram& o) {
    if (o.count == 0) return;
    if (count == 0 || o.min < min) min = o.min;
    if (o.max > max) max = o.max;
    count += o.count;
    sum += o.sum;
    for (int b = 0; b < kBuckets; ++b) bins[b] += o.bins[b];
  }

  void clear() { std::memset(this, 0, sizeof *this); }

  double mean() const { return count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0; }

  // The value at rank ceil(p * count) (p in (0, 1]): exact for the first and
  // last rank (min, max), otherwise the middle of its bucket clamped to
  // [min, max]; 0 when empty. Monotonic in p, so p50 <= p99 <= max holds.
  uint64_t percentile(double p) const {
    if (count == 0) return 0;
    double want = p * static_cast<double>(count);
    uint64_t rank = static_cast<uint64_t>(want);
    if (static_cast<double>(rank) < want) ++rank;
    if (rank < 1) rank = 1;
    if (rank >= count) return max;  // the extremes are known exactly
    if (rank == 1) return min;
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += bins[b];
      if (seen >= rank) {
        uint64_t lo = lower(b), hi = upper(b);
        if (hi > max) hi = max;
        if (lo < min) lo = min;
        if (lo > hi) lo = hi;
        return lo + (hi - lo) / 2;
      }
    }
    return max;
  }
};

}  // namespace sonde::residence
