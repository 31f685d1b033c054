// C ABI: communicators: size, rank, dup, split, free, names and error
// handlers (the other constructors and queries: abi_comm_create.cc).
#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "binding/c/abi.h"
#include "binding/c/object_name.h"
#include "coll/coll.h"
#include "comm/attributes.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "core/p2p.h"
#include "peruse/registry.h"

using namespace sonde::engine;
using namespace sonde::engine::object_name;

extern "C" {

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
  Comm* out;
  int rc = dup_comm(c, nullptr, &out);
  if (rc) return raise(find_comm(comm), rc, fn);
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
  Comm* out;
  int rc = c->inter ? split_intercomm(c, color, key, &out) : split_comm(c, color, key, &out);
  if (rc) return raise(find_comm(comm), rc, fn);
  *newcomm = out ? out->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_split)

int PMPI_Comm_free(MPI_Comm* comm) {
  SONDE_ENTER("MPI_Comm_free");
  if (!comm) return raise(nullptr, MPI_ERR_ARG, fn);
  Comm* c = find_comm(*comm);
  if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return raise(c, MPI_ERR_COMM, fn);
  int rc = free_comm_checked(c);
  if (rc) return raise(c, rc, fn);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_free)

// MPI 4.1 section 11.10.4: collective; every member's communication on the
// communicator is complete and matched when the others' barrier completes
// (the program may call it only then), so the communicator is freed after a
// barrier instead of lingering until pending operations drain.
int PMPI_Comm_disconnect(MPI_Comm* comm) {
  SONDE_ENTER("MPI_Comm_disconnect");
  if (!comm) return raise(nullptr, MPI_ERR_ARG, fn);
  Comm* c = find_comm(*comm);
  if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return raise(c, MPI_ERR_COMM, fn);
  int rc = coll::barrier(c);
  if (!rc) rc = free_comm_checked(c);
  if (rc) return raise(c, rc, fn);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_disconnect)

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
  Errhandler* e = engine().tables().errhandlers.lookup(errhandler);
  if (!e || (e->fn && e->user_refs <= 0)) return raise(c, MPI_ERR_ARG, fn);  // freed user handler
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
  // A new reference for the caller to free (MPI 4.1 9.3.1).
  if (Errhandler* e = engine().tables().errhandlers.lookup(c->errhandler); e && e->fn) ++e->user_refs;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_get_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  SONDE_ENTER_ANYTIME("MPI_Errhandler_free");  // MPI 4.1 12.4.1: at any time
  if (!errhandler) return raise(nullptr, MPI_ERR_ARG, fn);
  Errhandler* e = engine().tables().errhandlers.lookup(*errhandler);
  if (!e || (e->fn && e->user_refs <= 0)) return raise(nullptr, MPI_ERR_ARG, fn);
  // Communicators using a user handler keep it (its slot is never reused);
  // predefined handlers stay alive; the user's handle becomes null (MPI 9.3.4).
  if (e->fn) --e->user_refs;
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Errhandler_free)

}  // extern "C"
