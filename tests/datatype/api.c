/* The datatype calls one rank can check on its own: queries, envelope and
 * contents round trips, names, the MPI-1 names, addresses, Pack/Unpack and
 * the external32 representation, MPI_Get_elements with partial elements,
 * and the error classes of bad arguments (MPI_ERRORS_RETURN).
 */
#include <stddef.h>

#include "tests/integration/itest.h"

/* The packed bytes of (buf, count, t): used to compare typemaps. */
static int packed(MPI_Datatype t, const void* buf, int count, unsigned char* out, int cap) {
  int pos = 0;
  CHECK_OK(MPI_Pack(buf, count, t, out, cap, &pos, MPI_COMM_WORLD));
  return pos;
}

/* Rebuild t from its contents and check the copy has the same size, bounds
 * and packed bytes; recurse into derived inner types. Returns the combiner. */
static int rebuild_equal(MPI_Datatype t, const unsigned char* mem, int depth) {
  int ni = 0, na = 0, nd = 0, combiner = -1;
  CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
  if (combiner == MPI_COMBINER_NAMED || combiner == -1 || depth > 8) return combiner;
  int ints[64];
  MPI_Aint aints[64];
  MPI_Datatype ts[64];
  CHECK(ni <= 64 && na <= 64 && nd <= 64, "envelope too large");
  CHECK_OK(MPI_Type_get_contents(t, ni, na, nd, ints, aints, ts));
  for (int i = 0; i < nd; ++i) rebuild_equal(ts[i], mem, depth + 1);
  MPI_Datatype r = MPI_DATATYPE_NULL;
  switch (combiner) {
    case MPI_COMBINER_DUP: MPI_Type_dup(ts[0], &r); break;
    case MPI_COMBINER_CONTIGUOUS: MPI_Type_contiguous(ints[0], ts[0], &r); break;
    case MPI_COMBINER_VECTOR: MPI_Type_vector(ints[0], ints[1], ints[2], ts[0], &r); break;
    case MPI_COMBINER_HVECTOR: MPI_Type_create_hvector(ints[0], ints[1], aints[0], ts[0], &r); break;
    case MPI_COMBINER_INDEXED: MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], ts[0], &r); break;
    case MPI_COMBINER_HINDEXED: MPI_Type_create_hindexed(ints[0], ints + 1, aints, ts[0], &r); break;
    case MPI_COMBINER_INDEXED_BLOCK: MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, ts[0], &r); break;
    case MPI_COMBINER_HINDEXED_BLOCK: MPI_Type_create_hindexed_block(ints[0], ints[1], aints, ts[0], &r); break;
    case MPI_COMBINER_STRUCT: MPI_Type_create_struct(ints[0], ints + 1, aints, ts, &r); break;
    case MPI_COMBINER_SUBARRAY: {
      int n = ints[0];
      MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[1 + 3 * n], ts[0], &r);
      break;
    }
    case MPI_COMBINER_DARRAY: {
      int n = ints[2];
      MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n, ints + 3 + 2 * n, ints + 3 + 3 * n,
                             ints[3 + 4 * n], ts[0], &r);
      break;
    }
    case MPI_COMBINER_RESIZED: MPI_Type_create_resized(ts[0], aints[0], aints[1], &r); break;
    default: CHECK(0, "unexpected combiner %d", combiner);
  }
  CHECK(r != MPI_DATATYPE_NULL, "rebuilding combiner %d failed", combiner);
  if (r == MPI_DATATYPE_NULL) return combiner;
  MPI_Type_commit(&r);
  MPI_Datatype tc;
  MPI_Type_dup(t, &tc);
  MPI_Type_commit(&tc);
  MPI_Aint lb1, ex1, lb2, ex2, tl1, te1, tl2, te2;
  MPI_Type_get_extent(tc, &lb1, &ex1);
  MPI_Type_get_extent(r, &lb2, &ex2);
  MPI_Type_get_true_extent(tc, &tl1, &te1);
  MPI_Type_get_true_extent(r, &tl2, &te2);
  CHECK(lb1 == lb2 && ex1 == ex2 && tl1 == tl2 && te1 == te2, "combiner %d: bounds differ after rebuild", combiner);
  static unsigned char a[1 << 16], b[1 << 16];
  MPI_Aint base = -(lb1 < tl1 ? lb1 : tl1);
  int na1 = packed(tc, mem + base + 4096, 2, a, sizeof a);
  int nb1 = packed(r, mem + base + 4096, 2, b, sizeof b);
  CHECK(na1 == nb1 && memcmp(a, b, (size_t)na1) == 0, "combiner %d: typemap differs after rebuild", combiner);
  for (int i = 0; i < nd; ++i) {
    int c2, x, y, z;
    MPI_Type_get_envelope(ts[i], &x, &y, &z, &c2);
    if (c2 != MPI_COMBINER_NAMED) MPI_Type_free(&ts[i]);
  }
  MPI_Type_free(&r);
  MPI_Type_free(&tc);
  return combiner;
}

