/* MPI_THREAD_MULTIPLE: several threads per rank run independent ping-pongs
 * with their twin thread on the peer rank (tag = thread id), eager and
 * rendezvous sizes, with data checks; plus threads blocked in MPI_Recv on
 * MPI_ANY_SOURCE while others send. Any lost, duplicated or misrouted
 * message fails the check or hangs (mpiexec --timeout ends it). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ITERS 300

static int rank, size;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char* what, int t, int i) {
  pthread_mutex_lock(&fail_lock);
  fprintf(stderr, "rank %d thread %d iteration %d: %s\n", rank, t, i, what);
  ++failures;
  pthread_mutex_unlock(&fail_lock);
}

static void* worker(void* arg) {
  int t = (int)(long)arg;
  int peer = rank ^ 1;
  size_t max = 64 * 1024;
  unsigned char* buf = malloc(max);
  for (int i = 0; i < ITERS; ++i) {
    size_t n = (i % 3 == 0) ? max : (size_t)(i * 13 % 200);
    if (rank % 2 == 0) {
      for (size_t k = 0; k < n; ++k) buf[k] = (unsigned char)(t * 41 + i + k);
      MPI_Send(buf, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD);
      MPI_Status st;
      MPI_Recv(buf, (int)max, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      if ((size_t)count != n) fail("wrong reply size", t, i);
      for (size_t k = 0; k < n; ++k)
        if (buf[k] != (unsigned char)(t * 41 + i + k + 1)) { fail("wrong reply data", t, i); break; }
    } else {
      MPI_Status st;
      MPI_Recv(buf, (int)max, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      if ((size_t)count != n) fail("wrong request size", t, i);
      for (int k = 0; k < count; ++k) buf[k] = (unsigned char)(buf[k] + 1);
      MPI_Send(buf, count, MPI_BYTE, peer, t, MPI_COMM_WORLD);
    }
  }
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "provided thread level %d\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int main_flag;
  MPI_Is_thread_main(&main_flag);
  if (!main_flag) fail("main thread not recognised", -1, 0);
  if (size % 2) {
    fprintf(stderr, "needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  int total;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("thread_multiple: %d failures\n", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
