/* PERUSE over a rendezvous pulled by RMA reads (tests/ofi BUILD runs it with
 * SONDE_OFI_READ_BYTES=65536): a 1 MiB message is 16 fi_reads. The
 * receiver's request reports XFER_BEGIN, one XFER_CONTINUE per read but
 * the last (15), XFER_END; the sender, whose memory is read without its
 * doing, reports XFER_BEGIN and XFER_END when the receiver's kFin arrives
 * and no CONTINUE (as with shm single copy; docs/ofi.md). A streamed
 * transfer would give the sender CONTINUEs: this also checks that the data
 * went by RMA. Every byte is checked, for a contiguous and a strided
 * receive (read into bounce fragments, unpacked in order). */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>

/* The transfer events of the tagged message, in firing order. */
static int trail[256], trail_len;

static int record(peruse_event_h h, MPI_Aint uid, peruse_comm_spec_t* spec, void* param) {
  int ev;
  PERUSE_Event_get(h, &ev);
  if (spec->tag == 7 && trail_len < 256) trail[trail_len++] = ev;
  return MPI_SUCCESS;
}

/* BEGIN first, END last, exactly `continues` CONTINUEs between, nothing else. */
static int trail_is(int continues) {
  if (trail_len != continues + 2) return 0;
  if (trail[0] != PERUSE_COMM_REQ_XFER_BEGIN || trail[trail_len - 1] != PERUSE_COMM_REQ_XFER_END) return 0;
  for (int i = 1; i + 1 < trail_len; ++i)
    if (trail[i] != PERUSE_COMM_REQ_XFER_CONTINUE) return 0;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PERUSE_Init();
  static const int watched[3] = {PERUSE_COMM_REQ_XFER_END, PERUSE_COMM_REQ_XFER_CONTINUE, PERUSE_COMM_REQ_XFER_BEGIN};
  peruse_event_h handles[3];
  for (int e = 2; e >= 0; --e) {
    PERUSE_Event_comm_register(watched[e], MPI_COMM_WORLD, record, NULL, &handles[e]);
    PERUSE_Event_activate(handles[e]);
  }
  const int n = 1 << 20;
  int ok = 1;
  /* Round 0: contiguous receive. Round 1: every other int of a 2 MiB buffer. */
  for (int round = 0; round < 2; ++round) {
    trail_len = 0;
    int* buf = calloc((size_t)n / 2, sizeof(int) * 2);
    MPI_Datatype strided;
    MPI_Type_vector(n / 4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    if (rank == 0) {
      for (int i = 0; i < n / 4; ++i) buf[i] = i * 7 + round;
      MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
      if (round == 0) {
        MPI_Recv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, 1, strided, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < n / 4; ++i) {
        int at = round == 0 ? i : 2 * i;
        if (buf[at] != i * 7 + round || (round == 1 && buf[at + 1] != 0)) {
          ok = 0;
          break;
        }
      }
    }
    int round_ok = trail_is(rank == 1 ? 15 : 0);
    printf("rank %d round %d: %d transfer events: %s\n", rank, round, trail_len, round_ok && ok ? "ok" : "FAILED");
    ok = ok && round_ok;
    MPI_Type_free(&strided);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