static void envelopes(void) {
  static unsigned char mem[1 << 17];
  for (size_t i = 0; i < sizeof mem; ++i) mem[i] = (unsigned char)(i * 7 + 3);
  int ni, na, nd, c;
  CHECK_OK(MPI_Type_get_envelope(MPI_DOUBLE_INT, &ni, &na, &nd, &c));
  CHECK(c == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "named envelope");
  CHECK_OK(MPI_Type_get_envelope(MPI_LONG_DOUBLE, &ni, &na, &nd, &c));
  CHECK(c == MPI_COMBINER_NAMED, "MPI_LONG_DOUBLE is named");

  MPI_Datatype v, hv, ix, hx, ib, hb, st, sub, da, rs, dp, ct;
  MPI_Type_vector(3, 2, 4, MPI_INT, &v);
  MPI_Type_create_hvector(2, 1, 100, v, &hv);
  int bl[] = {1, 3}, dsp[] = {5, 0};
  MPI_Type_indexed(2, bl, dsp, MPI_SHORT, &ix);
  MPI_Aint adsp[] = {64, 0, 200};
  MPI_Type_create_hindexed(2, bl, adsp, ix, &hx);
  MPI_Type_create_indexed_block(2, 2, dsp, MPI_FLOAT, &ib);
  MPI_Type_create_hindexed_block(3, 1, adsp, MPI_CHAR, &hb);
  int sbl[] = {1, 2, 1};
  MPI_Datatype sty[] = {hv, MPI_DOUBLE, hx};
  MPI_Type_create_struct(3, sbl, adsp, sty, &st);
  int sizes[] = {4, 5}, subs[] = {2, 2}, starts[] = {1, 3};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &sub);
  int gs[] = {8}, ds[] = {MPI_DISTRIBUTE_CYCLIC}, dg[] = {3}, ps[] = {2};
  MPI_Type_create_darray(2, 1, 1, gs, ds, dg, ps, MPI_ORDER_C, MPI_DOUBLE, &da);
  MPI_Type_create_resized(st, -32, 1000, &rs);
  MPI_Type_dup(rs, &dp);
  MPI_Type_contiguous(3, dp, &ct);
  MPI_Datatype all[] = {v, hv, ix, hx, ib, hb, st, sub, da, rs, dp, ct};
  int want[] = {MPI_COMBINER_VECTOR,         MPI_COMBINER_HVECTOR,        MPI_COMBINER_INDEXED,
                MPI_COMBINER_HINDEXED,       MPI_COMBINER_INDEXED_BLOCK,  MPI_COMBINER_HINDEXED_BLOCK,
                MPI_COMBINER_STRUCT,         MPI_COMBINER_SUBARRAY,       MPI_COMBINER_DARRAY,
                MPI_COMBINER_RESIZED,        MPI_COMBINER_DUP,            MPI_COMBINER_CONTIGUOUS};
  for (int i = 0; i < 12; ++i) MPI_Type_commit(&all[i]);
  /* Inner types freed first: the outer ones keep them, and their contents still name them. */
  for (int i = 0; i < 2; ++i) {
    int got = rebuild_equal(all[i], mem + 8192, 0);
    CHECK(got == want[i], "type %d: combiner %d, want %d", i, got, want[i]);
  }
  MPI_Type_free(&all[0]);
  MPI_Type_free(&all[1]);
  for (int i = 2; i < 12; ++i) {
    int got = rebuild_equal(all[i], mem + 8192, 0);
    CHECK(got == want[i], "type %d: combiner %d, want %d", i, got, want[i]);
  }
  /* Contents need room. */
  int ints[2];
  MPI_Aint aints[2];
  MPI_Datatype ts[2];
  CHECK_CLASS(MPI_Type_get_contents(all[2], 1, 0, 1, ints, aints, ts), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, aints, ts), MPI_ERR_ARG);
  for (int i = 2; i < 12; ++i) MPI_Type_free(&all[i]);
}

