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

// MPI bounds of a typemap under construction, with MPI-1's sticky
// MPI_LB/MPI_UB rule: explicit bounds, where present, win over data bounds.
struct Bounds {
  bool any_lb = false, any_ub = false, elb = false, eub = false, tany = false;
  int64_t lb = 0, ub = 0, xlb = 0, xub = 0, tlb = 0, tub = 0;
  int64_t align = 1;
  Basic basic = Basic::kNone;
  bool basic_set = false, mixed = false;

  // Copies of t whose displacements range over [lo, hi].
  void add(int64_t lo, int64_t hi, const Datatype& t) {
    const bool lb_marker = t.predefined && t.explicit_lb;  // MPI_LB bounds nothing from above
    const bool ub_marker = t.predefined && t.explicit_ub;  // MPI_UB nothing from below
    if (!ub_marker) {
      int64_t c = lo + t.lb;
      if (t.explicit_lb) {
        xlb = elb ? std::min(xlb, c) : c;
        elb = true;
      } else {
        lb = any_lb ? std::min(lb, c) : c;
        any_lb = true;
      }
    }
    if (!lb_marker) {
      int64_t c = hi + t.lb + t.extent;
      if (t.explicit_ub) {
        xub = eub ? std::max(xub, c) : c;
        eub = true;
      } else {
        ub = any_ub ? std::max(ub, c) : c;
        any_ub = true;
      }
    }
    if (t.size > 0) {
      int64_t a = lo + t.true_lb, b = hi + t.true_lb + t.true_extent;
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
    int64_t l = elb ? xlb : (any_lb ? lb : 0);
    int64_t u = eub ? xub : (any_ub ? ub : 0);  // {(LB,10)} alone: ub 0, extent -10 (as MPICH)
    if (pad && !eub && !elb && align > 1) {
      int64_t e = u - l;
      int64_t r = ((e % align) + align) % align;
      if (r) u += align - r;
    }
    out.lb = l;
    out.extent = u - l;
    out.explicit_lb = elb;
    out.explicit_ub = eub;
    out.true_lb = tany ? tlb : 0;
    out.true_extent = tany ? tub - tlb : 0;
    out.align = align;
    out.basic = mixed ? Basic::kNone : basic;
  }
};

void finish_type(Datatype& out, std::shared_ptr<const Layout> layout) {
  out.layout = std::move(layout);
  out.size = out.layout->size;
  const Layout& l = *out.layout;
  out.contiguous = out.size == 0 || (l.dense && l.dense_at == out.true_lb && out.extent == out.size);
}

// Positions i*s for i in [0, n): the smallest and the largest.
inline int64_t lo_of(int64_t n, int64_t s) { return std::min<int64_t>(0, (n - 1) * s); }
inline int64_t hi_of(int64_t n, int64_t s) { return std::max<int64_t>(0, (n - 1) * s); }

}  // namespace

// ---------------------------------------------------------------- constructors

void make_contiguous(Datatype& out, int64_t count, const Datatype& old) { make_vector(out, count, 1, old.extent, old); }

void make_vector(Datatype& out, int64_t count, int64_t blocklength, int64_t stride_bytes, const Datatype& old) {
  Bounds b;
  LayoutBuilder l;
  if (count > 0 && blocklength > 0) {
    b.add(lo_of(count, stride_bytes) + lo_of(blocklength, old.extent),
          hi_of(count, stride_bytes) + hi_of(blocklength, old.extent), old);
    if (blocklength == 1) {
      l.add(0, count, stride_bytes, old.layout);
    } else {
      LayoutBuilder block;
      block.add(0, blocklength, old.extent, old.layout);
      l.add(0, count, stride_bytes, block.finish());
    }
  } else {
    b.basic = old.basic;
    b.basic_set = true;
  }
  b.store(out, false);
  finish_type(out, l.finish());
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
  LayoutBuilder l;
  for (int64_t i = 0; i < count; ++i) {
    const Datatype& t = *types[i];
    int64_t n = blocklengths[i];
    if (n <= 0) continue;
    b.add(disps[i] + lo_of(n, t.extent), disps[i] + hi_of(n, t.extent), t);
    l.add(disps[i], n, t.extent, t.layout);
  }
  b.store(out, is_struct);
  finish_type(out, l.finish());
}

void make_resized(Datatype& out, const Datatype& old, int64_t lb, int64_t extent) {
  out.basic = old.basic;
  out.lb = lb;
  out.extent = extent;
  out.explicit_lb = out.explicit_ub = true;
  out.true_lb = old.true_lb;
  out.true_extent = old.true_extent;
  out.align = old.align;
  finish_type(out, old.layout);
}

void make_subarray(Datatype& out, int ndims, const int* sizes, const int* subsizes, const int* starts, bool fortran,
                   const Datatype& old) {
  // Fastest-varying dimension first: the last in C order, the first in Fortran's.
  auto dim = [&](int k) { return fortran ? k : ndims - 1 - k; };
  Datatype t;
  make_contiguous(t, subsizes[dim(0)], old);
  int64_t step = int64_t(sizes[dim(0)]) * old.extent;  // bytes per index of the next dimension
  int64_t disp = int64_t(starts[dim(0)]) * old.extent;
  for (int k = 1; k < ndims; ++k) {
    Datatype next;
    make_vector(next, subsizes[dim(k)], 1, step, t);
    t = std::move(next);
    disp += int64_t(starts[dim(k)]) * step;
    step *= sizes[dim(k)];
  }
  Datatype placed;
  int64_t one = 1;
  make_hindexed(placed, 1, &one, &disp, t);
  make_resized(out, placed, 0, step);
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
  int64_t step = old.extent;  // bytes per index of the current dimension
  for (int k = 0; k < ndims; ++k) {
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
      disps.push_back(first * step);
    } else {  // MPI_DISTRIBUTE_CYCLIC
      int64_t blk = dargs[d] < 0 ? 1 : dargs[d];
      if (blk <= 0) return false;
      for (int64_t first = c * blk; first < g; first += p * blk) {
        lens.push_back(std::min(blk, g - first));
        disps.push_back(first * step);
      }
    }
    Datatype unit;
    make_resized(unit, t, 0, step);
    Datatype next;
    make_hindexed(next, int64_t(lens.size()), lens.data(), disps.data(), unit);
    t = std::move(next);
    step *= g;
  }
  make_resized(out, t, 0, step);
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
  if (t.size == 0) return 0;
  uint64_t whole = bytes / uint64_t(t.size), rest = bytes % uint64_t(t.size);
  int64_t part = rest ? partial_elements(*t.layout, rest) : 0;
  if (part < 0) return -1;
  return int64_t(whole) * t.layout->elements + part;
}

}  // namespace sonde::engine
