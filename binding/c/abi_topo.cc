// C ABI: process topologies (MPI 4.1 chapter 8): Cartesian, graph and
// distributed-graph communicators and their queries, MPI_Dims_create.
//
// Reordering is never done (reorder is allowed to be ignored): a process
// keeps its rank in the new communicator. Constructors build the new
// communicator with split_comm, so it gets a fresh context and no
// attributes, then attach an immutable Topology (comm/topo.h).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "binding/c/abi.h"
#include "coll/coll.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "comm/topo.h"

using namespace sonde::engine;

namespace {

// The communicator members [0, nnodes) of c form, with topology t; the
// others get MPI_COMM_NULL. Collective over c.
int make_topology_comm(Comm* c, int nnodes, std::shared_ptr<Topology> t, MPI_Comm* out) {
  Comm* n = nullptr;
  int rc = split_comm(c, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, &n);
  if (rc) return rc;
  if (n) n->topo = std::move(t);
  *out = n ? n->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}

// The topology of comm if it is of `kind`. Sets *rc to the error class
// otherwise (MPI_ERR_COMM for a bad handle, MPI_ERR_TOPOLOGY for a missing
// or different topology) and returns null.
const Topology* topology_of(MPI_Comm comm, int kind, Comm** c, int* rc) {
  *c = find_comm(comm);
  if (!*c) {
    *rc = MPI_ERR_COMM;
    return nullptr;
  }
  const Topology* t = (*c)->topo.get();
  if (!t || t->kind != kind) {
    *rc = MPI_ERR_TOPOLOGY;
    return nullptr;
  }
  return t;
}

bool valid_weights(const int* w, int n) {
  if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) return true;
  if (n > 0 && w == nullptr) return false;
  for (int i = 0; i < n; ++i)
    if (w[i] < 0) return false;
  return true;
}

bool ranks_in_range(const int* r, int n, int size) {
  if (n > 0 && r == nullptr) return false;
  for (int i = 0; i < n; ++i)
    if (r[i] < 0 || r[i] >= size) return false;
  return true;
}

// Cartesian arguments shared by Cart_create and Cart_map.
int check_cart_args(Comm* c, int ndims, const int* dims, const int* periods, int* nnodes) {
  if (ndims < 0) return MPI_ERR_DIMS;
  if (ndims > 0 && (dims == nullptr || periods == nullptr)) return MPI_ERR_ARG;
  int64_t n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return MPI_ERR_DIMS;
    n *= dims[i];
    if (n > c->size) return MPI_ERR_TOPOLOGY;  // more places than processes
  }
  *nnodes = int(n);
  return MPI_SUCCESS;
}

// Graph arguments shared by Graph_create and Graph_map.
int check_graph_args(Comm* c, int nnodes, const int* index, const int* edges) {
  if (nnodes < 0) return MPI_ERR_ARG;
  if (nnodes > c->size) return MPI_ERR_TOPOLOGY;
  if (nnodes > 0 && index == nullptr) return MPI_ERR_ARG;
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev) return MPI_ERR_ARG;
    prev = index[i];
  }
  return ranks_in_range(edges, prev, nnodes) ? MPI_SUCCESS : MPI_ERR_ARG;
}

}  // namespace

