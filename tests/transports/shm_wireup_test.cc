// Wire-up of the shm transport: collective, leaves nothing in /dev/shm,
// names and protects segments as the launcher expects, and turns failures
// into exceptions on every rank instead of hangs.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <stdexcept>

#include "tests/transports/shm_fixture.h"

namespace sonde::test {
namespace {

// Names in /dev/shm that belong to `job`.
std::vector<std::string> leftovers(const std::string& job) {
  std::vector<std::string> found;
  const std::string prefix = "sonde-" + job + "-";
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir)) {
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) found.push_back(entry->d_name);
    }
    closedir(dir);
  }
  return found;
}

struct Mapping {
  std::string range;  // "start-end", as /proc/self/map_files names it
  std::string path;
};

std::vector<Mapping> job_mappings(const std::string& job) {
  std::vector<Mapping> found;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string needle = "/dev/shm/sonde-" + job + "-";
  while (std::getline(maps, line)) {
    size_t at = line.find(needle);
    if (at != std::string::npos) found.push_back({line.substr(0, line.find(' ')), line.substr(at)});
  }
  return found;
}

TEST_CASE("shm wire-up unlinks every segment yet keeps them mapped, named for the launcher, mode 0600") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(4, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    RANK_CHECK(ex.fences() == 2);
    ex.fence();  // each rank unlinks its own segment on its way out of wire-up
    RANK_CHECK(leftovers(job).empty());
    // Our own segment and the three peers' stay mapped after the unlink.
    std::vector<Mapping> maps = job_mappings(job);
    RANK_CHECK(maps.size() == 4);
    const std::regex name("/dev/shm/sonde-" + job + "-[0-9a-f]{16} \\(deleted\\)");
    for (const Mapping& m : maps) {
      RANK_CHECK(std::regex_match(m.path, name));
      struct stat st;
      // map_files needs CAP_SYS_ADMIN; without it the mode cannot be seen.
      if (stat(("/proc/self/map_files/" + m.range).c_str(), &st) == 0) {
        RANK_CHECK((st.st_mode & 0777) == 0600);
      }
    }
    for (int peer = 0; peer < 4; ++peer) RANK_CHECK(shm->reaches(peer) == (peer != ex.rank()));
    RANK_CHECK(!shm->reaches(4));
    RANK_CHECK(!shm->reaches(-1));
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
  CHECK(leftovers(job).empty());
}

TEST_CASE("shm wire-up includes ranks alone on their host") {
  // Ranks 0 and 1 share a host, rank 2 is elsewhere; all three fence together.
  const std::string job = unique_job_id();
  RunResult run = run_ranks(3, [&](FakeExchange& ex) {
    const bool alone = ex.rank() == 2;
    Endpoint shm(make_shm(ex, job, transport::shm::kRingBytes, alone ? std::vector<int>{2} : std::vector<int>{1, 0}));
    RANK_CHECK(ex.fences() == 2);
    CheckingDelivery in(3);
    if (alone) {
      for (int peer = 0; peer < 4; ++peer) RANK_CHECK(!shm->reaches(peer));
      RANK_CHECK(shm->progress(in) == 0);
    } else {
      const int peer = 1 - ex.rank();
      RANK_CHECK(shm->reaches(peer) && !shm->reaches(2));
      shm.send(ex.rank(), peer, 0, 1000, /*fast=*/true);
      wait_until(
          ex,
          [&] {
            shm->progress(in);
            return in.received_from(peer) == 1;
          },
          "one packet");
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
  CHECK(leftovers(job).empty());
}

TEST_CASE("shm wire-up failing on one rank throws on every local rank, after both fences") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(3, [&](FakeExchange& ex) {
    if (ex.rank() == 1) {
      // Files may not grow past one page here, so sizing the segment fails
      // with EFBIG. (Not a descriptor limit: sanitizer runtimes need pipes.)
      signal(SIGXFSZ, SIG_IGN);
      rlimit limit{};
      getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = 4096;
      RANK_CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    }
    std::string what;
    try {
      make_shm(ex, job);
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    RANK_CHECK(ex.fences() == 2);
    RANK_CHECK(!what.empty());
    if (ex.rank() == 1) {
      RANK_CHECK(what.find("ftruncate") != std::string::npos);
    } else {
      RANK_CHECK(what.find("local rank 1") != std::string::npos);
    }
    ex.fence();
    RANK_CHECK(leftovers(job).empty());
  });
  CHECK_MESSAGE(run.ok, run.report);
  CHECK(leftovers(job).empty());
}

TEST_CASE("shm wire-up refuses local ranks that disagree on who is local") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(3, [&](FakeExchange& ex) {
    // Rank 2 thinks it shares a host with 0 only; 0 and 1 think all three do.
    std::vector<int> local = ex.rank() == 2 ? std::vector<int>{0, 2} : std::vector<int>{0, 1, 2};
    std::string what;
    try {
      make_shm(ex, job, transport::shm::kRingBytes, local);
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    RANK_CHECK(ex.fences() == 2);
    RANK_CHECK(what.find("local ranks") != std::string::npos || what.find("bytes, expected") != std::string::npos);
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
  CHECK(leftovers(job).empty());
}

TEST_CASE("shm rejects a bad configuration before touching the exchange") {
  RunResult run = run_ranks(1, [&](FakeExchange& ex) {
    auto rejects = [&](transport::ShmConfig config) {
      try {
        transport::make_shm_transport(config, ex);
      } catch (const std::invalid_argument&) {
        return true;
      }
      return false;
    };
    transport::ShmConfig good;
    good.my_rank = 0;
    good.local_ranks = {0};
    good.job_id = unique_job_id();
    transport::ShmConfig config = good;
    config.local_ranks = {1, 2};
    RANK_CHECK(rejects(config));
    config = good;
    config.job_id = "has/slash";
    RANK_CHECK(rejects(config));
    config.job_id = "";
    RANK_CHECK(rejects(config));
    config = good;
    config.ring_bytes = 1000;
    RANK_CHECK(rejects(config));
    RANK_CHECK(ex.fences() == 0);
    // A job of one: nothing to reach, nothing created.
    Endpoint shm(transport::make_shm_transport(good, ex));
    RANK_CHECK(!shm->reaches(0));
    CheckingDelivery in(1);
    RANK_CHECK(shm->progress(in) == 0);
    RANK_CHECK(job_mappings(good.job_id).empty());
  });
  CHECK_MESSAGE(run.ok, run.report);
}

}  // namespace
}  // namespace sonde::test
