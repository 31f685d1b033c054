/* PERUSE_Lock / PERUSE_Unlock (spec 5.2.16, 5.2.17; Sonde's choices in
 * peruse/registry.cc).
 *
 *   lock mutual_exclusion  (MPI_THREAD_MULTIPLE) threads incrementing a
 *                          shared counter under the lock, and callbacks on
 *                          traffic threads doing the same, lose no update;
 *                          Lock blocks while another thread holds it
 *   lock not_grantable     inside an upcall where this thread already holds
 *                          the lock (taken in the upcall): not grantable, for
 *                          the rest of that upcall, grantable in the next one
 *   lock not_grantable_two_handles  two handles on one event: the first
 *                          callback's refusal ends with its upcall, the second
 *                          callback (its own upcall) is granted the lock
 *   lock not_grantable_caller_holds  the same when the thread took the lock
 *                          before the MPI call that runs the upcall
 *   lock unlock_not_held   unlocking a lock you do not hold:
 *                          PERUSE_ERR_UNLOCK (also held by another thread)
 *   lock lock_twice        locking twice outside an upcall: PERUSE_ERR_LOCK,
 *                          no deadlock
 */
#include <pthread.h>

#include "tests/peruse_api/ptest.h"

static int count_fail(const char* what, int rc, int want) {
  if (rc == want) return 0;
  CHECK(0, "%s returned %d (%s), want %s", what, rc, ptest_rc_name(rc), ptest_rc_name(want));
  return 1;
}

/* ------------------------------------------------------- mutual_exclusion */

enum { THREADS = 4, INCREMENTS = 100000, TRAFFIC_THREADS = 2, EXCHANGES = 300 };

static volatile long counter;
static volatile int inside;
static volatile long overlaps;
static long lock_errors;

static void guarded_increment(void) {
  int rc = PERUSE_Lock();
  if (rc != PERUSE_SUCCESS) {
    __atomic_add_fetch(&lock_errors, 1, __ATOMIC_RELAXED);
    return;
  }
  if (inside) ++overlaps;
  inside = 1;
  long v = counter;
  counter = v + 1;
  inside = 0;
  if (PERUSE_Unlock() != PERUSE_SUCCESS) __atomic_add_fetch(&lock_errors, 1, __ATOMIC_RELAXED);
}

static void* incrementer(void* arg) {
  for (int i = 0; i < INCREMENTS; ++i) guarded_increment();
  return NULL;
}

static int counting_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  guarded_increment();
  return MPI_SUCCESS;
}

static void* traffic(void* arg) {
  MPI_Comm c = *(MPI_Comm*)arg;
  for (int i = 0; i < EXCHANGES; ++i) ptest_self_exchange(c, i % 100);
  return NULL;
}

static volatile int holder_ready, holder_released, waiter_saw_release = -1;

static void* holder(void* arg) {
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  __atomic_store_n(&holder_ready, 1, __ATOMIC_SEQ_CST);
  itest_sleep(0.2);
  __atomic_store_n(&holder_released, 1, __ATOMIC_SEQ_CST);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  return NULL;
}

static void* waiter(void* arg) {
  while (!__atomic_load_n(&holder_ready, __ATOMIC_SEQ_CST)) {
  }
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS); /* blocks until the holder lets go */
  waiter_saw_release = __atomic_load_n(&holder_released, __ATOMIC_SEQ_CST);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  return NULL;
}

