/* Programs that hang on purpose, one per argument, for the launcher's hang
 * report (tests/hang/hang_report_test.sh says what each report must name).
 *
 *   ssend        ranks 0 and 1 MPI_Ssend to each other (tag 5)
 *   rendezvous   ranks 0 and 1 MPI_Send 1 MiB to each other (tag 6)
 *   wrong-tag    1 receives tag 9 from 0; 0 sent tag 8, then waits in MPI_Barrier
 *   wrong-source 1 receives tag 7 from 0; 2 sent it; 0 and 2 wait in MPI_Barrier
 *   skip-coll    on "rows" (a duplicate of MPI_COMM_WORLD) every rank makes
 *                three MPI_Allreduce; then ranks 0..n-2 make a fourth, the
 *                last rank waits in MPI_Recv from 0 (tag 3) instead
 *   skip-shared  as skip-coll with 20 MPI_Allreduce before the one the last
 *                rank skips, so "rows" has its shared segment by then
 *                (the collectives' waits hold no request)
 *   roots        MPI_Bcast of 1 MiB on MPI_COMM_WORLD, each rank naming
 *                itself the root
 *   any-source   0 receives from MPI_ANY_SOURCE (tag 4); the rest wait in MPI_Barrier
 *   user-code    1 stays in its own code; 0 receives from 1 (tag 2), the
 *                rest wait in MPI_Barrier
 *   cycle3       rank i MPI_Ssend to i+1 mod 3 (tag 11)
 *   probe        1 MPI_Probe from 0 with tag 9; 0 sent tag 8, then waits in MPI_Barrier
 *   mprobe       ranks 0 and 1 MPI_Mprobe from each other (tag 12)
 *   iprobe       0 loops on MPI_Iprobe from 1 with tag 13; the rest wait in MPI_Barrier
 *   threads      under MPI_THREAD_MULTIPLE, 0's second thread waits in MPI_Recv
 *                from 1 (tag 14) while its main thread sleeps in user code;
 *                the rest wait in MPI_Barrier
 *   spawned      2 ranks spawn 3 children (the launcher's slots 2-4): parent
 *                0 receives from child 0 (tag 16), child 0 MPI_Ssend to
 *                child 1 (tag 15), child 1 receives from parent 0 (tag 17):
 *                a cycle across the two jobs; parent 1 and child 2 wait in
 *                MPI_Barrier on their own worlds
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (1 << 20)

static void* receive_tag14(void* arg) {
  MPI_Recv(arg, 1, MPI_INT, 1, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int provided;
  MPI_Init_thread(&argc, &argv, strcmp(mode, "threads") ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Past MPI_Init a rank answers the snapshot signal (mpirun_dump_test.sh
   * waits for this line before sending it). */
  fprintf(stderr, "hang_cases: rank %d ready\n", rank);
  fflush(stderr);
  int x = rank, y = -1;
  char* big = calloc(BIG, 1);
  char* big2 = calloc(BIG, 1);
  if (!strcmp(mode, "ssend")) {
    if (rank < 2) MPI_Ssend(&x, 1, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "rendezvous")) {
    if (rank < 2) MPI_Send(big, BIG, MPI_CHAR, 1 - rank, 6, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "wrong-tag")) {
    if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "wrong-source")) {
    if (rank == 2) MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "skip-coll") || !strcmp(mode, "skip-shared")) {
    MPI_Comm rows;
    MPI_Comm_dup(MPI_COMM_WORLD, &rows);
    MPI_Comm_set_name(rows, "rows");
    const int before = strcmp(mode, "skip-coll") ? 20 : 3;
    for (int i = 0; i < before; ++i) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, rows);
    if (rank < size - 1) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, rows);
    else MPI_Recv(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "roots")) {
    MPI_Bcast(big, BIG, MPI_CHAR, rank, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "any-source")) {
    if (rank == 0) MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "user-code")) {
    if (rank == 1)
      for (;;) sleep(1);
    if (rank == 0) MPI_Recv(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "cycle3")) {
    if (rank < 3) MPI_Ssend(&x, 1, MPI_INT, (rank + 1) % 3, 11, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "probe")) {
    if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    if (rank == 1) MPI_Probe(0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "mprobe")) {
    MPI_Message msg;
    if (rank < 2) MPI_Mprobe(1 - rank, 12, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "iprobe")) {
    int flag = 0;
    if (rank == 0)
      while (!flag) MPI_Iprobe(1, 13, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "threads")) {
    if (provided != MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
      pthread_t t;
      pthread_create(&t, NULL, receive_tag14, &y);
      for (;;) sleep(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "spawned")) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) MPI_Abort(MPI_COMM_WORLD, 4);
    self[n] = 0;
    char* args[] = {"spawned-child", NULL};
    MPI_Comm children;
    MPI_Comm_spawn(self, args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, MPI_ERRCODES_IGNORE);
    if (rank == 0) MPI_Recv(&y, 1, MPI_INT, 0, 16, children, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "spawned-child")) {
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) MPI_Abort(MPI_COMM_WORLD, 5);
    fprintf(stderr, "hang_cases: child %d ready\n", rank);
    if (rank == 0) MPI_Ssend(&x, 1, MPI_INT, 1, 15, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 17, parent, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* Not reached in a hanging mode. */
  free(big);
  free(big2);
  MPI_Finalize();
  return 0;
}
