// The name out-parameter of MPI_Comm_get_name (abi_comm.cc) and
// MPI_Type_get_name (abi_datatype_query.cc).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "binding/c/abi.h"

namespace sonde::engine::object_name {

// Copies `name`, cut to MPI_MAX_OBJECT_NAME - 1 characters, and a NUL to
// `out` (the caller checked that out and resultlen are not null);
// *resultlen is the length without the NUL. Always MPI_SUCCESS.
inline int copy_name(const std::string& name, char* out, int* resultlen) {
  int n = int(std::min<size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1));
  std::memcpy(out, name.data(), size_t(n));
  out[n] = '\0';
  *resultlen = n;
  return MPI_SUCCESS;
}

}  // namespace sonde::engine::object_name
