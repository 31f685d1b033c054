// mpiexec --profile: the options and the environment it gives the ranks.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/mpiexec/options.h"
#include "tools/mpiexec/profile.h"

using namespace sonde::mpiexec;

namespace {

std::vector<std::string> words(std::initializer_list<const char*> w) { return {w.begin(), w.end()}; }

}  // namespace

TEST_CASE("--profile and --profile-trace are job options with a value") {
  Options o = parse_options(words({"--profile", "out", "--profile-trace=perfetto,otf2", "-n", "2", "./prog"}));
  CHECK(o.profile_dir == "out");
  CHECK(o.profile_trace == "perfetto,otf2");
  CHECK(o.apps.at(0).argv == words({"./prog"}));
  CHECK_THROWS_AS(parse_options(words({"--profile-trace", "otf2", "./prog"})), UsageError);
  CHECK_THROWS_AS(parse_options(words({"--profile"})), UsageError);
  CHECK_THROWS_AS(parse_options(words({"./a", ":", "--profile", "d", "./b"})), UsageError);
}

TEST_CASE("the ranks get LD_PRELOAD, an absolute output directory and the trace list") {
  std::vector<std::string> env = profile_environment("out", "otf2", "/p/lib/libsonde_residence.so", "/home/u", nullptr);
  CHECK(env == words({"LD_PRELOAD=/p/lib/libsonde_residence.so", "SONDE_RESIDENCE_OUT=/home/u/out",
                      "SONDE_RESIDENCE_TRACE=otf2"}));
  env = profile_environment("/abs", "", "/p/lib/libsonde_residence.so", "/home/u", "/other/tool.so");
  CHECK(env == words({"LD_PRELOAD=/p/lib/libsonde_residence.so:/other/tool.so", "SONDE_RESIDENCE_OUT=/abs"}));
}

TEST_CASE("an unknown trace format or a missing library is a usage error") {
  CHECK_THROWS_AS(profile_environment("d", "vampir", "/lib.so", "/", nullptr), UsageError);
  CHECK_THROWS_AS(profile_environment("d", "perfetto,", "/lib.so", "/", nullptr), UsageError);
  CHECK_THROWS_AS(profile_environment("d", "", "", "/", nullptr), UsageError);
}

TEST_CASE("the library is found from mpiexec's own prefix, or named by SONDE_RESIDENCE_LIB") {
  char tmpl[] = "/tmp/profile_unit_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string prefix = tmpl;
  REQUIRE(mkdir((prefix + "/bin").c_str(), 0700) == 0);
  REQUIRE(mkdir((prefix + "/lib").c_str(), 0700) == 0);
  CHECK(find_profiler_library(prefix + "/bin/mpiexec", nullptr).empty());
  std::string lib = prefix + "/lib/libsonde_residence.so";
  std::fclose(std::fopen(lib.c_str(), "w"));
  CHECK(find_profiler_library(prefix + "/bin/mpiexec", nullptr) == prefix + "/bin/../lib/libsonde_residence.so");
  CHECK(find_profiler_library(prefix + "/bin/mpiexec", lib.c_str()) == lib);
  CHECK(find_profiler_library(prefix + "/bin/mpiexec", "/nonexistent/lib.so").empty());
  std::remove(lib.c_str());
  rmdir((prefix + "/lib").c_str());
  rmdir((prefix + "/bin").c_str());
  rmdir(prefix.c_str());
}
