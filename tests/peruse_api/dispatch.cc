// The dispatch side of PERUSE (issue 4, "Dispatch"; peruse/dispatch.h).
//
//   dispatch toggle_memory   100k activate/deactivate cycles (and 100k
//                            register/activate/release cycles) do not grow
//                            the resident set; dispatch stays correct
//   dispatch concurrent      (MPI_THREAD_MULTIPLE, 2 ranks) traffic threads
//                            fire events while another thread toggles
//                            windows and registers/releases handles: counts
//                            of handles that stay active are exact, the
//                            toggled ones never exceed them, callbacks see
//                            consistent arguments. Meant for --config=tsan too.
//   dispatch concurrent_comms  the same, while a traffic thread also creates
//                            and frees communicators (MPI_Comm_dup/free) and
//                            the toggling thread registers on communicators
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/peruse_api/ptest.h"

namespace {

long rss_bytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

std::atomic<long> g_calls{0};
int count_cb(peruse_event_h, MPI_Aint, peruse_comm_spec_t*, void* param) {
  static_cast<std::atomic<long>*>(param)->fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

void toggle_memory() {
  constexpr int kCycles = 100000;
  std::atomic<long> a{0}, b{0}, c{0};
  peruse_event_h h, other1, other2;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, count_cb, &a, &h), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, MPI_COMM_WORLD, count_cb, &b, &other1), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_ACTIVATE, MPI_COMM_WORLD, count_cb, &c, &other2), PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_activate(other1));  // the array holds 1 or 2 handles as h toggles
  CHECK_PERUSE_OK(PERUSE_Event_activate(other2));
  // Warm up (allocator pools, page faults), then measure.
  for (int i = 0; i < 2000; ++i) {
    PERUSE_Event_activate(h);
    PERUSE_Event_deactivate(h);
  }
  ptest_self_exchange(MPI_COMM_WORLD, 1);
  long before = rss_bytes();
  int errors = 0;
  for (int i = 0; i < kCycles; ++i) {
    errors += PERUSE_Event_activate(h) != PERUSE_SUCCESS;
    errors += PERUSE_Event_deactivate(h) != PERUSE_SUCCESS;
  }
  long after_toggle = rss_bytes();
  CHECK(errors == 0, "%d activate/deactivate calls failed", errors);
  // Handles come and go: register, activate, release.
  errors = 0;
  for (int i = 0; i < kCycles; ++i) {
    peruse_event_h t;
    errors += PERUSE_Event_comm_register(PERUSE_COMM_REQ_NOTIFY, MPI_COMM_WORLD, count_cb, &c, &t) != PERUSE_SUCCESS;
    errors += PERUSE_Event_activate(t) != PERUSE_SUCCESS;
    errors += PERUSE_Event_release(&t) != PERUSE_SUCCESS;
  }
  long after_cycle = rss_bytes();
  CHECK(errors == 0, "%d register/activate/release calls failed", errors);
  // Dispatch is still right: h inactive, the others active.
  long a0 = a, b0 = b, c0 = c;
  ptest_self_exchange(MPI_COMM_WORLD, 2);
  CHECK(a - a0 == 0 && b - b0 == 2 && c - c0 == 2, "after the cycles: %ld/%ld/%ld calls, want 0/2/2", a - a0, b - b0,
        c - c0);
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  ptest_self_exchange(MPI_COMM_WORLD, 3);
  CHECK(a - a0 == 2 && b - b0 == 4, "with h active again: %ld/%ld calls, want 2/4", a - a0, b - b0);
  // A leak of one dispatch array per change would be several megabytes.
  const long kNoise = 512 * 1024;
  fprintf(stderr, "[rank %d] RSS %ld -> %ld (toggles) -> %ld (register/release) bytes\n", itest_rank, before,
          after_toggle, after_cycle);
  CHECK(after_toggle - before <= kNoise, "RSS grew by %ld bytes over %d activate/deactivate cycles",
        after_toggle - before, kCycles);
  CHECK(after_cycle - after_toggle <= kNoise, "RSS grew by %ld bytes over %d register/activate/release cycles",
        after_cycle - after_toggle, kCycles);
  CHECK_PERUSE_OK(PERUSE_Event_release(&h));
  CHECK_PERUSE_OK(PERUSE_Event_release(&other1));
  CHECK_PERUSE_OK(PERUSE_Event_release(&other2));
}

