/* MPI_THREAD_MULTIPLE: a tool thread on rank 0 reads, starts, stops and
 * resets pvars of its own session (and registers and frees an event
 * callback) while the main thread exchanges messages with rank 1. Every
 * MPI_T call must succeed and every level read must be within what the
 * traffic allows. Also run it under --config=tsan. */
#include <pthread.h>

#include "tests/mpit/mtest.h"

#define ROUNDS 3000
static volatile int done;
static int tool_errors, bad_levels;
static long reads;

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s, void* user) {
  unsigned long long uid = 0;
  if (MPI_T_event_read(inst, 0, &uid) != MPI_SUCCESS || uid == 0) __atomic_add_fetch((int*)user, 1, __ATOMIC_RELAXED);
}

static void* tool(void* arg) {
  MPI_T_pvar_session s;
  MPI_Comm world = MPI_COMM_WORLD;
  int count, idx, ev;
  if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS) tool_errors++;
  MPI_T_pvar_handle level, counter, hwm;
  MPI_T_pvar_get_index("sonde_unexpected_q_length", MPI_T_PVAR_CLASS_LEVEL, &idx);
  if (MPI_T_pvar_handle_alloc(s, idx, &world, &level, &count)) tool_errors++;
  MPI_T_pvar_get_index("sonde_posted_q_matches", MPI_T_PVAR_CLASS_COUNTER, &idx);
  if (MPI_T_pvar_handle_alloc(s, idx, &world, &counter, &count)) tool_errors++;
  MPI_T_pvar_get_index("sonde_total_posted_q_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &idx);
  if (MPI_T_pvar_handle_alloc(s, idx, NULL, &hwm, &count)) tool_errors++;
  MPI_T_event_get_index("PERUSE_COMM_REQ_COMPLETE", &ev);
  int i = 0;
  while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
    unsigned long long v;
    if (MPI_T_pvar_read(s, level, &v)) tool_errors++;
    else if (v > 1) bad_levels++; /* at most one message waits in this ping-pong */
    if (MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES)) tool_errors++;
    if (MPI_T_pvar_read(s, counter, &v)) tool_errors++;
    if (MPI_T_pvar_read(s, hwm, &v)) tool_errors++;
    else if (v > 1) bad_levels++;
    if (++i % 3 == 0 && MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES)) tool_errors++;
    if (i % 5 == 0 && MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES)) tool_errors++;
    if (i % 7 == 0) {
      MPI_T_event_registration reg;
      if (MPI_T_event_handle_alloc(ev, &world, MPI_INFO_NULL, &reg) ||
          MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, arg, on_event) ||
          MPI_T_event_handle_free(reg, NULL, NULL))
        tool_errors++;
    }
    __atomic_add_fetch(&reads, 1, __ATOMIC_RELAXED);
  }
  if (MPI_T_pvar_session_free(&s)) tool_errors++;
  return NULL;
}

int main(int argc, char** argv) {
  int provided, tprov, bad_events = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &itest_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &itest_size);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprov);
  pthread_t t;
  if (itest_rank == 0) pthread_create(&t, NULL, tool, &bad_events);
  /* Rank 0 keeps the ping-pong going until it has done ROUNDS and the tool
   * thread has made a few passes during the traffic (a thread may start
   * late on a loaded machine); the byte it sends says whether another
   * round follows. */
  for (int i = 0;; ++i) {
    char more = 1;
    if (itest_rank == 0) {
      more = i + 1 < ROUNDS || __atomic_load_n(&reads, __ATOMIC_RELAXED) < 20;
      MPI_Send(&more, 1, MPI_BYTE, 1, i, MPI_COMM_WORLD);
      MPI_Recv(&more, 1, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&more, 1, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&more, 1, MPI_BYTE, 0, i, MPI_COMM_WORLD);
    }
    if (!more) break;
  }
  if (itest_rank == 0) {
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(tool_errors == 0, "%d MPI_T calls failed on the tool thread", tool_errors);
    CHECK(bad_levels == 0, "%d impossible queue levels", bad_levels);
    CHECK(bad_events == 0, "%d bad event reads", bad_events);
    CHECK(reads >= 20, "the tool thread made %ld passes", reads);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_T_finalize();
  return itest_finish("threads");
}
