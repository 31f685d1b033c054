// The applications of an MPMD job (`mpiexec -n 2 ./a : -n 3 ./b`): each
// block of the command line is one application with its own program,
// arguments, environment additions and working directory. Ranks are
// numbered across the blocks in order, so application k holds the
// contiguous ranks first..first+size-1 and its ranks see MPI_APPNUM k
// (PMIX_APPNUM). A plain job is one application of every rank.
#pragma once

#include <string>
#include <vector>

namespace sonde::mpiexec {

struct App {
  std::vector<std::string> argv;  // argv[0] as the user gave it; each host looks it up
  std::vector<std::string> env;   // NAME=value set for this app's ranks, over the inherited ones
  std::string wdir;               // empty: the job's working directory; relative: from it
  int first = 0;                  // its first global rank
  int size = 0;                   // its number of ranks (at least 1)
};

// Index of the app holding `rank` (apps contiguous and in rank order).
inline int app_of(const std::vector<App>& apps, int rank) {
  for (size_t a = 0; a < apps.size(); ++a) {
    if (rank < apps[a].first + apps[a].size) return static_cast<int>(a);
  }
  return -1;
}

// One application block of a PMIx_Spawn request (pmix_app_t and the info
// keys Sonde serves: "wdir"/PMIX_WDIR, "path", "host" and "hostfile").
struct SpawnApp {
  std::string cmd;
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // NAME=value set over the inherited ones
  std::string wdir;               // empty: the launcher's
  std::string path;               // PATH to search cmd in; empty: ours
  // Empty: the launcher places them. Otherwise where: on one host, that
  // host's name; across hosts, names of the job's hosts separated by commas,
  // each with its slots for these children if ":N" follows.
  std::string host;
  // A hostfile's path (hosts.h, parse_hostfile), read on the asking rank's
  // host; used when `host` is empty. Every name must be one of the job's.
  std::string hostfile;
  int procs = 1;
};

}  // namespace sonde::mpiexec
