#include "tests/transports/rank_harness.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace sonde::test {

constexpr int kMaxRanks = 16;
constexpr int kMaxKeys = 8;
constexpr size_t kKeyBytes = 64;
constexpr size_t kValueBytes = 512;
constexpr size_t kMessageBytes = 512;

struct Board {
  struct Entry {
    char key[kKeyBytes];
    char value[kValueBytes];
    uint32_t length;
  };
  std::atomic<int> arrived;
  std::atomic<int> generation;
  std::atomic<int> failed;  // any rank failed: everyone stops waiting
  int entries_of[kMaxRanks];
  Entry entries[kMaxRanks][kMaxKeys];
  Entry pending[kMaxRanks][kMaxKeys];  // put() but not yet commit()
  int pending_of[kMaxRanks];
  char message[kMaxRanks][kMessageBytes];
  int status[kMaxRanks];  // thread mode: 0 ok, 1 failed
};
static_assert(std::atomic<int>::is_always_lock_free);

namespace {

using Clock = std::chrono::steady_clock;

void store(Board::Entry& entry, std::string_view key, std::string_view value) {
  if (key.size() >= kKeyBytes || value.size() > kValueBytes) {
    throw RankFailure("FakeExchange: key or value too long: " + std::string(key));
  }
  std::memset(entry.key, 0, sizeof entry.key);
  std::memcpy(entry.key, key.data(), key.size());
  std::memcpy(entry.value, value.data(), value.size());
  entry.length = static_cast<uint32_t>(value.size());
}

void record_failure(Board* board, int rank, const char* what) {
  std::snprintf(board->message[rank], kMessageBytes, "%s", what);
  board->failed.store(1);
  std::fprintf(stderr, "rank %d failed: %s\n", rank, what);
}

void run_one(Board* board, int rank, int ranks, const std::function<void(FakeExchange&)>& body) {
  FakeExchange exchange(board, rank, ranks);
  try {
    body(exchange);
    board->status[rank] = 0;
  } catch (const std::exception& e) {
    record_failure(board, rank, e.what());
    board->status[rank] = 1;
  } catch (...) {
    record_failure(board, rank, "unknown exception");
    board->status[rank] = 1;
  }
}

}  // namespace

void FakeExchange::put(std::string_view key, std::string_view value) {
  int& n = board_->pending_of[rank_];
  if (n == kMaxKeys) throw RankFailure("FakeExchange: too many keys");
  store(board_->pending[rank_][n++], key, value);
}

void FakeExchange::commit() {
  for (int i = 0; i < board_->pending_of[rank_]; ++i) {
    const Board::Entry& entry = board_->pending[rank_][i];
    int slot = 0;
    while (slot < board_->entries_of[rank_] && std::strcmp(board_->entries[rank_][slot].key, entry.key) != 0) {
      ++slot;
    }
    if (slot == kMaxKeys) throw RankFailure("FakeExchange: too many keys");
    board_->entries[rank_][slot] = entry;
    if (slot == board_->entries_of[rank_]) ++board_->entries_of[rank_];
  }
  board_->pending_of[rank_] = 0;
}

void FakeExchange::fence() {
  ++fences_;
  const int generation = board_->generation.load(std::memory_order_acquire);
  if (board_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == size_) {
    board_->arrived.store(0, std::memory_order_relaxed);
    board_->generation.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (board_->generation.load(std::memory_order_acquire) == generation) {
    if (job_failed()) throw RankFailure("fence abandoned: another rank failed");
    if (Clock::now() > deadline) throw RankFailure("fence timed out after 30 s");
    std::this_thread::yield();
  }
}

std::optional<std::string> FakeExchange::get(int rank, std::string_view key) {
  if (rank < 0 || rank >= size_) return std::nullopt;
  for (int i = 0; i < board_->entries_of[rank]; ++i) {
    const Board::Entry& entry = board_->entries[rank][i];
    if (key == entry.key) return std::string(entry.value, entry.length);
  }
  return std::nullopt;
}

bool FakeExchange::job_failed() const { return board_->failed.load(std::memory_order_relaxed) != 0; }

void wait_until(FakeExchange& exchange, const std::function<bool()>& step, const std::string& what,
                std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (unsigned spins = 0; !step(); ++spins) {
    if ((spins & 255) != 0) continue;
    if (exchange.job_failed()) throw RankFailure("gave up waiting for " + what + ": another rank failed");
    if (Clock::now() > deadline) {
      throw RankFailure("timed out after " + std::to_string(timeout.count()) + " s waiting for " + what);
    }
    // Two ranks on two cores with other tests running: let the peer run.
    std::this_thread::yield();
  }
}

RunResult run_ranks(int ranks, const std::function<void(FakeExchange&)>& body, Launch launch,
                    std::chrono::seconds timeout) {
  if (ranks < 1 || ranks > kMaxRanks) throw std::invalid_argument("run_ranks: 1..16 ranks");
  void* memory = mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::runtime_error("run_ranks: mmap failed");
  Board* board = new (memory) Board();

  RunResult result;
  std::vector<std::string> lines(ranks);
  if (launch == Launch::kThreads) {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) threads.emplace_back(run_one, board, r, ranks, std::cref(body));
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks; ++r) {
      if (board->status[r] != 0) lines[r] = board->message[r];
    }
  } else {
    std::fflush(stdout);
    std::fflush(stderr);
    std::vector<pid_t> pids(ranks, -1);
    for (int r = 0; r < ranks; ++r) {
      pid_t pid = fork();
      if (pid == 0) {
        run_one(board, r, ranks, body);
        _exit(board->status[r]);  // no atexit handlers, no doctest teardown in children
      }
      if (pid < 0) {
        lines[r] = "fork failed";
        board->failed.store(1);
        break;
      }
      pids[r] = pid;
    }
    const auto deadline = Clock::now() + timeout;
    int running = 0;
    for (pid_t pid : pids) running += pid > 0;
    while (running > 0) {
      for (int r = 0; r < ranks; ++r) {
        if (pids[r] <= 0) continue;
        int status = 0;
        pid_t done = waitpid(pids[r], &status, WNOHANG);
        if (done != pids[r]) continue;
        pids[r] = -1;
        --running;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        board->failed.store(1);
        if (board->message[r][0] != '\0') {
          lines[r] = board->message[r];
        } else if (WIFSIGNALED(status)) {
          lines[r] = std::string("killed by signal ") + strsignal(WTERMSIG(status));
        } else {
          lines[r] = "exit status " + std::to_string(WEXITSTATUS(status));
        }
      }
      if (running > 0 && Clock::now() > deadline) {
        for (int r = 0; r < ranks; ++r) {
          if (pids[r] <= 0) continue;
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          lines[r] = "still running after " + std::to_string(timeout.count()) + " s: killed";
          pids[r] = -1;
          --running;
        }
      }
      if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  result.ok = true;
  for (int r = 0; r < ranks; ++r) {
    if (lines[r].empty()) continue;
    result.ok = false;
    result.report += "rank " + std::to_string(r) + ": " + lines[r] + "\n";
  }
  board->~Board();
  munmap(memory, sizeof(Board));
  return result;
}

std::string unique_job_id() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof bits, 0) != sizeof bits) bits = static_cast<uint64_t>(getpid());
  char id[32];
  std::snprintf(id, sizeof id, "t%016llx", static_cast<unsigned long long>(bits));
  return id;
}

}  // namespace sonde::test
