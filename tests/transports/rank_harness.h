// Runs one test body on N ranks, as forked processes (the real deployment:
// separate address spaces) or as threads of this process (so TSan sees both
// ranks; but not the shm rings' memory ordering, since each rank maps a
// peer's segment at its own address), wired up through an in-memory Exchange
// instead of PMIx.
//
// Nothing may hang: fences and wait_until() give up after a deadline, and in
// process mode the parent kills every rank still running at the deadline.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include "transports/exchange.h"

namespace sonde::test {

struct Board;  // shared by all ranks of one run (MAP_SHARED | MAP_ANONYMOUS)

// A failed check inside a rank; RANK_CHECK throws it.
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#define RANK_CHECK(cond)                                                                        \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      throw ::sonde::test::RankFailure(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                       ": RANK_CHECK(" #cond ") failed");                       \
    }                                                                                           \
  } while (0)

class FakeExchange final : public transport::Exchange {
 public:
  FakeExchange(Board* board, int rank, int size) : board_(board), rank_(rank), size_(size) {}
  int rank() const { return rank_; }
  int size() const { return size_; }

  void put(std::string_view key, std::string_view value) override;
  void commit() override;
  // Also the tests' barrier between steps. Throws RankFailure on timeout or
  // when another rank has already failed.
  void fence() override;
  std::optional<std::string> get(int rank, std::string_view key) override;

  // How often fence() was called on this rank.
  int fences() const { return fences_; }
  // Whether any rank of the run has failed (so loops can stop early).
  bool job_failed() const;

 private:
  Board* board_;
  int rank_;
  int size_;
  int fences_ = 0;
};

// Calls `step` until it returns true; throws RankFailure naming `what` if
// `timeout` passes first or another rank fails.
void wait_until(FakeExchange& exchange, const std::function<bool()>& step, const std::string& what,
                std::chrono::seconds timeout = std::chrono::seconds(30));

enum class Launch { kProcesses, kThreads };

struct RunResult {
  bool ok = false;
  std::string report;  // one line per rank that did not succeed
};

// Runs body(exchange) on `ranks` ranks; exchange.rank() tells which.
RunResult run_ranks(int ranks, const std::function<void(FakeExchange&)>& body, Launch launch = Launch::kProcesses,
                    std::chrono::seconds timeout = std::chrono::seconds(60));

// A job id nobody else uses: tests run in parallel and may leave nothing
// behind, so each checks /dev/shm for its own id only.
std::string unique_job_id();

}  // namespace sonde::test
