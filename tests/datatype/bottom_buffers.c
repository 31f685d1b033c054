/* MPI_BOTTOM with absolute-address datatypes (MPI_Get_address and
 * MPI_Type_create_struct / hindexed) in every call family that takes a
 * buffer: point-to-point (send, receive, matched probe and MPI_Mrecv),
 * MPI_Alltoallw, MPI_Neighbor_alltoallw, and a vector datatype received into
 * MPI_BOTTOM through MPI_Mrecv; and the w-collectives' other form, MPI_BOTTOM
 * with predefined datatypes and absolute addresses as byte displacements.
 * Values are checked element by element. */
#include "tests/integration/itest.h"

/* A datatype describing `count` ints at `base` (absolute addresses), every
 * other one (a strided layout, so it is not contiguous). */
static MPI_Datatype absolute_ints(int* base, int count) {
  MPI_Aint addr;
  MPI_Get_address(base, &addr);
  MPI_Datatype vec, abs;
  MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
  int one = 1;
  MPI_Type_create_struct(1, &one, &addr, &vec, &abs);
  MPI_Type_commit(&abs);
  MPI_Type_free(&vec);
  return abs;
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  int me = itest_rank, n = itest_size;
  int right = (me + 1) % n, left = (me + n - 1) % n;

  /* Point-to-point: send from and receive into MPI_BOTTOM. */
  {
    int out[8], in[8];
    for (int i = 0; i < 8; ++i) out[i] = 100 * me + i, in[i] = -1;
    MPI_Datatype tout = absolute_ints(out, 4), tin = absolute_ints(in, 4);
    MPI_Request r;
    CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, tin, left, 1, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Send(MPI_BOTTOM, 1, tout, right, 1, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; ++i)
      CHECK(in[i] == (i % 2 == 0 ? 100 * left + i : -1), "p2p: in[%d] = %d", i, in[i]);
    MPI_Type_free(&tout);
    MPI_Type_free(&tin);
  }

  /* MPI_Mprobe + MPI_Mrecv into MPI_BOTTOM, absolute struct and plain vector. */
  {
    int out[8], in[8];
    for (int i = 0; i < 8; ++i) out[i] = 1000 + 100 * me + i, in[i] = -1;
    MPI_Datatype tin = absolute_ints(in, 4);
    CHECK_OK(MPI_Send(out, 4, MPI_INT, right, 2, MPI_COMM_WORLD)); /* eager: fits any limit */
    MPI_Message m;
    MPI_Status st;
    CHECK_OK(MPI_Mprobe(left, 2, MPI_COMM_WORLD, &m, &st));
    CHECK_OK(MPI_Mrecv(MPI_BOTTOM, 1, tin, &m, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 4, "Mrecv into MPI_BOTTOM: count %d", count);
    for (int i = 0; i < 8; ++i)
      CHECK(in[i] == (i % 2 == 0 ? 1000 + 100 * left + i / 2 : -1), "Mrecv: in[%d] = %d", i, in[i]);
    MPI_Type_free(&tin);
  }

  /* The same, rendezvous-sized (the data moves after the matched probe). */
  {
    enum { kN = 16384 };
    int* out = malloc(sizeof(int) * kN);
    int* in = malloc(sizeof(int) * 2 * kN);
    for (int i = 0; i < kN; ++i) out[i] = me * kN + i, in[2 * i] = in[2 * i + 1] = -1;
    MPI_Datatype tin = absolute_ints(in, kN);
    MPI_Request r;
    CHECK_OK(MPI_Isend(out, kN, MPI_INT, right, 3, MPI_COMM_WORLD, &r));
    MPI_Message m;
    CHECK_OK(MPI_Mprobe(left, 3, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
    MPI_Request rr;
    CHECK_OK(MPI_Imrecv(MPI_BOTTOM, 1, tin, &m, &rr));
    CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < kN; ++i) bad += in[2 * i] != left * kN + i || in[2 * i + 1] != -1;
    CHECK(bad == 0, "rendezvous Imrecv into MPI_BOTTOM: %d wrong elements", bad);
    MPI_Type_free(&tin);
    free(out), free(in);
  }

  /* MPI_Alltoallw with MPI_BOTTOM and one absolute datatype per peer. */
  {
    int* out = malloc(sizeof(int) * 2 * (size_t)n);
    int* in = malloc(sizeof(int) * 2 * (size_t)n);
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *stypes = malloc(sizeof(MPI_Datatype) * (size_t)n), *rtypes = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int p = 0; p < n; ++p) {
      out[2 * p] = 10000 * me + p, out[2 * p + 1] = -7;
      in[2 * p] = in[2 * p + 1] = -1;
      counts[p] = 1, displs[p] = 0;
      stypes[p] = absolute_ints(&out[2 * p], 1);
      rtypes[p] = absolute_ints(&in[2 * p], 1);
    }
    CHECK_OK(MPI_Alltoallw(MPI_BOTTOM, counts, displs, stypes, MPI_BOTTOM, counts, displs, rtypes, MPI_COMM_WORLD));
    for (int p = 0; p < n; ++p) {
      CHECK(in[2 * p] == 10000 * p + me, "alltoallw: from %d got %d", p, in[2 * p]);
      CHECK(in[2 * p + 1] == -1, "alltoallw: the gap after %d was written", p);
      MPI_Type_free(&stypes[p]);
      MPI_Type_free(&rtypes[p]);
    }
    free(out), free(in), free(counts), free(displs), free(stypes), free(rtypes);
  }

  /* MPI_Neighbor_alltoallw on a ring (left, right) with MPI_BOTTOM; from
     three ranks on, so that the two neighbours differ. */
  if (n >= 3) {
    int dims[1] = {n}, periods[1] = {1};
    MPI_Comm ring;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int out[4] = {me * 10 + 1, -7, me * 10 + 2, -7}, in[4] = {-1, -1, -1, -1};
    int counts[2] = {1, 1};
    MPI_Aint displs[2] = {0, 0};
    MPI_Datatype stypes[2] = {absolute_ints(&out[0], 1), absolute_ints(&out[2], 1)};
    MPI_Datatype rtypes[2] = {absolute_ints(&in[0], 1), absolute_ints(&in[2], 1)};
    CHECK_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, displs, stypes, MPI_BOTTOM, counts, displs, rtypes, ring));
    /* Neighbours in order (left, right): from the left comes what it sent to
       its right (slot 1), from the right what it sent to its left (slot 0). */
    CHECK(in[0] == left * 10 + 2, "neighbor_alltoallw: from the left %d", in[0]);
    CHECK(in[2] == right * 10 + 1, "neighbor_alltoallw: from the right %d", in[2]);
    CHECK(in[1] == -1 && in[3] == -1, "neighbor_alltoallw: a gap was written");
    for (int i = 0; i < 2; ++i) MPI_Type_free(&stypes[i]), MPI_Type_free(&rtypes[i]);
    MPI_Comm_free(&ring);
  }

  /* MPI_Alltoallw_c (MPI_Aint displacements) with MPI_BOTTOM, MPI_INT and
     each block's absolute address as its displacement. */
  {
    int* out = malloc(sizeof(int) * 2 * (size_t)n);
    int* in = malloc(sizeof(int) * 2 * (size_t)n);
    MPI_Count* counts = malloc(sizeof(MPI_Count) * (size_t)n);
    MPI_Aint *sdispls = malloc(sizeof(MPI_Aint) * (size_t)n), *rdispls = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int p = 0; p < n; ++p) {
      out[2 * p] = 20000 * me + p, out[2 * p + 1] = -7;
      in[2 * p] = in[2 * p + 1] = -1;
      counts[p] = 1, types[p] = MPI_INT;
      MPI_Get_address(&out[2 * p], &sdispls[p]);
      MPI_Get_address(&in[2 * p], &rdispls[p]);
    }
    CHECK_OK(MPI_Alltoallw_c(MPI_BOTTOM, counts, sdispls, types, MPI_BOTTOM, counts, rdispls, types, MPI_COMM_WORLD));
    for (int p = 0; p < n; ++p) {
      CHECK(in[2 * p] == 20000 * p + me, "alltoallw_c, absolute displacements: from %d got %d", p, in[2 * p]);
      CHECK(in[2 * p + 1] == -1, "alltoallw_c, absolute displacements: the gap after %d was written", p);
    }
    free(out), free(in), free(counts), free(sdispls), free(rdispls), free(types);
  }

  /* MPI_Neighbor_alltoallw the same way, on a periodic ring. Neighbour 0 is
     the left one, neighbour 1 the right one; on one or two ranks both are
     the same process, and which of its two blocks lands in which slot is
     then not the point here, only that both arrive. */
  {
    int dims[1] = {n}, periods[1] = {1};
    MPI_Comm ring;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int out[4] = {me * 10 + 1, -7, me * 10 + 2, -7}, in[4] = {-1, -1, -1, -1};
    int counts[2] = {1, 1};
    MPI_Aint sdispls[2], rdispls[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    for (int k = 0; k < 2; ++k) {
      MPI_Get_address(&out[2 * k], &sdispls[k]);
      MPI_Get_address(&in[2 * k], &rdispls[k]);
    }
    CHECK_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, sdispls, types, MPI_BOTTOM, counts, rdispls, types, ring));
    const int a = left * 10 + 2, b = right * 10 + 1;
    CHECK((in[0] == a && in[2] == b) || (n < 3 && in[0] == b && in[2] == a),
          "neighbor_alltoallw, absolute displacements: got %d and %d", in[0], in[2]);
    CHECK(in[1] == -1 && in[3] == -1, "neighbor_alltoallw, absolute displacements: a gap was written");
    /* A null block start with data is still refused. */
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    MPI_Aint zero[2] = {0, 0};
    int rc = MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, zero, types, MPI_BOTTOM, counts, rdispls, types, ring);
    CHECK(rc != MPI_SUCCESS, "neighbor_alltoallw from address 0 succeeded");
    MPI_Comm_free(&ring);
  }
  return itest_finish("bottom_buffers");
}
