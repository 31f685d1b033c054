// Wireup without a PMIx server: the program was started by hand.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmi/wireup.h"

extern char** environ;

namespace {

// Whatever launched this test must not make connect() look for a server.
void forget_pmix_environment() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PMIX_", 5) == 0) {
      names.emplace_back(*e, std::strchr(*e, '=') - *e);
    }
  }
  for (const auto& n : names) unsetenv(n.c_str());
}

bool alnum(const std::string& s) {
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a program started by hand is rank 0 of 1") {
  forget_pmix_environment();
  unsetenv("SONDE_JOBID");
  auto w = sonde::Wireup::connect();
  REQUIRE(w != nullptr);
  CHECK(w->rank() == 0);
  CHECK(w->size() == 1);
  CHECK(w->universe_size() == 1);
  CHECK(w->node_of(0) == 0);
  CHECK_THROWS_AS(w->node_of(1), std::out_of_range);
  CHECK_FALSE(w->hostname().empty());
  CHECK(w->job_id().size() == 32);
  CHECK(alnum(w->job_id()));
  w->finalize();
}

TEST_CASE("singleton put/get is local, binary-safe, and fence is a no-op") {
  forget_pmix_environment();
  auto w = sonde::Wireup::connect();
  const std::string bytes("a\0b\xff", 4);
  w->put("k", bytes);
  w->commit();
  w->fence();
  w->fence(false);
  CHECK(w->get(0, "k") == bytes);
  CHECK_FALSE(w->get(0, "missing").has_value());
  CHECK_THROWS_AS(w->get(1, "k"), std::out_of_range);
  w->put("k", "replaced");
  CHECK(w->get(0, "k") == std::string("replaced"));
  CHECK_THROWS_AS(w->put(std::string(600, 'x'), "v"), std::invalid_argument);
  w->finalize();
  w->finalize();
  CHECK_THROWS_AS(w->put("k", "v"), std::logic_error);
  CHECK_THROWS_AS(w->get(0, "k"), std::logic_error);
  CHECK_THROWS_AS(w->fence(), std::logic_error);
}

TEST_CASE("the launcher's job id wins, and job ids differ between singletons") {
  forget_pmix_environment();
  setenv("SONDE_JOBID", "0123456789abcdef0123456789ABCDEF", 1);
  CHECK(sonde::Wireup::connect()->job_id() == "0123456789abcdef0123456789ABCDEF");
  // Not a usable file-name component: ignored.
  setenv("SONDE_JOBID", "../etc", 1);
  std::string a = sonde::Wireup::connect()->job_id();
  CHECK(alnum(a));
  unsetenv("SONDE_JOBID");
  CHECK(sonde::Wireup::connect()->job_id() != sonde::Wireup::connect()->job_id());
}

TEST_CASE("an advertised but unreachable server is an error, not a singleton") {
  forget_pmix_environment();
  setenv("PMIX_NAMESPACE", "sonde-test-nowhere", 1);
  setenv("PMIX_RANK", "0", 1);
  setenv("PMIX_SERVER_URI41", "sonde-test-nowhere.0;tcp4://127.0.0.1:1", 1);
  setenv("PMIX_SERVER_URI4", "sonde-test-nowhere.0;tcp4://127.0.0.1:1", 1);
  CHECK_THROWS_AS(sonde::Wireup::connect(), std::runtime_error);
  forget_pmix_environment();
}
