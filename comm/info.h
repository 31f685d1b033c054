// MPI_Info objects (MPI 4.1 chapter 10): ordered (key, value) string pairs.
//
// Info objects live in their own handle table (kind SONDE_KIND_INFO); slot 1
// is MPI_INFO_ENV, filled on first use with the keys of MPI 4.1 section 11.2.3
// that this process knows (command, argv, maxprocs, host, arch, wdir,
// thread_level, soft). Keys keep the order they were first set in, which is
// the order MPI_Info_get_nthkey reports. Callers hold the engine lock.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "include/mpi.h"

namespace sonde::engine {

using InfoPairs = std::vector<std::pair<std::string, std::string>>;

// Live info object, or null for null/freed/forged handles.
InfoPairs* find_info(MPI_Info h);
// A new info handle holding `pairs`; MPI_ERR_INTERN when the table is full.
int new_info(InfoPairs pairs, MPI_Info* out);
// Set key=value in pairs (replacing an existing value in place).
void info_set(InfoPairs& pairs, const std::string& key, const std::string& value);

}  // namespace sonde::engine
