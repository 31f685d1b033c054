/* PERUSE_COMM_REQ_XFER_CONTINUE fires per fragment on both sides of a
 * streamed transfer: a 1 MiB message through 64 KiB rings arrives in many
 * pieces. Each side counts CONTINUE events of its own operation between its
 * request's XFER_BEGIN and XFER_END. */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>

static int phase[32];         /* per event: count */
static int continues_between; /* CONTINUE seen after BEGIN and before END */
static int open_transfer;

static int on_event(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t* spec, void* param) {
  int ev;
  PERUSE_Event_get(h, &ev);
  if (spec->tag != 7) return MPI_SUCCESS; /* only the test message */
  ++phase[ev];
  if (ev == PERUSE_COMM_REQ_XFER_BEGIN) open_transfer = 1;
  if (ev == PERUSE_COMM_REQ_XFER_END) open_transfer = 0;
  if (ev == PERUSE_COMM_REQ_XFER_CONTINUE && open_transfer) ++continues_between;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PERUSE_Init();
  int events[] = {PERUSE_COMM_REQ_XFER_BEGIN, PERUSE_COMM_REQ_XFER_CONTINUE, PERUSE_COMM_REQ_XFER_END};
  for (int i = 0; i < 3; ++i) {
    peruse_event_h h;
    PERUSE_Event_comm_register(events[i], MPI_COMM_WORLD, on_event, NULL, &h);
    PERUSE_Event_activate(h);
  }
  int n = 1 << 20;
  char* buf = malloc((size_t)n);
  for (int i = 0; i < n; ++i) buf[i] = (char)(i * 7 + rank);
  if (rank == 0) MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int ok = phase[PERUSE_COMM_REQ_XFER_BEGIN] == 1 && phase[PERUSE_COMM_REQ_XFER_END] == 1 &&
           continues_between >= 4 && continues_between == phase[PERUSE_COMM_REQ_XFER_CONTINUE];
  if (rank == 1)
    for (int i = 0; i < n; ++i)
      if (buf[i] != (char)(i * 7)) {
        ok = 0;
        break;
      }
  printf("rank %d: begin %d continue %d (%d inside the transfer) end %d: %s\n", rank, phase[PERUSE_COMM_REQ_XFER_BEGIN],
         phase[PERUSE_COMM_REQ_XFER_CONTINUE], continues_between, phase[PERUSE_COMM_REQ_XFER_END], ok ? "ok" : "FAILED");
  free(buf);
  MPI_Finalize();
  return ok ? 0 : 1;
}
