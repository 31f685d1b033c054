// C ABI: conversions between C handles and Fortran integer handles (MPI 4.1
// section 19.3.4). Sonde's C handles are already integers that name the
// object in every process the same way, so both directions are the
// identity. Like MPICH's, they are real functions (with PMPI_ twins), legal
// before MPI_Init and after MPI_Finalize; a handle that names nothing
// converts to one that names nothing, and calls using it fail as usual.
#include "binding/c/abi.h"

#define SONDE_HANDLE_CONVERSIONS(Name, CType)                              \
  MPI_Fint PMPI_##Name##_c2f(CType handle) { return MPI_Fint(handle); }  \
  SONDE_WEAK_ALIAS(Name##_c2f)                                           \
  CType PMPI_##Name##_f2c(MPI_Fint handle) { return CType(handle); }     \
  SONDE_WEAK_ALIAS(Name##_f2c)

extern "C" {
SONDE_HANDLE_CONVERSIONS(Comm, MPI_Comm)
SONDE_HANDLE_CONVERSIONS(Type, MPI_Datatype)
SONDE_HANDLE_CONVERSIONS(Group, MPI_Group)
SONDE_HANDLE_CONVERSIONS(Request, MPI_Request)
SONDE_HANDLE_CONVERSIONS(Op, MPI_Op)
SONDE_HANDLE_CONVERSIONS(Info, MPI_Info)
SONDE_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
SONDE_HANDLE_CONVERSIONS(Message, MPI_Message)
SONDE_HANDLE_CONVERSIONS(Win, MPI_Win)
}  // extern "C"
