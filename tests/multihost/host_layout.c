/* Where each rank runs, as PMIx reports it, and traffic across hosts.
 *
 *   host_layout NODES [loop]
 *
 * Checks on every rank: MPI_Get_processor_name is this host's name (each
 * fake host has its own UTS namespace); MPI_COMM_TYPE_SHARED groups exactly
 * the ranks with the same processor name; there are NODES of them. Then
 * every rank sends 1, 100 KiB and 2 MiB patterned messages to every other
 * rank (crossing hosts through ofi, within a host through shm) and checks
 * each byte. Rank 0 prints "host_layout: N ranks on M nodes verified".
 * With "loop" the exchange repeats until the job is ended from outside (the
 * link-failure test). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char* what, int rank) {
  fprintf(stderr, "host_layout: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 3);
  return 3;
}

static unsigned char byte_of(int from, int to, int size_index, size_t i) {
  return (unsigned char)(i * 131 + from * 17 + to * 7 + size_index * 3);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int want_nodes = argc > 1 ? atoi(argv[1]) : 0;
  int loop = argc > 2 && strcmp(argv[2], "loop") == 0;

  char name[MPI_MAX_PROCESSOR_NAME] = {0}, uts[256] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  gethostname(uts, sizeof uts - 1);
  if (strcmp(name, uts) != 0) {
    fprintf(stderr, "host_layout: rank %d: processor name %s, host name %s\n", rank, name, uts);
    return fail("processor name is not this host's name", rank);
  }
  char* all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size;
  MPI_Comm_size(node, &node_size);
  int same = 0, nodes = 0;
  for (int r = 0; r < size; ++r) {
    if (strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0) ++same;
    int first = 1;
    for (int q = 0; q < r; ++q)
      if (strcmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0) first = 0;
    nodes += first;
  }
  if (same != node_size) return fail("MPI_COMM_TYPE_SHARED does not group the ranks of this host", rank);
  int is_leader = 0, node_rank;
  MPI_Comm_rank(node, &node_rank);
  is_leader = node_rank == 0;
  int leaders = 0;
  MPI_Allreduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (leaders != nodes) return fail("shared-memory communicators disagree with the host names", rank);
  if (want_nodes && nodes != want_nodes) return fail("wrong number of nodes", rank);

  static const size_t sizes[] = {1, 100 * 1024, 2 * 1024 * 1024};
  unsigned char* out = malloc(sizes[2]);
  unsigned char* in = malloc(sizes[2]);
  for (int s = 0; s < 3; s = (loop && s == 2) ? 0 : s + 1) {
    if (loop && s == 0 && rank == 0) {
      printf("host_layout: traffic flowing\n"); /* the link-failure test waits for this */
      fflush(stdout);
    }
    for (int step = 1; step < size; ++step) {
      int to = (rank + step) % size, from = (rank - step + size) % size;
      for (size_t i = 0; i < sizes[s]; ++i) out[i] = byte_of(rank, to, s, i);
      memset(in, 0, sizes[s]);
      MPI_Status st;
      MPI_Sendrecv(out, (int)sizes[s], MPI_BYTE, to, s, in, (int)sizes[s], MPI_BYTE, from, s, MPI_COMM_WORLD, &st);
      int got;
      MPI_Get_count(&st, MPI_BYTE, &got);
      if ((size_t)got != sizes[s]) return fail("short message", rank);
      for (size_t i = 0; i < sizes[s]; ++i)
        if (in[i] != byte_of(from, rank, s, i)) return fail("corrupted byte", rank);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("host_layout: %d ranks on %d nodes verified\n", size, nodes);
  free(out);
  free(in);
  free(all);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
