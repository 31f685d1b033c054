// SONDE_WEAK_ALIAS(Name): makes MPI_Name a weak alias of PMPI_Name, so a tool that
// defines MPI_Name intercepts the call and reaches the library through
// PMPI_Name. Inside the library nothing calls an MPI_ symbol.
#pragma once

#define SONDE_STR2(x) #x
#define SONDE_STR(x) SONDE_STR2(x)
#define SONDE_WEAK_ALIAS(name) _Pragma(SONDE_STR(weak MPI_##name = PMPI_##name))
