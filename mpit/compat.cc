// Compatibility aliases of the queue variables (docs/mpit.md, "Names other
// implementations use").
#include <cstdlib>
#include <cstring>

#include "mpit/state.h"

namespace sonde::mpit {

// The queue variables under the names other implementations give them,
// with their class, datatype, binding and verbosity, read-only and
// continuous as there: MPICH's ch3 process-wide receive-queue variables and
// Open MPI ob1's per-peer arrays bound to a communicator. Each gives the
// value of the Sonde variable it `mirrors` (same measure, same binding).
// Continuous counters and timers count from their handle's allocation (the
// bridge collects while such a handle exists).
void add_compat_aliases(std::vector<PvarDef>& v, bool bridge) {
  constexpr int kUll = MPI_UNSIGNED_LONG_LONG;
  auto find = [&](const char* name) -> const PvarDef& {
    for (const PvarDef& d : v)
      if (std::strcmp(d.name, name) == 0) return d;
    std::abort();  // the catalog names its own variables
  };
  auto alias = [&](const char* name, const char* desc, const char* mirrors, int verbosity, int cls, MPI_Datatype type) {
    PvarDef d = find(mirrors);
    d.name = name;
    d.desc = desc;
    d.verbosity = verbosity;
    d.var_class = cls;
    d.datatype = type;
    d.readonly = d.continuous = true;
    d.atomic = false;
    d.mirrors = mirrors;
    v.push_back(d);
  };
  const int detail = MPI_T_VERBOSITY_USER_DETAIL;
  alias("posted_recvq_length",
        "MPICH's name: length of the posted message receive queue, all communicators of the process "
        "(sonde_total_posted_q_length).",
        "sonde_total_posted_q_length", detail, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED);
  alias("unexpected_recvq_length",
        "MPICH's name: length of the unexpected message receive queue, all communicators of the process "
        "(sonde_total_unexpected_q_length).",
        "sonde_total_unexpected_q_length", detail, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED);
  alias("unexpected_recvq_buffer_size",
        "MPICH's name: total buffer size allocated for the messages in the unexpected receive queue, in bytes "
        "(sonde_total_unexpected_q_buffer_bytes).",
        "sonde_total_unexpected_q_buffer_bytes", detail, MPI_T_PVAR_CLASS_LEVEL, kUll);
  if (bridge) {
    alias("posted_recvq_match_attempts",
          "MPICH's name, continuous counter from the handle's allocation. Sonde counts the arriving messages "
          "that matched a posted receive (sonde_total_posted_q_matches), where MPICH counts every queue entry "
          "compared.",
          "sonde_total_posted_q_matches", detail, MPI_T_PVAR_CLASS_COUNTER, kUll);
    alias("unexpected_recvq_match_attempts",
          "MPICH's name, continuous counter from the handle's allocation. Sonde counts the receives that matched "
          "an unexpected message (sonde_total_unexpected_q_matches), where MPICH counts every queue entry "
          "compared.",
          "sonde_total_unexpected_q_matches", detail, MPI_T_PVAR_CLASS_COUNTER, kUll);
    alias("time_failed_matching_postedq",
          "MPICH's name: seconds spent on posted-queue searches that found no receive, continuous from the "
          "handle's allocation (sonde_total_posted_q_failed_search_time).",
          "sonde_total_posted_q_failed_search_time", detail, MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE);
    alias("time_matching_unexpectedq",
          "MPICH's name: seconds spent searching the unexpected queue, continuous from the handle's allocation "
          "(sonde_total_unexpected_q_search_time).",
          "sonde_total_unexpected_q_search_time", detail, MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE);
  }
  alias("pml_ob1_posted_recvq_length",
        "Open MPI's (ob1) name: number of unmatched receives posted for each peer of the bound communicator "
        "(count = its size; MPI_ANY_SOURCE receives are not per peer) (sonde_posted_q_length_per_peer).",
        "sonde_posted_q_length_per_peer", MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED);
  alias("pml_ob1_unexpected_msgq_length",
        "Open MPI's (ob1) name: number of unexpected messages received from each peer of the bound communicator "
        "(count = its size) (sonde_unexpected_q_length_per_peer).",
        "sonde_unexpected_q_length_per_peer", MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED);
}

}  // namespace sonde::mpit
