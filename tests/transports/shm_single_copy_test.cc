// read_remote() and write_remote(): one process_vm_readv / process_vm_writev
// copy from or to a sibling rank, and a plain false (never a crash, never a
// partial success) whenever the system or the configuration refuses, so the
// engine can fall back to streaming.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "tests/transports/shm_fixture.h"

namespace sonde::test {
namespace {

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }

// Rank 1 publishes the address of a pattern buffer; returns it on rank 0.
uint64_t share_buffer(FakeExchange& ex, const std::vector<uint8_t>& buffer) {
  if (ex.rank() == 1) ex.put("buffer", std::to_string(address_of(buffer.data())));
  ex.commit();
  ex.fence();
  return std::stoull(ex.get(1, "buffer").value());
}

TEST_CASE("shm read_remote copies a sibling rank's buffer in one call") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    constexpr size_t kBytes = (4 << 20) + 13;
    std::vector<uint8_t> buffer = pattern(1, 7, ex.rank() == 1 ? kBytes : 0);
    const uint64_t remote = share_buffer(ex, buffer);
    if (ex.rank() == 0) {
      std::vector<uint8_t> dst(kBytes);
      RANK_CHECK(shm->read_remote(1, remote, dst.data(), dst.size()));
      RANK_CHECK(dst == pattern(1, 7, kBytes));
      uint8_t one = 0;
      RANK_CHECK(shm->read_remote(1, remote + 1000, &one, 1));
      RANK_CHECK(one == pattern_byte(1, 7, 1000));
      RANK_CHECK(shm->read_remote(1, remote, dst.data(), 0));
      RANK_CHECK(!shm->read_remote(0, address_of(dst.data()), &one, 1));  // not a peer of shm
    }
    ex.fence();  // rank 1 keeps its buffer until rank 0 has read it
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm read_remote returns false for unmapped addresses and for a peer that has exited") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    // Rank 1: two readable pages followed by an inaccessible one.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    uint64_t remote = 0;
    if (ex.rank() == 1) {
      void* area = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      RANK_CHECK(area != MAP_FAILED);
      RANK_CHECK(mprotect(static_cast<char*>(area) + 2 * page, page, PROT_NONE) == 0);
      fill_pattern(static_cast<uint8_t*>(area), 1, 3, 0, 2 * page);
      ex.put("area", std::to_string(address_of(area)));
    }
    ex.commit();
    ex.fence();
    remote = std::stoull(ex.get(1, "area").value());
    std::vector<uint8_t> dst(2 * page);
    if (ex.rank() == 0) {
      RANK_CHECK(shm->read_remote(1, remote, dst.data(), dst.size()));
      RANK_CHECK(!shm->read_remote(1, 16, dst.data(), dst.size()));  // nothing mapped there
      // Starts readable, runs into the inaccessible page: all-or-nothing means false.
      RANK_CHECK(!shm->read_remote(1, remote + page, dst.data(), dst.size()));
    }
    ex.fence();
    if (ex.rank() == 1) return;  // exits: its pid stops naming a live address space
    wait_until(
        ex, [&] { return !shm->read_remote(1, remote, dst.data(), dst.size()); },
        "read_remote to fail once the peer is gone");
    CheckingDelivery in(2);
    RANK_CHECK(shm->progress(in) == 0);  // nothing else broke
  });
  CHECK_MESSAGE(run.ok, run.report);
}

