// C ABI: datatypes (the subset of the foundation) and communicators.
#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "engine/abi.h"
#include "engine/engine.h"
#include "engine/p2p.h"
#include "peruse/registry.h"

using namespace sonde::engine;

namespace {

int copy_name(const std::string& name, char* out, int* resultlen) {
  int n = int(std::min<size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1));
  std::memcpy(out, name.data(), size_t(n));
  out[n] = '\0';
  *resultlen = n;
  return MPI_SUCCESS;
}

int new_datatype(Datatype** out, MPI_Datatype* handle) {
  Datatype* t = nullptr;
  int h = engine().datatypes.allocate(&t);
  if (!h) return MPI_ERR_INTERN;
  *t = Datatype{};
  t->handle = h;
  *out = t;
  *handle = h;
  return MPI_SUCCESS;
}

// Everyone's `n` ints, in rank order (linear through rank 0: communicator
// construction is rare and this keeps the code obvious).
int allgather_ints(Comm* c, const int* mine, int n, std::vector<int>& all) {
  Datatype* int_t = find_datatype(MPI_INT);
  all.assign(size_t(n) * size_t(c->size), 0);
  int tag = collective_tag(kTagKindCommSplit);
  int rc;
  if (c->rank == 0) {
    std::copy(mine, mine + n, all.begin());
    for (int p = 1; p < c->size; ++p) {
      rc = recv(&all[size_t(p) * size_t(n)], n, int_t, p, tag, c, MPI_STATUS_IGNORE);
      if (rc) return rc;
    }
    for (int p = 1; p < c->size; ++p) {
      rc = send(all.data(), int64_t(all.size()), int_t, p, tag, c);
      if (rc) return rc;
    }
    return MPI_SUCCESS;
  }
  rc = send(mine, n, int_t, 0, tag, c);
  if (rc) return rc;
  return recv(all.data(), int64_t(all.size()), int_t, 0, tag, c, MPI_STATUS_IGNORE);
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------- datatypes

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_contiguous");
  if (count < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Datatype* t;
  int rc = new_datatype(&t, newtype);
  if (rc) return raise(nullptr, rc, fn);
  make_contiguous(*t, count, *find_datatype(oldtype));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_contiguous)

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SONDE_ENTER("MPI_Type_vector");
  if (count < 0 || blocklength < 0) return raise(nullptr, MPI_ERR_COUNT, fn);
  if (!newtype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* old = find_datatype(oldtype);
  if (!old) return raise(nullptr, MPI_ERR_TYPE, fn);
  Datatype* t;
  int rc = new_datatype(&t, newtype);
  if (rc) return raise(nullptr, rc, fn);
  old = find_datatype(oldtype);  // the table may have grown
  make_vector(*t, count, blocklength, int64_t(stride) * old->extent, *old);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_vector)

int PMPI_Type_commit(MPI_Datatype* datatype) {
  SONDE_ENTER("MPI_Type_commit");
  if (!datatype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(*datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  t->committed = true;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype* datatype) {
  SONDE_ENTER("MPI_Type_free");
  if (!datatype) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(*datatype);
  if (!t || t->predefined) return raise(nullptr, MPI_ERR_TYPE, fn);
  engine().datatypes.release(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_free)

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  SONDE_ENTER("MPI_Type_size");
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->size > std::numeric_limits<int>::max() ? MPI_UNDEFINED : int(t->size);
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_size)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  SONDE_ENTER("MPI_Type_size_x");
  if (!size) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *size = t->size;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_size_x)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  SONDE_ENTER("MPI_Type_get_extent");
  if (!lb || !extent) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_get_extent)

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  SONDE_ENTER("MPI_Type_get_name");
  if (!type_name || !resultlen) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  return copy_name(t->name, type_name, resultlen);
}
SONDE_WEAK_ALIAS(Type_get_name)

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  SONDE_ENTER("MPI_Type_set_name");
  if (!type_name) return raise(nullptr, MPI_ERR_ARG, fn);
  Datatype* t = find_datatype(datatype);
  if (!t) return raise(nullptr, MPI_ERR_TYPE, fn);
  t->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Type_set_name)

// ---------------------------------------------------------------- communicators

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  SONDE_ENTER("MPI_Comm_size");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!size) return raise(c, MPI_ERR_ARG, fn);
  *size = c->size;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  SONDE_ENTER("MPI_Comm_rank");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!rank) return raise(c, MPI_ERR_ARG, fn);
  *rank = c->rank;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_rank)

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_dup");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  Engine& e = engine();
  uint32_t context;
  int rc = e.allocate_context(c, &context);
  if (rc) return raise(c, rc, fn);
  c = find_comm(comm);
  Comm* out;
  rc = e.create_comm(c, c->world, c->rank, context, &out, /*duplicate=*/true);
  if (rc) return raise(c, rc, fn);
  *newcomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_dup)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_split");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  if (color < 0 && color != MPI_UNDEFINED) return raise(c, MPI_ERR_ARG, fn);
  Engine& e = engine();
  int mine[2] = {color, key};
  std::vector<int> all;
  int rc = allgather_ints(c, mine, 2, all);
  if (rc) return raise(c, rc, fn);
  uint32_t context;
  rc = e.allocate_context(c, &context);
  if (rc) return raise(c, rc, fn);
  c = find_comm(comm);
  if (color == MPI_UNDEFINED) {
    // We took the id like everyone else; it stays free for us.
    e.free_contexts[context / 64] |= uint64_t(1) << (context % 64);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  // Members of my color ordered by (key, rank in the parent).
  std::vector<std::tuple<int, int>> members;
  for (int p = 0; p < c->size; ++p)
    if (all[size_t(2 * p)] == color) members.emplace_back(all[size_t(2 * p + 1)], p);
  std::stable_sort(members.begin(), members.end());
  std::vector<int> world;
  int my_rank = -1;
  for (auto& [k, p] : members) {
    if (p == c->rank) my_rank = int(world.size());
    world.push_back(c->world[size_t(p)]);
  }
  Comm* out;
  rc = e.create_comm(c, std::move(world), my_rank, context, &out);
  if (rc) return raise(c, rc, fn);
  *newcomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_split)

int PMPI_Comm_free(MPI_Comm* comm) {
  SONDE_ENTER("MPI_Comm_free");
  if (!comm) return raise(nullptr, MPI_ERR_ARG, fn);
  Comm* c = find_comm(*comm);
  if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return raise(c, MPI_ERR_COMM, fn);
  engine().free_comm(c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_free)

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  SONDE_ENTER("MPI_Comm_set_name");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!comm_name) return raise(c, MPI_ERR_ARG, fn);
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  SONDE_ENTER("MPI_Comm_get_name");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!comm_name || !resultlen) return raise(c, MPI_ERR_ARG, fn);
  return copy_name(c->name, comm_name, resultlen);
}
SONDE_WEAK_ALIAS(Comm_get_name)

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  SONDE_ENTER("MPI_Comm_set_errhandler");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!engine().errhandlers.lookup(errhandler)) return raise(c, MPI_ERR_ARG, fn);
  c->errhandler = errhandler;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Comm_get_errhandler");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  if (!errhandler) return raise(c, MPI_ERR_ARG, fn);
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_get_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  SONDE_ENTER("MPI_Errhandler_free");
  if (!errhandler || !engine().errhandlers.lookup(*errhandler)) return raise(nullptr, MPI_ERR_ARG, fn);
  // Predefined handlers stay alive; the user's handle becomes null (MPI 9.3.4).
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Errhandler_free)

}  // extern "C"
