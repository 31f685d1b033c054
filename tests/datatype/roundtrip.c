/* Every constructor's types through whatever transport path the job's
 * environment selects (the BUILD file runs it under each): rank 0 sends,
 * rank 1 (or rank 0 itself on one rank: the self transport) receives, and
 * the receiver checks every byte of the typemap and that the gaps are
 * untouched. Each type goes three ways: typed -> same type, typed -> packed
 * bytes (compared with MPI_Pack), packed bytes (MPI_PACKED) -> typed. Counts
 * are chosen per type so a message is one element, ~6 KiB (eager under the
 * default limit) and ~300 KiB (rendezvous, above the cooperative threshold).
 * Send modes rotate through Send, Ssend and Isend.
 */
#include <stddef.h>

#include "tests/integration/itest.h"

#define MAX_TYPES 24
static MPI_Datatype types[MAX_TYPES];
static const char* names[MAX_TYPES];
static int ntypes;

static void add(MPI_Datatype t, const char* name) {
  CHECK_OK(MPI_Type_commit(&t));
  types[ntypes] = t;
  names[ntypes++] = name;
}

static void build_types(void) {
  MPI_Datatype t, u;
  MPI_Type_vector(7, 3, 5, MPI_INT, &t);
  add(t, "vector");
  MPI_Type_create_hvector(4, 2, -3 * (MPI_Aint)sizeof(double), MPI_DOUBLE, &t);
  add(t, "hvector negative stride");
  {
    int bl[] = {2, 1, 3, 1}, disp[] = {9, 0, 4, 14};
    MPI_Type_indexed(4, bl, disp, MPI_SHORT, &t);
    add(t, "indexed out of order");
  }
  {
    MPI_Aint disp[] = {40, -8, 16};
    MPI_Type_create_hindexed_block(3, 2, disp, MPI_FLOAT, &t);
    add(t, "hindexed_block");
    int idisp[] = {5, 1, 9};
    MPI_Type_create_indexed_block(3, 2, idisp, MPI_LONG, &t);
    add(t, "indexed_block");
    int bl[] = {1, 2, 1};
    MPI_Type_create_hindexed(3, bl, disp, MPI_DOUBLE, &t);
    add(t, "hindexed");
  }
  {
    struct S {
      char c;
      double d;
      short s[3];
    };
    int bl[] = {1, 1, 3};
    MPI_Aint disp[] = {offsetof(struct S, c), offsetof(struct S, d), offsetof(struct S, s)};
    MPI_Datatype ty[] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
    MPI_Type_create_struct(3, bl, disp, ty, &t);
    add(t, "struct with gaps");
  }
  {
    MPI_Type_vector(3, 1, 4, MPI_INT, &u);
    int bl[] = {2, 1};
    MPI_Aint disp[] = {-16, 64};
    MPI_Datatype ty[] = {u, MPI_DOUBLE_INT};
    MPI_Type_create_struct(2, bl, disp, ty, &t);
    MPI_Type_free(&u); /* the struct keeps it alive */
    add(t, "struct of vectors and pairs");
  }
  MPI_Type_create_resized(MPI_INT, -4, 12, &t);
  add(t, "resized int");
  {
    int sizes[] = {6, 9, 4}, subs[] = {3, 4, 2}, starts[] = {2, 5, 1};
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    add(t, "subarray C");
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    add(t, "subarray Fortran");
  }
  {
    int gs[] = {9, 10}, ds[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, da[] = {2, MPI_DISTRIBUTE_DFLT_DARG},
        ps[] = {2, 2};
    MPI_Type_create_darray(4, 1, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_FLOAT, &t);
    add(t, "darray");
  }
  MPI_Type_vector(2, 2, 3, MPI_INT, &u);
  MPI_Type_dup(u, &t);
  MPI_Type_free(&u);
  add(t, "dup of vector");
  MPI_Type_contiguous(3, MPI_LONG_DOUBLE_INT, &t);
  add(t, "contiguous of long double int");
  {
    int bl[] = {1, 1, 1};
    MPI_Aint disp[] = {-8, 0, 24};
    MPI_Datatype ty[] = {MPI_LB, MPI_INT, MPI_UB};
    MPI_Type_struct(3, bl, disp, ty, &t);
    add(t, "MPI_LB/MPI_UB markers");
  }
  MPI_Type_contiguous(5, MPI_INT, &t);
  add(t, "contiguous");
}

/* Room for count elements: the buffer pointer and the allocation around it. */
typedef struct {
  unsigned char* base;
  unsigned char* buf;
  size_t span;
} Area;

static Area area(MPI_Datatype t, int count) {
  MPI_Aint lb, extent, tlb, textent;
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_get_true_extent(t, &tlb, &textent);
  MPI_Aint step = (MPI_Aint)(count - 1) * extent;
  MPI_Aint lo = (step < 0 ? step : 0) + tlb, hi = (step > 0 ? step : 0) + tlb + textent;
  if (lo > 0) lo = 0;
  if (hi < 1) hi = 1;
  Area a;
  a.span = (size_t)(hi - lo);
  a.base = malloc(a.span);
  a.buf = a.base - lo;
  return a;
}

static int count_for(MPI_Datatype t, int bytes) {
  int size;
  MPI_Type_size(t, &size);
  return bytes / size > 0 ? bytes / size : 1;
}

static void send_mode(const void* buf, int count, MPI_Datatype t, int dest, int tag, int mode) {
  if (mode == 0) {
    CHECK_OK(MPI_Send(buf, count, t, dest, tag, MPI_COMM_WORLD));
  } else if (mode == 1) {
    CHECK_OK(MPI_Ssend(buf, count, t, dest, tag, MPI_COMM_WORLD));
  } else {
    MPI_Request r;
    CHECK_OK(MPI_Isend(buf, count, t, dest, tag, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
}

/* One (type, count) three ways. On one rank the receive is posted first. */
static void exchange(int k, int count, uint32_t id) {
  MPI_Datatype t = types[k];
  int size;
  MPI_Type_size(t, &size);
  int bytes = size * count;
  Area src = area(t, count);
  itest_fill(src.base, src.span, id);
  int peer = itest_size > 1 ? 1 - itest_rank : 0;
  int sender = itest_rank == 0, receiver = itest_size == 1 || itest_rank == 1;
  int mode = (int)(id % 3);

  /* What the receiver must end up with: the source's typemap bytes over a sentinel. */
  unsigned char* packed = malloc((size_t)bytes + 1);
  int pos = 0;
  CHECK_OK(MPI_Pack(src.buf, count, t, packed, bytes, &pos, MPI_COMM_WORLD));
  Area want = area(t, count);
  memset(want.base, 0xA5, want.span);
  pos = 0;
  CHECK_OK(MPI_Unpack(packed, bytes, &pos, want.buf, count, t, MPI_COMM_WORLD));

  for (int way = 0; way < 3; ++way) {
    Area dst = area(t, count);
    memset(dst.base, 0xA5, dst.span);
    unsigned char* flat = malloc((size_t)bytes + 1);
    memset(flat, 0, (size_t)bytes + 1);
    MPI_Request r = MPI_REQUEST_NULL;
    int tag = 100 + way;
    if (receiver) {
      if (way == 1) CHECK_OK(MPI_Irecv(flat, bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
      else CHECK_OK(MPI_Irecv(dst.buf, count, t, peer, tag, MPI_COMM_WORLD, &r));
    }
    if (sender) {
      if (way == 2) send_mode(packed, bytes, MPI_PACKED, peer, tag, mode);
      else send_mode(src.buf, count, t, peer, tag, mode);
    }
    if (receiver) {
      MPI_Status st;
      CHECK_OK(MPI_Wait(&r, &st));
      int got = -1;
      MPI_Get_count(&st, MPI_BYTE, &got);
      CHECK(got == bytes, "%s x%d way %d: %d bytes, want %d", names[k], count, way, got, bytes);
      if (way == 1) {
        CHECK(memcmp(flat, packed, (size_t)bytes) == 0, "%s x%d: packed bytes differ", names[k], count);
      } else {
        size_t bad = 0;
        while (bad < dst.span && dst.base[bad] == want.base[bad]) ++bad;
        CHECK(bad == dst.span, "%s x%d way %d (mode %d): byte %zu of %zu differs", names[k], count, way, mode, bad,
              dst.span);
        int n = -1;
        MPI_Get_count(&st, t, &n);
        CHECK(n == count, "%s: Get_count %d, want %d", names[k], n, count);
      }
    }
    free(flat);
    free(dst.base);
  }
  free(want.base);
  free(packed);
  free(src.base);
}

/* Absolute addresses: a struct over two separate heap arrays, sent from MPI_BOTTOM. */
static void bottom(int n) {
  int* a = malloc(sizeof(int) * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) a[i] = itest_rank == 0 ? i * 7 : -1, b[i] = itest_rank == 0 ? i * 0.5 : -1;
  MPI_Aint disp[2];
  MPI_Get_address(a, &disp[0]);
  MPI_Get_address(b + 1, &disp[1]);
  int bl[] = {n, n - 2};
  MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, t;
  CHECK_OK(MPI_Type_create_struct(2, bl, disp, ty, &t));
  CHECK_OK(MPI_Type_commit(&t));
  int peer = itest_size > 1 ? 1 - itest_rank : 0;
  MPI_Request r = MPI_REQUEST_NULL;
  if (itest_size == 1 || itest_rank == 1) CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, t, peer, 7, MPI_COMM_WORLD, &r));
  if (itest_rank == 0) CHECK_OK(MPI_Send(MPI_BOTTOM, 1, t, peer, 7, MPI_COMM_WORLD));
  if (itest_size == 1 || itest_rank == 1) {
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      if (a[i] != i * 7) ++bad;
      double want = (i == 0 || i == n - 1) ? (itest_size == 1 ? i * 0.5 : -1) : i * 0.5;
      if (b[i] != want) ++bad;
    }
    CHECK(bad == 0, "MPI_BOTTOM struct of %d: %d wrong values", n, bad);
  }
  MPI_Type_free(&t);
  free(a);
  free(b);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  CHECK(itest_size <= 2, "runs on 1 or 2 ranks");
  build_types();
  uint32_t id = 1;
  for (int k = 0; k < ntypes; ++k) {
    exchange(k, 1, id++);
    exchange(k, count_for(types[k], 6000), id++);
    exchange(k, count_for(types[k], 300000), id++);
  }
  bottom(10);
  bottom(40000);
  for (int k = 0; k < ntypes; ++k) MPI_Type_free(&types[k]);
  return itest_finish("datatype roundtrip");
}
