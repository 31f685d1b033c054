// Process topologies (MPI 4.1 chapter 8): the Cartesian, graph and
// distributed-graph structure a communicator may carry, and the arithmetic
// on it. Pure functions with no engine state; the MPI calls that build and
// query topologies are in binding/c/abi_topo.cc.
//
// A communicator's topology is immutable once made and shared by its
// duplicates (Comm::topo), as MPI_Comm_dup must keep it.
#pragma once

#include <vector>

namespace sonde::engine {

struct Topology {
  int kind = 0;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
  // MPI_CART: extent and periodicity (0/1) per dimension; ranks are numbered
  // in row-major order of the coordinates. Zero dimensions is legal (size 1).
  std::vector<int> dims;
  std::vector<int> periods;
  // MPI_GRAPH: the whole graph, as given to MPI_Graph_create.
  std::vector<int> index;
  std::vector<int> edges;
  // MPI_DIST_GRAPH: this process's adjacency only. The weight vectors are
  // empty when the graph was made MPI_UNWEIGHTED.
  std::vector<int> sources;
  std::vector<int> source_weights;
  std::vector<int> destinations;
  std::vector<int> destination_weights;
  bool weighted = false;

  int cart_size() const;  // product of dims (1 for zero dimensions)
};

// MPI_Dims_create: fills the zero entries of dims[0..ndims) so that the
// product of all entries is nnodes. Among all ways to do so it picks the
// most balanced one, as MPICH does: the smallest difference between the
// largest and the smallest of the filled entries, then (among equals) the
// one whose filled entries, sorted ascending, are lexicographically
// largest; filled entries appear in non-increasing order. Returns
// MPI_ERR_DIMS for a negative entry or when the given entries do not divide
// nnodes, MPI_ERR_ARG for nnodes < 1 (except nnodes 1 with ndims 0).
int dims_create(int nnodes, int ndims, int* dims);

// Rank of `coords` in a Cartesian topology: periodic dimensions wrap,
// non-periodic ones must be in range. Returns false for out of range.
bool cart_rank(const Topology& t, const int* coords, int* rank);
// Coordinates of `rank` (0 <= rank < cart_size()), ndims entries.
void cart_coords(const Topology& t, int rank, int* coords);
// MPI_Cart_shift: the ranks `disp` steps below and above `rank` along
// `direction`; MPI_PROC_NULL past a non-periodic edge.
void cart_shift(const Topology& t, int rank, int direction, int disp, int* source, int* dest);

// The neighbours of `rank` in the order neighbourhood collectives use them
// (MPI 4.1 section 8.6): Cartesian: for each dimension, the -1 then the +1
// neighbour (MPI_PROC_NULL at a non-periodic edge), for both lists; graph:
// the rank's edges, for both lists; distributed graph: sources and
// destinations as given.
void topo_neighbors(const Topology& t, int rank, std::vector<int>* in, std::vector<int>* out);

}  // namespace sonde::engine
