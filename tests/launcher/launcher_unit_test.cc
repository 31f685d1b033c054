// The launcher's pure parts: command line, output framing, cleanup.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "pmi/wireup_job_id.h"
#include "tools/mpiexec/cleanup.h"
#include "tools/mpiexec/job.h"
#include "tools/mpiexec/options.h"
#include "tools/mpiexec/output.h"

using namespace sonde::mpiexec;

namespace {

Options parse(std::vector<std::string> args) { return parse_options(args); }

std::string scratch_dir() {
  const char* t = std::getenv("TEST_TMPDIR");
  std::string base = t != nullptr ? t : "/tmp";
  std::string tmpl = base + "/launcher-unit-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  REQUIRE(mkdtemp(buf.data()) != nullptr);
  return buf.data();
}

void touch(const std::string& path) {
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  close(fd);
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

TEST_CASE("rank count in every spelling, before the program only") {
  CHECK(parse({"prog"}).ranks == 1);
  CHECK(parse({"-n", "4", "prog"}).ranks == 4);
  CHECK(parse({"-np", "3", "prog"}).ranks == 3);
  CHECK(parse({"--np=5", "prog"}).ranks == 5);
  CHECK(parse({"--tag-output", "-n", "2", "--bind-to", "core", "prog"}).ranks == 2);
  Options o = parse({"-n", "2", "prog", "-n", "7", "--tag-output"});
  CHECK(o.ranks == 2);
  CHECK_FALSE(o.tag_output);
  CHECK(o.apps.at(0).argv == std::vector<std::string>{"prog", "-n", "7", "--tag-output"});
}

TEST_CASE("flags and their values") {
  Options o = parse({"--bind-to=core", "-tag-output", "--timeout", "2.5", "--", "-weird-prog", "x"});
  CHECK(o.binding.bind == Unit::kCore);
  CHECK(o.tag_output);
  CHECK(o.timeout_seconds == doctest::Approx(2.5));
  CHECK(o.apps.at(0).argv == std::vector<std::string>{"-weird-prog", "x"});
  CHECK(parse({"--bind-to", "none", "p"}).binding.bind == Unit::kNone);
  CHECK(parse({"--help"}).help);
  CHECK(parse({"-h", "-n", "nonsense"}).help);
}

TEST_CASE("--snapshot PID goes alone, with --json at most") {
  Options o = parse({"--snapshot", "1234"});
  CHECK(o.snapshot_pid == 1234);
  CHECK_FALSE(o.report_json);
  CHECK(o.apps.empty());
  o = parse({"--json", "--snapshot=77"});
  CHECK(o.snapshot_pid == 77);
  CHECK(o.report_json);
  CHECK(parse({"--snapshot", "5", "--json"}).report_json);
  // A program's own --snapshot argument is the program's.
  o = parse({"prog", "--snapshot", "5"});
  CHECK(o.snapshot_pid == 0);
  CHECK(o.apps.at(0).argv == std::vector<std::string>{"prog", "--snapshot", "5"});
  for (auto bad : std::vector<std::vector<std::string>>{{"--snapshot"},
                                                        {"--snapshot", "x"},
                                                        {"--snapshot", "0"},
                                                        {"--snapshot", "-3"},
                                                        {"--snapshot", "99999999999"},
                                                        {"--snapshot", "5", "prog"},
                                                        {"--snapshot", "5", "-n", "2"},
                                                        {"-n", "2", "--snapshot", "5"},
                                                        {"--snapshot", "5", "--snapshot", "6"}})
    CHECK_THROWS_AS(parse(bad), UsageError);
}

TEST_CASE("MPMD: blocks separated by ':' are numbered in order") {
  Options o = parse({"-n",  "2",  "--tag-output", "./a",   "x",    ":",   "-n", "3", "-env", "V",
                     "1 2", "-x", "W=w",          "-wdir", "/tmp", "./b", "-n", "9", ":",    "c"});
  REQUIRE(o.apps.size() == 3);
  CHECK(o.tag_output);
  CHECK(o.ranks == 6);
  CHECK_FALSE(o.ranks_given);  // the last block gave no -n (one rank)
  CHECK(o.apps[0].argv == std::vector<std::string>{"./a", "x"});
  CHECK(o.apps[0].first == 0);
  CHECK(o.apps[0].size == 2);
  CHECK(o.apps[1].argv == std::vector<std::string>{"./b", "-n", "9"});
  CHECK(o.apps[1].first == 2);
  CHECK(o.apps[1].size == 3);
  CHECK(o.apps[1].env == std::vector<std::string>{"V=1 2", "W=w"});
  CHECK(o.apps[1].wdir == "/tmp");
  CHECK(o.apps[2].argv == std::vector<std::string>{"c"});
  CHECK(o.apps[2].first == 5);
  CHECK(o.apps[2].size == 1);
  CHECK(o.apps[0].env.empty());
  // -genv and -gwdir are the whole job's; -env in the first block is its own.
  o = parse({"-genv", "G", "g", "-env", "L", "l", "-gwdir", "/w", "a", ":", "b"});
  CHECK(o.genv == std::vector<std::string>{"G=g"});
  CHECK(o.wdir == "/w");
  CHECK(o.apps[0].env == std::vector<std::string>{"L=l"});
  CHECK(o.apps[1].env.empty());
  // --host before the first program is the job's; in a later block, its own.
  o = parse({"--host", "x:2", "a", ":", "-H", "y", "--host=z", "b", ":", "c"});
  CHECK(o.host_lists == std::vector<std::string>{"x:2"});
  REQUIRE(o.block_host_lists.size() == 3);
  CHECK(o.block_host_lists[0].empty());
  CHECK(o.block_host_lists[1] == std::vector<std::string>{"y", "z"});
  CHECK(o.block_host_lists[2].empty());
  // "--" ends a block's options, not the block.
  o = parse({"--", "-a", ":", "-n", "2", "--", "-b"});
  CHECK(o.apps[1].argv == std::vector<std::string>{"-b"});
  CHECK(o.apps[1].size == 2);
}

TEST_CASE("MPMD: empty blocks, missing programs and misplaced options are usage errors") {
  CHECK_THROWS_AS(parse({"-n", "2", "a", ":"}), UsageError);              // ':' at the end
  CHECK_THROWS_AS(parse({":", "a"}), UsageError);                         // nothing before it
  CHECK_THROWS_AS(parse({"a", ":", ":", "b"}), UsageError);               // empty block
  CHECK_THROWS_AS(parse({"-n", "2", ":", "-n", "2", "b"}), UsageError);   // no program
  CHECK_THROWS_AS(parse({"a", ":", "-n", "2"}), UsageError);              // no program
  CHECK_THROWS_AS(parse({"a", ":", "-hostfile", "x", "b"}), UsageError);  // job-wide, too late
  CHECK_THROWS_AS(parse({"a", ":", "--map-by", "node", "b"}), UsageError);
  CHECK_THROWS_AS(parse({"a", ":", "--tag-output", "b"}), UsageError);
  CHECK_THROWS_AS(parse({"a", ":", "-genv", "A", "1", "b"}), UsageError);
  CHECK_THROWS_AS(parse({"-env", "1A", "x", "a"}), UsageError);  // not a variable name
  CHECK_THROWS_AS(parse({"-env", "A"}), UsageError);
  CHECK_THROWS_AS(parse({"-x", "=v", "a"}), UsageError);
  CHECK_THROWS_AS(parse({"-wdir", "", "a"}), UsageError);
  CHECK_THROWS_AS(parse({"-n", "4000", "a", ":", "-n", "4000", "b"}), UsageError);  // too many
}

TEST_CASE("MPMD blocks from an app file (-configfile, --app)") {
  CHECK(app_file_words("# jobs\n-n 2 ./a 'x y'\n\n  -n 1 -env V \"1 2\" ./b\n", "f") ==
        std::vector<std::string>{"-n", "2", "./a", "x y", ":", "-n", "1", "-env", "V", "1 2", "./b"});
  CHECK_THROWS_AS(app_file_words("./a 'open\n", "f"), UsageError);
  CHECK_THROWS_AS(app_file_words("# nothing\n\n", "f"), UsageError);
  std::string asked;
  FileReader reader = [&](const std::string& path) {
    asked = path;
    return std::string("-n 2 ./a x\n-n 3 ./b\n");
  };
  Options o = parse_options({"--tag-output", "-configfile", "apps", "--timeout", "9"}, reader);
  CHECK(asked == "apps");
  CHECK(o.tag_output);
  CHECK(o.timeout_seconds == doctest::Approx(9));
  REQUIRE(o.apps.size() == 2);
  CHECK(o.apps[0].argv == std::vector<std::string>{"./a", "x"});
  CHECK(o.apps[1].first == 2);
  CHECK(o.apps[1].size == 3);
  CHECK(parse_options({"--app=apps"}, reader).apps.size() == 2);
  // Programs come from the file only; no reader (inside a file): refused.
  CHECK_THROWS_AS(parse_options({"-configfile", "apps", "./c"}, reader), UsageError);
  CHECK_THROWS_AS(parse_options({"-configfile", "apps", ":", "./c"}, reader), UsageError);
  CHECK_THROWS_AS(parse_options({"-configfile", "apps"}), UsageError);
}

TEST_CASE("MPIEXEC_TIMEOUT is the time limit unless --timeout gives one") {
  Options o = parse({"prog"});
  apply_timeout_environment(o, nullptr);
  CHECK(o.timeout_seconds == 0);
  apply_timeout_environment(o, "30");
  CHECK(o.timeout_seconds == doctest::Approx(30));
  Options given = parse({"--timeout", "5", "prog"});
  apply_timeout_environment(given, "30");
  CHECK(given.timeout_seconds == doctest::Approx(5));
  for (const char* bad : {"", "0", "-3", "ten", "5s"}) {
    Options b = parse({"prog"});
    CHECK_THROWS_AS(apply_timeout_environment(b, bad), UsageError);
  }
}

TEST_CASE("bad command lines are usage errors") {
  CHECK_THROWS_AS(parse({}), UsageError);
  CHECK_THROWS_AS(parse({"-n", "4"}), UsageError);
  CHECK_THROWS_AS(parse({"-n"}), UsageError);
  CHECK_THROWS_AS(parse({"-n", "0", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"-n", "3x", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"-n", "100000", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"--bind-to", "sockets", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"--timeout", "0", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"--timeout", "-1", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"--frobnicate", "p"}), UsageError);
  CHECK_THROWS_AS(parse({"--tag-output=yes", "p"}), UsageError);
}

TEST_CASE("untagged output goes out in whole lines, no byte added") {
  using namespace std::chrono_literals;
  const auto t0 = LineFramer::Clock::now();
  LineFramer f;
  CHECK(f.feed("abc", t0).empty());
  CHECK(f.due() == t0 + LineFramer::kPromptDelay);
  CHECK(f.flush_if_due(t0 + 1ms).empty());
  CHECK(f.feed("def\nxy", t0 + 2ms) == "abcdef\n");
  CHECK(f.finish() == "xy");
  CHECK(f.finish().empty());
  CHECK_FALSE(f.due().has_value());
}

TEST_CASE("an untagged unterminated line goes out as it is once the rank goes quiet") {
  const auto t0 = LineFramer::Clock::now();
  LineFramer f;
  CHECK(f.feed("Enter a number: ", t0).empty());
  CHECK(f.flush_if_due(t0 + LineFramer::kPromptDelay) == "Enter a number: ");
  CHECK_FALSE(f.due().has_value());
  CHECK(f.feed("ok\n", t0) == "ok\n");
}

TEST_CASE("in a job of several ranks an unterminated last line is ended only when more follows") {
  auto open_line = std::make_shared<bool>(false);
  LineFramer f("", open_line), g("", open_line);
  CHECK(f.feed("a\nb").size() == 2);
  CHECK(f.finish() == "b");  // nothing added yet
  CHECK(g.feed("c\n") == "\nc\n");
  CHECK(g.feed("d\n") == "d\n");
  CHECK(g.feed("e") == "");
  CHECK(g.finish() == "e");  // the last stream: no byte added
}

TEST_CASE("an untagged line longer than the limit goes out unchanged") {
  LineFramer f;
  std::string big(LineFramer::kMaxLine, 'x');
  CHECK(f.feed(big) == big);
  CHECK(f.feed("tail\n") == "tail\n");
}

TEST_CASE("tagged lines are never flushed early") {
  LineFramer f("P ");
  CHECK(f.feed("partial").empty());
  CHECK_FALSE(f.due().has_value());
}

TEST_CASE("tagged output goes out in whole prefixed lines") {
  LineFramer f(tag_prefix(3, false));
  CHECK(tag_prefix(3, false) == "[1,3]<stdout>: ");
  CHECK(tag_prefix(0, true) == "[1,0]<stderr>: ");
  CHECK(f.feed("hel").empty());
  CHECK(f.feed("lo\nwor") == "[1,3]<stdout>: hello\n");
  CHECK(f.feed("ld\n\nlast") == "[1,3]<stdout>: world\n[1,3]<stdout>: \n");
  CHECK(f.finish() == "[1,3]<stdout>: last\n");
  CHECK(f.finish().empty());
}

TEST_CASE("a tagged line longer than the limit is cut, not buffered forever") {
  LineFramer f("P ");
  std::string big(LineFramer::kMaxLine, 'x');
  std::string out = f.feed(big);
  CHECK(out == "P " + big + "\n");
  CHECK(f.feed("tail\n") == "P tail\n");
}

TEST_CASE("only the job's own shared-memory objects are removed") {
  std::string dir = scratch_dir();
  touch(dir + "/sonde-abc123-ring0");
  touch(dir + "/sonde-abc123-x");
  touch(dir + "/sonde-abc1234-other-job");
  touch(dir + "/unrelated");
  CHECK(remove_job_shm("abc123", dir) == 2);
  CHECK_FALSE(exists(dir + "/sonde-abc123-ring0"));
  CHECK_FALSE(exists(dir + "/sonde-abc123-x"));
  CHECK(exists(dir + "/sonde-abc1234-other-job"));
  CHECK(exists(dir + "/unrelated"));
  // An empty id would match every job.
  CHECK(remove_job_shm("", dir) == 0);
  remove_tree(dir);
  CHECK_FALSE(exists(dir));
}

TEST_CASE("private directories are ours alone and removed with their contents") {
  std::string dir = make_private_tmpdir("");
  struct stat st;
  REQUIRE(stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(mkdir((dir + "/sub").c_str(), 0700) == 0);
  touch(dir + "/sub/file");
  REQUIRE(symlink("/", (dir + "/root-link").c_str()) == 0);
  remove_tree(dir);
  CHECK_FALSE(exists(dir));
  CHECK(exists("/"));
}

TEST_CASE("job ids are 32 hex digits, random or derived") {
  std::string a = sonde::random_job_id(), b = sonde::random_job_id();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
  CHECK(sonde::is_job_id(a));
  std::string d = sonde::job_id_from_seed("nspace\nuri");
  CHECK(sonde::is_job_id(d));
  CHECK(d.size() == 32);
  CHECK(d == sonde::job_id_from_seed("nspace\nuri"));
  CHECK(d != sonde::job_id_from_seed("nspace\nurj"));
  CHECK_FALSE(sonde::is_job_id(""));
  CHECK_FALSE(sonde::is_job_id("a-b"));
  CHECK_FALSE(sonde::is_job_id("../x"));
  CHECK_FALSE(sonde::is_job_id(std::string(65, 'a')));
}

TEST_CASE("programs are found like the shell finds them") {
  CHECK(resolve_executable("/bin/sh") == "/bin/sh");
  setenv("PATH", "/nonexistent:/bin:/usr/bin", 1);
  CHECK(resolve_executable("sh") == "/bin/sh");
  CHECK_THROWS_AS(resolve_executable("no-such-program-sonde"), std::runtime_error);
  CHECK_THROWS_AS(resolve_executable("/nonexistent/prog"), std::runtime_error);
  CHECK_THROWS_AS(resolve_executable("/tmp"), std::runtime_error);
  CHECK_THROWS_AS(resolve_executable(""), std::runtime_error);
}
