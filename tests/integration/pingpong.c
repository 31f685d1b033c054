/* Ping-pong of many sizes between rank pairs with data verification. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int size, int i, int round) { return (unsigned char)(size * 31 + i * 7 + round); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size % 2) {
    if (rank == 0) fprintf(stderr, "pingpong needs an even number of ranks\n");
    MPI_Finalize();
    return size == 1 ? 0 : 2;
  }
  int peer = rank ^ 1;
  int max = 4 << 20;
  unsigned char* buf = malloc(max);
  int failures = 0;
  for (int bytes = 0; bytes <= max; bytes = bytes ? bytes * 2 + (bytes % 3) : 1) {
    for (int round = 0; round < 3; ++round) {
      if (rank % 2 == 0) {
        for (int i = 0; i < bytes; ++i) buf[i] = pattern(bytes, i, round);
        MPI_Send(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD);
        memset(buf, 0, bytes);
        MPI_Status st;
        MPI_Recv(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != bytes || st.MPI_SOURCE != peer || st.MPI_TAG != round) {
          fprintf(stderr, "rank %d: bad status for %d bytes: count %d source %d tag %d\n", rank, bytes, count,
                  st.MPI_SOURCE, st.MPI_TAG);
          ++failures;
        }
        for (int i = 0; i < bytes; ++i)
          if (buf[i] != (unsigned char)(pattern(bytes, i, round) + 1)) {
            fprintf(stderr, "rank %d: %d bytes: byte %d is %d\n", rank, bytes, i, buf[i]);
            ++failures;
            break;
          }
      } else {
        MPI_Recv(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < bytes; ++i) {
          if (buf[i] != pattern(bytes, i, round)) {
            fprintf(stderr, "rank %d: %d bytes: byte %d is %d\n", rank, bytes, i, buf[i]);
            ++failures;
            break;
          }
          buf[i] = (unsigned char)(buf[i] + 1);
        }
        MPI_Send(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD);
      }
    }
  }
  free(buf);
  MPI_Finalize();
  if (rank == 0 && !failures) printf("pingpong: all sizes verified\n");
  return failures ? 1 : 0;
}
