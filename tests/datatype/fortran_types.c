/* Fortran's optional and parameterized types as Sonde provides them:
 * - the optional types it does not have (MPI_LOGICAL1..8, MPI_REAL2,
 *   MPI_COMPLEX4, MPI_REAL16, MPI_COMPLEX32, MPI_INTEGER16) are
 *   MPI_DATATYPE_NULL;
 * - MPI_Type_create_f90_integer/_real/_complex answer a predefined type of
 *   the smallest sized Fortran kind that holds (p, r): the same handle for
 *   the same arguments, envelope MPI_COMBINER_F90_* with the arguments as
 *   contents, not freeable, and usable for communication and reductions;
 * - what no kind holds, and bad arguments, are MPI_ERR_ARG;
 * - MPI_Type_match_size answers a type of each size C has. */
#include "tests/integration/itest.h"

static void check_f90(MPI_Datatype t, int combiner, int ni, int p_or_r, int r, int size, const char* what) {
  int s = -1;
  CHECK_OK(MPI_Type_size(t, &s));
  CHECK(s == size, "%s: size %d, want %d", what, s, size);
  MPI_Aint lb = -1, extent = -1;
  CHECK_OK(MPI_Type_get_extent(t, &lb, &extent));
  CHECK(lb == 0 && extent == size, "%s: lb %ld extent %ld", what, (long)lb, (long)extent);
  int nints = -1, naddrs = -1, ntypes = -1, comb = -1;
  CHECK_OK(MPI_Type_get_envelope(t, &nints, &naddrs, &ntypes, &comb));
  CHECK(comb == combiner && nints == ni && naddrs == 0 && ntypes == 0, "%s: envelope %d/%d/%d combiner %d", what,
        nints, naddrs, ntypes, comb);
  int ints[2] = {-5, -5};
  MPI_Aint addrs[1];
  MPI_Datatype types[1];
  CHECK_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, addrs, types));
  CHECK(ints[0] == p_or_r && (ni == 1 || ints[1] == r), "%s: contents %d %d", what, ints[0], ints[1]);
  MPI_Datatype copy = t;
  CHECK_CLASS(MPI_Type_free(&copy), MPI_ERR_TYPE);
  CHECK(copy == t, "%s: a refused free changed the handle", what);
}