static void mutual_exclusion(void) {
  /* Blocking: a second thread waits for the first to unlock. */
  pthread_t a, b;
  pthread_create(&a, NULL, holder, NULL);
  pthread_create(&b, NULL, waiter, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  CHECK(waiter_saw_release == 1, "a thread got PERUSE_Lock while another held it");

  /* Plain threads and callbacks on traffic threads share one counter. */
  MPI_Comm comms[TRAFFIC_THREADS];
  peruse_event_h hs[TRAFFIC_THREADS];
  for (int i = 0; i < TRAFFIC_THREADS; ++i) {
    CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &comms[i]));
    CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_COMPLETE, comms[i], counting_cb, NULL, &hs[i]),
             PERUSE_SUCCESS);
    CHECK_PERUSE_OK(PERUSE_Event_activate(hs[i]));
  }
  pthread_t t[THREADS + TRAFFIC_THREADS];
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, incrementer, NULL);
  for (int i = 0; i < TRAFFIC_THREADS; ++i) pthread_create(&t[THREADS + i], NULL, traffic, &comms[i]);
  for (int i = 0; i < THREADS + TRAFFIC_THREADS; ++i) pthread_join(t[i], NULL);
  long want = (long)THREADS * INCREMENTS + (long)TRAFFIC_THREADS * EXCHANGES * 2;
  CHECK(lock_errors == 0, "%ld PERUSE_Lock/Unlock calls failed", lock_errors);
  CHECK(overlaps == 0, "%ld times two threads were inside the lock together", overlaps);
  CHECK(counter == want, "counter %ld after guarded increments, want %ld", counter, want);
  for (int i = 0; i < TRAFFIC_THREADS; ++i) {
    CHECK_PERUSE_OK(PERUSE_Event_release(&hs[i]));
    CHECK_OK(MPI_Comm_free(&comms[i]));
  }
}

/* ---------------------------------------------------------- not_grantable */

enum { PLAN_OWN_NESTED, PLAN_AFTER_NESTED, PLAN_MAIN_HOLDS, PLAN_AFTER_MAIN, PLAN_DONE };
static int plan = PLAN_DONE;
static int upcalls;

