/* A rank that crashes must be reported with its real signal, and a job must
 * not load libfabric (with its PSM providers' crash handlers) unless it uses
 * the network transport.
 *
 *   crash_check segv      rank 1 (of >= 2) dereferences a null pointer after
 *                         MPI_Init; the others wait for it in a barrier
 *   crash_check no-fabric every rank fails if libfabric or a PSM library is
 *                         mapped into it after MPI_Init
 */
#include <signal.h>

#include "tests/integration/itest.h"

static int mapped(const char* needle) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, f)) found |= strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  const char* what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "segv") == 0) {
    if (itest_rank == 1) {
      volatile int* p = NULL;
      *p = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(what, "no-fabric") == 0) {
    CHECK(mapped("libfabric") == 0, "libfabric is mapped into a single-host rank");
    CHECK(mapped("libpsm") == 0, "a PSM library is mapped into a single-host rank");
    CHECK(mapped("libinfinipath") == 0, "libinfinipath is mapped into a single-host rank");
  } else {
    CHECK(0, "usage: crash_check segv|no-fabric");
  }
  return itest_finish("crash_check");
}
