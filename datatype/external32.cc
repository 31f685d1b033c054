// external32 (MPI 4.1 section 14.5.2): the portable big-endian
// representation of MPI_Pack_external and MPI_Unpack_external.
#include "datatype/datatype.h"

#include <cfloat>
#include <cstdint>
#include <cstring>

namespace sonde::engine {

// ---------------------------------------------------------------- external32

namespace {

static_assert(LDBL_MANT_DIG == 64, "external32 long double conversion assumes the x87 80-bit format");

// Bytes of one basic element in external32 (MPI 4.1 table 14.8: long is 4
// bytes there, wchar 2; wider values are truncated as the table allows).
// Complex numbers are two components, each swapped on its own.
int64_t ext_size(Basic b) {
  switch (b) {
    case Basic::kWChar: return 2;
    case Basic::kLong:
    case Basic::kULong: return 4;
    case Basic::kAint:
    case Basic::kOffset:
    case Basic::kCount: return 8;
    case Basic::kLongDouble: return 16;
    case Basic::kLongDoubleComplex: return 32;
    default: return int64_t(basic_size(b));
  }
}
bool is_complex(Basic b) {
  return b == Basic::kFloatComplex || b == Basic::kDoubleComplex || b == Basic::kLongDoubleComplex;
}
bool is_signed_integer(Basic b) {
  switch (b) {
    case Basic::kChar:
    case Basic::kSChar:
    case Basic::kShort:
    case Basic::kInt:
    case Basic::kLong:
    case Basic::kLongLong:
    case Basic::kInt8:
    case Basic::kInt16:
    case Basic::kInt32:
    case Basic::kInt64:
    case Basic::kAint:
    case Basic::kOffset:
    case Basic::kCount:
    case Basic::kWChar: return true;
    default: return false;
  }
}
bool is_long_double(Basic b) { return b == Basic::kLongDouble || b == Basic::kLongDoubleComplex; }

void store_be(uint8_t* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = uint8_t(v);
    v >>= 8;
  }
}
uint64_t load_be(const uint8_t* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | in[i];
  return v;
}

// x87 80-bit extended (in a 16-byte slot) <-> IEEE binary128, big-endian.
// Same sign and biased exponent; the 63 fraction bits (the explicit integer
// bit dropped) become the top of binary128's 112.
void ld_to_quad(const uint8_t* in, uint8_t* out) {
  uint64_t mant;
  uint16_t se;
  std::memcpy(&mant, in, 8);
  std::memcpy(&se, in + 8, 2);
  uint64_t frac = mant & 0x7fffffffffffffffull;
  uint64_t hi = (uint64_t(se) << 48) | (frac >> 15);
  uint64_t lo = (frac & 0x7fff) << 49;
  store_be(out, hi, 8);
  store_be(out + 8, lo, 8);
}
void quad_to_ld(const uint8_t* in, uint8_t* out) {
  uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
  uint16_t se = uint16_t(hi >> 48);
  uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
  uint64_t mant = frac | ((se & 0x7fff) != 0 ? 0x8000000000000000ull : 0);
  std::memset(out, 0, 16);
  std::memcpy(out, &mant, 8);
  std::memcpy(out + 8, &se, 2);
}

// n basic elements of kind b between native memory and external32.
void to_ext(Basic b, const uint8_t* in, uint8_t* out, int64_t n) {
  int64_t ns = int64_t(basic_size(b)), es = ext_size(b);
  int parts = is_complex(b) ? 2 : 1;
  int64_t nc = ns / parts, ec = es / parts;
  for (int64_t i = 0; i < n * parts; ++i) {
    const uint8_t* src = in + i * nc;
    uint8_t* dst = out + i * ec;
    if (is_long_double(b)) {
      ld_to_quad(src, dst);
    } else if (nc == ec) {
      for (int64_t k = 0; k < ec; ++k) dst[k] = src[ec - 1 - k];
    } else {  // a different width: keep the low bytes (sign-extended when widening)
      uint64_t v = 0;
      std::memcpy(&v, src, size_t(nc));
      if (is_signed_integer(b) && nc < 8 && (v >> (8 * nc - 1)) & 1) v |= ~uint64_t(0) << (8 * nc);
      store_be(dst, v, int(ec));
    }
  }
}
void from_ext(Basic b, const uint8_t* in, uint8_t* out, int64_t n) {
  int64_t ns = int64_t(basic_size(b)), es = ext_size(b);
  int parts = is_complex(b) ? 2 : 1;
  int64_t nc = ns / parts, ec = es / parts;
  for (int64_t i = 0; i < n * parts; ++i) {
    const uint8_t* src = in + i * ec;
    uint8_t* dst = out + i * nc;
    if (is_long_double(b)) {
      quad_to_ld(src, dst);
    } else if (nc == ec) {
      for (int64_t k = 0; k < ec; ++k) dst[k] = src[ec - 1 - k];
    } else {
      uint64_t v = load_be(src, int(ec));
      if (is_signed_integer(b) && ec < 8 && (v >> (8 * ec - 1)) & 1) v |= ~uint64_t(0) << (8 * ec);
      std::memcpy(dst, &v, size_t(nc));
    }
  }
}

int64_t layout_ext_size(const Layout& l) {
  int64_t n = 0;
  for (const Item& it : l.items) {
    int64_t per = it.sub ? layout_ext_size(*it.sub) : it.size / int64_t(basic_size(it.basic)) * ext_size(it.basic);
    n += it.count * per;
  }
  return n;
}

// Every leaf of one copy of l at base, in typemap order: f(address, basic, elements).
template <class F>
void each_leaf(const Layout& l, uint8_t* base, F& f) {
  for (const Item& it : l.items) {
    uint8_t* p = base + it.disp;
    for (int64_t i = 0; i < it.count; ++i, p += it.stride) {
      if (it.sub) each_leaf(*it.sub, p, f);
      else f(p, it.basic, it.size / int64_t(basic_size(it.basic)));
    }
  }
}

}  // namespace

int64_t external32_size(const Datatype& t) { return t.size == 0 ? 0 : layout_ext_size(*t.layout); }

void pack_external32(const Datatype& t, const void* buf, int64_t count, uint8_t* out) {
  if (t.size == 0) return;
  auto f = [&out](uint8_t* p, Basic b, int64_t n) {
    to_ext(b, p, out, n);
    out += n * ext_size(b);
  };
  uint8_t* base = static_cast<uint8_t*>(const_cast<void*>(buf));
  for (int64_t e = 0; e < count; ++e) each_leaf(*t.layout, base + e * t.extent, f);
}

void unpack_external32(const Datatype& t, const uint8_t* in, void* buf, int64_t count) {
  if (t.size == 0) return;
  auto f = [&in](uint8_t* p, Basic b, int64_t n) {
    from_ext(b, in, p, n);
    in += n * ext_size(b);
  };
  uint8_t* base = static_cast<uint8_t*>(buf);
  for (int64_t e = 0; e < count; ++e) each_leaf(*t.layout, base + e * t.extent, f);
}

}  // namespace sonde::engine
