// Micro-benchmark: where does small-message latency go in the shm transport?
//
// Two forked processes bound to different cores ping-pong 48-byte packet
// headers (0-byte payload) through:
//   ring      the Boost.Lockfree spsc byte ring the shm transport uses (one per
//             direction): per message the writer's write_index line, the data
//             line, and (on the writer's next push) the reader's read_index
//             line cross between the cores;
//   flag      the floor: a single word per direction, nothing else;
//   fastbox   the fast boxes (shm/fast_box.h: BoxWriter, BoxReader) beside an
//             idle ring, without the rest of the transport: the sequence word
//             and the header share a line, the reader polls that word (and,
//             through its RingReader, the ring's write index), and acknowledges with a counter the
//             writer reads only when it runs out of boxes;
//   transport the real shm transport through the Transport interface
//             (try_send_now + progress), with and without fast boxes.
// Prints the median half round trip over trials, in ns.
//
//   bazel run -c opt //bench/transport:fastbox_pingpong [-- iterations trials]
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "tests/transports/rank_harness.h"
#include "transports/shm/fast_box.h"
#include "transports/shm/ring.h"
#include "transports/shm/ring_reader.h"
#include "transports/shm/shm_transport.h"
#include "transports/transport.h"

namespace {

using sonde::transport::PacketHeader;
using Clock = std::chrono::steady_clock;

int g_iterations = 200000;
int g_trials = 11;

void bind_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
}

// Shared between the two processes: a start barrier and the results.
struct Control {
  std::atomic<int> ready{0};
  double samples[64];
};

// Runs ping(rank 0) / pong(rank 1) in two processes over `shared` memory;
// `round(rank)` does one full round trip. Returns the median half round trip.
double pingpong(const std::function<void(int)>& setup, const std::function<void(int)>& round) {
  auto* control =
      new (mmap(nullptr, sizeof(Control), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) Control();
  std::fflush(stdout);
  pid_t child = fork();
  const int rank = child == 0 ? 1 : 0;
  bind_to(rank);
  setup(rank);
  for (int t = 0; t <= g_trials; ++t) {
    // Barrier: both sides arrive (counter 2t+1, 2t+2).
    control->ready.fetch_add(1);
    while (control->ready.load() < 2 * (t + 1)) {
    }
    const auto start = Clock::now();
    for (int i = 0; i < g_iterations; ++i) round(rank);
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    if (rank == 0 && t > 0) control->samples[t - 1] = ns / (2.0 * g_iterations);  // trial 0 warms up
  }
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  std::vector<double> v(control->samples, control->samples + g_trials);
  std::sort(v.begin(), v.end());
  munmap(control, sizeof(Control));
  return v[v.size() / 2];
}

template <typename T>
T* shared_new() {
  void* memory = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) std::abort();
  return new (memory) T();
}

// ---- Boost ring, one per direction.
double bench_ring() {
  using Slot = sonde::transport::shm::RingSlot<sonde::transport::shm::kRingBytes>;
  struct Rings {
    Slot dir[2];  // dir[r]: written by rank r
  };
  Rings* rings = shared_new<Rings>();
  PacketHeader header{};
  auto send = [&](int from) {
    while (rings->dir[from].ring.push(reinterpret_cast<const char*>(&header), sizeof header) == 0) {
    }
  };
  auto receive = [&](int from) {
    auto& ring = rings->dir[from].ring;
    while (ring.read_available() < sizeof header) {
    }
    ring.pop(reinterpret_cast<char*>(&header), sizeof header);
  };
  double ns = pingpong([](int) {},
                       [&](int rank) {
                         if (rank == 0) {
                           send(0);
                           receive(1);
                         } else {
                           receive(0);
                           send(1);
                         }
                       });
  munmap(rings, sizeof(Rings));
  return ns;
}

// ---- Fast boxes (shm/fast_box.h) beside a ring, without the transport.
double bench_fastbox() {
  using Ring = sonde::transport::shm::Ring<sonde::transport::shm::kRingBytes>;
  struct Direction {
    sonde::transport::shm::RingSlot<sonde::transport::shm::kRingBytes> ring;
    sonde::transport::shm::FastBoxes boxes;
  };
  struct Pair {
    Direction dir[2];  // dir[r]: written by rank r
  };
  Pair* pair = shared_new<Pair>();
  using sonde::transport::shm::BoxReader;
  using sonde::transport::shm::BoxWriter;
  BoxWriter writer;  // each process has its own after fork
  BoxReader reader;
  sonde::transport::shm::RingReader<Ring> ring_reader;  // of the other rank's ring
  PacketHeader header{};
  auto send = [&] {
    sonde::transport::shm::FastBox* box;
    while ((box = writer.claim()) == nullptr) {
    }
    box->header = header;
    writer.post(*box);
  };
  auto receive = [&] {
    while (reader.locate(ring_reader) != BoxReader::Next::kBox) {
    }
    header = reader.box().header;
    reader.done();
  };
  double ns = pingpong(
      [&](int rank) {
        writer = BoxWriter(&pair->dir[rank].boxes);
        reader = BoxReader(&pair->dir[1 - rank].boxes);
        ring_reader = sonde::transport::shm::RingReader<Ring>(&pair->dir[1 - rank].ring.ring);
      },
      [&](int rank) {
        if (rank == 0) {
          send();
          receive();
        } else {
          receive();
          send();
        }
      });
  munmap(pair, sizeof(Pair));
  return ns;
}

