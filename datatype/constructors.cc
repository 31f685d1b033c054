// Derived datatypes: the layouts and bounds the MPI_Type_* constructors
// build, and the element count of a packed prefix (MPI_Get_elements).
#include "datatype/datatype.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "datatype/layout_builder.h"

namespace sonde::engine {

using detail::LayoutBuilder;

namespace {

// Sizes and bounds are computed wide: a typemap may describe 2^63 bytes or
// more, which the Datatype then records as huge (datatype.h).
using Wide = __int128;
inline bool fits(Wide v) { return v >= INT64_MIN && v <= INT64_MAX; }
inline int64_t narrow(Wide v) { return fits(v) ? int64_t(v) : 0; }

// MPI bounds of a typemap under construction, with MPI-1's sticky
// MPI_LB/MPI_UB rule: explicit bounds, where present, win over data bounds.
struct Bounds {
  bool any_lb = false, any_ub = false, elb = false, eub = false, tany = false;
  Wide lb = 0, ub = 0, xlb = 0, xub = 0, tlb = 0, tub = 0;
  int64_t align = 1;
  Basic basic = Basic::kNone;
  bool basic_set = false, mixed = false;
  bool huge_bounds = false, huge_true_bounds = false;  // inherited from a part

  // Copies of t whose displacements range over [lo, hi].
  void add(Wide lo, Wide hi, const Datatype& t) {
    const bool lb_marker = t.predefined && t.explicit_lb;  // MPI_LB bounds nothing from above
    const bool ub_marker = t.predefined && t.explicit_ub;  // MPI_UB nothing from below
    huge_bounds |= t.huge_bounds;
    if (!ub_marker) {
      Wide c = lo + t.lb;
      if (t.explicit_lb) {
        xlb = elb ? std::min(xlb, c) : c;
        elb = true;
      } else {
        lb = any_lb ? std::min(lb, c) : c;
        any_lb = true;
      }
    }
    if (!lb_marker) {
      Wide c = hi + t.lb + t.extent;
      if (t.explicit_ub) {
        xub = eub ? std::max(xub, c) : c;
        eub = true;
      } else {
        ub = any_ub ? std::max(ub, c) : c;
        any_ub = true;
      }
    }
    if (t.size > 0 || t.huge_size) {
      huge_true_bounds |= t.huge_true_bounds;
      Wide a = lo + t.true_lb, b = hi + t.true_lb + t.true_extent;
      tlb = tany ? std::min(tlb, a) : a;
      tub = tany ? std::max(tub, b) : b;
      tany = true;
    }
    if (!lb_marker && !ub_marker) {
      align = std::max(align, t.align);
      if (!basic_set) {
        basic = t.basic;
        basic_set = true;
      } else if (basic != t.basic) {
        mixed = true;
      }
    }
  }

