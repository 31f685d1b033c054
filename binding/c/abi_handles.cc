// C ABI: conversions between C handles and Fortran integer handles (MPI 4.1
// section 19.3.4). Sonde's C handles are already integers that name the
// object in every process the same way, so both directions are the
// identity. Like MPICH's, they are real functions (with PMPI_ twins), legal
// before MPI_Init and after MPI_Finalize; a handle that names nothing
// converts to one that names nothing, and calls using it fail as usual.
//
// A status converts as its bytes: MPI_Status is MPI_F_STATUS_SIZE MPI_Fints
// long and starts with MPI_SOURCE, MPI_TAG and MPI_ERROR, which are
// therefore at MPI_F_SOURCE, MPI_F_TAG and MPI_F_ERROR of the Fortran
// array; the private fields (count, cancelled) travel with them.
#include <cstddef>
#include <cstring>

#include "binding/c/abi.h"

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "MPI_F_STATUS_SIZE");
static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint), "MPI_F_SOURCE");
static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint), "MPI_F_TAG");
static_assert(offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint), "MPI_F_ERROR");

extern "C" {

MPI_Fint PMPI_Comm_c2f(MPI_Comm handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Comm_c2f)
MPI_Comm PMPI_Comm_f2c(MPI_Fint handle) { return MPI_Comm(handle); }
SONDE_WEAK_ALIAS(Comm_f2c)

MPI_Fint PMPI_Type_c2f(MPI_Datatype handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Type_c2f)
MPI_Datatype PMPI_Type_f2c(MPI_Fint handle) { return MPI_Datatype(handle); }
SONDE_WEAK_ALIAS(Type_f2c)

MPI_Fint PMPI_Group_c2f(MPI_Group handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Group_c2f)
MPI_Group PMPI_Group_f2c(MPI_Fint handle) { return MPI_Group(handle); }
SONDE_WEAK_ALIAS(Group_f2c)

MPI_Fint PMPI_Request_c2f(MPI_Request handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Request_c2f)
MPI_Request PMPI_Request_f2c(MPI_Fint handle) { return MPI_Request(handle); }
SONDE_WEAK_ALIAS(Request_f2c)

MPI_Fint PMPI_Op_c2f(MPI_Op handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Op_c2f)
MPI_Op PMPI_Op_f2c(MPI_Fint handle) { return MPI_Op(handle); }
SONDE_WEAK_ALIAS(Op_f2c)

MPI_Fint PMPI_Info_c2f(MPI_Info handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Info_c2f)
MPI_Info PMPI_Info_f2c(MPI_Fint handle) { return MPI_Info(handle); }
SONDE_WEAK_ALIAS(Info_f2c)

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Errhandler_c2f)
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint handle) { return MPI_Errhandler(handle); }
SONDE_WEAK_ALIAS(Errhandler_f2c)

MPI_Fint PMPI_Message_c2f(MPI_Message handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Message_c2f)
MPI_Message PMPI_Message_f2c(MPI_Fint handle) { return MPI_Message(handle); }
SONDE_WEAK_ALIAS(Message_f2c)

MPI_Fint PMPI_Win_c2f(MPI_Win handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Win_c2f)
MPI_Win PMPI_Win_f2c(MPI_Fint handle) { return MPI_Win(handle); }
SONDE_WEAK_ALIAS(Win_f2c)

MPI_Fint PMPI_Session_c2f(MPI_Session handle) { return MPI_Fint(handle); }
SONDE_WEAK_ALIAS(Session_c2f)
MPI_Session PMPI_Session_f2c(MPI_Fint handle) { return MPI_Session(handle); }
SONDE_WEAK_ALIAS(Session_f2c)

// Legal at any time like the handle conversions; the IGNORE sentinels and
// null pointers are MPI_ERR_ARG.
int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  SONDE_ENTER_ANYTIME("MPI_Status_c2f");
  if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status || f_status == MPI_F_STATUS_IGNORE)
    return sonde::engine::raise(nullptr, MPI_ERR_ARG, fn);
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Status_c2f)

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  SONDE_ENTER_ANYTIME("MPI_Status_f2c");
  if (!f_status || f_status == MPI_F_STATUS_IGNORE || !c_status || c_status == MPI_STATUS_IGNORE)
    return sonde::engine::raise(nullptr, MPI_ERR_ARG, fn);
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Status_f2c)

}  // extern "C"
