// QMPI inside the C binding (include/qmpi.h is the tools' side; docs/qmpi.md).
//
// Every function QMPI covers (binding/c/qmpi_functions.inc) has its C-binding
// definition under an internal name (binding/c/qmpi_rename.h), and
// binding/c/qmpi_dispatch.cc defines PMPI_NAME, with MPI_NAME its alias:
//
//   if (first_function[NAME]) return first_function[NAME](context, first_tool[NAME], args...);
//   return <the C binding's definition>(args...);
//
// so with no tool registered for NAME a call costs one load and a not-taken
// branch more than before, and PMPI tools (which call PMPI_NAME) stack
// above the QMPI tools. Tables are written only while tools initialize
// (at MPI_Init / MPI_Init_thread, before any other MPI call) or register.
#pragma once

#include "include/mpi.h"

namespace sonde::qmpi {

using Function = void (*)(void);

// Per QMPI_Functions_enum value: the first tool's function and its id, or
// null when no tool registered it.
extern Function g_first_function[MPI_LAST_FUNC_T];
extern int g_first_tool[MPI_LAST_FUNC_T];

// The library's own entry of each function, as a QMPI function (tool 0);
// qmpi_dispatch.cc fills it.
extern const Function kLibrary[MPI_LAST_FUNC_T];

// Runs the configured tools' init functions, once (MPI_Init, MPI_Init_thread).
void initialize_tools();

// The context handed down the chain of a call made from `calling_address`.
QMPI_Context context(void* calling_address);

}  // namespace sonde::qmpi
