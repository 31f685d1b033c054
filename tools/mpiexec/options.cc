#include "tools/mpiexec/options.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "tools/mpiexec/spawn.h"

namespace sonde::mpiexec {
namespace {

// Far more ranks than one host can usefully run; beyond it a typo is likelier.
constexpr long kMaxRanks = 4096;

int parse_ranks(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > kMaxRanks) {
    throw UsageError(flag + " wants a number of ranks from 1 to " + std::to_string(kMaxRanks) + ", not '" + v + "'");
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

namespace {

bool valid_env_name(const std::string& n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// "slot", "node", "ppr:N:node" place ranks on hosts; an object type
// ("core", "package", ...) places them within each host, hosts filled in
// order as by slot (Open MPI's spellings, case as given).
void parse_map_by(Options& o, const std::string& v) {
  o.binding.map = Unit::kNone;
  if (v == "slot") {
    o.map_by = MapBy::kSlot;
  } else if (v == "node") {
    o.map_by = MapBy::kNode;
  } else if (v.rfind("ppr:", 0) == 0 && v.size() > 9 && v.compare(v.size() - 5, 5, ":node") == 0) {
    // N ranks on every host, hosts filled in order: what -ppn N does.
    o.ppn = parse_ranks("--map-by ppr", v.substr(4, v.size() - 9));
    o.map_by = MapBy::kSlot;
  } else if (std::optional<Unit> u = unit_from_name(v)) {
    o.binding.map = *u;
    o.map_by = MapBy::kSlot;
  } else {
    throw UsageError("--map-by wants 'slot', 'node', 'ppr:N:node', 'hwthread', 'core', 'l3cache', "
                     "'numa', 'package' or 'socket', not '" +
                     v + "'");
  }
}

// "none" or an object type (--bind-to socket is a package).
Unit parse_bind_to(const std::string& v) {
  if (v == "none") return Unit::kNone;
  if (std::optional<Unit> u = unit_from_name(v)) return *u;
  throw UsageError("--bind-to wants 'none', 'hwthread', 'core', 'l3cache', 'numa', 'package' or "
                   "'socket', not '" +
                   v + "'");
}

// Where a block starts and ends in `args`, for messages: "block 2 (after the first ':')".
std::string block_name(size_t block) { return "block " + std::to_string(block + 1) + " of the command line"; }

}  // namespace

std::vector<std::string> app_file_words(const std::string& text, const std::string& origin) {
  std::vector<std::string> out;
  size_t line_start = 0;
  for (int number = 1; line_start < text.size(); ++number) {
    size_t end = text.find('\n', line_start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(line_start, end - line_start);
    line_start = end + 1;
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : line) {
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          word += c;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        in_word = true;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        if (in_word) words.push_back(word);
        word.clear();
        in_word = false;
      } else {
        word += c;
        in_word = true;
      }
    }
    if (quote != 0) {
      throw UsageError(origin + ":" + std::to_string(number) + ": a quote is not closed");
    }
    if (in_word) words.push_back(word);
    if (words.empty() || words[0][0] == '#') continue;
    if (!out.empty()) out.emplace_back(":");
    for (auto& w : words) out.push_back(std::move(w));
  }
  if (out.empty()) throw UsageError(origin + " names no program");
  return out;
}

namespace {

// `--snapshot PID [--json]` (either order, --snapshot=PID too): nothing
// else goes with it. False if `args` does not start that way.
bool parse_snapshot_request(const std::vector<std::string>& args, Options& o) {
  auto is_snapshot = [](const std::string& a) {
    return a == "--snapshot" || a == "-snapshot" || a.rfind("--snapshot=", 0) == 0;
  };
  if (args.empty() || !(is_snapshot(args[0]) || (args[0] == "--json" && args.size() > 1 && is_snapshot(args[1]))))
    return false;
  std::string pid;
  bool have_pid = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json" || a == "-json") {
      o.report_json = true;
    } else if (is_snapshot(a) && !have_pid) {
      if (a.find('=') != std::string::npos) {
        pid = a.substr(a.find('=') + 1);
      } else if (i + 1 < args.size()) {
        pid = args[++i];
      }
      have_pid = true;
    } else {
      throw UsageError("--snapshot PID takes only --json, not '" + a + "'");
    }
  }
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(pid.c_str(), &end, 10);
  if (pid.empty() || *end != '\0' || errno != 0 || v <= 0 || v > INT_MAX) {
    throw UsageError("--snapshot needs the process id of a running mpiexec, not '" + pid + "'");
  }
  o.snapshot_pid = static_cast<int>(v);
  return true;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args, const FileReader& read_file) {
  Options o;
  if (parse_snapshot_request(args, o)) return o;
  // Blocks are separated by a lone ':' (MPI standard, section 11.8.4).
  std::vector<std::vector<std::string>> blocks(1);
  for (const auto& a : args) {
    if (a == ":") {
      blocks.emplace_back();
    } else {
      blocks.back().push_back(a);
    }
  }
  if (blocks.size() > 1) {
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (!blocks[b].empty()) continue;
      if (b == 0) throw UsageError("nothing before the first ':' (give a program before it)");
      if (b + 1 == blocks.size()) throw UsageError("':' at the end of the command line: no program after it");
      throw UsageError("an empty block between two ':'");
    }
  }
  bool all_ranks_given = true;
  bool bind_given = false;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::vector<std::string>& words = blocks[b];
    App app;
    app.size = 1;
    bool ranks_given = false;
    std::vector<std::string> block_hosts;
    std::string app_file;  // -configfile/--app FILE, and where the flag was
    size_t app_file_at = 0;
    bool app_file_inline = false;
    size_t i = 0;
    auto value_of = [&](const std::string& flag, const std::string& inline_value, bool has_inline) -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= words.size()) throw UsageError(flag + " needs a value");
      return words[++i];
    };
    // Options of the whole job are read only before the first program.
    auto job_wide = [&](const std::string& flag) {
      if (b > 0) {
        throw UsageError(flag + " applies to the whole job: give it before the first program, not in " + block_name(b));
      }
    };
    for (; i < words.size(); ++i) {
      const std::string& a = words[i];
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
        app.size = parse_ranks(flag, value_of(flag, inline_value, has_inline));
        ranks_given = true;
      } else if (name == "env" || name == "genv") {
        // MPICH: -env NAME VALUE for this block, -genv NAME VALUE for all.
        if (name == "genv") job_wide(flag);
        std::string var = value_of(flag, inline_value, has_inline);
        if (!valid_env_name(var)) throw UsageError(flag + ": '" + var + "' is not a variable name");
        if (i + 1 >= words.size()) throw UsageError(flag + " " + var + " needs a value");
        std::string entry = var + "=" + words[++i];
        set_entry(name == "genv" ? o.genv : app.env, entry);
      } else if (name == "x") {
        // Open MPI: -x NAME=VALUE, or -x NAME for our own value of NAME.
        std::string v = value_of(flag, inline_value, has_inline);
        std::string var = v.substr(0, v.find('='));
        if (!valid_env_name(var)) throw UsageError(flag + ": '" + v + "' is not NAME or NAME=VALUE");
        if (v.find('=') != std::string::npos) {
          set_entry(app.env, v);
        } else if (const char* mine = std::getenv(var.c_str()); mine != nullptr) {
          set_entry(app.env, var + "=" + mine);
        }
      } else if (name == "wdir" || name == "cwd" || name == "gwdir") {
        if (name == "gwdir") job_wide(flag);
        std::string dir = value_of(flag, inline_value, has_inline);
        if (dir.empty()) throw UsageError(flag + " needs a directory");
        (name == "gwdir" ? o.wdir : app.wdir) = dir;
      } else if (name == "configfile" || name == "app") {
        job_wide(flag);
        if (!read_file) throw UsageError(flag + " cannot be used inside an app file");
        app_file_at = i;
        app_file_inline = has_inline;
        app_file = value_of(flag, inline_value, has_inline);
        if (app_file.empty()) throw UsageError(flag + " needs a file name");
      } else if (name == "host" || name == "hosts" || name == "H") {
        // Before the first program: the job's hosts (and the first
        // block's); in a later block: where that block's ranks go.
        (b == 0 ? o.host_lists : block_hosts).push_back(value_of(flag, inline_value, has_inline));
      } else if (name == "hostfile" || name == "machinefile" || name == "f") {
        job_wide(flag);
        o.hostfile = value_of(flag, inline_value, has_inline);
        if (o.hostfile.empty()) throw UsageError(flag + " needs a file name");
      } else if (name == "ppn" || name == "npernode") {
        job_wide(flag);
        o.ppn = parse_ranks(flag, value_of(flag, inline_value, has_inline));
      } else if (name == "map-by") {
        job_wide(flag);
        parse_map_by(o, value_of(flag, inline_value, has_inline));
      } else if (name == "bynode" || name == "byslot") {
        job_wide(flag);
        if (has_inline) throw UsageError(flag + " takes no value");
        o.map_by = name == "bynode" ? MapBy::kNode : MapBy::kSlot;
        o.binding.map = Unit::kNone;
      } else if (name == "launch-agent") {
        job_wide(flag);
        o.launch_agent = value_of(flag, inline_value, has_inline);
        if (o.launch_agent.find_first_not_of(" \t") == std::string::npos) {
          throw UsageError(flag + " needs a command");
        }
      } else if (name == "bind-to") {
        job_wide(flag);
        o.binding.bind = parse_bind_to(value_of(flag, inline_value, has_inline));
        bind_given = true;
      } else if (name == "report-bindings") {
        job_wide(flag);
        if (has_inline) throw UsageError(flag + " takes no value");
        o.report_bindings = true;
      } else if (name == "tag-output") {
        job_wide(flag);
        if (has_inline) throw UsageError("--tag-output takes no value");
        o.tag_output = true;
      } else if (name == "profile" || name == "profile-trace") {
        job_wide(flag);
        std::string v = value_of(flag, inline_value, has_inline);
        if (v.empty()) throw UsageError(flag + (name == "profile" ? " needs a directory" : " needs a list"));
        if (name == "profile") {
          o.profile_dir = v;
        } else {
          o.profile_trace = v;
          o.profile_trace_given = true;
        }
      } else if (name == "timeout") {
        job_wide(flag);
        o.timeout_seconds = parse_timeout("--timeout", value_of(flag, inline_value, has_inline));
      } else if (name == "hang-report") {
        job_wide(flag);
        o.hang_report_seconds = parse_timeout("--hang-report", value_of(flag, inline_value, has_inline));
      } else if (name == "json") {
        job_wide(flag);
        if (has_inline) throw UsageError("--json takes no value");
        o.report_json = true;
      } else if (name == "snapshot") {
        throw UsageError("--snapshot PID goes alone (with --json at most): mpiexec --snapshot PID [--json]");
      } else if (name == "h" || name == "help") {
        o.help = true;
        return o;
      } else {
        throw UsageError("unknown option '" + a + "'");
      }
    }
    if (!app_file.empty()) {
      // The file's lines are the blocks; the job's options given here stay.
      if (i < words.size() || blocks.size() > 1) {
        throw UsageError("-configfile/--app gives the programs: none may be on the command line");
      }
      std::vector<std::string> expanded;
      for (size_t k = 0; k < words.size(); ++k) {
        if (k == app_file_at) {
          if (!app_file_inline) ++k;  // its value too
          continue;
        }
        expanded.push_back(words[k]);
      }
      for (auto& w : app_file_words(read_file(app_file), app_file)) expanded.push_back(std::move(w));
      return parse_options(expanded, {});
    }
    app.argv.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    if (app.argv.empty()) {
      throw UsageError(blocks.size() == 1 ? std::string("no program to run") : block_name(b) + " names no program");
    }
    all_ranks_given = all_ranks_given && ranks_given;
    o.apps.push_back(std::move(app));
    o.block_host_lists.push_back(std::move(block_hosts));
  }
  o.ranks_given = all_ranks_given;
  if (o.profile_trace_given && o.profile_dir.empty()) throw UsageError("--profile-trace needs --profile DIR");
  // Open MPI binds to the mapping object unless told otherwise.
  if (!bind_given) o.binding.bind = o.binding.map;
  number_apps(o);
  return o;
}

