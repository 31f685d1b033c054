// The pack engine: packed bytes [offset, offset+n) of (buf, count, type)
// copied out of or into user memory, or described as iovecs, by walking the
// layout tree (datatype.h has the model).
#include "datatype/datatype.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sonde::engine {

namespace {

// ---------------------------------------------------------------- walking

// Sinks receive the user memory of consecutive packed bytes as runs
// (address, length); returning false stops the walk.
// Copies `k` leaves of `size` bytes, `stride` apart, between user memory
// at p and the packed stream at s: the inner loop of strided types (a
// vector of doubles), with the common sizes unrolled to fixed-size moves.
template <bool kPack>
inline void strided(uint8_t* p, int64_t stride, uint64_t size, int64_t k, uint8_t*& s) {
  auto loop = [&](auto width) {
    for (int64_t i = 0; i < k; ++i, p += stride, s += width) {
      if constexpr (kPack) std::memcpy(s, p, width);
      else std::memcpy(p, s, width);
    }
  };
  switch (size) {
    case 4: loop(std::integral_constant<size_t, 4>{}); break;
    case 8: loop(std::integral_constant<size_t, 8>{}); break;
    case 16: loop(std::integral_constant<size_t, 16>{}); break;
    default:
      for (int64_t i = 0; i < k; ++i, p += stride, s += size) {
        if constexpr (kPack) std::memcpy(s, p, size);
        else std::memcpy(p, s, size);
      }
  }
}

struct PackSink {
  uint8_t* out;
  bool run(uint8_t* p, uint64_t n) {
    std::memcpy(out, p, n);
    out += n;
    return true;
  }
  void copies(uint8_t* p, int64_t stride, uint64_t size, int64_t k) { strided<true>(p, stride, size, k, out); }
};
struct UnpackSink {
  const uint8_t* in;
  bool run(uint8_t* p, uint64_t n) {
    std::memcpy(p, in, n);
    in += n;
    return true;
  }
  void copies(uint8_t* p, int64_t stride, uint64_t size, int64_t k) {
    uint8_t* s = const_cast<uint8_t*>(in);
    strided<false>(p, stride, size, k, s);
    in = s;
  }
};
struct IovSink {
  iovec* out;
  size_t max, used = 0;
  uint64_t covered = 0;
  bool run(uint8_t* p, uint64_t n) {
    if (used && static_cast<uint8_t*>(out[used - 1].iov_base) + out[used - 1].iov_len == p) {
      out[used - 1].iov_len += n;
    } else {
      if (used == max) return false;
      out[used++] = iovec{p, size_t(n)};
    }
    covered += n;
    return true;
  }
};

template <class S>
bool walk_layout(const Layout& l, uint8_t* base, uint64_t off, uint64_t n, S& s);

// Packed bytes [off, off+n) of the copies of `it` placed at base.
template <class S>
bool walk_item(const Item& it, uint8_t* base, uint64_t off, uint64_t n, S& s) {
  const uint64_t size = uint64_t(it.size);
  int64_t i = int64_t(off / size);
  uint64_t within = off % size;
  uint8_t* p = base + it.disp + i * it.stride;
  if constexpr (requires { s.copies(p, it.stride, size, i); }) {
    if (!it.sub && within == 0 && n >= size) {
      // Whole leaves in a row: no per-leaf bookkeeping.
      int64_t k = std::min<int64_t>(it.count - i, int64_t(n / size));
      s.copies(p, it.stride, size, k);
      i += k;
      p += k * it.stride;
      n -= uint64_t(k) * size;
    }
  }
  while (n > 0 && i < it.count) {
    uint64_t take = std::min<uint64_t>(size - within, n);
    if (!it.sub) {
      if (!s.run(p + within, take)) return false;
    } else if (!walk_layout(*it.sub, p, within, take, s)) {
      return false;
    }
    n -= take;
    within = 0;
    ++i;
    p += it.stride;
  }
  return true;
}

template <class S>
bool walk_layout(const Layout& l, uint8_t* base, uint64_t off, uint64_t n, S& s) {
  size_t k = size_t(std::upper_bound(l.start.begin(), l.start.end(), int64_t(off)) - l.start.begin()) - 1;
  while (n > 0 && k < l.items.size()) {
    const Item& it = l.items[k];
    uint64_t in = off - uint64_t(l.start[k]);
    uint64_t total = uint64_t(it.count * it.size);
    uint64_t take = std::min<uint64_t>(total - in, n);
    if (!walk_item(it, base, in, take, s)) return false;
    n -= take;
    off += take;
    ++k;
  }
  return true;
}

// count elements of t at buf, as one item.
template <class S>
bool walk(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint64_t n, S& s) {
  if (n == 0 || t.size == 0) return true;
  Item top{0, count, t.extent, t.size, t.layout.get(), Basic::kNone};
  return walk_item(top, static_cast<uint8_t*>(const_cast<void*>(buf)), offset, n, s);
}

}  // namespace

void pack(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint8_t* out, uint64_t n) {
  if (n == 0) return;  // buffers may be null then
  if (t.contiguous) {
    std::memcpy(out, contiguous_start(t, buf) + offset, n);
    return;
  }
  PackSink s{out};
  walk(t, buf, count, offset, n, s);
}

void unpack(const Datatype& t, void* buf, int64_t count, uint64_t offset, const uint8_t* in, uint64_t n) {
  if (n == 0) return;
  if (t.contiguous) {
    std::memcpy(contiguous_start(t, buf) + offset, in, n);
    return;
  }
  UnpackSink s{in};
  walk(t, buf, count, offset, n, s);
}

size_t gather_iov(const Datatype& t, const void* buf, int64_t count, uint64_t offset, uint64_t n, iovec* out,
                  size_t max, uint64_t* covered) {
  IovSink s{out, max};
  if (t.contiguous) {
    if (n && max) {
      out[0] = iovec{const_cast<uint8_t*>(contiguous_start(t, buf)) + offset, size_t(n)};
      s.used = 1;
      s.covered = n;
    }
  } else {
    walk(t, buf, count, offset, n, s);
  }
  *covered = s.covered;
  return s.used;
}

}  // namespace sonde::engine