// ---- The floor: one flag word per direction, nothing else.
double bench_flag() {
  struct alignas(128) Flag {
    std::atomic<uint64_t> value;
  };
  struct Flags {
    Flag dir[2];
  };
  Flags* flags = shared_new<Flags>();
  uint64_t count = 0;
  double ns = pingpong([](int) {},
                       [&](int rank) {
                         ++count;
                         if (rank == 0) {
                           flags->dir[0].value.store(count, std::memory_order_release);
                           while (flags->dir[1].value.load(std::memory_order_acquire) != count) {
                           }
                         } else {
                           while (flags->dir[0].value.load(std::memory_order_acquire) != count) {
                           }
                           flags->dir[1].value.store(count, std::memory_order_release);
                         }
                       });
  munmap(flags, sizeof(Flags));
  return ns;
}

// ---- The real transport.
// Receives every payload into one contiguous buffer, as a posted receive does.
class Counting final : public sonde::transport::Delivery {
 public:
  explicit Counting(size_t bytes) : buffer_(bytes + 1) { sink_.contiguous = buffer_.data(); }
  sonde::transport::PayloadSink* on_header(int, const PacketHeader&) override { return &sink_; }
  void on_payload_done(int, const PacketHeader&, sonde::transport::PayloadSink*) override { ++arrived; }
  uint64_t arrived = 0;

 private:
  std::vector<uint8_t> buffer_;
  sonde::transport::PayloadSink sink_;
};

double bench_transport(bool fast_boxes, size_t payload) {
  const std::string job = sonde::test::unique_job_id();
  auto* result = shared_new<Control>();
  sonde::test::RunResult run = sonde::test::run_ranks(2, [&](sonde::test::FakeExchange& ex) {
    const int me = ex.rank();
    bind_to(me);
    sonde::transport::ShmConfig config;
    config.my_rank = me;
    config.local_ranks = {0, 1};
    config.job_id = job;
    config.fast_boxes = fast_boxes;
    auto shm = sonde::transport::make_shm_transport(config, ex);
    Counting in(payload);
    PacketHeader header{};
    header.type = sonde::transport::PacketType::kEager;
    header.payload = payload;
    std::vector<uint8_t> data(payload + 1);
    const int peer = 1 - me;
    auto send = [&] {
      while (!shm->try_send_now(peer, header, data.data())) shm->progress(in);
    };
    auto receive = [&] {
      const uint64_t want = in.arrived + 1;
      while (in.arrived < want) shm->progress(in);
    };
    for (int t = 0; t <= g_trials; ++t) {
      ex.fence();
      const auto start = Clock::now();
      for (int i = 0; i < g_iterations; ++i) {
        if (me == 0) {
          send();
          receive();
        } else {
          receive();
          send();
        }
      }
      const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
      if (me == 0 && t > 0) result->samples[t - 1] = ns / (2.0 * g_iterations);
    }
    ex.fence();
  });
  if (!run.ok) {
    std::fprintf(stderr, "transport run failed:\n%s", run.report.c_str());
    std::exit(1);
  }
  std::vector<double> v(result->samples, result->samples + g_trials);
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_iterations = std::atoi(argv[1]);
  if (argc > 2) g_trials = std::min(63, std::atoi(argv[2]));
  std::printf("half round trip, median of %d trials of %d round trips (ns)\n", g_trials, g_iterations);
  std::printf("floor: one flag word per direction  %7.1f\n", bench_flag());
  std::printf("raw ring, 48 B header              %7.1f\n", bench_ring());
  std::printf("raw fast box, 48 B header          %7.1f\n", bench_fastbox());
  for (size_t payload : {0, 8, 64, 1024}) {
    std::printf("transport, ring only,  %4zu B      %7.1f\n", payload, bench_transport(false, payload));
    std::printf("transport, fast boxes, %4zu B      %7.1f\n", payload, bench_transport(true, payload));
  }
  return 0;
}