static int lock_plan_cb(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  ++upcalls;
  switch (plan) {
    case PLAN_OWN_NESTED:
      /* Take it, then ask again while holding it: not grantable, and it stays
       * so for this upcall, even after we let go. */
      count_fail("upcall: first PERUSE_Lock", PERUSE_Lock(), PERUSE_SUCCESS);
      count_fail("upcall: PERUSE_Lock while holding it", PERUSE_Lock(), PERUSE_ERR_LOCK_NOT_GRANTABLE);
      count_fail("upcall: second try while holding it", PERUSE_Lock(), PERUSE_ERR_LOCK_NOT_GRANTABLE);
      count_fail("upcall: PERUSE_Unlock", PERUSE_Unlock(), PERUSE_SUCCESS);
      count_fail("upcall: PERUSE_Lock after unlocking, same upcall", PERUSE_Lock(), PERUSE_ERR_LOCK_NOT_GRANTABLE);
      count_fail("upcall: PERUSE_Unlock of a lock not held", PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
      plan = PLAN_AFTER_NESTED;
      break;
    case PLAN_AFTER_NESTED:
    case PLAN_AFTER_MAIN:
      /* A new upcall: grantable again. */
      count_fail("next upcall: PERUSE_Lock", PERUSE_Lock(), PERUSE_SUCCESS);
      count_fail("next upcall: PERUSE_Unlock", PERUSE_Unlock(), PERUSE_SUCCESS);
      plan = PLAN_DONE;
      break;
    case PLAN_MAIN_HOLDS:
      /* The code that made the MPI call holds the lock. */
      count_fail("upcall under the caller's lock: PERUSE_Lock", PERUSE_Lock(), PERUSE_ERR_LOCK_NOT_GRANTABLE);
      count_fail("upcall under the caller's lock: second try", PERUSE_Lock(), PERUSE_ERR_LOCK_NOT_GRANTABLE);
      plan = PLAN_AFTER_MAIN;
      break;
    default:
      break;
  }
  return MPI_SUCCESS;
}

/* The handle whose REQ_ACTIVATE upcalls run lock_plan_cb. */
static peruse_event_h watch_activations(void) {
  peruse_event_h h = PERUSE_EVENT_HANDLE_NULL;
  CHECK_RC(PERUSE_Event_comm_register(PERUSE_COMM_REQ_ACTIVATE, MPI_COMM_SELF, lock_plan_cb, NULL, &h),
           PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_activate(h));
  return h;
}

/* One upcall: an Irecv from nobody activates (REQ_ACTIVATE); lock_held
 * says whether this thread holds the lock across MPI_Irecv. */
static void one_upcall(int lock_held) {
  char b = 0;
  MPI_Request rq;
  if (lock_held) CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_OK(MPI_Irecv(&b, 1, MPI_BYTE, 0, 1, MPI_COMM_SELF, &rq));
  if (lock_held) CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS); /* still ours after the upcall */
  CHECK_OK(MPI_Cancel(&rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void not_grantable(void) {
  peruse_event_h h = watch_activations();
  plan = PLAN_OWN_NESTED;
  one_upcall(0);
  one_upcall(0);
  CHECK(plan == PLAN_DONE && upcalls == 2, "own-lock plan ended at step %d after %d upcalls", plan, upcalls);
  /* Outside the upcall the lock is free and works. */
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  CHECK_PERUSE_OK(PERUSE_Event_release(&h));
}

/* Two handles on REQ_ACTIVATE: one activation runs two upcalls, the first
 * made not grantable, the second a fresh upcall. */
static void not_grantable_two_handles(void) {
  peruse_event_h h1 = watch_activations();
  peruse_event_h h2 = watch_activations();
  plan = PLAN_OWN_NESTED;
  one_upcall(0);
  CHECK(plan == PLAN_DONE && upcalls == 2, "two-handle plan ended at step %d after %d upcalls", plan, upcalls);
  CHECK_PERUSE_OK(PERUSE_Event_release(&h1));
  CHECK_PERUSE_OK(PERUSE_Event_release(&h2));
}

/* The thread holds the lock when it enters MPI, and an upcall runs on it.
 * The spec forbids MPI calls under PERUSE_Lock (5.2.16); the library must
 * still not deadlock on itself. ThreadSanitizer rightly reports the lock
 * order this program creates (tool lock -> engine lock -> tool lock). */
static void not_grantable_caller_holds(void) {
  peruse_event_h h = watch_activations();
  plan = PLAN_MAIN_HOLDS;
  one_upcall(1);
  one_upcall(0);
  CHECK(plan == PLAN_DONE && upcalls == 2, "caller-lock plan ended at step %d after %d upcalls", plan, upcalls);
  CHECK_PERUSE_OK(PERUSE_Event_release(&h));
}

/* -------------------------------------------------------- unlock_not_held */

static volatile int other_holds, other_may_go;

static void* other_holder(void* arg) {
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  __atomic_store_n(&other_holds, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&other_may_go, __ATOMIC_SEQ_CST)) {
  }
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  return NULL;
}

static void unlock_not_held(void) {
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
  /* Held by another thread: not ours to unlock. */
  pthread_t t;
  pthread_create(&t, NULL, other_holder, NULL);
  while (!__atomic_load_n(&other_holds, __ATOMIC_SEQ_CST)) {
  }
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
  __atomic_store_n(&other_may_go, 1, __ATOMIC_SEQ_CST);
  pthread_join(t, NULL);
  /* Nothing was corrupted: the lock is free and works. */
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
}

/* ------------------------------------------------------------- lock_twice */

static void lock_twice(void) {
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Lock(), PERUSE_ERR_LOCK); /* would deadlock on itself */
  CHECK_RC(PERUSE_Lock(), PERUSE_ERR_LOCK);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS); /* one unlock frees it */
  CHECK_RC(PERUSE_Unlock(), PERUSE_ERR_UNLOCK);
  CHECK_RC(PERUSE_Lock(), PERUSE_SUCCESS);
  CHECK_RC(PERUSE_Unlock(), PERUSE_SUCCESS);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  ptest_init_multiple(&argc, &argv);
  CHECK_RC(PERUSE_Init(), PERUSE_SUCCESS);
  if (!strcmp(mode, "mutual_exclusion")) mutual_exclusion();
  else if (!strcmp(mode, "not_grantable")) not_grantable();
  else if (!strcmp(mode, "not_grantable_two_handles")) not_grantable_two_handles();
  else if (!strcmp(mode, "not_grantable_caller_holds")) not_grantable_caller_holds();
  else if (!strcmp(mode, "unlock_not_held")) unlock_not_held();
  else if (!strcmp(mode, "lock_twice")) lock_twice();
  else CHECK(0, "unknown mode \"%s\"", mode);
  char name[64];
  snprintf(name, sizeof name, "lock %s", mode);
  return itest_finish(name);
}
