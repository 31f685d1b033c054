// The mpiexec command line.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace sonde::mpiexec {

struct Options {
  int ranks = 1;
  bool bind_to_core = false;
  bool tag_output = false;
  double timeout_seconds = 0;  // 0: no limit
  bool help = false;
  bool ranks_given = false;  // -n was on the command line
  // Several hosts: --host a:2,b (repeatable, lists add up), -hostfile FILE,
  // -ppn N. Empty `hosts` and `hostfile`: this host only.
  std::vector<std::string> host_lists;
  std::string hostfile;
  int ppn = 0;
  std::string launch_agent;  // empty: $SONDE_LAUNCH_AGENT, else "ssh"
  // The program and its arguments, untouched: everything from the first
  // argument that is not one of ours.
  std::vector<std::string> command;
};

// A command line we cannot run; what() is one sentence for the user.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Accepts -n/-np/--np N anywhere before the program, --opt=value spellings and
// Open MPI's single-dash long forms (-tag-output). `--` ends our options.
Options parse_options(const std::vector<std::string>& args);

// MPICH's launcher takes a job time limit in seconds from MPIEXEC_TIMEOUT,
// and test suites written for it (MPICH's runtests) set that instead of
// passing an option. `value` is the variable's value or null; it applies
// only when the command line gave no --timeout. A value that is not a
// positive number of seconds is a UsageError, not silently no limit.
void apply_timeout_environment(Options& o, const char* value);

std::string usage(const std::string& program_name);

}  // namespace sonde::mpiexec