// ---------------------------------------------------------------- concurrent

constexpr int kTrafficThreads = 2;
int g_iters = 2000;

struct Watch {
  int event;
  MPI_Comm comm;
  std::atomic<long> calls{0};
  std::atomic<long> bad{0};  // callbacks that saw inconsistent arguments
};

int watch_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  auto* w = static_cast<Watch*>(param);
  w->calls.fetch_add(1, std::memory_order_relaxed);
  if (spec->comm != w->comm || id == 0) w->bad.fetch_add(1, std::memory_order_relaxed);
  // The handle may be released by the toggling thread right now: then the
  // answer is PERUSE_ERR_EVENT_HANDLE, never another event.
  int ev = -1;
  int rc = PERUSE_Event_get(h, &ev);
  if (!(rc == PERUSE_SUCCESS && ev == w->event) && rc != PERUSE_ERR_EVENT_HANDLE)
    w->bad.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

MPI_Comm g_comms[kTrafficThreads];
std::atomic<int> g_traffic_done{0};

// Ping-pong with the peer's twin thread on its own communicator: each
// iteration completes one send and one receive on each rank.
void traffic(int t, bool churn) {
  MPI_Comm c = g_comms[t];
  int peer = 1 - itest_rank;
  std::vector<char> buf(64 * 1024);
  std::vector<MPI_Comm> made;
  for (int i = 0; i < g_iters; ++i) {
    int n = i % 50 == 0 ? 40000 : i % 7;  // mostly eager, some rendezvous
    if (itest_rank == 0) {
      CHECK_OK(MPI_Send(buf.data(), n, MPI_BYTE, peer, i % 100, c));
      CHECK_OK(MPI_Recv(buf.data(), (int)buf.size(), MPI_BYTE, peer, MPI_ANY_TAG, c, MPI_STATUS_IGNORE));
    } else {
      MPI_Request rq;
      CHECK_OK(MPI_Irecv(buf.data(), (int)buf.size(), MPI_BYTE, MPI_ANY_SOURCE, i % 100, c, &rq));
      CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Send(buf.data(), n, MPI_BYTE, peer, i % 100, c));
    }
    if (churn && t == 0 && i % 10 == 0) {
      // Communicators come and go on this rank (SELF: no peer involved);
      // half of them stay until the end, so the engine's table grows.
      MPI_Comm d;
      CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &d));
      if (i % 20 == 0) made.push_back(d);
      else CHECK_OK(MPI_Comm_free(&d));
    }
  }
  for (MPI_Comm& d : made) CHECK_OK(MPI_Comm_free(&d));
  g_traffic_done.fetch_add(1);
}

uint64_t rng_state = 0x853c49e6748fea9bull;
uint64_t rng() { return ptest_rng(&rng_state); }

// Toggles `toggled` and registers, activates, releases short-lived handles
// on random events of the traffic comms (or WORLD/SELF) until traffic ends.
void toggler(peruse_event_h toggled, std::vector<Watch*>* temps, long* rounds, long* errors) {
  while (g_traffic_done.load() < kTrafficThreads) {
    *errors += PERUSE_Event_activate(toggled) != PERUSE_SUCCESS;
    *errors += PERUSE_Event_deactivate(toggled) != PERUSE_SUCCESS;
    auto* w = new Watch;
    w->event = PTEST_FIRST_EVENT + int(rng() % (PTEST_LAST_EVENT - PTEST_FIRST_EVENT + 1));
    int which = int(rng() % (kTrafficThreads + 1));
    w->comm = which < kTrafficThreads ? g_comms[which] : MPI_COMM_SELF;
    temps->push_back(w);  // freed at the end: a callback may still be running
    peruse_event_h h;
    int rc = PERUSE_Event_comm_register(w->event, w->comm, watch_cb, w, &h);
    *errors += rc != PERUSE_SUCCESS;
    if (rc != PERUSE_SUCCESS) continue;
    *errors += PERUSE_Event_activate(h) != PERUSE_SUCCESS;
    std::this_thread::yield();
    if (rng() % 2) *errors += PERUSE_Event_deactivate(h) != PERUSE_SUCCESS;
    *errors += PERUSE_Event_release(&h) != PERUSE_SUCCESS;
    ++*rounds;
  }
}

