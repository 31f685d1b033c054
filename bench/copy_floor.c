/* The copy floor of MPI_Allgather and MPI_Alltoall on one host: what the
 * data movement alone costs, without any MPI. np processes (forked, bound
 * to cores 0..np-1 when there are enough cores) each copy their own block
 * with memcpy and read every peer's block for them straight from the peer's
 * send buffer with process_vm_readv (the single copy an MPI library makes
 * between processes of one host at these sizes), then meet at a spin
 * barrier in shared memory. Prints "<collective> <bytes> <median_us>" like
 * coll.c, for the block sizes where both collectives are bound by their
 * copies, so bench/compare.sh can set each library's time beside it.
 * Plain C, no MPI: build with cc. usage: copy_floor [np] (default 2).
 * Environment: BENCH_TRIALS (default 7), BENCH_BYTES (bytes per trial,
 * default 64 MiB), BENCH_MAX_ITERS (default 20000), as coll.c reads them.
 * Exits 2 when the system refuses process_vm_readv between the processes. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxRanks = 64, kMaxTrials = 63 };

/* Shared between the processes: the barrier and where each one's send
 * buffer is. */
struct Shared {
  _Atomic uint64_t arrived;    /* processes at the current barrier */
  _Atomic uint64_t generation; /* barriers completed */
  _Atomic int failed;          /* errno of a refused process_vm_readv */
  pid_t pid[kMaxRanks];
  uintptr_t sbuf[kMaxRanks];
};

static int env_int(const char* name, int dflt) {
  const char* s = getenv(name);
  return s && *s ? atoi(s) : dflt;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int yield_when_waiting;

static void barrier(struct Shared* s, int np) {
  const uint64_t gen = atomic_load(&s->generation);
  if (atomic_fetch_add(&s->arrived, 1) + 1 == (uint64_t)np) {
    atomic_store(&s->arrived, 0);
    atomic_store(&s->generation, gen + 1);
    return;
  }
  while (atomic_load(&s->generation) == gen)
    if (yield_when_waiting) sched_yield();
}

static int by_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* One call: the own block, then every peer's block for this rank, read from
 * the peer's send buffer (alltoall: the peer's block `me`; allgather: the
 * peer's whole send buffer). */
static int one_call(struct Shared* s, int np, int me, int alltoall, size_t n, char* sbuf, char* rbuf) {
  memcpy(rbuf + (size_t)me * n, alltoall ? sbuf + (size_t)me * n : sbuf, n);
  for (int k = 1; k < np; ++k) {
    const int j = (me + k) % np;
    struct iovec local = {rbuf + (size_t)j * n, n};
    struct iovec remote = {(void*)(s->sbuf[j] + (alltoall ? (size_t)me * n : 0)), n};
    if (process_vm_readv(s->pid[j], &local, 1, &remote, 1, 0) != (ssize_t)n) return -1;
  }
  barrier(s, np);
  return 0;
}

static void rank_main(struct Shared* s, int np, int me) {
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* let the peers read us under Yama */
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (np <= cores) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(me, &set);
    sched_setaffinity(0, sizeof set, &set);
  } else {
    yield_when_waiting = 1;
  }
  static const size_t kSizes[] = {65536, 1048576};
  const size_t most = kSizes[sizeof kSizes / sizeof kSizes[0] - 1];
  char* sbuf = malloc(most * (size_t)np);
  char* rbuf = malloc(most * (size_t)np);
  if (!sbuf || !rbuf) _exit(1);
  memset(sbuf, me + 1, most * (size_t)np);
  memset(rbuf, 0, most * (size_t)np);
  s->pid[me] = getpid();
  s->sbuf[me] = (uintptr_t)sbuf;
  barrier(s, np);

  int trials = env_int("BENCH_TRIALS", 7);
  if (trials > kMaxTrials) trials = kMaxTrials;
  if (trials < 1) trials = 1;
  const double budget = (double)env_int("BENCH_BYTES", 64 << 20);
  const int max_iters = env_int("BENCH_MAX_ITERS", 20000);
  for (int alltoall = 0; alltoall < 2; ++alltoall) {
    for (size_t z = 0; z < sizeof kSizes / sizeof kSizes[0]; ++z) {
      const size_t n = kSizes[z];
      int iters = (int)(budget / (double)(n + 4096));
      if (iters > max_iters) iters = max_iters;
      if (iters < 5) iters = 5;
      double samples[kMaxTrials];
      for (int t = 0; t < trials + 1; ++t) { /* the first trial warms up */
        barrier(s, np);
        const double t0 = now_us();
        for (int i = 0; i < iters; ++i) {
          if (one_call(s, np, me, alltoall, n, sbuf, rbuf) != 0) {
            atomic_store(&s->failed, errno ? errno : EIO);
            _exit(2); /* the parent stops the others, which wait at the barrier */
          }
        }
        /* Every rank leaves the last call's barrier together: rank 0's
         * clock is the job's. */
        if (t > 0) samples[t - 1] = (now_us() - t0) / iters;
      }
      if (me == 0) {
        qsort(samples, (size_t)trials, sizeof samples[0], by_double);
        printf("%s %zu %.3f\n", alltoall ? "alltoall" : "allgather", n, samples[trials / 2]);
        fflush(stdout);
      }
    }
  }
  _exit(0);
}

int main(int argc, char** argv) {
  const int np = argc > 1 ? atoi(argv[1]) : 2;
  if (np < 2 || np > kMaxRanks) {
    fprintf(stderr, "copy_floor: np must be 2..%d\n", kMaxRanks);
    return 1;
  }
  struct Shared* s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) {
    perror("copy_floor: mmap");
    return 1;
  }
  memset(s, 0, sizeof *s);
  pid_t kids[kMaxRanks];
  for (int r = 0; r < np; ++r) {
    kids[r] = fork();
    if (kids[r] < 0) {
      perror("copy_floor: fork");
      for (int k = 0; k < r; ++k) kill(kids[k], SIGKILL);
      return 1;
    }
    if (kids[r] == 0) rank_main(s, np, r);
  }
  /* A refused read leaves the others at a barrier: stop them. */
  int status = 0, worst = 0;
  for (int left = np; left > 0; --left) {
    const pid_t done = wait(&status);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (code != 0 && worst == 0) {
      worst = code;
      for (int r = 0; r < np; ++r)
        if (kids[r] != done) kill(kids[r], SIGKILL);
    }
  }
  if (worst == 2)
    fprintf(stderr, "copy_floor: process_vm_readv refused between the processes (%s)\n",
            strerror(atomic_load(&s->failed)));
  else if (worst != 0) fprintf(stderr, "copy_floor: a process failed (out of memory?)\n");
  return worst;
}