extern "C" {

namespace {
int unweighted_mark = 0;
int weights_empty_mark = 0;
}  // namespace
int* const MPI_UNWEIGHTED = &unweighted_mark;
int* const MPI_WEIGHTS_EMPTY = &weights_empty_mark;

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  SONDE_ENTER("MPI_Dims_create");
  return finish(nullptr, dims_create(nnodes, ndims, dims), fn);
}
SONDE_WEAK_ALIAS(Dims_create)

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm* comm_cart) {
  SONDE_ENTER("MPI_Cart_create");
  (void)reorder;
  Comm* c = find_comm(comm_old);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!comm_cart) return raise(c, MPI_ERR_ARG, fn);
  int nnodes = 0;
  int rc = check_cart_args(c, ndims, dims, periods, &nnodes);
  if (rc) return raise(c, rc, fn);
  auto t = std::make_shared<Topology>();
  t->kind = MPI_CART;
  t->dims.assign(dims, dims + ndims);
  for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] ? 1 : 0);
  rc = make_topology_comm(c, nnodes, std::move(t), comm_cart);
  return finish(find_comm(comm_old), rc, fn);
}
SONDE_WEAK_ALIAS(Cart_create)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Cart_sub");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!newcomm || (!t->dims.empty() && !remain_dims)) return raise(c, MPI_ERR_ARG, fn);
  std::vector<int> coords(t->dims.size());
  cart_coords(*t, c->rank, coords.data());
  // Processes agreeing on the dropped coordinates share a new communicator;
  // their order by the old rank is the row-major order of the kept ones.
  auto sub = std::make_shared<Topology>();
  sub->kind = MPI_CART;
  int color = 0;
  for (size_t i = 0; i < t->dims.size(); ++i) {
    if (remain_dims[i]) {
      sub->dims.push_back(t->dims[i]);
      sub->periods.push_back(t->periods[i]);
    } else {
      color = color * t->dims[i] + coords[i];
    }
  }
  if (sub->dims.empty()) {
    // Nothing kept: a zero-dimensional grid, which has one process, as if
    // made by MPI_Cart_create with ndims 0 (rank 0 alone, the others get
    // MPI_COMM_NULL), as MPICH answers.
    rc = make_topology_comm(c, 1, std::move(sub), newcomm);
    return finish(find_comm(comm), rc, fn);
  }
  Comm* n = nullptr;
  rc = split_comm(c, color, c->rank, &n);
  if (rc) return raise(find_comm(comm), rc, fn);
  n->topo = std::move(sub);
  *newcomm = n->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_sub)

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  SONDE_ENTER("MPI_Cartdim_get");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!ndims) return raise(c, MPI_ERR_ARG, fn);
  *ndims = int(t->dims.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  SONDE_ENTER("MPI_Cart_get");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  int n = int(t->dims.size());
  if (maxdims < 0) return raise(c, MPI_ERR_ARG, fn);
  if (n > 0 && (!dims || !periods || !coords)) return raise(c, MPI_ERR_ARG, fn);
  std::vector<int> mine(size_t(n), 0);
  cart_coords(*t, c->rank, mine.data());
  for (int i = 0; i < n && i < maxdims; ++i) {
    dims[i] = t->dims[size_t(i)];
    periods[i] = t->periods[size_t(i)];
    coords[i] = mine[size_t(i)];
  }
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  SONDE_ENTER("MPI_Cart_rank");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!rank || (!t->dims.empty() && !coords)) return raise(c, MPI_ERR_ARG, fn);
  if (!cart_rank(*t, coords, rank)) return raise(c, MPI_ERR_ARG, fn);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  SONDE_ENTER("MPI_Cart_coords");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (rank < 0 || rank >= c->size) return raise(c, MPI_ERR_RANK, fn);
  int n = int(t->dims.size());
  if (maxdims < n || (n > 0 && !coords)) return raise(c, MPI_ERR_ARG, fn);
  cart_coords(*t, rank, coords);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  SONDE_ENTER("MPI_Cart_shift");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_CART, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!rank_source || !rank_dest) return raise(c, MPI_ERR_ARG, fn);
  if (direction < 0 || direction >= int(t->dims.size())) return raise(c, MPI_ERR_ARG, fn);
  cart_shift(*t, c->rank, direction, disp, rank_source, rank_dest);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_shift)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  SONDE_ENTER("MPI_Cart_map");
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!newrank) return raise(c, MPI_ERR_ARG, fn);
  int nnodes = 0;
  int rc = check_cart_args(c, ndims, dims, periods, &nnodes);
  if (rc) return raise(c, rc, fn);
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Cart_map)

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm* comm_graph) {
  SONDE_ENTER("MPI_Graph_create");
  (void)reorder;
  Comm* c = find_comm(comm_old);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!comm_graph) return raise(c, MPI_ERR_ARG, fn);
  int rc = check_graph_args(c, nnodes, index, edges);
  if (rc) return raise(c, rc, fn);
  auto t = std::make_shared<Topology>();
  t->kind = MPI_GRAPH;
  t->index.assign(index, index + nnodes);
  if (nnodes > 0) t->edges.assign(edges, edges + index[nnodes - 1]);
  rc = make_topology_comm(c, nnodes, std::move(t), comm_graph);
  return finish(find_comm(comm_old), rc, fn);
}
SONDE_WEAK_ALIAS(Graph_create)

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  SONDE_ENTER("MPI_Graphdims_get");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!nnodes || !nedges) return raise(c, MPI_ERR_ARG, fn);
  *nnodes = int(t->index.size());
  *nedges = int(t->edges.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  SONDE_ENTER("MPI_Graph_get");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
    return raise(c, MPI_ERR_ARG, fn);
  for (int i = 0; i < maxindex && i < int(t->index.size()); ++i) index[i] = t->index[size_t(i)];
  for (int i = 0; i < maxedges && i < int(t->edges.size()); ++i) edges[i] = t->edges[size_t(i)];
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  SONDE_ENTER("MPI_Graph_neighbors_count");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (rank < 0 || rank >= int(t->index.size())) return raise(c, MPI_ERR_RANK, fn);
  if (!nneighbors) return raise(c, MPI_ERR_ARG, fn);
  std::vector<int> in, out;
  topo_neighbors(*t, rank, &in, &out);
  *nneighbors = int(out.size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  SONDE_ENTER("MPI_Graph_neighbors");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (rank < 0 || rank >= int(t->index.size())) return raise(c, MPI_ERR_RANK, fn);
  if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors)) return raise(c, MPI_ERR_ARG, fn);
  std::vector<int> in, out;
  topo_neighbors(*t, rank, &in, &out);
  for (int i = 0; i < maxneighbors && i < int(out.size()); ++i) neighbors[i] = out[size_t(i)];
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Graph_neighbors)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  SONDE_ENTER("MPI_Graph_map");
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!newrank) return raise(c, MPI_ERR_ARG, fn);
  int rc = check_graph_args(c, nnodes, index, edges);
  if (rc) return raise(c, rc, fn);
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Graph_map)

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm* comm_dist_graph) {
  SONDE_ENTER("MPI_Dist_graph_create_adjacent");
  (void)info;  // no hints are used
  (void)reorder;
  Comm* c = find_comm(comm_old);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (!comm_dist_graph || indegree < 0 || outdegree < 0) return raise(c, MPI_ERR_ARG, fn);
  if (!ranks_in_range(sources, indegree, c->size) || !ranks_in_range(destinations, outdegree, c->size))
    return raise(c, MPI_ERR_RANK, fn);
  if (!valid_weights(sourceweights, indegree) || !valid_weights(destweights, outdegree))
    return raise(c, MPI_ERR_ARG, fn);
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->sources.assign(sources, sources + indegree);
  t->destinations.assign(destinations, destinations + outdegree);
  t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  if (t->weighted) {
    if (indegree > 0) t->source_weights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) t->destination_weights.assign(destweights, destweights + outdegree);
  }
  int rc = make_topology_comm(c, c->size, std::move(t), comm_dist_graph);
  return finish(find_comm(comm_old), rc, fn);
}
SONDE_WEAK_ALIAS(Dist_graph_create_adjacent)

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  SONDE_ENTER("MPI_Dist_graph_create");
  (void)info;
  (void)reorder;
  Comm* c = find_comm(comm_old);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  // Every process's edges go to every process (construction is rare); a
  // local argument error travels with them so that all return it together
  // instead of some waiting forever.
  int local_error = MPI_SUCCESS;
  std::vector<int> triples;  // (source, destination, weight) per edge
  if (!comm_dist_graph || n < 0 || (n > 0 && (!sources || !degrees))) {
    local_error = MPI_ERR_ARG;
  } else {
    int64_t edges = 0;
    for (int i = 0; i < n && !local_error; ++i) {
      if (degrees[i] < 0) local_error = MPI_ERR_ARG;
      else if (sources[i] < 0 || sources[i] >= c->size) local_error = MPI_ERR_RANK;
      edges += degrees[i];
    }
    if (!local_error && !ranks_in_range(destinations, int(edges), c->size)) local_error = MPI_ERR_RANK;
    if (!local_error && !valid_weights(weights, int(edges))) local_error = MPI_ERR_ARG;
    bool weighted = weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY;
    for (int i = 0, e = 0; i < n && !local_error; ++i) {
      for (int j = 0; j < degrees[i]; ++j, ++e) {
        triples.insert(triples.end(), {sources[i], destinations[e], weighted ? weights[e] : 1});
      }
    }
  }
  if (local_error) triples.clear();
  Datatype* ints = find_datatype(MPI_INT);
  int head[2] = {local_error, int(triples.size())};
  std::vector<int> heads(size_t(2 * c->size));
  int rc = coll::allgather(head, 2, ints, heads.data(), 2, ints, c);
  if (rc) return raise(c, rc, fn);
  int longest = 0;
  for (int p = 0; p < c->size; ++p) {
    if (heads[size_t(2 * p)] != MPI_SUCCESS) return raise(c, heads[size_t(2 * p)], fn);
    longest = std::max(longest, heads[size_t(2 * p + 1)]);
  }
  triples.resize(size_t(longest), -1);
  std::vector<int> all(size_t(longest) * size_t(c->size));
  rc = coll::allgather(triples.data(), longest, ints, all.data(), longest, ints, c);
  if (rc) return raise(c, rc, fn);
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->weighted = weights != MPI_UNWEIGHTED;
  for (int p = 0; p < c->size; ++p) {
    const int* e = &all[size_t(p) * size_t(longest)];
    for (int k = 0; k < heads[size_t(2 * p + 1)]; k += 3) {
      if (e[k + 1] == c->rank) {
        t->sources.push_back(e[k]);
        if (t->weighted) t->source_weights.push_back(e[k + 2]);
      }
      if (e[k] == c->rank) {
        t->destinations.push_back(e[k + 1]);
        if (t->weighted) t->destination_weights.push_back(e[k + 2]);
      }
    }
  }
  rc = make_topology_comm(c, c->size, std::move(t), comm_dist_graph);
  return finish(find_comm(comm_old), rc, fn);
}
SONDE_WEAK_ALIAS(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  SONDE_ENTER("MPI_Dist_graph_neighbors_count");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_DIST_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (!indegree || !outdegree || !weighted) return raise(c, MPI_ERR_ARG, fn);
  *indegree = int(t->sources.size());
  *outdegree = int(t->destinations.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[]) {
  SONDE_ENTER("MPI_Dist_graph_neighbors");
  Comm* c;
  int rc;
  const Topology* t = topology_of(comm, MPI_DIST_GRAPH, &c, &rc);
  if (!t) return raise(c, rc, fn);
  if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) || (maxoutdegree > 0 && !destinations))
    return raise(c, MPI_ERR_ARG, fn);
  auto copy = [](const std::vector<int>& from, int max, int* to) {
    for (int i = 0; i < max && i < int(from.size()); ++i) to[i] = from[size_t(i)];
  };
  copy(t->sources, maxindegree, sources);
  copy(t->destinations, maxoutdegree, destinations);
  auto wanted = [](int* w) { return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY && w != nullptr; };
  if (t->weighted && wanted(sourceweights)) copy(t->source_weights, maxindegree, sourceweights);
  if (t->weighted && wanted(destweights)) copy(t->destination_weights, maxoutdegree, destweights);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Dist_graph_neighbors)

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  SONDE_ENTER("MPI_Topo_test");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!status) return raise(c, MPI_ERR_ARG, fn);
  *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Topo_test)

}  // extern "C"
