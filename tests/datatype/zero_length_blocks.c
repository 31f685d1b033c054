/* Zero-length blocks take no part in a type's bounds, wherever they claim to
 * be (INT_MAX / LLONG_MAX displacements included): an indexed or hindexed
 * type with zero-length blocks around a real one has that block's bounds,
 * packs only its data, and nests in a struct with the same layout as the
 * plain block would (MPICH's datatype/indexed_misc builds these). A freed
 * type handle is refused (MPI_ERR_TYPE) even when a new type was made
 * since: handles are not reused. One rank. */
#include <limits.h>

#include "tests/integration/itest.h"

/* Pack one `type` from buf[] (1..10), unpack into a zeroed buffer: which
 * ints come back? */
static void round_trip(MPI_Datatype type, const int* expect_kept, const char* what) {
  int src[10], dst[10], packed_size = 0, pos = 0;
  for (int i = 0; i < 10; ++i) src[i] = i + 1;
  memset(dst, 0, sizeof dst);
  CHECK_OK(MPI_Pack_size(1, type, MPI_COMM_WORLD, &packed_size));
  char* packed = malloc((size_t)packed_size);
  CHECK_OK(MPI_Pack(src, 1, type, packed, packed_size, &pos, MPI_COMM_WORLD));
  int packed_bytes = pos;
  pos = 0;
  CHECK_OK(MPI_Unpack(packed, packed_size, &pos, dst, 1, type, MPI_COMM_WORLD));
  CHECK(pos == packed_bytes, "%s: unpacked %d of %d bytes", what, pos, packed_bytes);
  for (int i = 0; i < 10; ++i)
    CHECK(dst[i] == (expect_kept[i] ? i + 1 : 0), "%s: int %d is %d", what, i, dst[i]);
  free(packed);
}

static void check_bounds(MPI_Datatype t, MPI_Aint lb, MPI_Aint ub, int size, const char* what) {
  MPI_Aint l = -1, e = -1;
  int s = -1;
  MPI_Type_get_extent(t, &l, &e);
  MPI_Type_size(t, &s);
  CHECK(l == lb && l + e == ub && s == size, "%s: lb %ld ub %ld size %d, want %ld %ld %d", what, (long)l,
        (long)(l + e), s, (long)lb, (long)ub, size);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int in_block[10] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 0};
  const int in_struct[10] = {0, 0, 1, 1, 1, 1, 0, 0, 1, 0};
  const int isz = (int)sizeof(int);

  for (int variant = 0; variant < 2; ++variant) {
    MPI_Datatype t, st, types[2];
    int len[3] = {0, 4, 0};
    if (variant == 0) {
      int disp[3] = {INT_MAX, 2, INT_MAX};
      CHECK_OK(MPI_Type_indexed(3, len, disp, MPI_INT, &t));
    } else {
      MPI_Aint disp[3] = {(MPI_Aint)LLONG_MAX, 2 * isz, (MPI_Aint)LLONG_MAX};
      CHECK_OK(MPI_Type_create_hindexed(3, len, disp, MPI_INT, &t));
    }
    const char* name = variant == 0 ? "indexed" : "hindexed";
    CHECK_OK(MPI_Type_commit(&t));
    check_bounds(t, 2 * isz, 6 * isz, 4 * isz, name);
    round_trip(t, in_block, name);

    /* xx0123xx4x: the type, then one int at 8 ints. */
    int slen[2] = {1, 1};
    MPI_Aint sdisp[2] = {0, 8 * isz};
    types[0] = t;
    types[1] = MPI_INT;
    CHECK_OK(MPI_Type_create_struct(2, slen, sdisp, types, &st));
    CHECK_OK(MPI_Type_commit(&st));
    check_bounds(st, 2 * isz, 9 * isz, 5 * isz, "struct");
    round_trip(st, in_struct, "struct");
    CHECK_OK(MPI_Type_free(&st));
    CHECK_OK(MPI_Type_free(&t));

    /* The freed handle stays dead although a new type now exists. */
    MPI_Datatype fresh;
    CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &fresh));
    CHECK_CLASS(MPI_Type_create_struct(2, slen, sdisp, types, &st), MPI_ERR_TYPE);
    CHECK_OK(MPI_Type_free(&fresh));
  }
  return itest_finish("zero_length_blocks");
}