  void store(Datatype& out, bool pad) const {
    Wide l = elb ? xlb : (any_lb ? lb : 0);
    Wide u = eub ? xub : (any_ub ? ub : 0);  // {(LB,10)} alone: ub 0, extent -10 (as MPICH)
    if (pad && !eub && !elb && align > 1) {
      Wide e = u - l;
      Wide r = ((e % align) + align) % align;
      if (r) u += align - r;
    }
    const Wide tl = tany ? tlb : 0, te = tany ? tub - tlb : 0;
    out.huge_bounds = huge_bounds || !fits(l) || !fits(u) || !fits(u - l);
    out.huge_true_bounds = huge_true_bounds || !fits(tl) || !fits(tl + te) || !fits(te);
    out.lb = narrow(l);
    out.extent = narrow(u - l);
    out.explicit_lb = elb;
    out.explicit_ub = eub;
    out.true_lb = narrow(tl);
    out.true_extent = narrow(te);
    out.align = align;
    out.basic = mixed ? Basic::kNone : basic;
  }
};

bool is_huge(const Datatype& t) { return t.huge_size || t.huge_bounds || t.huge_true_bounds; }

// The layout of a type with any huge value: empty (it moves no data).
const std::shared_ptr<const Layout>& no_layout() {
  static const auto* l = new std::shared_ptr<const Layout>(std::make_shared<Layout>());
  return *l;
}

// Sets size and contiguity from the layout `build()` makes, or, when the
// size (`size`, computed wide) or the bounds stored already do not fit,
// records the type as huge without building one.
template <class Build>
void finish_type(Datatype& out, Wide size, bool huge_part, Build build) {
  out.huge_size = huge_part || !fits(size);
  if (is_huge(out)) {
    out.layout = no_layout();
    out.size = narrow(size);
    out.contiguous = false;
    return;
  }
  out.layout = build();
  out.size = out.layout->size;
  const Layout& l = *out.layout;
  out.contiguous = out.size == 0 || (l.dense && l.dense_at == out.true_lb && out.extent == out.size);
}

// Positions i*s for i in [0, n): the smallest and the largest.
inline Wide lo_of(int64_t n, int64_t s) { return std::min<Wide>(0, Wide(n - 1) * s); }
inline Wide hi_of(int64_t n, int64_t s) { return std::max<Wide>(0, Wide(n - 1) * s); }

// A type whose bounds do not fit (a constructor's own arithmetic
// overflowed), of `size` data bytes (-1: not computed, huge too).
void make_huge(Datatype& out, const Datatype& old, Wide size = -1) {
  out.huge_size = size < 0 || !fits(size) || old.huge_size;
  out.huge_bounds = out.huge_true_bounds = true;
  out.size = out.huge_size ? 0 : int64_t(size);
  out.lb = out.extent = out.true_lb = out.true_extent = 0;
  out.layout = no_layout();
  out.contiguous = false;
  out.basic = old.basic;
  out.align = old.align;
}

}  // namespace

bool datatype_fits(const Datatype& t, int64_t count) {
  if (count <= 0) return true;
  if (is_huge(t)) return false;
  int64_t bytes, span;
  return !__builtin_mul_overflow(count, t.size, &bytes) &&
         !__builtin_mul_overflow(count, t.extent < 0 ? -t.extent : t.extent, &span);
}

// ---------------------------------------------------------------- constructors

void make_contiguous(Datatype& out, int64_t count, const Datatype& old) { make_vector(out, count, 1, old.extent, old); }

void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old) {
  Bounds b;
  const bool any = count > 0 && blocklength > 0;
  if (any) {
    b.add(lo_of(count, stride_bytes) + lo_of(blocklength, old.extent),
          hi_of(count, stride_bytes) + hi_of(blocklength, old.extent), old);
  } else {
    b.basic = old.basic;
    b.basic_set = true;
  }
  b.store(out, false);
  finish_type(out, any ? Wide(count) * blocklength * old.size : 0, any && old.huge_size, [&] {
    LayoutBuilder l;
    if (!any) return l.finish();
    if (blocklength == 1) {
      l.add(0, count, stride_bytes, old.layout);
    } else {
      LayoutBuilder block;
      block.add(0, blocklength, old.extent, old.layout);
      l.add(0, count, stride_bytes, block.finish());
    }
    return l.finish();
  });
}

void make_hindexed(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                   const Datatype& old) {
  std::vector<const Datatype*> types(size_t(count), &old);
  make_struct(out, count, blocklengths, disps, types.data(), false);
  if (out.size == 0) out.basic = old.basic;
}

void make_struct(Datatype& out, int64_t count, const int64_t* blocklengths, const int64_t* disps,
                 const Datatype* const* types, bool is_struct) {
  Bounds b;
  Wide size = 0;
  bool huge_part = false;
  for (int64_t i = 0; i < count; ++i) {
    const Datatype& t = *types[i];
    int64_t n = blocklengths[i];
    if (n <= 0) continue;
    b.add(disps[i] + lo_of(n, t.extent), disps[i] + hi_of(n, t.extent), t);
    size += Wide(n) * t.size;
    huge_part |= t.huge_size;
  }
  b.store(out, is_struct);
  finish_type(out, size, huge_part, [&] {
    LayoutBuilder l;
    for (int64_t i = 0; i < count; ++i)
      if (blocklengths[i] > 0) l.add(disps[i], blocklengths[i], types[i]->extent, types[i]->layout);
    return l.finish();
  });
}

void make_resized(Datatype& out, const Datatype& old, int64_t lb, int64_t extent) {
  out.basic = old.basic;
  out.lb = lb;
  out.extent = extent;
  out.explicit_lb = out.explicit_ub = true;
  out.true_lb = old.true_lb;
  out.true_extent = old.true_extent;
  out.align = old.align;
  out.huge_bounds = false;  // lb and extent are the caller's, MPI_Aint values
  out.huge_true_bounds = old.huge_true_bounds;
  finish_type(out, old.size, old.huge_size, [&] { return old.layout; });
}

