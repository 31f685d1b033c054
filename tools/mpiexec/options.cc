#include "tools/mpiexec/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sonde::mpiexec {
namespace {

// Far more ranks than one host can usefully run; beyond it a typo is likelier.
constexpr long kMaxRanks = 4096;

int parse_ranks(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > kMaxRanks) {
    throw UsageError(flag + " wants a number of ranks from 1 to " + std::to_string(kMaxRanks) +
                     ", not '" + v + "'");
  }
  return static_cast<int>(n);
}

double parse_timeout(const std::string& what, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  double s = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !std::isfinite(s) || s <= 0 || s > 1e7) {
    throw UsageError(what + " wants a positive number of seconds, not '" + v + "'");
  }
  return s;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  size_t i = 0;
  auto value_of = [&](const std::string& flag, const std::string& inline_value,
                      bool has_inline) -> std::string {
    if (has_inline) return inline_value;
    if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    std::string flag = a, inline_value;
    bool has_inline = false;
    if (size_t eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      flag = a.substr(0, eq);
      inline_value = a.substr(eq + 1);
      has_inline = true;
    }
    // Open MPI spells long options with one dash too.
    std::string name = flag.rfind("--", 0) == 0 ? flag.substr(2) : flag.substr(1);
    if (name == "n" || name == "np" || name == "c") {
      o.ranks = parse_ranks(flag, value_of(flag, inline_value, has_inline));
      o.ranks_given = true;
    } else if (name == "host" || name == "hosts" || name == "H") {
      o.host_lists.push_back(value_of(flag, inline_value, has_inline));
    } else if (name == "hostfile" || name == "machinefile" || name == "f") {
      o.hostfile = value_of(flag, inline_value, has_inline);
      if (o.hostfile.empty()) throw UsageError(flag + " needs a file name");
    } else if (name == "ppn" || name == "npernode") {
      o.ppn = parse_ranks(flag, value_of(flag, inline_value, has_inline));
    } else if (name == "launch-agent") {
      o.launch_agent = value_of(flag, inline_value, has_inline);
      if (o.launch_agent.find_first_not_of(" \t") == std::string::npos) {
        throw UsageError(flag + " needs a command");
      }
    } else if (name == "bind-to") {
      std::string v = value_of(flag, inline_value, has_inline);
      if (v == "core") {
        o.bind_to_core = true;
      } else if (v == "none") {
        o.bind_to_core = false;
      } else {
        throw UsageError("--bind-to wants 'core' or 'none', not '" + v + "'");
      }
    } else if (name == "tag-output") {
      if (has_inline) throw UsageError("--tag-output takes no value");
      o.tag_output = true;
    } else if (name == "timeout") {
      o.timeout_seconds = parse_timeout("--timeout", value_of(flag, inline_value, has_inline));
    } else if (name == "h" || name == "help") {
      o.help = true;
      return o;
    } else {
      throw UsageError("unknown option '" + a + "'");
    }
  }
  o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (o.command.empty()) throw UsageError("no program to run");
  return o;
}

void apply_timeout_environment(Options& o, const char* value) {
  if (value == nullptr || o.timeout_seconds > 0) return;
  o.timeout_seconds = parse_timeout("MPIEXEC_TIMEOUT", value);
}

std::string usage(const std::string& p) {
  return "Usage: " + p +
         " [-n N] [--host H[:N],...|-hostfile F] [-ppn N] [--bind-to core|none]\n"
         "       [--tag-output] [--timeout S] program [args...]\n"
         "\n"
         "Starts N ranks (default 1) of program on this host, oversubscribing cores\n"
         "if needed, with a PMIx server for them to wire up through. With --host or\n"
         "-hostfile the ranks go to those hosts in order, each filled up to its slots,\n"
         "and a daemon (sonde-hostd, next to this program) serves them on each host.\n"
         "\n"
         "  -n N, -np N        number of ranks (with hosts: default, all their slots)\n"
         "  --host LIST        hosts as name[:slots],... (one slot if not given)\n"
         "  -hostfile FILE     one host a line: name, name:N or name slots=N\n"
         "  -ppn N             N slots on every host, whatever the list says\n"
         "  --launch-agent CMD how to reach other hosts: CMD HOST COMMAND-STRING\n"
         "                     (default $SONDE_LAUNCH_AGENT, else ssh)\n"
         "  --bind-to core     bind rank i to core i mod (number of cores)\n"
         "  --bind-to none     do not bind (default)\n"
         "  --tag-output       prefix each output line with [1,rank]<stdout>: or <stderr>:\n"
         "  --timeout S        end the job after S seconds and exit with 124\n"
         "                     (default: $MPIEXEC_TIMEOUT if set, else no limit)\n"
         "  -h, --help         this text\n"
         "\n"
         "Exit status: 0 if every rank exited 0; otherwise the first failure: a rank's\n"
         "exit status, 128+S for a rank killed by signal S, the status a rank passed\n"
         "to abort (1 if that was 0), 1 for a rank that exited without finalizing\n"
         "while others ran, 124 on timeout, 127 if the program cannot be executed,\n"
         "1 if a host's daemon cannot be started or is lost (SONDE_HOSTD_TIMEOUT\n"
         "seconds of silence, default 30).\n"
         "When one rank fails the others get SIGTERM, then SIGKILL a second later.\n"
         "SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to the ranks.\n";
}

}  // namespace sonde::mpiexec