static void queries(void) {
  MPI_Aint lb, ex, tlb, tex;
  MPI_Count clb, cex, csize;
  int size;
  struct S {
    double d;
    char c;
  };
  int bl[] = {1, 1};
  MPI_Aint disp[] = {offsetof(struct S, d), offsetof(struct S, c)};
  MPI_Datatype ty[] = {MPI_DOUBLE, MPI_CHAR}, s, r;
  CHECK_OK(MPI_Type_create_struct(2, bl, disp, ty, &s));
  CHECK_OK(MPI_Type_get_extent(s, &lb, &ex));
  CHECK(lb == 0 && ex == sizeof(struct S), "struct {double, char}: lb %ld extent %ld", (long)lb, (long)ex);
  CHECK_OK(MPI_Type_get_true_extent(s, &tlb, &tex));
  CHECK(tlb == 0 && tex == 9, "true extent %ld", (long)tex);
  CHECK_OK(MPI_Type_get_extent_x(s, &clb, &cex));
  CHECK_OK(MPI_Type_size_x(s, &csize));
  CHECK(cex == ex && csize == 9, "_x queries");
  CHECK_OK(MPI_Type_get_true_extent_x(s, &clb, &cex));
  CHECK(cex == 9, "true extent x");
  CHECK_OK(MPI_Type_create_resized(s, -8, 64, &r));
  CHECK_OK(MPI_Type_extent(r, &ex));
  CHECK_OK(MPI_Type_lb(r, &lb));
  MPI_Aint ub;
  CHECK_OK(MPI_Type_ub(r, &ub));
  CHECK(ex == 64 && lb == -8 && ub == 56, "MPI-1 extent/lb/ub: %ld %ld %ld", (long)ex, (long)lb, (long)ub);
  /* MPI-1 constructors with markers. */
  MPI_Datatype m, hv, hx;
  int mbl[] = {1, 1, 1};
  MPI_Aint mdisp[] = {0, 4, 32};
  MPI_Datatype mty[] = {MPI_LB, MPI_INT, MPI_UB};
  CHECK_OK(MPI_Type_struct(3, mbl, mdisp, mty, &m));
  CHECK_OK(MPI_Type_extent(m, &ex));
  CHECK_OK(MPI_Type_size(m, &size));
  CHECK(ex == 32 && size == 4, "struct with markers: extent %ld size %d", (long)ex, size);
  CHECK_OK(MPI_Type_hvector(2, 1, 100, m, &hv));
  CHECK_OK(MPI_Type_extent(hv, &ex));
  CHECK(ex == 132, "hvector of marked type: extent %ld", (long)ex);
  int hbl[] = {2};
  MPI_Aint hd[] = {8};
  CHECK_OK(MPI_Type_hindexed(1, hbl, hd, MPI_INT, &hx));
  CHECK_OK(MPI_Type_lb(hx, &lb));
  CHECK(lb == 8, "hindexed lb %ld", (long)lb);
  int x[4];
  MPI_Aint a0, a1;
  CHECK_OK(MPI_Address(&x[0], &a0));
  CHECK_OK(MPI_Get_address(&x[3], &a1));
  CHECK(MPI_Aint_diff(a1, a0) == 3 * sizeof(int), "Aint_diff");
  CHECK(MPI_Aint_add(a0, 3 * sizeof(int)) == a1, "Aint_add");
  /* Names. */
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_OK(MPI_Type_set_name(s, "my struct"));
  CHECK_OK(MPI_Type_get_name(s, name, &len));
  CHECK(strcmp(name, "my struct") == 0 && len == 9, "name '%s'", name);
  CHECK_OK(MPI_Type_get_name(MPI_LONG_DOUBLE, name, &len));
  CHECK(strcmp(name, "MPI_LONG_DOUBLE") == 0, "predefined name '%s'", name);
  CHECK_OK(MPI_Type_get_name(r, name, &len));
  CHECK(len == 0, "a new type has an empty name");
  /* match_size. */
  MPI_Datatype found;
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &found));
  CHECK_OK(MPI_Type_size(found, &size));
  CHECK(size == 8, "match_size real 8");
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &found));
  CHECK_OK(MPI_Type_size(found, &size));
  CHECK(size == 2, "match_size integer 2");
  CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &found), MPI_ERR_ARG);
  /* Predefined sizes real programs rely on. */
  struct {
    MPI_Datatype t;
    int size;
  } sz[] = {{MPI_LONG_DOUBLE, sizeof(long double)}, {MPI_C_BOOL, 1}, {MPI_INT8_T, 1}, {MPI_UINT16_T, 2},
            {MPI_INT64_T, 8}, {MPI_C_DOUBLE_COMPLEX, 16}, {MPI_AINT, sizeof(MPI_Aint)}, {MPI_OFFSET, 8},
            {MPI_COUNT, 8}, {MPI_PACKED, 1}, {MPI_FLOAT_INT, 8}, {MPI_SHORT_INT, 6}, {MPI_2INT, 8}};
  for (size_t i = 0; i < sizeof sz / sizeof sz[0]; ++i) {
    CHECK_OK(MPI_Type_size(sz[i].t, &size));
    CHECK(size == sz[i].size, "predefined %zu: size %d, want %d", i, size, sz[i].size);
  }
  CHECK_OK(MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ex));
  CHECK(ex == 8, "MPI_SHORT_INT extent %ld (C struct padding)", (long)ex);
  MPI_Type_free(&s);
  MPI_Type_free(&r);
  MPI_Type_free(&m);
  MPI_Type_free(&hv);
  MPI_Type_free(&hx);
}