void number_apps(Options& o) {
  int next = 0;
  for (auto& app : o.apps) {
    app.first = next;
    next += app.size;
  }
  if (next > kMaxRanks) {
    throw UsageError("the blocks add up to " + std::to_string(next) + " ranks; at most " + std::to_string(kMaxRanks));
  }
  o.ranks = next;
}

void apply_timeout_environment(Options& o, const char* value) {
  if (value == nullptr || o.timeout_seconds > 0) return;
  o.timeout_seconds = parse_timeout("MPIEXEC_TIMEOUT", value);
}

std::string usage(const std::string& p) {
  return "Usage: " + p +
         " [-n N] [--host H[:N],...|-hostfile F] [-ppn N] [--map-by M]\n"
         "       [--bind-to B] [--report-bindings] [--tag-output] [--timeout S] program [args...]\n"
         "       [: [-n N] [--host H[:N],...] [-env NAME VALUE] [-x NAME[=VALUE]] [-wdir DIR]\n"
         "          program [args...]]...\n"
         "       " +
         p +
         " --snapshot PID [--json]\n"
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
         "  --map-by slot      fill each host up to its slots, then the next (default)\n"
         "  --map-by node      one rank per host in turn (round robin over the hosts)\n"
         "  --map-by ppr:N:node  N ranks on every host (as -ppn N)\n"
         "  --map-by OBJ       hosts filled as by slot; within a host, its ranks dealt\n"
         "                     round robin over its objects of type OBJ: hwthread, core,\n"
         "                     l3cache, numa, package or socket (= package); ranks are\n"
         "                     then bound to OBJ unless --bind-to says otherwise\n"
         "  --launch-agent CMD how to reach other hosts: CMD HOST COMMAND-STRING\n"
         "                     (default $SONDE_LAUNCH_AGENT, else ssh)\n"
         "  --bind-to OBJ      bind each rank to one object of type OBJ (as above): the\n"
         "                     one containing its --map-by object, or the next one\n"
         "                     inside it; without --map-by OBJ, a host's i-th rank to\n"
         "                     its i-th object. More ranks than objects wrap around\n"
         "                     (rank i on object i mod count), so some share one.\n"
         "                     Only CPUs this process may use count (cgroup, affinity).\n"
         "  --bind-to none     do not bind (default)\n"
         "  --report-bindings  print each rank's binding on stderr, one line a rank\n"
         "                     (also says when ranks share an object)\n"
         "  --tag-output       prefix each output line with [1,rank]<stdout>: or <stderr>:\n"
         "  --timeout S        end the job after S seconds and exit with 124\n"
         "                     (default: $MPIEXEC_TIMEOUT if set, else no limit),\n"
         "                     printing every rank's state and what it waits on first\n"
         "  --hang-report S    when no rank has made progress for S seconds, print the\n"
         "                     ranks' state, the wait-for cycles and the ranks they\n"
         "                     wait on, then end the job as --timeout does (exit 124)\n"
         "  --json             print snapshots and hang reports as one JSON line\n"
         "  -env NAME VALUE    set NAME for this block's ranks (-genv: every block's)\n"
         "  -x NAME[=VALUE]    the same, Open MPI's way (NAME alone: our value of it)\n"
         "  -wdir DIR          this block's ranks start in DIR (-gwdir: every block's)\n"
         "  -configfile FILE   the blocks from FILE, one a line (also --app FILE)\n"
         "  --profile DIR      run every rank under the queue-residence profiler\n"
         "                     (LD_PRELOAD, no relinking): reports, report.html in DIR\n"
         "  --profile-trace L  with --profile: also the traces in L (perfetto, otf2 or\n"
         "                     perfetto,otf2): DIR/trace.json, DIR/otf2/traces.otf2\n"
         "  -h, --help         this text\n"
         "\n"
         "Several programs in one job (MPMD): blocks separated by ':', each with its\n"
         "own -n (default 1), program and arguments. Ranks are numbered across the\n"
         "blocks in order; MPI_APPNUM on MPI_COMM_WORLD is the block's index from 0.\n"
         "--host in a later block puts that block's ranks on those hosts (the first\n"
         "block's --host, or -hostfile, is the default for blocks that give none).\n"
         "\n"
         "Exit status: 0 if every rank exited 0; otherwise the first failure: a rank's\n"
         "exit status, 128+S for a rank killed by signal S, the status a rank passed\n"
         "to abort (1 if that was 0), 1 for a rank that exited without finalizing\n"
         "while others ran, 124 on timeout, 127 if the program cannot be executed,\n"
         "1 if a host's daemon cannot be started or is lost (SONDE_HOSTD_TIMEOUT\n"
         "seconds of silence, default 30).\n"
         "When one rank fails the others get SIGTERM, then SIGKILL a second later.\n"
         "SIGINT, SIGTERM, SIGHUP and SIGUSR2 are forwarded to the ranks. SIGUSR1\n"
         "prints a snapshot of every rank's state (its MPI call, posted receives,\n"
         "unexpected messages, pending sends, collectives) without stopping the job.\n"
         "From another shell, `" +
         p +
         " --snapshot PID [--json]` (PID: the job's\n"
         "mpiexec) prints that snapshot on its own stdout as well.\n"
         "\n"
         "Output: each rank's stdout and stderr go out in whole lines, so lines of\n"
         "different ranks never mix. A line without its newline yet waits for it, but\n"
         "shows as it is after a quarter of a second without more output (a prompt);\n"
         "when a rank ends inside a line, the next output starts on a new line.\n";
}

}  // namespace sonde::mpiexec