void make_subarray(Datatype& out, int ndims, const int* sizes, const int* subsizes, const int* starts, bool fortran,
                   const Datatype& old) {
  // Fastest-varying dimension first: the last in C order, the first in Fortran's.
  auto dim = [&](int k) { return fortran ? k : ndims - 1 - k; };
  Datatype t;
  make_contiguous(t, subsizes[dim(0)], old);
  Wide size = old.size;  // data bytes: every subsize times old's
  for (int k = 0; k < ndims; ++k) size = std::min<Wide>(size * subsizes[k], Wide(INT64_MAX) + 1);  // no wrap
  Wide step = Wide(sizes[dim(0)]) * old.extent;  // bytes per index of the next dimension
  Wide disp = Wide(starts[dim(0)]) * old.extent;
  for (int k = 1; k < ndims; ++k) {
    if (!fits(step) || is_huge(old)) return make_huge(out, old, size);
    Datatype next;
    make_vector(next, subsizes[dim(k)], 1, int64_t(step), t);
    t = std::move(next);
    disp += Wide(starts[dim(k)]) * step;
    step *= sizes[dim(k)];
  }
  if (!fits(step) || !fits(disp) || is_huge(old)) return make_huge(out, old, size);
  Datatype placed;
  int64_t one = 1, at = int64_t(disp);
  make_hindexed(placed, 1, &one, &at, t);
  make_resized(out, placed, 0, int64_t(step));
  out.basic = old.basic;
}

bool make_darray(Datatype& out, int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs,
                 const int* psizes, bool fortran, const Datatype& old) {
  // The process grid is row-major whatever the array order (MPI 4.1 5.1.4).
  std::vector<int> coord(static_cast<size_t>(ndims));
  int64_t procs = 1;
  for (int i = 0; i < ndims; ++i) procs *= psizes[i];
  if (procs != size) return false;
  for (int i = ndims - 1, r = rank; i >= 0; --i) {
    coord[size_t(i)] = r % psizes[i];
    r /= psizes[i];
  }
  auto dim = [&](int k) { return fortran ? k : ndims - 1 - k; };
  Datatype t = old;
  Wide step = old.extent;  // bytes per index of the current dimension
  for (int k = 0; k < ndims; ++k) {
    // Displacements up to g * step: past MPI_Count, the type is huge.
    if (is_huge(old) || !fits(step * gsizes[dim(k)])) {
      make_huge(out, old);
      return true;
    }
    int d = dim(k);
    int64_t g = gsizes[d], p = psizes[d], c = coord[size_t(d)];
    std::vector<int64_t> lens, disps;
    if (distribs[d] == 0) {  // MPI_DISTRIBUTE_NONE
      if (p != 1) return false;
      lens.push_back(g);
      disps.push_back(0);
    } else if (distribs[d] == 1) {  // MPI_DISTRIBUTE_BLOCK
      int64_t blk = dargs[d] < 0 ? (g + p - 1) / p : dargs[d];
      if (blk * p < g) return false;
      int64_t first = c * blk, n = std::max<int64_t>(0, std::min(blk, g - first));
      lens.push_back(n);
      disps.push_back(int64_t(first * step));
    } else {  // MPI_DISTRIBUTE_CYCLIC
      int64_t blk = dargs[d] < 0 ? 1 : dargs[d];
      if (blk <= 0) return false;
      for (int64_t first = c * blk; first < g; first += p * blk) {
        lens.push_back(std::min(blk, g - first));
        disps.push_back(int64_t(first * step));
      }
    }
    Datatype unit;
    make_resized(unit, t, 0, int64_t(step));
    Datatype next;
    make_hindexed(next, int64_t(lens.size()), lens.data(), disps.data(), unit);
    t = std::move(next);
    step *= g;
  }
  make_resized(out, t, 0, int64_t(step));
  out.basic = old.basic;
  return true;
}

// ---------------------------------------------------------------- elements

namespace {

// Basic elements in the first `bytes` packed bytes of one copy of l; -1 if
// that ends inside a basic element.
int64_t partial_elements(const Layout& l, uint64_t bytes) {
  int64_t n = 0;
  for (const Item& it : l.items) {
    if (bytes == 0) break;
    uint64_t total = uint64_t(it.count * it.size);
    int64_t per = it.sub ? it.sub->elements : it.size / int64_t(basic_size(it.basic));
    if (bytes >= total) {
      n += it.count * per;
      bytes -= total;
      continue;
    }
    uint64_t whole = bytes / uint64_t(it.size), rest = bytes % uint64_t(it.size);
    n += int64_t(whole) * per;
    if (rest) {
      if (it.sub) {
        int64_t p = partial_elements(*it.sub, rest);
        if (p < 0) return -1;
        n += p;
      } else {
        uint64_t bs = basic_size(it.basic);
        if (rest % bs) return -1;
        n += int64_t(rest / bs);
      }
    }
    bytes = 0;
  }
  return n;
}

}  // namespace

int64_t count_elements(const Datatype& t, uint64_t bytes) {
  if (is_huge(t)) return bytes == 0 ? 0 : -1;
  if (t.size == 0) return 0;
  uint64_t whole = bytes / uint64_t(t.size), rest = bytes % uint64_t(t.size);
  int64_t part = rest ? partial_elements(*t.layout, rest) : 0;
  if (part < 0) return -1;
  return int64_t(whole) * t.layout->elements + part;
}

}  // namespace sonde::engine