static void pack_calls(void) {
  MPI_Datatype v;
  MPI_Type_vector(3, 1, 2, MPI_INT, &v);
  int src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0};
  char buf[64];
  int pos = 0, size;
  /* Uncommitted: not usable for packing. */
  CHECK_CLASS(MPI_Pack(src, 1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
  MPI_Type_commit(&v);
  CHECK_OK(MPI_Pack_size(2, v, MPI_COMM_WORLD, &size));
  CHECK(size >= 24, "Pack_size %d", size);
  double d = 2.5;
  CHECK_OK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_OK(MPI_Pack(src, 1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK(pos == 8 + 12, "position %d", pos);
  CHECK_CLASS(MPI_Pack(src, 2, v, buf, 30, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  CHECK(pos == 20, "a failed pack leaves the position alone");
  int in = 0;
  double e = 0;
  CHECK_OK(MPI_Unpack(buf, 20, &in, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  CHECK_OK(MPI_Unpack(buf, 20, &in, dst, 1, v, MPI_COMM_WORLD));
  CHECK(e == 2.5 && dst[0] == 1 && dst[1] == 0 && dst[2] == 3 && dst[4] == 5, "unpacked");
  CHECK_CLASS(MPI_Unpack(buf, 20, &in, dst, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  CHECK_CLASS(MPI_Pack(src, -1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Pack(src, 1, v, buf, sizeof buf, &pos, MPI_COMM_NULL), MPI_ERR_COMM);

  /* external32: big-endian image of a vector of ints and a double. */
  unsigned char ext[64];
  MPI_Aint epos = 0, esize;
  CHECK_OK(MPI_Pack_external_size("external32", 1, v, &esize));
  CHECK(esize == 12, "external32 size %ld", (long)esize);
  int vals[6] = {0x01020304, -1, 0x7f, 0, -2, 0};
  CHECK_OK(MPI_Pack_external("external32", vals, 1, v, ext, sizeof ext, &epos));
  CHECK_OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, ext, sizeof ext, &epos));
  unsigned char want[] = {1, 2, 3, 4, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xfe, 0x40, 0x04, 0, 0, 0, 0, 0, 0};
  CHECK(epos == 20 && memcmp(ext, want, 20) == 0, "external32 image");
  int back[6] = {0};
  double db = 0;
  MPI_Aint rpos = 0;
  CHECK_OK(MPI_Unpack_external("external32", ext, epos, &rpos, back, 1, v));
  CHECK_OK(MPI_Unpack_external("external32", ext, epos, &rpos, &db, 1, MPI_DOUBLE));
  CHECK(back[0] == vals[0] && back[2] == vals[2] && back[4] == vals[4] && back[1] == 0 && db == 2.5,
        "external32 round trip");
  CHECK_CLASS(MPI_Pack_external("native", vals, 1, v, ext, sizeof ext, &epos), MPI_ERR_UNSUPPORTED_DATAREP);
  CHECK_CLASS(MPI_Unpack_external("external32", ext, epos, &rpos, back, 1, v), MPI_ERR_TRUNCATE);
  MPI_Type_free(&v);
}

static void elements(void) {
  struct S {
    int i;
    double d[2];
  } s[2];
  int bl[] = {1, 2};
  MPI_Aint disp[] = {offsetof(struct S, i), offsetof(struct S, d)};
  MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, t;
  MPI_Type_create_struct(2, bl, disp, ty, &t);
  MPI_Type_commit(&t);
  memset(s, 0, sizeof s);
  MPI_Status st;
  MPI_Request r;
  /* 1 struct + an int + one double: 5 basics, 0 whole structs (Get_count undefined). */
  char raw[20 + 12];
  memset(raw, 0, sizeof raw);
  CHECK_OK(MPI_Irecv(s, 2, t, 0, 3, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Send(raw, 32, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, &st));
  int n;
  MPI_Count nx;
  CHECK_OK(MPI_Get_elements(&st, t, &n));
  CHECK(n == 5, "Get_elements %d, want 5", n);
  CHECK_OK(MPI_Get_elements_x(&st, t, &nx));
  CHECK(nx == 5, "Get_elements_x %lld", (long long)nx);
  CHECK_OK(MPI_Get_count(&st, t, &n));
  CHECK(n == MPI_UNDEFINED, "Get_count of a partial struct %d", n);
  /* Ending inside a double: undefined. */
  CHECK_OK(MPI_Irecv(s, 2, t, 0, 4, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Send(raw, 30, MPI_BYTE, 0, 4, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_OK(MPI_Get_elements(&st, t, &n));
  CHECK(n == MPI_UNDEFINED, "Get_elements inside a basic %d", n);
  CHECK_CLASS(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
  MPI_Type_free(&t);
}

static void errors(void) {
  MPI_Datatype t, u;
  int bl[2] = {1, -1};
  MPI_Aint d[2] = {0, 0};
  int id[2] = {0, 0};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
  CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_contiguous(1, 12345, &t), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_hvector(2, 1, 8, MPI_COMM_WORLD, &t), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_indexed(2, bl, id, MPI_INT, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_hindexed(2, NULL, d, MPI_INT, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_indexed_block(-1, 1, id, MPI_INT, &t), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Type_create_hindexed_block(1, -1, d, MPI_INT, &t), MPI_ERR_ARG);
  bl[1] = 1;
  CHECK_CLASS(MPI_Type_create_struct(2, bl, d, ty, &t), MPI_ERR_TYPE);
  int sizes[] = {4}, subs[] = {5}, starts[] = {0};
  CHECK_CLASS(MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  subs[0] = 2;
  starts[0] = 3;
  CHECK_CLASS(MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  starts[0] = 0;
  CHECK_CLASS(MPI_Type_create_subarray(1, sizes, subs, starts, 99, MPI_INT, &t), MPI_ERR_ARG);
  int gs[] = {10}, ds[] = {MPI_DISTRIBUTE_BLOCK}, dg[] = {2}, ps[] = {2};
  CHECK_CLASS(MPI_Type_create_darray(2, 0, 1, gs, ds, dg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_darray(2, 2, 1, gs, ds, dg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 4, &t), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
  /* Predefined types cannot be freed; freed handles are invalid everywhere. */
  MPI_Datatype i = MPI_INT;
  CHECK_CLASS(MPI_Type_free(&i), MPI_ERR_TYPE);
  CHECK(i == MPI_INT, "a refused free leaves the handle");
  CHECK_OK(MPI_Type_commit(&i)); /* committing a predefined type is a no-op */
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
  u = t;
  CHECK_OK(MPI_Type_free(&t));
  CHECK(t == MPI_DATATYPE_NULL, "free nulls the handle");
  int size;
  CHECK_CLASS(MPI_Type_size(u, &size), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_free(&u), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_commit(&u), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
  /* Uncommitted types cannot be used to communicate. */
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
  int x[2] = {0, 0};
  CHECK_CLASS(MPI_Send(x, 1, t, 0, 1, MPI_COMM_WORLD), MPI_ERR_TYPE);
  MPI_Type_free(&t);
  CHECK_CLASS(MPI_Send(x, 1, MPI_LB, 0, 1, MPI_COMM_WORLD), MPI_ERR_TYPE);
}

/* The MPI 4.0 large-count (_c) calls: same types, contents in large counts. */
static void large_counts(void) {
  MPI_Datatype v, s, r, v_classic;
  CHECK_OK(MPI_Type_vector_c(4, 2, 3, MPI_INT, &v));
  CHECK_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &v_classic));
  MPI_Count size, lb, ext, tlb, text;
  CHECK_OK(MPI_Type_size_c(v, &size));
  CHECK_OK(MPI_Type_get_extent_c(v, &lb, &ext));
  CHECK_OK(MPI_Type_get_true_extent_c(v, &tlb, &text));
  CHECK(size == 32 && lb == 0 && ext == 44 && tlb == 0 && text == 44, "vector_c: %lld %lld %lld", (long long)size,
        (long long)lb, (long long)ext);
  MPI_Count ni, na, nc, nd;
  int combiner;
  CHECK_OK(MPI_Type_get_envelope_c(v, &ni, &na, &nc, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nc == 3 && nd == 1, "vector_c envelope");
  MPI_Count counts[3];
  MPI_Datatype inner;
  CHECK_OK(MPI_Type_get_contents_c(v, 0, 0, 3, 1, NULL, NULL, counts, &inner));
  CHECK(counts[0] == 4 && counts[1] == 2 && counts[2] == 3 && inner == MPI_INT, "vector_c contents");
  int ints[4];
  MPI_Aint aints[4];
  MPI_Datatype ts[2];
  CHECK_CLASS(MPI_Type_get_contents(v, 4, 4, 2, ints, aints, ts), MPI_ERR_TYPE);
  CHECK_OK(MPI_Type_get_envelope_c(v_classic, &ni, &na, &nc, &nd, &combiner));
  CHECK(ni == 3 && nc == 0, "a classic vector has integer contents");
  MPI_Count bl[] = {1, 1};
  MPI_Count disp[] = {0, 16};
  MPI_Datatype ty[] = {v, MPI_DOUBLE};
  CHECK_OK(MPI_Type_create_struct_c(2, bl, disp, ty, &s));
  CHECK_OK(MPI_Type_create_resized_c(s, 0, 64, &r));
  CHECK_OK(MPI_Type_commit(&r));
  CHECK_OK(MPI_Type_get_extent_c(r, &lb, &ext));
  CHECK(ext == 64, "resized_c extent %lld", (long long)ext);
  int src[32], dst[32];
  for (int i = 0; i < 32; ++i) src[i] = i, dst[i] = -1;
  char buf[256];
  MPI_Count pos = 0, psize;
  CHECK_OK(MPI_Pack_size_c(1, r, MPI_COMM_WORLD, &psize));
  CHECK(psize == 40, "Pack_size_c %lld", (long long)psize);
  CHECK_OK(MPI_Pack_c(src, 1, r, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK(pos == 40, "Pack_c position %lld", (long long)pos);
  MPI_Count in = 0;
  CHECK_OK(MPI_Unpack_c(buf, pos, &in, dst, 1, r, MPI_COMM_WORLD));
  CHECK(dst[0] == 0 && dst[1] == 1 && dst[2] == -1 && dst[3] == 3, "Unpack_c");
  MPI_Count epos = 0, esize;
  CHECK_OK(MPI_Pack_external_size_c("external32", 1, r, &esize));
  CHECK_OK(MPI_Pack_external_c("external32", src, 1, r, buf, sizeof buf, &epos));
  CHECK(epos == esize && esize == 40, "Pack_external_c %lld", (long long)epos);
  MPI_Count rpos = 0;
  for (int i = 0; i < 32; ++i) dst[i] = -1;
  CHECK_OK(MPI_Unpack_external_c("external32", buf, epos, &rpos, dst, 1, r));
  CHECK(rpos == 40 && dst[1] == 1 && dst[3] == 3, "Unpack_external_c");
  MPI_Status st;
  MPI_Request q;
  CHECK_OK(MPI_Irecv(dst, 1, r, 0, 9, MPI_COMM_WORLD, &q));
  CHECK_OK(MPI_Send(src, 3, MPI_INT, 0, 9, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&q, &st));
  MPI_Count n;
  CHECK_OK(MPI_Get_elements_c(&st, r, &n));
  CHECK(n == 3, "Get_elements_c %lld", (long long)n);
  CHECK_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &s), MPI_ERR_COUNT);
  MPI_Type_free(&v);
  MPI_Type_free(&v_classic);
  MPI_Type_free(&s);
  MPI_Type_free(&r);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  envelopes();
  queries();
  pack_calls();
  elements();
  errors();
  large_counts();
  return itest_finish("datatype api");
}
