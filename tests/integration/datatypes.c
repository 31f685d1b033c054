/* Derived datatypes on the wire, and Get_count / Get_elements.
 *
 * Type_vector and Type_contiguous messages, eager and rendezvous sizes, sent
 * as the derived type and received as contiguous ints (and the reverse, and
 * derived to derived with a different layout); the gaps of strided receive
 * buffers must stay untouched. Get_count and Get_elements on full and
 * partial receives, with basic and derived types.
 */
#include "tests/integration/itest.h"

static MPI_Comm ctl;

static int value(int round, int i) { return round * 7777777 + i * 3 + 1; }

/* (count of vectors, blocklength, stride) shapes: small (eager) to large. */
struct shape {
  int count, blocklen, stride;
};
static const struct shape kShapes[] = {{1, 1, 1}, {3, 2, 5}, {100, 3, 4}, {2000, 2, 3}, {5000, 7, 9}, {1, 40000, 40000}};
#define NSHAPES (int)(sizeof kShapes / sizeof kShapes[0])

static void check_type_queries(void) {
  MPI_Datatype v, c, cv;
  int size;
  MPI_Aint lb, extent;
  CHECK_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
  CHECK_OK(MPI_Type_size(v, &size));
  CHECK(size == 6 * (int)sizeof(int), "vector(3,2,5,int) size %d", size);
  CHECK_OK(MPI_Type_get_extent(v, &lb, &extent));
  CHECK(lb == 0 && extent == 12 * (MPI_Aint)sizeof(int), "vector(3,2,5,int) lb %ld extent %ld", (long)lb,
        (long)extent);
  CHECK_OK(MPI_Type_contiguous(4, MPI_DOUBLE, &c));
  CHECK_OK(MPI_Type_size(c, &size));
  CHECK(size == 32, "contiguous(4,double) size %d", size);
  CHECK_OK(MPI_Type_contiguous(2, v, &cv));
  CHECK_OK(MPI_Type_size(cv, &size));
  CHECK(size == 12 * (int)sizeof(int), "contiguous(2, vector) size %d", size);
  CHECK_OK(MPI_Type_get_extent(cv, &lb, &extent));
  CHECK(extent == 24 * (MPI_Aint)sizeof(int), "contiguous(2, vector) extent %ld", (long)extent);
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  CHECK_OK(MPI_Type_get_name(MPI_INT, name, &len));
  CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT: '%s' (%d)", name, len);
  MPI_Type_free(&v);
  MPI_Type_free(&c);
  MPI_Type_free(&cv);
  CHECK(v == MPI_DATATYPE_NULL, "Type_free did not null the handle");
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size == 2, "needs 2 ranks");
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  int peer = 1 - itest_rank;
  check_type_queries();

  for (int k = 0; k < NSHAPES; ++k) {
    struct shape s = kShapes[k];
    int n = s.count * s.blocklen;                  /* ints carried */
    int span = (s.count - 1) * s.stride + s.blocklen; /* ints covered */
    MPI_Datatype vec, contig;
    CHECK_OK(MPI_Type_vector(s.count, s.blocklen, s.stride, MPI_INT, &vec));
    CHECK_OK(MPI_Type_commit(&vec));
    CHECK_OK(MPI_Type_contiguous(n, MPI_INT, &contig));
    CHECK_OK(MPI_Type_commit(&contig));
    int* strided = malloc(sizeof(int) * (size_t)span);
    int* packed = malloc(sizeof(int) * (size_t)n);
    MPI_Status st;
    int count;

    /* direction 0: vector -> ints; 1: ints -> vector; 2: contiguous type -> vector */
    for (int dir = 0; dir < 3; ++dir) {
      int tag = k * 10 + dir;
      if (itest_rank == 0) {
        if (dir == 0) {
          for (int i = 0; i < span; ++i) strided[i] = -1;
          for (int b = 0, j = 0; b < s.count; ++b)
            for (int e = 0; e < s.blocklen; ++e, ++j) strided[b * s.stride + e] = value(tag, j);
          CHECK_OK(MPI_Send(strided, 1, vec, peer, tag, MPI_COMM_WORLD));
        } else {
          for (int j = 0; j < n; ++j) packed[j] = value(tag, j);
          if (dir == 1)
            CHECK_OK(MPI_Send(packed, n, MPI_INT, peer, tag, MPI_COMM_WORLD));
          else
            CHECK_OK(MPI_Send(packed, 1, contig, peer, tag, MPI_COMM_WORLD));
        }
      } else {
        if (dir == 0) {
          for (int j = 0; j < n; ++j) packed[j] = 0;
          CHECK_OK(MPI_Recv(packed, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &st));
          for (int j = 0; j < n; ++j)
            if (packed[j] != value(tag, j)) {
              CHECK(0, "shape %d vector->ints: int %d is %d", k, j, packed[j]);
              break;
            }
          MPI_Get_count(&st, MPI_INT, &count);
          CHECK(count == n, "shape %d: Get_count(MPI_INT) %d, want %d", k, count, n);
          MPI_Get_count(&st, vec, &count);
          CHECK(count == 1, "shape %d: Get_count(vector) %d, want 1", k, count);
        } else {
          for (int i = 0; i < span; ++i) strided[i] = -99;
          CHECK_OK(MPI_Recv(strided, 1, vec, peer, tag, MPI_COMM_WORLD, &st));
          int bad = -1;
          for (int b = 0, j = 0; b < s.count && bad < 0; ++b)
            for (int e = 0; e < s.stride && b * s.stride + e < span; ++e) {
              int got = strided[b * s.stride + e];
              int want = e < s.blocklen ? value(tag, j++) : -99;
              if (got != want) {
                bad = b * s.stride + e;
                break;
              }
            }
          CHECK(bad < 0, "shape %d dir %d: strided receive wrong at int %d (%d)", k, dir, bad,
                bad >= 0 ? strided[bad] : 0);
          MPI_Get_elements(&st, vec, &count);
          CHECK(count == n, "shape %d: Get_elements(vector) %d, want %d", k, count, n);
          MPI_Get_count(&st, vec, &count);
          CHECK(count == 1, "shape %d: Get_count(vector) %d, want 1", k, count);
        }
      }
    }
    free(strided);
    free(packed);
    MPI_Type_free(&vec);
    MPI_Type_free(&contig);
  }

  /* Partial receives: fewer elements than the receive type holds. */
  MPI_Datatype v2;
  CHECK_OK(MPI_Type_vector(2, 3, 5, MPI_INT, &v2)); /* 6 ints over a span of 8 */
  CHECK_OK(MPI_Type_commit(&v2));
  if (itest_rank == 0) {
    int data[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK_OK(MPI_Send(data, 4, MPI_INT, peer, 100, MPI_COMM_WORLD));  /* 4 ints into v2 */
    CHECK_OK(MPI_Send(data, 10, MPI_BYTE, peer, 101, MPI_COMM_WORLD)); /* 10 bytes */
    CHECK_OK(MPI_Send(data, 9, MPI_INT, peer, 102, MPI_COMM_WORLD));  /* 9 ints into 2 x v2 */
  } else {
    int buf[20];
    MPI_Status st;
    int count;
    for (int i = 0; i < 20; ++i) buf[i] = -1;
    CHECK_OK(MPI_Recv(buf, 1, v2, peer, 100, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, v2, &count);
    CHECK(count == MPI_UNDEFINED, "4 ints as vector(2,3,5): Get_count %d, want MPI_UNDEFINED", count);
    MPI_Get_elements(&st, v2, &count);
    CHECK(count == 4, "4 ints as vector(2,3,5): Get_elements %d, want 4", count);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 4, "Get_count(MPI_INT) %d", count);
    CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == -1 && buf[4] == -1 && buf[5] == 4 && buf[6] == -1,
          "partial strided receive laid out wrong: %d %d %d %d %d %d %d", buf[0], buf[1], buf[2], buf[3], buf[4],
          buf[5], buf[6]);

    CHECK_OK(MPI_Recv(buf, 20, MPI_INT, peer, 101, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == MPI_UNDEFINED, "10 bytes as MPI_INT: Get_count %d, want MPI_UNDEFINED", count);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 10, "10 bytes: Get_count(MPI_BYTE) %d", count);
    MPI_Get_count(&st, MPI_SHORT, &count);
    CHECK(count == 5, "10 bytes: Get_count(MPI_SHORT) %d", count);
    MPI_Get_elements(&st, MPI_INT, &count);
    CHECK(count == MPI_UNDEFINED, "10 bytes: Get_elements(MPI_INT) %d, want MPI_UNDEFINED", count);

    for (int i = 0; i < 20; ++i) buf[i] = -1;
    CHECK_OK(MPI_Recv(buf, 2, v2, peer, 102, MPI_COMM_WORLD, &st));
    MPI_Get_elements(&st, v2, &count);
    CHECK(count == 9, "9 ints into 2 x vector: Get_elements %d", count);
    MPI_Get_count(&st, v2, &count);
    CHECK(count == MPI_UNDEFINED, "9 ints into 2 x vector: Get_count %d", count);
    MPI_Count big = 0;
    CHECK_OK(MPI_Get_elements_x(&st, v2, &big));
    CHECK(big == 9, "Get_elements_x %lld", (long long)big);
    /* Second vector starts at its extent (8 ints): 1,2,3,_,_,4,5,6 | 7,8,9 */
    CHECK(buf[8] == 7 && buf[9] == 8 && buf[10] == 9 && buf[11] == -1, "second vector element laid out wrong");
  }
  MPI_Type_free(&v2);

  /* Pair and wide types (regression: see get_elements_pair_types.c). */
  if (itest_rank == 0) {
    struct {
      double d;
      int i;
    } di[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}};
    long double ld[2] = {1.25L, -2.5L};
    CHECK_OK(MPI_Send(di, 3, MPI_DOUBLE_INT, peer, 200, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(ld, 2, MPI_LONG_DOUBLE, peer, 201, MPI_COMM_WORLD));
    int ii[4] = {1, 2, 3, 4};
    struct {
      short s;
      int i;
    } si[2] = {{5, 6}, {7, 8}};
    CHECK_OK(MPI_Send(ii, 2, MPI_2INT, peer, 202, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(si, 2, MPI_SHORT_INT, peer, 203, MPI_COMM_WORLD));
  } else {
    struct {
      double d;
      int i;
    } di[3];
    long double ld[2] = {0, 0};
    MPI_Status st;
    int count;
    CHECK_OK(MPI_Recv(di, 3, MPI_DOUBLE_INT, peer, 200, MPI_COMM_WORLD, &st));
    CHECK(di[0].d == 1.5 && di[2].i == 3, "MPI_DOUBLE_INT data wrong");
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    CHECK(count == 3, "MPI_DOUBLE_INT Get_count %d", count);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &count);
    CHECK(count == 6, "MPI_DOUBLE_INT Get_elements %d, want 6", count);
    CHECK_OK(MPI_Recv(ld, 2, MPI_LONG_DOUBLE, peer, 201, MPI_COMM_WORLD, &st));
    CHECK(ld[0] == 1.25L && ld[1] == -2.5L, "MPI_LONG_DOUBLE data wrong");
    int ii[4];
    CHECK_OK(MPI_Recv(ii, 2, MPI_2INT, peer, 202, MPI_COMM_WORLD, &st));
    MPI_Get_elements(&st, MPI_2INT, &count);
    CHECK(count == 4 && ii[3] == 4, "MPI_2INT Get_elements %d, want 4", count);
    struct {
      short s;
      int i;
    } si[2];
    CHECK_OK(MPI_Recv(si, 2, MPI_SHORT_INT, peer, 203, MPI_COMM_WORLD, &st));
    CHECK(si[1].s == 7 && si[1].i == 8, "MPI_SHORT_INT data wrong");
    MPI_Get_count(&st, MPI_SHORT_INT, &count);
    CHECK(count == 2, "MPI_SHORT_INT Get_count %d", count);
    MPI_Get_elements(&st, MPI_SHORT_INT, &count);
    CHECK(count == 4, "MPI_SHORT_INT Get_elements %d, want 4", count);
  }

  itest_barrier(ctl);
  MPI_Comm_free(&ctl);
  return itest_finish("datatypes");
}
