// The byte encoding of what every rank sends rank 0 at MPI_Finalize (its
// figures, its event buffer): fixed-width integers in host order (every rank
// of a job runs the same build), strings with their length first, histograms
// sparse. A Reader that runs past the end answers zeros and reports !ok().
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "histogram.h"

namespace sonde::residence {

class Writer {
 public:
  void u64(uint64_t v) { s_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& v) {
    u64(v.size());
    s_ += v;
  }
  void hist(const Histogram& h) {
    u64(h.count);
    if (!h.count) return;
    u64(h.sum);
    u64(h.min);
    u64(h.max);
    uint64_t n = 0;
    for (uint64_t b : h.bins) n += b != 0;
    u64(n);
    for (int b = 0; b < Histogram::kBuckets; ++b)
      if (h.bins[b]) {
        u64(static_cast<uint64_t>(b));
        u64(h.bins[b]);
      }
  }
  void raw(const void* p, size_t n) { s_.append(static_cast<const char*>(p), n); }
  std::string& bytes() { return s_; }

 private:
  std::string s_;
};

class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), end_(p + n) {}
  bool ok() const { return ok_; }
  uint64_t u64() {
    uint64_t v = 0;
    if (end_ - p_ < static_cast<ptrdiff_t>(sizeof v)) {
      ok_ = false;
      return 0;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok_ || static_cast<uint64_t>(end_ - p_) < n) {
      ok_ = false;
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  // n bytes into p; false (and !ok()) if fewer remain.
  bool raw(void* p, size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      return false;
    }
    if (n != 0) std::memcpy(p, p_, n);  // p may be an empty vector's null data()
    p_ += n;
    return true;
  }
  void hist(Histogram& into) {
    Histogram h;
    h.count = u64();
    if (!h.count) return;
    h.sum = u64();
    h.min = u64();
    h.max = u64();
    uint64_t n = u64();
    for (uint64_t i = 0; i < n && ok_; ++i) {
      uint64_t b = u64(), c = u64();
      if (b >= static_cast<uint64_t>(Histogram::kBuckets)) {
        ok_ = false;
        return;
      }
      h.bins[b] = c;
    }
    if (ok_) into.merge(h);
  }

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace sonde::residence