int main(int argc, char** argv) {
  itest_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int n = itest_size, me = itest_rank;

  MPI_Datatype absent[] = {MPI_LOGICAL1, MPI_LOGICAL2,  MPI_LOGICAL4, MPI_LOGICAL8, MPI_REAL2,
                           MPI_COMPLEX4, MPI_COMPLEX32, MPI_REAL16,   MPI_INTEGER16};
  for (unsigned i = 0; i < sizeof absent / sizeof absent[0]; ++i)
    CHECK(absent[i] == MPI_DATATYPE_NULL, "optional type %u is not MPI_DATATYPE_NULL", i);

  /* Integers by decimal range. */
  int ranges[] = {1, 2, 3, 4, 9, 10, 18};
  int isizes[] = {1, 1, 2, 2, 4, 8, 8};
  for (unsigned i = 0; i < sizeof ranges / sizeof ranges[0]; ++i) {
    MPI_Datatype t, again;
    CHECK_OK(MPI_Type_create_f90_integer(ranges[i], &t));
    CHECK_OK(MPI_Type_create_f90_integer(ranges[i], &again));
    CHECK(t == again, "f90_integer(%d) gave two handles", ranges[i]);
    CHECK(t != MPI_INTEGER1 && t != MPI_INTEGER8, "f90_integer(%d) is a named type", ranges[i]);
    char what[64];
    snprintf(what, sizeof what, "f90_integer(%d)", ranges[i]);
    check_f90(t, MPI_COMBINER_F90_INTEGER, 1, ranges[i], 0, isizes[i], what);
  }
  MPI_Datatype i4, i4b;
  CHECK_OK(MPI_Type_create_f90_integer(4, &i4));
  CHECK_OK(MPI_Type_create_f90_integer(3, &i4b));
  CHECK(i4 != i4b, "different arguments gave the same handle (their contents differ)");

  /* Reals and complexes by precision and range. */
  MPI_Datatype r4, r8, rp, rr, c8, c16;
  CHECK_OK(MPI_Type_create_f90_real(6, 30, &r4));
  check_f90(r4, MPI_COMBINER_F90_REAL, 2, 6, 30, 4, "f90_real(6, 30)");
  CHECK_OK(MPI_Type_create_f90_real(15, 300, &r8));
  check_f90(r8, MPI_COMBINER_F90_REAL, 2, 15, 300, 8, "f90_real(15, 300)");
  CHECK_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 100, &rr));
  check_f90(rr, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 100, 8, "f90_real(UNDEFINED, 100)");
  CHECK_OK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &rp));
  check_f90(rp, MPI_COMBINER_F90_REAL, 2, 7, MPI_UNDEFINED, 8, "f90_real(7, UNDEFINED)");
  CHECK_OK(MPI_Type_create_f90_complex(6, 30, &c8));
  check_f90(c8, MPI_COMBINER_F90_COMPLEX, 2, 6, 30, 8, "f90_complex(6, 30)");
  CHECK_OK(MPI_Type_create_f90_complex(15, 300, &c16));
  check_f90(c16, MPI_COMBINER_F90_COMPLEX, 2, 15, 300, 16, "f90_complex(15, 300)");

  /* No kind holds these, and bad arguments: MPI_ERR_ARG, nothing made. */
  MPI_Datatype none = MPI_DATATYPE_NULL;
  CHECK_CLASS(MPI_Type_create_f90_integer(19, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_integer(-3, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_integer(MPI_UNDEFINED, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_real(16, 300, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_real(6, 308, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_complex(33, MPI_UNDEFINED, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_complex(-1, 10, &none), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_real(6, 30, NULL), MPI_ERR_ARG);
  CHECK(none == MPI_DATATYPE_NULL, "a refused call set the handle");

  /* A dup of one names it as itself, as predefined types are named. */
  MPI_Datatype dup, inner = MPI_DATATYPE_NULL;
  CHECK_OK(MPI_Type_dup(r8, &dup));
  int ints[1];
  MPI_Aint addrs[1];
  CHECK_OK(MPI_Type_get_contents(dup, 0, 0, 1, ints, addrs, &inner));
  CHECK(inner == r8, "the dup's contents name %d, not the f90 type %d", inner, r8);
  CHECK_OK(MPI_Type_free(&dup));

  /* Communication and reductions: a ring of f90 reals, then a sum. */
  int right = (me + 1) % n, left = (me + n - 1) % n;
  double out[2] = {me + 0.5, -me - 0.25}, in[2] = {0, 0};
  CHECK_OK(MPI_Sendrecv(out, 2, r8, right, 7, in, 2, r8, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(in[0] == left + 0.5 && in[1] == -left - 0.25, "ring of f90 reals: %g %g", in[0], in[1]);
  float fv = (float)(me + 1), fsum = 0;
  CHECK_OK(MPI_Allreduce(&fv, &fsum, 1, r4, MPI_SUM, MPI_COMM_WORLD));
  CHECK(fsum == (float)(n * (n + 1) / 2), "sum over f90_real(6, 30): %g", fsum);
  long long lv = (long long)me << 33, lmax = -1;
  MPI_Datatype i8;
  CHECK_OK(MPI_Type_create_f90_integer(18, &i8));
  CHECK_OK(MPI_Allreduce(&lv, &lmax, 1, i8, MPI_MAX, MPI_COMM_WORLD));
  CHECK(lmax == (long long)(n - 1) << 33, "max over f90_integer(18): %lld", lmax);
  double cz[2] = {1.0, (double)me}, csum[2] = {0, 0};
  CHECK_OK(MPI_Allreduce(cz, csum, 1, c16, MPI_SUM, MPI_COMM_WORLD));
  CHECK(csum[0] == n && csum[1] == n * (n - 1) / 2.0, "sum over f90_complex(15, 300): %g %g", csum[0], csum[1]);

  /* MPI_Type_match_size: the C type of each size there is. */
  int isz[] = {1, 2, 4, 8}, rsz[] = {4, 8}, csz[] = {8, 16};
  for (int i = 0; i < 4; ++i) {
    MPI_Datatype t;
    int s = -1;
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, isz[i], &t));
    MPI_Type_size(t, &s);
    CHECK(s == isz[i], "match_size(INTEGER, %d) has size %d", isz[i], s);
  }
  for (int i = 0; i < 2; ++i) {
    MPI_Datatype t;
    int s = -1;
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, rsz[i], &t));
    MPI_Type_size(t, &s);
    CHECK(s == rsz[i], "match_size(REAL, %d) has size %d", rsz[i], s);
    CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, csz[i], &t));
    MPI_Type_size(t, &s);
    CHECK(s == csz[i], "match_size(COMPLEX, %d) has size %d", csz[i], s);
  }
  MPI_Datatype t3;
  CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t3), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t3), MPI_ERR_ARG);
  return itest_finish("fortran_types");
}
