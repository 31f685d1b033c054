/* What mpiexec's binding did to the ranks, seen from the ranks themselves.
 *
 *   binding_check UNIT     UNIT: hwthread, core, l3cache, numa, package, or
 *                          none (the ranks must not be bound)
 *
 * Each rank reads its own affinity (sched_getaffinity); the ranks of each
 * host (MPI_COMM_TYPE_SHARED) gather them (MPI_Allgather) and every rank
 * checks, against this host's hwloc topology restricted to the CPUs its
 * launcher may use (our parent's affinity: mpiexec or sonde-hostd execs us
 * directly), that the host's i-th rank holds exactly
 * the CPUs of the host's (i mod count)-th object of UNIT: one object each,
 * a different one while there are no more ranks than objects, and wrapping
 * around after (so ranks i and i+count share). With one PU per core (this
 * machine), a rank bound to a core holds exactly one CPU. Without binding,
 * every rank holds all the CPUs. Rank 0 prints "binding_check: rank 0
 * passed". */
#define _GNU_SOURCE
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/itest.h"

static hwloc_obj_type_t type_of(const char* unit) {
  if (strcmp(unit, "hwthread") == 0) return HWLOC_OBJ_PU;
  if (strcmp(unit, "core") == 0) return HWLOC_OBJ_CORE;
  if (strcmp(unit, "l3cache") == 0) return HWLOC_OBJ_L3CACHE;
  if (strcmp(unit, "numa") == 0) return HWLOC_OBJ_NUMANODE;
  if (strcmp(unit, "package") == 0) return HWLOC_OBJ_PACKAGE;
  return HWLOC_OBJ_TYPE_MAX;
}

/* The CPUs of `set` as a glibc mask (hwloc's bits are OS CPU numbers). */
static void to_mask(hwloc_const_cpuset_t set, cpu_set_t* mask) {
  CPU_ZERO(mask);
  for (int id = hwloc_bitmap_first(set); id >= 0; id = hwloc_bitmap_next(set, id)) {
    if (id < CPU_SETSIZE) CPU_SET(id, mask);
  }
}

static void print_mask(const char* what, int who, const cpu_set_t* m) {
  fprintf(stderr, "[rank %d] %s %d holds cpus", itest_rank, what, who);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, m)) fprintf(stderr, " %d", c);
  }
  fputc('\n', stderr);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  if (argc != 2 || (strcmp(argv[1], "none") != 0 && type_of(argv[1]) == HWLOC_OBJ_TYPE_MAX)) {
    fprintf(stderr, "usage: %s hwthread|core|l3cache|numa|package|none\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int unbound = strcmp(argv[1], "none") == 0;

  MPI_Comm host;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host));
  int local_rank = 0, local_size = 0;
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_size(host, &local_size);

  cpu_set_t mine;
  CPU_ZERO(&mine);
  CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0, "sched_getaffinity failed");
  cpu_set_t* all = calloc((size_t)local_size, sizeof(cpu_set_t));
  CHECK_OK(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, host));

  /* The CPUs the launcher saw: our cgroup's (hwloc's default), within the
   * launcher's own affinity, not ours (we are bound by now). */
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  cpu_set_t launcher;
  CHECK(sched_getaffinity(getppid(), sizeof launcher, &launcher) == 0, "cannot read the launcher's affinity");
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &launcher)) hwloc_bitmap_set(allowed, (unsigned)c);
  }
  CHECK(hwloc_topology_restrict(topo, allowed, 0) == 0, "cannot restrict the topology to the launcher's cpus");
  hwloc_bitmap_free(allowed);
  cpu_set_t every;
  to_mask(hwloc_topology_get_topology_cpuset(topo), &every);

  if (unbound) {
    for (int i = 0; i < local_size; ++i) {
      if (!CPU_EQUAL(&all[i], &every)) print_mask("unbound local rank", i, &all[i]);
      CHECK(CPU_EQUAL(&all[i], &every), "local rank %d is restricted (%d of %d cpus)", i, CPU_COUNT(&all[i]),
            CPU_COUNT(&every));
    }
  } else {
    const hwloc_obj_type_t type = type_of(argv[1]);
    /* Objects without CPUs (memory-only NUMA nodes) take no ranks. */
    int count = 0;
    hwloc_obj_t objs[1024];
    for (int i = 0; i < hwloc_get_nbobjs_by_type(topo, type) && count < 1024; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
      if (!hwloc_bitmap_iszero(o->cpuset)) objs[count++] = o;
    }
    CHECK(count > 0, "this host has no %s", argv[1]);
    for (int i = 0; i < local_size && count > 0; ++i) {
      cpu_set_t want;
      to_mask(objs[i % count]->cpuset, &want);
      if (!CPU_EQUAL(&all[i], &want)) {
        print_mask("local rank", i, &all[i]);
        print_mask("it should hold those of object", i % count, &want);
      }
      CHECK(CPU_EQUAL(&all[i], &want), "local rank %d is not on %s %d of %d", i, argv[1], i % count, count);
      /* One object each: distinct while ranks <= objects, shared after. */
      for (int j = 0; j < i; ++j) {
        cpu_set_t both;
        CPU_AND(&both, &all[i], &all[j]);
        if ((i - j) % count == 0) {
          CHECK(CPU_EQUAL(&all[i], &all[j]), "local ranks %d and %d should share a %s", j, i, argv[1]);
        } else {
          CHECK(CPU_COUNT(&both) == 0, "local ranks %d and %d overlap (%d cpus)", j, i, CPU_COUNT(&both));
        }
      }
      if (type == HWLOC_OBJ_PU || (type == HWLOC_OBJ_CORE && hwloc_bitmap_weight(objs[0]->cpuset) == 1)) {
        CHECK(CPU_COUNT(&all[i]) == 1, "local rank %d holds %d cpus, not one", i, CPU_COUNT(&all[i]));
      }
    }
  }
  hwloc_topology_destroy(topo);
  free(all);
  MPI_Comm_free(&host);
  return itest_finish("binding_check");
}
