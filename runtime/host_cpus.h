// How many CPUs this host gives the job: MPI_Init compares it with the
// number of the job's ranks on the host to tell whether they are
// oversubscribed (core/engine.h Settings::spin_before_yield).
#pragma once

#include <string_view>

namespace sonde::engine {

// The CPUs of this process's cpuset cgroup (v2 `cpuset.cpus.effective`, v1
// `cpuset.effective_cpus`), or the online CPUs where there is none; never
// less than 1. Not the process's affinity mask: a launcher that binds each
// rank to one core has not oversubscribed the host.
int host_cpus();

// The number of CPUs in a Linux CPU list ("0-3,8,10-11"); -1 if `list` is
// not one (empty, a range that runs backwards, anything but digits, '-'
// and ',', surrounding whitespace allowed).
int count_cpu_list(std::string_view list);

}  // namespace sonde::engine
