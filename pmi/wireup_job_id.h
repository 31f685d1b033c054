// How a job is named on a host: the launcher makes the name, the ranks put it
// into the names of the job's shared-memory objects ("/sonde-<id>-..."), and
// the launcher removes everything carrying it when the job ends.
#pragma once

#include <string>
#include <string_view>

namespace sonde {

// The variable through which Sonde's mpiexec hands the id to every rank.
inline constexpr char kJobIdEnv[] = "SONDE_JOBID";

// 128 bits from the kernel's random source as 32 lower-case hex digits.
// Throws std::runtime_error if the kernel refuses.
std::string random_job_id();

// Whether `s` can serve as a job id: 1 to 64 characters of [A-Za-z0-9], so
// it is safe inside file names.
bool is_job_id(std::string_view s);

// A job id (32 hex digits) derived from `seed`, for launchers that do not
// hand one out. A name, not a secret: equal seeds give equal ids, different
// seeds unrelated ones.
std::string job_id_from_seed(std::string_view seed);

}  // namespace sonde
