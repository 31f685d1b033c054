// C ABI: blocking collectives. Validates every argument a rank can check on
// its own (a collective cannot tell whether the other ranks passed matching
// arguments) and hands over to engine/coll.h.
#include "engine/abi.h"
#include "engine/coll.h"
#include "engine/op.h"

using namespace sonde::engine;

namespace {

// A buffer pointer that cannot hold `count` elements of `type`. MPI_BOTTOM
// is null, so only predefined types (which cannot carry absolute addresses)
// are checked.
bool bad_buffer(const void* buf, int count, const Datatype* t) {
  return buf == nullptr && count > 0 && t->size > 0 && t->predefined;
}

// Common checks of a (buffer, count, datatype) triple.
int check_data(const void* buf, int count, MPI_Datatype type, Datatype** t) {
  if (count < 0) return MPI_ERR_COUNT;
  *t = find_comm_datatype(type);
  if (!*t) return MPI_ERR_TYPE;
  if (buf == MPI_IN_PLACE || bad_buffer(buf, count, *t)) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

// The reduction op for a collective. MPI_REPLACE and MPI_NO_OP exist for
// one-sided accumulates only, and an op undefined on the datatype is an op
// error (both as MPICH and Open MPI answer).
int check_op(MPI_Op op, const Datatype& t) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_ERR_OP;
  return op_check(op, t) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
}

int check_root(int root, const Comm* c) { return root < 0 || root >= c->size ? MPI_ERR_ROOT : MPI_SUCCESS; }

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  SONDE_ENTER("MPI_Barrier");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  return finish(c, coll::barrier(c), fn);
}
SONDE_WEAK_ALIAS(Barrier)

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Bcast");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  Datatype* t;
  int rc = check_data(buffer, count, datatype, &t);
  if (!rc) rc = check_root(root, c);
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::bcast(buffer, count, t, root, c), fn);
}
SONDE_WEAK_ALIAS(Bcast)

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm) {
  SONDE_ENTER("MPI_Reduce");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  int rc = check_root(root, c);
  Datatype* t = nullptr;
  if (!rc) {
    // The send side: MPI_IN_PLACE only at the root.
    const bool in_place = sendbuf == MPI_IN_PLACE && c->rank == root;
    rc = check_data(in_place ? nullptr : sendbuf, in_place ? 0 : count, datatype, &t);
    if (!rc && count < 0) rc = MPI_ERR_COUNT;
  }
  if (!rc) rc = check_op(op, *t);
  if (!rc && c->rank == root) {
    if (recvbuf == MPI_IN_PLACE || bad_buffer(recvbuf, count, t)) rc = MPI_ERR_BUFFER;
    else if (sendbuf == recvbuf && count > 0) rc = MPI_ERR_BUFFER;  // aliasing needs MPI_IN_PLACE
  }
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::reduce(sendbuf, recvbuf, count, t, op, root, c), fn);
}
SONDE_WEAK_ALIAS(Reduce)

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  SONDE_ENTER("MPI_Allreduce");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  Datatype* t;
  int rc = check_data(recvbuf, count, datatype, &t);
  if (!rc) rc = check_op(op, *t);
  if (!rc && sendbuf != MPI_IN_PLACE) {
    if (bad_buffer(sendbuf, count, t) || (sendbuf == recvbuf && count > 0)) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::allreduce(sendbuf, recvbuf, count, t, op, c), fn);
}
SONDE_WEAK_ALIAS(Allreduce)

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  SONDE_ENTER("MPI_Gather");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  int rc = check_root(root, c);
  const bool is_root = c->rank == root;
  const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  if (!rc && !in_place) rc = check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc && is_root) {
    rc = check_data(recvbuf, recvcount, recvtype, &rt);
    if (!rc && !in_place && sendbuf == recvbuf && sendcount > 0 && st->size > 0) rc = MPI_ERR_BUFFER;
  }
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::gather(sendbuf, sendcount, st, recvbuf, recvcount, rt, root, c), fn);
}
SONDE_WEAK_ALIAS(Gather)

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  SONDE_ENTER("MPI_Allgather");
  Comm* c = find_comm(comm);
  if (!c) return raise(nullptr, MPI_ERR_COMM, fn);
  Datatype* st = nullptr;
  Datatype* rt = nullptr;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int rc = in_place ? MPI_SUCCESS : check_data(sendbuf, sendcount, sendtype, &st);
  if (!rc) rc = check_data(recvbuf, recvcount, recvtype, &rt);
  if (!rc && !in_place && sendbuf == recvbuf && sendcount > 0 && st->size > 0) rc = MPI_ERR_BUFFER;
  if (rc) return raise(c, rc, fn);
  return finish(c, coll::allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, c), fn);
}
SONDE_WEAK_ALIAS(Allgather)
