#include "comm/topo.h"

#include <cmath>
#include <cstdint>

#include "include/mpi.h"

namespace sonde::engine {

int Topology::cart_size() const {
  int n = 1;
  for (int d : dims) n *= d;
  return n;
}

namespace {

// r^k <= x, without overflow.
bool power_at_most(int64_t r, int k, int64_t x) {
  int64_t p = 1;
  for (int i = 0; i < k; ++i) {
    if (p > x / r) return false;
    p *= r;
  }
  return p <= x;
}

// Smallest r >= 1 with r^k >= x.
int64_t root_ceil(int64_t x, int k) {
  if (x <= 1 || k <= 0) return 1;
  auto r = int64_t(std::pow(double(x), 1.0 / k));
  if (r < 1) r = 1;
  while (r > 1 && !power_at_most(r - 1, k, x - 1)) --r;  // while (r-1)^k >= x
  while (power_at_most(r, k, x - 1)) ++r;                // while r^k < x
  return r;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;  // ascending
}

// Branch and bound over factorizations f1 <= f2 <= ... <= fk of n, larger
// candidates first at every position: the first factorization found with a
// given balance (fk - f1) is the lexicographically largest one with it, so
// only strictly better ones replace it.
struct BalancedSearch {
  std::vector<int64_t> divs;
  std::vector<int64_t> cur, best;
  int64_t best_balance = -1;

  void run(int64_t rem, int left, int64_t lo) {
    if (left == 1) {
      if (rem < lo) return;
      int64_t balance = rem - (cur.empty() ? rem : cur.front());
      if (best_balance < 0 || balance < best_balance) {
        best = cur;
        best.push_back(rem);
        best_balance = balance;
      }
      return;
    }
    for (auto it = divs.rbegin(); it != divs.rend(); ++it) {
      int64_t d = *it;
      if (d < lo) break;
      if (rem % d != 0 || !power_at_most(d, left, rem)) continue;
      int64_t smallest = cur.empty() ? d : cur.front();
      // The largest factor is at least the (left-1)th root of what remains.
      if (best_balance >= 0 && root_ceil(rem / d, left - 1) - smallest >= best_balance) continue;
      cur.push_back(d);
      run(rem / d, left - 1, d);
      cur.pop_back();
    }
  }
};

}  // namespace

int dims_create(int nnodes, int ndims, int* dims) {
  if (ndims < 0) return MPI_ERR_DIMS;
  if (ndims > 0 && dims == nullptr) return MPI_ERR_ARG;
  if (nnodes < 1) return MPI_ERR_ARG;
  int64_t fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return MPI_ERR_DIMS;
    if (dims[i] == 0) {
      ++free_dims;
    } else {
      fixed *= dims[i];
      if (fixed > nnodes) return MPI_ERR_DIMS;
    }
  }
  if (nnodes % fixed != 0) return MPI_ERR_DIMS;
  if (free_dims == 0) return MPI_SUCCESS;
  int64_t rest = nnodes / fixed;
  BalancedSearch s;
  s.divs = divisors(rest);
  s.run(rest, free_dims, 1);
  // s.best is ascending; the free entries get it in non-increasing order.
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] != 0) continue;
    dims[i] = int(s.best.back());
    s.best.pop_back();
  }
  return MPI_SUCCESS;
}

bool cart_rank(const Topology& t, const int* coords, int* rank) {
  int r = 0;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    int d = t.dims[i], c = coords[i];
    if (t.periods[i]) {
      c %= d;
      if (c < 0) c += d;
    } else if (c < 0 || c >= d) {
      return false;
    }
    r = r * d + c;
  }
  *rank = r;
  return true;
}

void cart_coords(const Topology& t, int rank, int* coords) {
  for (size_t i = t.dims.size(); i-- > 0;) {
    coords[i] = rank % t.dims[i];
    rank /= t.dims[i];
  }
}

void cart_shift(const Topology& t, int rank, int direction, int disp, int* source, int* dest) {
  std::vector<int> c(t.dims.size());
  cart_coords(t, rank, c.data());
  int here = c[size_t(direction)];
  auto at = [&](int64_t coord) {
    int64_t d = t.dims[size_t(direction)];
    if (t.periods[size_t(direction)]) {
      coord %= d;
      if (coord < 0) coord += d;
    } else if (coord < 0 || coord >= d) {
      return int(MPI_PROC_NULL);
    }
    c[size_t(direction)] = int(coord);
    int r = 0;
    cart_rank(t, c.data(), &r);
    return r;
  };
  *source = at(int64_t(here) - disp);
  *dest = at(int64_t(here) + disp);
}

void topo_neighbors(const Topology& t, int rank, std::vector<int>* in, std::vector<int>* out) {
  in->clear();
  out->clear();
  if (t.kind == MPI_CART) {
    for (size_t i = 0; i < t.dims.size(); ++i) {
      int below, above;
      cart_shift(t, rank, int(i), 1, &below, &above);
      in->push_back(below);
      in->push_back(above);
    }
    *out = *in;
  } else if (t.kind == MPI_GRAPH) {
    int first = rank == 0 ? 0 : t.index[size_t(rank) - 1];
    out->assign(t.edges.begin() + first, t.edges.begin() + t.index[size_t(rank)]);
    *in = *out;
  } else if (t.kind == MPI_DIST_GRAPH) {
    *in = t.sources;
    *out = t.destinations;
  }
}

}  // namespace sonde::engine
