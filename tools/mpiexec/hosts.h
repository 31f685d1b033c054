// Which hosts a job runs on, and which ranks go where.
#pragma once

#include <string>
#include <vector>

#include "tools/mpiexec/options.h"

namespace sonde::mpiexec {

struct HostSlots {
  std::string name;
  int slots = 0;  // 0: not given (one slot, unless -ppn says otherwise)
};

// "a:2,b,c:4" (Open MPI's --host and MPICH's -hosts). Throws UsageError.
std::vector<HostSlots> parse_host_list(const std::string& list);

// One host a line: "name", "name:N", "name slots=N" (Open MPI) or
// "name:N" (MPICH); '#' starts a comment, blank lines are skipped. `origin`
// names the file in error messages. Throws UsageError.
std::vector<HostSlots> parse_hostfile(const std::string& text, const std::string& origin);

struct Placement {
  std::string name;        // as the user gave it (what the launch agent is given)
  std::vector<int> ranks;  // global ranks, ascending
};

// Each host has its slots (`ppn` > 0 gives every host that many instead; a
// host named twice gets the slots of both). MapBy::kSlot fills hosts in
// order, each up to its slots: ranks 0..k-1 on the first host, and so on.
// MapBy::kNode deals ranks out one per host in turn, skipping hosts whose
// slots are used up. `ranks` 0 means as many as there are slots. Hosts that
// get no rank are left out; the others keep the order they were given in.
// Throws UsageError if the slots are fewer than the ranks.
std::vector<Placement> place_ranks(const std::vector<HostSlots>& hosts, int ranks, int ppn,
                                   MapBy map_by = MapBy::kSlot);

// MPMD with host lists of its own in some blocks: block b's `sizes[b]`
// ranks (numbered on from the blocks before it) go to `block_hosts[b]`, or
// to `job_hosts` where that is empty, by `map_by` over that list, the
// blocks sharing each host's slots. A host's slots are counted within each
// list as place_ranks does (a name twice adds up) and are the largest count
// any list gives it (`ppn` > 0: ppn). Hosts come out in the order first
// named, the job's list first. An empty `job_hosts` stands for this host,
// "localhost", with no limit (as a job without hosts has). Throws
// UsageError when a block's ranks do not fit in its hosts' free slots.
std::vector<Placement> place_blocks(const std::vector<HostSlots>& job_hosts,
                                    const std::vector<std::vector<HostSlots>>& block_hosts,
                                    const std::vector<int>& sizes, int ppn, MapBy map_by);

// The hosts of `count` children of MPI_Comm_spawn, in child rank order:
// indices into `slots` (each host's slot count), chosen among `candidates`
// (in their order) as place_ranks places a job's ranks by `map_by`,
// counting in `used` what earlier children of the same spawn took. Once
// every candidate's slots are used, it starts over as if each had its
// slots again (children may outnumber slots). Empty `candidates`: none.
std::vector<int> place_children(const std::vector<int>& candidates, const std::vector<int>& slots,
                                std::vector<int>& used, int count, MapBy map_by);

// The hosts of hostfile `path` as a host list ("a:2,b"), for a spawn's
// "hostfile" info. Throws UsageError if it cannot be read or parsed.
std::string host_list_from_file(const std::string& path);

// Whether `name` is this host: "localhost", a 127.* address, or our host
// name (full or up to the first dot).
bool is_local_host(const std::string& name);

}  // namespace sonde::mpiexec