// Scattered local sides (a non-contiguous datatype's memory): more iovecs
// than one process_vm_readv/writev call takes, of uneven sizes, some empty.
TEST_CASE("shm read_remote_iov and write_remote_iov scatter and gather across more than IOV_MAX iovecs") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    constexpr size_t kPieces = 3000;
    size_t total = 0;
    for (size_t i = 0; i < kPieces; ++i) total += i % 7;  // lengths 0..6
    std::vector<uint8_t> buffer = pattern(2, 5, ex.rank() == 1 ? total : 0);
    const uint64_t remote = share_buffer(ex, buffer);
    if (ex.rank() == 0) {
      // Local pieces every 8 bytes: piece i has i % 7 bytes, the rest a gap.
      std::vector<uint8_t> local(kPieces * 8, 0xEE);
      std::vector<iovec> iov;
      for (size_t i = 0; i < kPieces; ++i) iov.push_back({local.data() + i * 8, i % 7});
      RANK_CHECK(shm->read_remote_iov(1, remote, iov.data(), iov.size()));
      const std::vector<uint8_t> want = pattern(2, 5, total);
      size_t at = 0;
      bool same = true;
      for (size_t i = 0; i < kPieces; ++i)
        for (size_t j = 0; j < 8; ++j) same &= local[i * 8 + j] == (j < i % 7 ? want[at++] : 0xEE);
      RANK_CHECK(same);
      // And back, reversed in value, into rank 1's buffer.
      for (uint8_t& b : local) b = uint8_t(~b);
      RANK_CHECK(shm->write_remote_iov(1, remote, iov.data(), iov.size()));
    }
    ex.fence();
    if (ex.rank() == 1) {
      std::vector<uint8_t> want = pattern(2, 5, total);
      for (uint8_t& b : want) b = uint8_t(~b);
      RANK_CHECK(buffer == want);
    }
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm write_remote fills a sibling rank's buffer in one call") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    constexpr size_t kBytes = (4 << 20) + 13;
    std::vector<uint8_t> buffer(ex.rank() == 1 ? kBytes : 0, 0);
    const uint64_t remote = share_buffer(ex, buffer);
    if (ex.rank() == 0) {
      const std::vector<uint8_t> source = pattern(0, 9, kBytes);
      // Everything but the first and last 100 bytes, then those separately.
      RANK_CHECK(shm->write_remote(1, remote + 100, source.data() + 100, kBytes - 200));
      RANK_CHECK(shm->write_remote(1, remote, source.data(), 100));
      RANK_CHECK(shm->write_remote(1, remote + kBytes - 100, source.data() + kBytes - 100, 100));
      RANK_CHECK(shm->write_remote(1, remote, source.data(), 0));
      uint8_t one = 1;
      RANK_CHECK(!shm->write_remote(0, address_of(&one), &one, 1));  // not a peer of shm
    }
    ex.fence();  // written before rank 1 looks
    if (ex.rank() == 1) RANK_CHECK(buffer == pattern(0, 9, kBytes));
    ex.fence();
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm write_remote returns false for unmapped or read-only addresses and for a peer that has exited") {
  const std::string job = unique_job_id();
  RunResult run = run_ranks(2, [&](FakeExchange& ex) {
    Endpoint shm(make_shm(ex, job));
    // Rank 1: a writable page, then a read-only one, then an inaccessible one.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    uint8_t* area = nullptr;
    if (ex.rank() == 1) {
      void* mapped = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      RANK_CHECK(mapped != MAP_FAILED);
      area = static_cast<uint8_t*>(mapped);
      RANK_CHECK(mprotect(area + page, page, PROT_READ) == 0);
      RANK_CHECK(mprotect(area + 2 * page, page, PROT_NONE) == 0);
      ex.put("area", std::to_string(address_of(area)));
    }
    ex.commit();
    ex.fence();
    const uint64_t remote = std::stoull(ex.get(1, "area").value());
    const std::vector<uint8_t> source = pattern(0, 4, 2 * page);
    if (ex.rank() == 0) {
      RANK_CHECK(shm->write_remote(1, remote, source.data(), page));
      RANK_CHECK(!shm->write_remote(1, 16, source.data(), page));              // nothing mapped there
      RANK_CHECK(!shm->write_remote(1, remote + page, source.data(), 8));      // read-only
      RANK_CHECK(!shm->write_remote(1, remote + 2 * page, source.data(), 8));  // inaccessible
      // Starts writable, runs into the read-only page: false, not a partial success.
      RANK_CHECK(!shm->write_remote(1, remote + page / 2, source.data(), page));
    }
    ex.fence();
    if (ex.rank() == 1) {
      // The successful write landed; nothing spilled into the read-only page.
      RANK_CHECK(std::memcmp(area, source.data(), page / 2) == 0);
      for (size_t i = 0; i < page; ++i) RANK_CHECK(area[page + i] == 0);
      return;  // exits: its pid stops naming a live address space
    }
    wait_until(
        ex, [&] { return !shm->write_remote(1, remote, source.data(), 8); },
        "write_remote to fail once the peer is gone");
    CheckingDelivery in(2);
    RANK_CHECK(shm->progress(in) == 0);  // nothing else broke
  });
  CHECK_MESSAGE(run.ok, run.report);
}

TEST_CASE("shm single copy (both directions) can be switched off by config or by SONDE_SHM_SINGLE_COPY=0") {
  for (int how = 0; how < 3; ++how) {
    CAPTURE(how);  // 0: config, 1: environment, 2: environment set to 1 (stays on)
    const std::string job = unique_job_id();
    RunResult run = run_ranks(2, [&](FakeExchange& ex) {
      if (how == 1) setenv("SONDE_SHM_SINGLE_COPY", "0", 1);
      if (how == 2) setenv("SONDE_SHM_SINGLE_COPY", "1", 1);
      transport::ShmConfig config;
      config.my_rank = ex.rank();
      config.local_ranks = {0, 1};
      config.job_id = job;
      config.single_copy = how != 0;
      Endpoint shm(transport::make_shm_transport(config, ex));
      unsetenv("SONDE_SHM_SINGLE_COPY");  // read at construction only
      std::vector<uint8_t> buffer = pattern(1, 5, ex.rank() == 1 ? 64 : 0);
      const uint64_t remote = share_buffer(ex, buffer);
      if (ex.rank() == 0) {
        std::vector<uint8_t> dst(64);
        RANK_CHECK(shm->read_remote(1, remote, dst.data(), dst.size()) == (how == 2));
        const std::vector<uint8_t> source = pattern(0, 6, 64);
        RANK_CHECK(shm->write_remote(1, remote, source.data(), source.size()) == (how == 2));
      }
      ex.fence();
      if (ex.rank() == 1) RANK_CHECK(buffer == pattern(how == 2 ? 0 : 1, how == 2 ? 6 : 5, 64));  // untouched when off
      ex.fence();
    });
    CHECK_MESSAGE(run.ok, run.report);
  }
}

}  // namespace
}  // namespace sonde::test
