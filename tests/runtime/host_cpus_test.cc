// The host's CPU count that decides whether a job oversubscribes it: Linux
// CPU lists are counted exactly, anything else is refused, and the host
// always has at least one CPU.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <unistd.h>

#include "runtime/host_cpus.h"

using sonde::engine::count_cpu_list;
using sonde::engine::host_cpus;

TEST_CASE("CPU lists count single CPUs and inclusive ranges") {
  CHECK(count_cpu_list("0") == 1);
  CHECK(count_cpu_list("0-1") == 2);
  CHECK(count_cpu_list("0-3,8,10-11") == 7);
  CHECK(count_cpu_list("5-5") == 1);
  CHECK(count_cpu_list("0-63\n") == 64);
  CHECK(count_cpu_list("  2,4 ") == 2);
}

TEST_CASE("anything that is not a CPU list is refused") {
  for (const char* bad : {"", "\n", "3-1", "a", "0-", "-1", "0,,1", "0,", "1 2", "0-3x", "99999999999"})
    CHECK_MESSAGE(count_cpu_list(bad) == -1, bad);
}

TEST_CASE("the host has at least one CPU and no more than are online") {
  const int n = host_cpus();
  CHECK(n >= 1);
  CHECK(n <= int(sysconf(_SC_NPROCESSORS_ONLN)));
}
