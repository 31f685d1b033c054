// Topology arithmetic (comm/topo.h) against hand-computed answers.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <vector>

#include "comm/topo.h"
#include "include/mpi.h"

using sonde::engine::Topology;

namespace {

std::vector<int> dims_of(int nnodes, std::vector<int> dims) {
  REQUIRE(sonde::engine::dims_create(nnodes, int(dims.size()), dims.data()) == MPI_SUCCESS);
  return dims;
}

Topology cart(std::vector<int> dims, std::vector<int> periods) {
  Topology t;
  t.kind = MPI_CART;
  t.dims = std::move(dims);
  t.periods = std::move(periods);
  return t;
}

}  // namespace

TEST_CASE("Dims_create picks the most balanced decomposition, largest first") {
  CHECK(dims_of(12, {0, 0}) == std::vector<int>{4, 3});
  CHECK(dims_of(72, {0, 0}) == std::vector<int>{9, 8});  // greedy prime dealing gives 12 x 6
  CHECK(dims_of(100, {0, 0, 0}) == std::vector<int>{5, 5, 4});
  CHECK(dims_of(1000000000, {0, 0, 0}) == std::vector<int>{1000, 1000, 1000});
  CHECK(dims_of(7, {0, 0, 0}) == std::vector<int>{7, 1, 1});
  CHECK(dims_of(1, {0, 0}) == std::vector<int>{1, 1});
  // Equal spread (max - min): the ascending list that is largest wins.
  CHECK(dims_of(8208, {0, 0, 0, 0}) == std::vector<int>{19, 9, 8, 6});  // not 19 x 12 x 6 x 6
  CHECK(dims_of(712656, {0, 0, 0, 0, 0}) == std::vector<int>{101, 14, 9, 8, 7});
}

TEST_CASE("Dims_create keeps given entries and fills around them") {
  CHECK(dims_of(24, {0, 3, 0}) == std::vector<int>{4, 3, 2});
  CHECK(dims_of(16, {1, 0, 0, 2}) == std::vector<int>{1, 4, 2, 2});
  CHECK(dims_of(6, {2, 3}) == std::vector<int>{2, 3});
  int none = 0;
  CHECK(sonde::engine::dims_create(1, 0, &none) == MPI_SUCCESS);
  CHECK(sonde::engine::dims_create(1, 0, nullptr) == MPI_SUCCESS);
}

TEST_CASE("Dims_create refuses what cannot be decomposed") {
  std::vector<int> d{0, 5};
  CHECK(sonde::engine::dims_create(12, 2, d.data()) == MPI_ERR_DIMS);  // 5 does not divide 12
  d = {-1, 0};
  CHECK(sonde::engine::dims_create(12, 2, d.data()) == MPI_ERR_DIMS);
  d = {0, 0};
  CHECK(sonde::engine::dims_create(0, 2, d.data()) == MPI_ERR_ARG);
  CHECK(sonde::engine::dims_create(4, -1, d.data()) == MPI_ERR_DIMS);
  CHECK(sonde::engine::dims_create(4, 2, nullptr) == MPI_ERR_ARG);
}

TEST_CASE("Cartesian ranks are row-major; periodic dimensions wrap") {
  Topology t = cart({2, 3}, {0, 1});
  CHECK(t.cart_size() == 6);
  int c[2], r = -1;
  sonde::engine::cart_coords(t, 5, c);
  CHECK((c[0] == 1 && c[1] == 2));
  int in[2] = {1, 4};  // 4 wraps to 1 in the periodic dimension
  CHECK(sonde::engine::cart_rank(t, in, &r));
  CHECK(r == 4);
  int out[2] = {2, 0};  // the non-periodic dimension does not wrap
  CHECK_FALSE(sonde::engine::cart_rank(t, out, &r));
  int src, dst;
  sonde::engine::cart_shift(t, 0, 1, 1, &src, &dst);  // (0,0): periodic along dim 1
  CHECK((src == 2 && dst == 1));
  sonde::engine::cart_shift(t, 0, 0, 1, &src, &dst);  // edge of dim 0
  CHECK((src == MPI_PROC_NULL && dst == 3));
  sonde::engine::cart_shift(t, 4, 1, -7, &src, &dst);  // (1,1) - (-7) = (1,8) -> (1,2)
  CHECK((src == 5 && dst == 3));
  CHECK(cart({}, {}).cart_size() == 1);
}

TEST_CASE("neighbour lists in neighbourhood-collective order") {
  std::vector<int> in, out;
  sonde::engine::topo_neighbors(cart({3, 2}, {0, 1}), 2, &in, &out);  // (1,0)
  CHECK(in == std::vector<int>{0, 4, 3, 3});
  CHECK(out == in);
  Topology g;
  g.kind = MPI_GRAPH;
  g.index = {2, 3, 4};
  g.edges = {1, 2, 0, 0};
  sonde::engine::topo_neighbors(g, 0, &in, &out);
  CHECK(out == std::vector<int>{1, 2});
  sonde::engine::topo_neighbors(g, 2, &in, &out);
  CHECK(out == std::vector<int>{0});
  Topology d;
  d.kind = MPI_DIST_GRAPH;
  d.sources = {3, 1};
  d.destinations = {2};
  sonde::engine::topo_neighbors(d, 0, &in, &out);
  CHECK((in == std::vector<int>{3, 1} && out == std::vector<int>{2}));
}
