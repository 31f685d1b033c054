/* coll_more.c's nonblocking collectives: many outstanding on one
 * communicator next to point-to-point traffic, the v-forms, and a
 * communicator or user op freed while a collective on it still runs.
 * Plain C against <mpi.h>. */
#ifndef SONDE_TESTS_COLL_MORE_NONBLOCKING_H
#define SONDE_TESTS_COLL_MORE_NONBLOCKING_H

#include "tests/coll/more_data.h"

/* Eleven collectives outstanding at once on one communicator, next to a
 * ring of point-to-point messages, completed in reverse order. */
static void test_nonblocking(MPI_Comm comm, long count, MPI_Op matop) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("nonblocking mix count %ld (size %d)", count, size);
  enum { N = 13 };
  MPI_Request req[N];
  int *bc = ints(count), *ar_in = ints(count), *ar = ints(count), *ar2 = ints(count);
  int *a2a_in = ints(count * size), *a2a_out = ints(count * size), *g = ints(count * size), *ag = ints(count * size);
  int *sc = ints(count), *red = ints(count), *p2p_out = ints(count), *p2p_in = ints(count);
  Mat *m_in = xmalloc((size_t)count * sizeof(Mat)), *m_out = xmalloc((size_t)count * sizeof(Mat));
  const int root = size - 1;
  for (long i = 0; i < count; ++i) {
    bc[i] = rank == root ? val(root, i, 40) : JUNK;
    ar_in[i] = val(rank, i, 41);
    p2p_out[i] = val(rank, i, 42);
    m_in[i] = mat_of(rank, i);
  }
  for (long i = 0; i < count * size; ++i) a2a_in[i] = a2a(rank, (int)(i / (count ? count : 1)), i % (count ? count : 1));
  int *scatter_src = ints(count * size);
  for (long i = 0; i < count * size; ++i) scatter_src[i] = val(0, i, 43);

  int n = 0;
  check_rc(MPI_Irecv(p2p_in, (int)count, MPI_INT, (rank + size - 1) % size, 7, comm, &req[n++]), "MPI_Irecv");
  check_rc(MPI_Ibcast(bc, (int)count, MPI_INT, root, comm, &req[n++]), "MPI_Ibcast");
  check_rc(MPI_Iallreduce(ar_in, ar, (int)count, MPI_INT, MPI_SUM, comm, &req[n++]), "MPI_Iallreduce");
  check_rc(MPI_Ibarrier(comm, &req[n++]), "MPI_Ibarrier");
  check_rc(MPI_Ialltoall(a2a_in, (int)count, MPI_INT, a2a_out, (int)count, MPI_INT, comm, &req[n++]),
           "MPI_Ialltoall");
  check_rc(MPI_Iallreduce(ar_in, ar2, (int)count, MPI_INT, MPI_MAX, comm, &req[n++]), "MPI_Iallreduce");
  check_rc(MPI_Isend(p2p_out, (int)count, MPI_INT, (rank + 1) % size, 7, comm, &req[n++]), "MPI_Isend");
  check_rc(MPI_Igather(ar_in, (int)count, MPI_INT, g, (int)count, MPI_INT, 0, comm, &req[n++]), "MPI_Igather");
  check_rc(MPI_Iallgather(ar_in, (int)count, MPI_INT, ag, (int)count, MPI_INT, comm, &req[n++]), "MPI_Iallgather");
  check_rc(MPI_Iscatter(scatter_src, (int)count, MPI_INT, sc, (int)count, MPI_INT, 0, comm, &req[n++]),
           "MPI_Iscatter");
  check_rc(MPI_Ireduce(ar_in, red, (int)count, MPI_INT, MPI_MIN, root, comm, &req[n++]), "MPI_Ireduce");
  check_rc(MPI_Iallreduce(m_in, m_out, (int)count, g_mat_type, matop, comm, &req[n++]), "MPI_Iallreduce");
  /* A blocking collective while the others are outstanding. */
  int one = 1, total = 0;
  check_rc(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  if (total != size) mismatch(-1, total, size);
  req[n++] = MPI_REQUEST_NULL;
  /* Reverse order, one at a time, some by polling. */
  for (int k = n - 1; k >= 0; --k) {
    if (k % 2) {
      int flag = 0;
      while (!flag) check_rc(MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE), "MPI_Test");
    } else {
      check_rc(MPI_Wait(&req[k], MPI_STATUS_IGNORE), "MPI_Wait");
    }
    if (req[k] != MPI_REQUEST_NULL) mismatch(k, 1, 0); /* the request was not nulled */
  }
  for (long i = 0; i < count; ++i) {
    long s = 0;
    int mx = -2147483647, mn = 2147483647;
    for (int r = 0; r < size; ++r) {
      int v = val(r, i, 41);
      s += v;
      if (v > mx) mx = v;
      if (v < mn) mn = v;
    }
    if (bc[i] != val(root, i, 40)) mismatch(i, bc[i], val(root, i, 40));
    if (ar[i] != s) mismatch(i, ar[i], s);
    if (ar2[i] != mx) mismatch(i, ar2[i], mx);
    if (rank == root && red[i] != mn) mismatch(i, red[i], mn);
    if (p2p_in[i] != val((rank + size - 1) % size, i, 42)) mismatch(i, p2p_in[i], val((rank + size - 1) % size, i, 42));
    if (sc[i] != val(0, rank * count + i, 43)) mismatch(i, sc[i], val(0, rank * count + i, 43));
    for (int r = 0; r < size; ++r) {
      if (a2a_out[r * count + i] != a2a(r, rank, i)) mismatch(r * count + i, a2a_out[r * count + i], a2a(r, rank, i));
      if (ag[r * count + i] != val(r, i, 41)) mismatch(r * count + i, ag[r * count + i], val(r, i, 41));
      if (rank == 0 && g[r * count + i] != val(r, i, 41)) mismatch(r * count + i, g[r * count + i], val(r, i, 41));
    }
  }
  expect_mats(m_out, count, 0, size, 0);

  /* Waitall over a batch, and Testany draining another. */
  begin_case("nonblocking Waitall/Testany count %ld (size %d)", count, size);
  int *outs[4];
  for (int k = 0; k < 4; ++k) {
    outs[k] = ints(count);
    check_rc(MPI_Iallreduce(ar_in, outs[k], (int)count, MPI_INT, k % 2 ? MPI_MAX : MPI_SUM, comm, &req[k]),
             "MPI_Iallreduce");
  }
  check_rc(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (int done = 0; done < 2;) {
    int index, flag;
    check_rc(MPI_Testany(2, req + 2, &index, &flag, MPI_STATUS_IGNORE), "MPI_Testany");
    if (flag && index != MPI_UNDEFINED) ++done;
  }
  for (int k = 0; k < 4; ++k) {
    for (long i = 0; i < count; ++i) {
      long s = 0;
      int mx = -2147483647;
      for (int r = 0; r < size; ++r) {
        s += val(r, i, 41);
        if (val(r, i, 41) > mx) mx = val(r, i, 41);
      }
      if (outs[k][i] != (k % 2 ? mx : s)) mismatch(i, outs[k][i], k % 2 ? mx : s);
    }
    free(outs[k]);
  }
  free(bc), free(ar_in), free(ar), free(ar2), free(a2a_in), free(a2a_out), free(g), free(ag), free(sc), free(red);
  free(p2p_out), free(p2p_in), free(m_in), free(m_out), free(scatter_src);
}

