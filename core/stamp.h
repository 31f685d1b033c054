// Ticks for the ages in snapshots (runtime/snapshot.h): when a request
// entered its protocol stage, a message arrived unexpected, a
// communicator's latest collective started, a blocking probe began to
// wait. One time-stamp-counter read and one store where the engine
// already writes the object (posted receive, queued or rendezvous send,
// unexpected arrival, rendezvous pull); a send or receive that completes
// inside its call takes none. The snapshot converts ticks to time against
// CLOCK_MONOTONIC (stamp_rate below); 0 means "not stamped".
#pragma once

#include <time.h>

#include <cstdint>

namespace sonde::engine {

inline uint64_t stamp_now() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
#endif
}

// A (ticks, CLOCK_MONOTONIC ns) pair; two of them give ticks per ns.
// Async-signal-safe.
struct StampPoint {
  uint64_t ticks = 0;
  uint64_t ns = 0;
  static StampPoint now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return {stamp_now(), uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec)};
  }
};

// Microseconds from `since` to `now`, measured in ticks and converted at
// the rate between `base` and `now`; -1 when `since` is 0 (never stamped).
inline int64_t stamp_age_us(uint64_t since, const StampPoint& base, const StampPoint& now) {
  if (since == 0) return -1;
  if (since >= now.ticks) return 0;
  const uint64_t dt = now.ticks - base.ticks, dns = now.ns - base.ns;
  if (dt == 0 || dns == 0) return 0;
  const unsigned __int128 ns = (unsigned __int128)(now.ticks - since) * dns / dt;
  return int64_t(ns / 1000);
}

}  // namespace sonde::engine
