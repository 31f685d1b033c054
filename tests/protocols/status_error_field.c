/* status.MPI_ERROR (MPI 4.0 section 3.2.5): calls that complete one
 * operation (Recv, Wait, Test, Probe, Iprobe, Mprobe, Improbe, Mrecv,
 * Sendrecv, Request_get_status), including their MPI_PROC_NULL forms, must
 * leave it as the caller set it; the multiple-completion calls (Waitall,
 * Testall, Waitsome, Testsome) set it in every status when they return
 * MPI_ERR_IN_STATUS, the failing one to its error. Two ranks. */
#include "tests/integration/itest.h"

#define SENTINEL MPI_ERR_DIMS

static void fresh(MPI_Status* st) {
  memset(st, 0xab, sizeof *st);
  st->MPI_ERROR = SENTINEL;
}

#define KEPT(st, what) CHECK((st).MPI_ERROR == SENTINEL, "%s wrote MPI_ERROR (%d)", what, (st).MPI_ERROR)

static void single_completion(int peer) {
  int x = 1, y = 0, flag = 0;
  MPI_Status st;
  MPI_Request r;
  MPI_Message m;
  if (itest_rank == 0) {
    for (int i = 0; i < 6; ++i) MPI_Send(&x, 1, MPI_INT, peer, 10 + i, MPI_COMM_WORLD);
  } else {
    fresh(&st);
    MPI_Probe(peer, 10, MPI_COMM_WORLD, &st);
    KEPT(st, "Probe");
    fresh(&st);
    flag = 0;
    while (!flag) MPI_Iprobe(peer, 10, MPI_COMM_WORLD, &flag, &st);
    KEPT(st, "Iprobe");
    fresh(&st);
    MPI_Recv(&y, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &st);
    KEPT(st, "Recv");
    CHECK_STATUS(&st, peer, 10, (int)sizeof(int), "Recv");
    fresh(&st);
    MPI_Irecv(&y, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    KEPT(st, "Wait");
    fresh(&st);
    MPI_Irecv(&y, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &r);
    flag = 0;
    while (!flag) MPI_Test(&r, &flag, &st);
    KEPT(st, "Test");
    fresh(&st);
    MPI_Mprobe(peer, 13, MPI_COMM_WORLD, &m, &st);
    KEPT(st, "Mprobe");
    fresh(&st);
    MPI_Mrecv(&y, 1, MPI_INT, &m, &st);
    KEPT(st, "Mrecv");
    fresh(&st);
    flag = 0;
    while (!flag) MPI_Improbe(peer, 14, MPI_COMM_WORLD, &flag, &m, &st);
    KEPT(st, "Improbe");
    MPI_Mrecv(&y, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    MPI_Irecv(&y, 1, MPI_INT, peer, 15, MPI_COMM_WORLD, &r);
    fresh(&st);
    flag = 0;
    while (!flag) MPI_Request_get_status(r, &flag, &st);
    KEPT(st, "Request_get_status");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  fresh(&st);
  MPI_Sendrecv(&x, 1, MPI_INT, peer, 20, &y, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &st);
  KEPT(st, "Sendrecv");

  /* MPI_PROC_NULL forms. */
  fresh(&st);
  MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  KEPT(st, "Recv(PROC_NULL)");
  CHECK_PROC_NULL_STATUS(&st, "Recv(PROC_NULL)");
  fresh(&st);
  MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  KEPT(st, "Probe(PROC_NULL)");
  fresh(&st);
  MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
  KEPT(st, "Mprobe(PROC_NULL)");
  fresh(&st);
  MPI_Mrecv(&y, 0, MPI_INT, &m, &st);
  KEPT(st, "Mrecv(PROC_NULL)");
  CHECK_PROC_NULL_STATUS(&st, "Mrecv(PROC_NULL)");
}

/* A truncated receive among good ones: MPI_ERR_IN_STATUS, and each status
 * says which one failed. */
static void multiple_completion(int peer) {
  int big[4] = {1, 2, 3, 4}, small[4][1];
  MPI_Status st[4];
  MPI_Request r[4];
  for (int round = 0; round < 2; ++round) {
    if (itest_rank == 0) {
      for (int i = 0; i < 4; ++i) MPI_Send(big, i == 2 ? 4 : 1, MPI_INT, peer, 30 + i, MPI_COMM_WORLD);
    } else {
      for (int i = 0; i < 4; ++i) {
        MPI_Irecv(small[i], 1, MPI_INT, peer, 30 + i, MPI_COMM_WORLD, &r[i]);
        fresh(&st[i]);
      }
      int rc;
      if (round == 0) {
        rc = MPI_Waitall(4, r, st);
      } else {
        int done = 0, idx[4], outcount;
        rc = MPI_SUCCESS;
        while (done < 4) {
          int one = MPI_Waitsome(4, r, &outcount, idx, st + done);
          if (one != MPI_SUCCESS) rc = one;
          for (int k = 0; k < outcount; ++k) {
            int want = idx[k] == 2 ? MPI_ERR_TRUNCATE : MPI_SUCCESS, cls = -1;
            MPI_Error_class(st[done + k].MPI_ERROR, &cls);
            CHECK(cls == want, "Waitsome: status of request %d says %d", idx[k], st[done + k].MPI_ERROR);
          }
          done += outcount;
        }
      }
      CHECK(rc == MPI_ERR_IN_STATUS, "round %d: returned %d, want MPI_ERR_IN_STATUS", round, rc);
      if (round == 0) {
        for (int i = 0; i < 4; ++i) {
          int cls = -1;
          MPI_Error_class(st[i].MPI_ERROR, &cls);
          CHECK(cls == (i == 2 ? MPI_ERR_TRUNCATE : MPI_SUCCESS), "Waitall: status %d says %d", i, st[i].MPI_ERROR);
        }
      }
    }
  }
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int peer = 1 - itest_rank;
  single_completion(peer);
  multiple_completion(peer);
  return itest_finish("status_error_field");
}