/* The other nonblocking forms, checked against their blocking twins. */
static void test_nonblocking_v(MPI_Comm comm, long scale) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("nonblocking v-forms and prefix reductions scale %ld (size %d)", scale, size);
  int *counts = ints(size), *displs = ints(size);
  long total;
  vlayout(size, scale, counts, displs, &total);
  int *send = ints(counts[rank] + 1), *a = ints(total), *b = ints(total), *c = ints(total), *d = ints(total);
  for (long i = 0; i < counts[rank]; ++i) send[i] = val(rank, i, 50);
  fill(a, total, JUNK), fill(b, total, JUNK), fill(c, total, JUNK), fill(d, total, JUNK);
  MPI_Request req[6];
  check_rc(MPI_Igatherv(send, counts[rank], MPI_INT, a, counts, displs, MPI_INT, 0, comm, &req[0]), "MPI_Igatherv");
  check_rc(MPI_Iallgatherv(send, counts[rank], MPI_INT, b, counts, displs, MPI_INT, comm, &req[1]), "MPI_Iallgatherv");
  int sc_in = val(rank, 0, 51), scan_out = 0, exscan_out = 0, rsb_in[64], rsb_out = 0;
  for (int j = 0; j < size && j < 64; ++j) rsb_in[j] = val(rank, j, 52);
  check_rc(MPI_Iscan(&sc_in, &scan_out, 1, MPI_INT, MPI_SUM, comm, &req[2]), "MPI_Iscan");
  check_rc(MPI_Iexscan(&sc_in, &exscan_out, 1, MPI_INT, MPI_SUM, comm, &req[3]), "MPI_Iexscan");
  check_rc(MPI_Ireduce_scatter_block(rsb_in, &rsb_out, 1, MPI_INT, MPI_SUM, comm, &req[4]),
           "MPI_Ireduce_scatter_block");
  int *sv = ints(counts[rank] + 1);
  /* Iscatterv reads b, which Iallgatherv writes: complete that one first. */
  check_rc(MPI_Wait(&req[1], MPI_STATUS_IGNORE), "MPI_Wait");
  check_rc(MPI_Iscatterv(b, counts, displs, MPI_INT, sv, counts[rank], MPI_INT, 0, comm, &req[5]), "MPI_Iscatterv");
  check_rc(MPI_Waitall(6, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
  expect_ints(sv, send, counts[rank]);
  check_rc(MPI_Allgatherv(send, counts[rank], MPI_INT, c, counts, displs, MPI_INT, comm), "MPI_Allgatherv");
  expect_ints(b, c, total);
  if (rank == 0) expect_ints(a, c, total);
  long s = 0;
  for (int r = 0; r < rank; ++r) s += val(r, 0, 51);
  if (rank > 0 && exscan_out != s) mismatch(0, exscan_out, s);
  if (scan_out != s + sc_in) mismatch(0, scan_out, s + sc_in);
  if (size <= 64) {
    long w = 0;
    for (int r = 0; r < size; ++r) w += val(r, rank, 52);
    if (rsb_out != w) mismatch(0, rsb_out, w);
  }
  (void)d;
  free(counts), free(displs), free(send), free(a), free(b), free(c), free(d), free(sv);
}

/* MPI_Comm_free while nonblocking collectives on the communicator are
 * still running: they complete normally. */
static void test_comm_freed_while_running(MPI_Comm parent, long count) {
  int rank, size;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm_size(parent, &size);
  begin_case("Iallreduce and Ibarrier on a communicator freed before completion, count %ld (size %d)", count, size);
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  int *in = ints(count), *out = ints(count);
  for (long i = 0; i < count; ++i) in[i] = val(rank, i, 61);
  MPI_Request req[2];
  check_rc(MPI_Iallreduce(in, out, (int)count, MPI_INT, MPI_SUM, comm, &req[0]), "MPI_Iallreduce");
  check_rc(MPI_Ibarrier(comm, &req[1]), "MPI_Ibarrier");
  check_rc(MPI_Comm_free(&comm), "MPI_Comm_free");
  /* New communicators made meanwhile must not pick up the old one's traffic. */
  MPI_Comm other;
  MPI_Comm_dup(parent, &other);
  int one = 1, total = 0;
  check_rc(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, other), "MPI_Allreduce");
  if (total != size) mismatch(-1, total, size);
  check_rc(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (long i = 0; i < count; ++i)
    if (out[i] != sum_upto(size, i, 61)) mismatch(i, out[i], sum_upto(size, i, 61));
  MPI_Comm_free(&other);
  free(in), free(out);
}

/* MPI_Op_free right after starting a nonblocking reduction with that op:
 * the reduction still completes with it. */
static void test_op_freed_while_running(MPI_Comm comm, long count) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Iallreduce with a user op freed before completion, count %ld (size %d)", count, size);
  MPI_Op add;
  MPI_Op_create(sum_op, 1, &add);
  int *in = ints(count), *out = ints(count);
  for (long i = 0; i < count; ++i) in[i] = val(rank, i, 60);
  MPI_Request req;
  check_rc(MPI_Iallreduce(in, out, (int)count, MPI_INT, add, comm, &req), "MPI_Iallreduce");
  check_rc(MPI_Op_free(&add), "MPI_Op_free");
  check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
  for (long i = 0; i < count; ++i)
    if (out[i] != sum_upto(size, i, 60)) mismatch(i, out[i], sum_upto(size, i, 60));
  free(in), free(out);
}

#endif
