/* What Sonde's own mpiexec tells each rank about the hosts of its job.
 *
 *   launch_layout PER_HOST   e.g. "2,1,2": ranks per host, in host order
 *   launch_layout @HOSTS     e.g. "@0,1,0": each rank's host index, in rank
 *                            order (--map-by node and other non-fill layouts)
 *
 * Checks on every rank: MPI_UNIVERSE_SIZE is the job's size; the
 * MPI_COMM_TYPE_SHARED communicator has exactly the ranks placed on this
 * host; MPI_Get_processor_name is this host's
 * own name, and ranks on different hosts see different names. Then an
 * Allreduce across every host. Rank 0 prints "launch_layout: ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(int rank, const char* what) {
  fprintf(stderr, "launch_layout: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 4);
  return 4;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) return fail(rank, "usage: launch_layout PER_HOST");

  /* Which host this rank should be on, and how many share it. */
  int host = -1, on_host = 0, first = 0, hosts = 0;
  if (argv[1][0] == '@') {
    int r = 0, max = -1;
    for (char* p = argv[1] + 1; *p != '\0'; ++r) {
      int h = (int)strtol(p, &p, 10);
      if (r == rank) host = h;
      if (h > max) max = h;
      if (*p == ',') ++p;
    }
    first = r;
    hosts = max + 1;
    r = 0;
    for (char* p = argv[1] + 1; *p != '\0'; ++r) {
      if ((int)strtol(p, &p, 10) == host) ++on_host;
      if (*p == ',') ++p;
    }
  } else {
    for (char* p = argv[1]; *p != '\0'; ++hosts) {
      int n = (int)strtol(p, &p, 10);
      if (host < 0 && rank < first + n) {
        host = hosts;
        on_host = n;
      }
      first += n;
      if (*p == ',') ++p;
    }
  }
  if (first != size) return fail(rank, "the layout given does not add up to the job size");

  int* universe = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
  if (!flag || *universe != size) return fail(rank, "MPI_UNIVERSE_SIZE is not the job size");

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size;
  MPI_Comm_size(node, &node_size);
  if (node_size != on_host) return fail(rank, "MPI_COMM_TYPE_SHARED does not match the placement");

  char name[MPI_MAX_PROCESSOR_NAME] = {0}, uts[256] = {0};
  int len;
  MPI_Get_processor_name(name, &len);
  gethostname(uts, sizeof uts - 1);
  if (strcmp(name, uts) != 0) return fail(rank, "processor name is not this host's name");
  char* all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
  int* host_of = calloc((size_t)size, sizeof(int));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  MPI_Allgather(&host, 1, MPI_INT, host_of, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    int same_name = strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    if (same_name != (host_of[r] == host)) return fail(rank, "processor names do not follow the hosts");
  }
  long sum = 0, mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (long)size * (size + 1) / 2) return fail(rank, "wrong Allreduce result");
  if (rank == 0) printf("launch_layout: ok (%d ranks on %d hosts)\n", size, hosts);
  free(all);
  free(host_of);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
