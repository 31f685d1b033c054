// The mpiexec command line.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/mpiexec/apps.h"
#include "tools/mpiexec/placement.h"

namespace sonde::mpiexec {

// How ranks are laid out over the hosts (--map-by).
enum class MapBy {
  kSlot,  // fill each host up to its slots, then the next (default)
  kNode,  // round robin: one rank per host in turn, skipping full hosts
};

struct Options {
  int ranks = 1;  // the whole job: the sum of the apps' sizes
  // --map-by OBJECT and --bind-to, resolved: a --map-by OBJECT without
  // --bind-to binds to that object (as Open MPI does); otherwise not bound.
  BindPolicy binding;
  bool report_bindings = false;  // --report-bindings
  bool tag_output = false;
  double timeout_seconds = 0;      // 0: no limit
  double hang_report_seconds = 0;  // --hang-report S: 0 off
  bool report_json = false;        // --json: snapshots and hang reports as JSON
  // --snapshot PID [--json]: ask the mpiexec PID of a running job for a
  // snapshot and print it (snapshot_request.h); nothing else is run.
  int snapshot_pid = 0;
  bool help = false;
  bool ranks_given = false;  // every block gave -n
  // Several hosts: --host a:2,b (repeatable, lists add up), -hostfile FILE,
  // -ppn N. Empty `hosts` and `hostfile`: this host only.
  std::vector<std::string> host_lists;
  std::string hostfile;
  // MPMD: --host lists given in blocks after the first, by block index
  // (same length as `apps`; empty: the block uses the job's hosts).
  std::vector<std::vector<std::string>> block_host_lists;
  int ppn = 0;
  MapBy map_by = MapBy::kSlot;
  std::vector<std::string> genv;  // -genv NAME VALUE: NAME=VALUE for every app
  std::string wdir;               // -gwdir DIR: every app's default directory
  std::string launch_agent;       // empty: $SONDE_LAUNCH_AGENT, else "ssh"
  std::string profile_dir;        // --profile DIR: every rank under the profiler (profile.h)
  std::string profile_trace;      // --profile-trace LIST
  bool profile_trace_given = false;
  // One app per block of the command line (blocks are separated by a lone
  // ':'), in order; first/size are set (size: the block's -n, default 1).
  // Each block's program and arguments are untouched: everything from its
  // first argument that is not one of ours up to the next ':'.
  std::vector<App> apps;
};

// A command line we cannot run; what() is one sentence for the user.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Accepts -n/-np/--np N anywhere before the program, --opt=value spellings and
// Open MPI's single-dash long forms (-tag-output). `--` ends our options.
// MPMD: `OPTIONS prog args : BLOCK-OPTIONS prog args : ...`. Options of
// the whole job (hosts, mapping, binding, output, timeout, -genv) go before
// the first program only; each block may give -n, -env NAME VALUE,
// -x NAME[=VALUE], -wdir DIR and (after the first) --host LIST for its own
// ranks. An empty block, a ':' at either end or a block without a program
// is a UsageError. `-configfile FILE` (MPICH) or `--app FILE` (Open MPI)
// among the job's options takes the blocks from FILE instead, one a line
// (app_file_words); `read_file` returns a file's text or throws UsageError.
using FileReader = std::function<std::string(const std::string& path)>;
Options parse_options(const std::vector<std::string>& args, const FileReader& read_file = {});

// An app file's blocks as command-line words with ':' between them: one
// block a line, words split on blanks, '...' and "..." quote, a line whose
// first word starts with '#' is a comment, blank lines are skipped.
// Throws UsageError for an unterminated quote or a file without a block.
std::vector<std::string> app_file_words(const std::string& text, const std::string& origin);

// Sets each app's first rank from the sizes, in order, and `ranks` to
// their sum (again after placement has changed a size).
void number_apps(Options& o);

// MPICH's launcher takes a job time limit in seconds from MPIEXEC_TIMEOUT,
// and test suites written for it (MPICH's runtests) set that instead of
// passing an option. `value` is the variable's value or null; it applies
// only when the command line gave no --timeout. A value that is not a
// positive number of seconds is a UsageError, not silently no limit.
void apply_timeout_environment(Options& o, const char* value);

std::string usage(const std::string& program_name);

}  // namespace sonde::mpiexec