void concurrent(bool churn) {
  static Watch stable[kTrafficThreads], toggled_w;
  peruse_event_h hs[kTrafficThreads], ht;
  for (int t = 0; t < kTrafficThreads; ++t) {
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[t]));
    stable[t].event = PERUSE_COMM_REQ_COMPLETE;
    stable[t].comm = g_comms[t];
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, g_comms[t], watch_cb, &stable[t], &hs[t]),
             PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(hs[t]));
  }
  toggled_w.event = PERUSE_COMM_REQ_COMPLETE;
  toggled_w.comm = g_comms[0];
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, g_comms[0], watch_cb, &toggled_w, &ht), PERUSE_SUCCESS);
  itest_barrier(MPI_COMM_WORLD);

  std::vector<Watch*> temps;
  long rounds = 0, errors = 0;
  std::thread tog(toggler, ht, &temps, &rounds, &errors);
  std::vector<std::thread> ts;
  for (int t = 0; t < kTrafficThreads; ++t) ts.emplace_back(traffic, t, churn);
  for (auto& t : ts) t.join();
  tog.join();

  CHECK(errors == 0, "%ld PERUSE calls of the toggling thread failed", errors);
  CHECK(rounds > 0, "the toggling thread did not get a single round in");
  for (int t = 0; t < kTrafficThreads; ++t) {
    CHECK(stable[t].calls == 2L * g_iters, "comm %d: an always-active handle counted %ld completions, want %ld", t,
          stable[t].calls.load(), 2L * g_iters);
    CHECK(stable[t].bad == 0, "comm %d: %ld callbacks with inconsistent arguments", t, stable[t].bad.load());
  }
  CHECK(toggled_w.calls <= stable[0].calls, "a toggled handle counted %ld completions, more than the %ld that happened",
        toggled_w.calls.load(), stable[0].calls.load());
  long temp_bad = 0;
  for (Watch* w : temps) temp_bad += w->bad;
  CHECK(temp_bad == 0, "%ld callbacks of short-lived handles saw inconsistent arguments", temp_bad);

  // Quiet again: the toggled handle, now active, counts exactly.
  itest_barrier(MPI_COMM_WORLD);
  long t0 = toggled_w.calls;
  CHECK_PERUSE_OK(PERUSE_Event_activate(ht));
  g_iters = 10;
  traffic(0, false);
  CHECK(toggled_w.calls - t0 == 20, "active toggled handle counted %ld of 20 completions", toggled_w.calls - t0);
  if (itest_rank == 0)
    printf("dispatch concurrent: %ld toggling rounds, %zu short-lived handles\n", rounds, temps.size());
  itest_barrier(MPI_COMM_WORLD);
  CHECK_PERUSE_OK(PERUSE_Event_release(&ht));
  for (int t = 0; t < kTrafficThreads; ++t) {
    CHECK_PERUSE_OK(PERUSE_Event_release(&hs[t]));
    CHECK_OK(MPI_Comm_free(&g_comms[t]));
  }
  for (Watch* w : temps) delete w;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (argc > 2) g_iters = atoi(argv[2]);
  ptest_init_multiple(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  if (mode == "toggle_memory") toggle_memory();
  else if (mode == "concurrent") concurrent(false);
  else if (mode == "concurrent_comms") concurrent(true);
  else CHECK(0, "unknown mode %s", mode.c_str());
  return itest_finish(("dispatch " + mode).c_str());
}
