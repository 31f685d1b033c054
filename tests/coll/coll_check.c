/* Collectives against a serial reference.
 *
 * Plain C against <mpi.h> only, so the same program also runs under MPICH
 * and Open MPI (which is how the checker itself was validated). Every rank
 * computes locally what every collective must produce, from a deterministic
 * function of (rank, index), and compares element by element, gaps of
 * derived datatypes included. Any mismatch is printed (the first few per
 * case) and makes the exit status non-zero.
 *
 * Runs the whole suite on MPI_COMM_WORLD and on a split communicator whose
 * rank order is reversed, so roots, ranks and sizes differ from the world's.
 * Usage: coll_check [max_count]   (default 100000)
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/coll/check.h"

/* ---- deterministic data ------------------------------------------------ */

enum OpKind { MAXK, MINK, SUMK, PRODK, LANDK, LORK, LXORK, BANDK, BORK, BXORK };
struct OpInfo {
  MPI_Op op;
  const char *name;
  enum OpKind kind;
  int on_double; /* defined on MPI_DOUBLE too */
};

/* Rank r's input element i for an op: chosen so every result is exact
 * (no overflow, no rounding) whatever order the library combines in. */
static int int_value(enum OpKind k, int r, long i, int p) {
  unsigned h = hash3((unsigned)r, (unsigned)i, (unsigned)k + 1);
  switch (k) {
    case SUMK: return (int)(h % 2001) - 1000;
    case PRODK: {
      static const int f[3] = {1, -1, 2};
      return f[h % 3];
    }
    case LANDK:
    case LORK:
    case LXORK:
      /* zeros spread so that all-true and all-false columns both occur */
      return (i % (p + 1) == r || h % 4 == 0) ? 0 : (int)(h % 7) + 1;
    case BANDK:
    case BORK:
    case BXORK: return (int)h;
    default: return (int)(h % 100001) - 50000;
  }
}

static double double_value(enum OpKind k, int r, long i) {
  unsigned h = hash3((unsigned)r, (unsigned)i, (unsigned)k + 101);
  switch (k) {
    case SUMK: return (double)((int)(h % 2001) - 1000);
    case PRODK: {
      static const double f[4] = {1.0, -1.0, 2.0, 0.5};
      return f[h % 4];
    }
    default: return (double)(h % 100001) * 0.25 - 12500.0;
  }
}

static int int_combine(enum OpKind k, int a, int b) {
  switch (k) {
    case MAXK: return a > b ? a : b;
    case MINK: return a < b ? a : b;
    case SUMK: return a + b;
    case PRODK: return a * b;
    case LANDK: return a && b;
    case LORK: return a || b;
    case LXORK: return !a != !b;
    case BANDK: return a & b;
    case BORK: return a | b;
    case BXORK: return a ^ b;
  }
  return 0;
}

static double double_combine(enum OpKind k, double a, double b) {
  switch (k) {
    case MAXK: return a > b ? a : b;
    case MINK: return a < b ? a : b;
    case SUMK: return a + b;
    case PRODK: return a * b;
    default: return 0;
  }
}

static int int_expected(enum OpKind k, long i, int p) {
  int acc = int_value(k, 0, i, p);
  for (int r = 1; r < p; ++r) acc = int_combine(k, acc, int_value(k, r, i, p));
  return acc;
}

static double double_expected(enum OpKind k, long i, int p) {
  double acc = double_value(k, 0, i);
  for (int r = 1; r < p; ++r) acc = double_combine(k, acc, double_value(k, r, i));
  return acc;
}

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- barrier ----------------------------------------------------------- */

static void test_barrier(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Barrier x10 (size %d)", size);
  for (int i = 0; i < 10; ++i) check_rc(MPI_Barrier(comm), "MPI_Barrier");
  /* Nobody may leave before the last rank arrives: every rank's exit comes
   * after the late rank's entry on the host's monotonic clock (all ranks of
   * these tests share one host). An order, not a duration, so machine load
   * cannot make it fail. */
  begin_case("Barrier waits for a late rank (size %d)", size);
  check_rc(MPI_Barrier(comm), "MPI_Barrier");
  double entered = 0;
  if (rank == size - 1) {
    usleep(50000);
    entered = monotonic_seconds();
  }
  check_rc(MPI_Barrier(comm), "MPI_Barrier");
  double left = monotonic_seconds();
  check_rc(MPI_Bcast(&entered, 1, MPI_DOUBLE, size - 1, comm), "MPI_Bcast");
  if (left < entered) mismatch(0, left, entered);
}

/* ---- bcast ------------------------------------------------------------- */

static void test_bcast(MPI_Comm comm, long count, int root) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  begin_case("Bcast int count %ld root %d (size %d)", count, root, size);
  int *buf = xmalloc((size_t)count * sizeof(int));
  for (long i = 0; i < count; ++i) buf[i] = rank == root ? (int)hash3((unsigned)root, (unsigned)i, 7) : -1;
  check_rc(MPI_Bcast(buf, (int)count, MPI_INT, root, comm), "MPI_Bcast");
  for (long i = 0; i < count; ++i) {
    int want = (int)hash3((unsigned)root, (unsigned)i, 7);
    if (buf[i] != want) mismatch(i, buf[i], want);
  }
  free(buf);

  begin_case("Bcast double count %ld root %d (size %d)", count, root, size);
  double *d = xmalloc((size_t)count * sizeof(double));
  for (long i = 0; i < count; ++i) d[i] = rank == root ? double_value(SUMK, root, i) + 0.5 : -1.0;
  check_rc(MPI_Bcast(d, (int)count, MPI_DOUBLE, root, comm), "MPI_Bcast");
  for (long i = 0; i < count; ++i)
    if (d[i] != double_value(SUMK, root, i) + 0.5) mismatch(i, d[i], double_value(SUMK, root, i) + 0.5);
  free(d);
}

/* ---- reduce / allreduce ------------------------------------------------ */

static const struct OpInfo kOps[] = {
    {0, "MPI_MAX", MAXK, 1},   {0, "MPI_MIN", MINK, 1},   {0, "MPI_SUM", SUMK, 1},   {0, "MPI_PROD", PRODK, 1},
    {0, "MPI_LAND", LANDK, 0}, {0, "MPI_LOR", LORK, 0},   {0, "MPI_LXOR", LXORK, 0}, {0, "MPI_BAND", BANDK, 0},
    {0, "MPI_BOR", BORK, 0},   {0, "MPI_BXOR", BXORK, 0},
};
#define NOPS ((int)(sizeof kOps / sizeof kOps[0]))
static MPI_Op g_ops[NOPS];

static void init_ops(void) {
  /* Handles are not constant expressions in every MPI (Open MPI's are pointers). */
  g_ops[0] = MPI_MAX, g_ops[1] = MPI_MIN, g_ops[2] = MPI_SUM, g_ops[3] = MPI_PROD, g_ops[4] = MPI_LAND;
  g_ops[5] = MPI_LOR, g_ops[6] = MPI_LXOR, g_ops[7] = MPI_BAND, g_ops[8] = MPI_BOR, g_ops[9] = MPI_BXOR;
}

/* One input or expected element, as a double: exact for every int too. */
static double value(enum OpKind k, int dbl, int r, long i, int p) {
  return dbl ? double_value(k, r, i) : (double)int_value(k, r, i, p);
}
static double expected(enum OpKind k, int dbl, long i, int p) {
  return dbl ? double_expected(k, i, p) : (double)int_expected(k, i, p);
}
static double load(const void *buf, int dbl, long i) {
  return dbl ? ((const double *)buf)[i] : (double)((const int *)buf)[i];
}
static void store(void *buf, int dbl, long i, double v) {
  if (dbl) ((double *)buf)[i] = v;
  else ((int *)buf)[i] = (int)v;
}

/* MPI_INT (dbl = 0) or MPI_DOUBLE (dbl = 1); root < 0: MPI_Allreduce. */
static void test_reduce(MPI_Comm comm, long count, int root, int o, int dbl, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const enum OpKind k = kOps[o].kind;
  begin_case("%s %s %s count %ld root %d%s (size %d)", root < 0 ? "Allreduce" : "Reduce", dbl ? "double" : "int",
             kOps[o].name, count, root, in_place ? " MPI_IN_PLACE" : "", size);
  const size_t elem = dbl ? sizeof(double) : sizeof(int);
  const MPI_Datatype type = dbl ? MPI_DOUBLE : MPI_INT;
  void *in = xmalloc((size_t)count * elem);
  void *out = xmalloc((size_t)count * elem);
  for (long i = 0; i < count; ++i) {
    store(in, dbl, i, value(k, dbl, rank, i, size));
    store(out, dbl, i, in_place ? load(in, dbl, i) : -12345);
  }
  const int receives = root < 0 || rank == root;
  const void *send = in_place && receives ? MPI_IN_PLACE : in;
  int rc = root < 0 ? MPI_Allreduce(send, out, (int)count, type, g_ops[o], comm)
                    : MPI_Reduce(send, out, (int)count, type, g_ops[o], root, comm);
  check_rc(rc, root < 0 ? "MPI_Allreduce" : "MPI_Reduce");
  for (long i = 0; i < count; ++i) {
    if (receives) {
      if (load(out, dbl, i) != expected(k, dbl, i, size)) mismatch(i, load(out, dbl, i), expected(k, dbl, i, size));
    } else if (load(in, dbl, i) != value(k, dbl, rank, i, size)) {
      mismatch(i, load(in, dbl, i), value(k, dbl, rank, i, size)); /* the send buffer must stay untouched */
    }
  }
  free(in);
  free(out);
}

/* MAXLOC / MINLOC on DOUBLE_INT (index = rank) and 2INT (index = 100 - rank,
 * so the lowest index of a tie comes from the highest rank). Values have
 * few distinct levels so that ties are frequent. */
struct DoubleInt {
  double v;
  int i;
};
struct TwoInt {
  int v;
  int i;
};

static void test_loc(MPI_Comm comm, long count, int root, int maxloc) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Op op = maxloc ? MPI_MAXLOC : MPI_MINLOC;
  const char *name = maxloc ? "MPI_MAXLOC" : "MPI_MINLOC";
  const int receives = root < 0 || rank == root;

  begin_case("%s DOUBLE_INT %s count %ld root %d (size %d)", root < 0 ? "Allreduce" : "Reduce", name, count, root,
             size);
  struct DoubleInt *a = xmalloc((size_t)count * sizeof *a), *b = xmalloc((size_t)count * sizeof *b);
  for (long i = 0; i < count; ++i) {
    a[i].v = (double)(hash3((unsigned)rank, (unsigned)i, 55) % 4) - 1.5;
    a[i].i = rank;
    b[i].v = -99, b[i].i = -99;
  }
  int rc = root < 0 ? MPI_Allreduce(a, b, (int)count, MPI_DOUBLE_INT, op, comm)
                    : MPI_Reduce(a, b, (int)count, MPI_DOUBLE_INT, op, root, comm);
  check_rc(rc, "reduction");
  if (receives)
    for (long i = 0; i < count; ++i) {
      double best = 0;
      int at = -1;
      for (int r = 0; r < size; ++r) {
        double v = (double)(hash3((unsigned)r, (unsigned)i, 55) % 4) - 1.5;
        if (at < 0 || (maxloc ? v > best : v < best)) best = v, at = r;
      }
      if (b[i].v != best) mismatch(i, b[i].v, best);
      if (b[i].i != at) mismatch(i, b[i].i, at);
    }
  free(a);
  free(b);

  begin_case("%s 2INT %s count %ld root %d (size %d)", root < 0 ? "Allreduce" : "Reduce", name, count, root, size);
  struct TwoInt *c = xmalloc((size_t)count * sizeof *c), *d = xmalloc((size_t)count * sizeof *d);
  for (long i = 0; i < count; ++i) {
    c[i].v = (int)(hash3((unsigned)rank, (unsigned)i, 66) % 3);
    c[i].i = 100 - rank;
    d[i].v = -99, d[i].i = -99;
  }
  rc = root < 0 ? MPI_Allreduce(c, d, (int)count, MPI_2INT, op, comm)
                : MPI_Reduce(c, d, (int)count, MPI_2INT, op, root, comm);
  check_rc(rc, "reduction");
  if (receives)
    for (long i = 0; i < count; ++i) {
      int best = 0, at = -1;
      for (int r = 0; r < size; ++r) {
        int v = (int)(hash3((unsigned)r, (unsigned)i, 66) % 3);
        if (at < 0 || (maxloc ? v > best : v < best) || (v == best && 100 - r < at)) best = v, at = 100 - r;
      }
      if (d[i].v != best) mismatch(i, d[i].v, best);
      if (d[i].i != at) mismatch(i, d[i].i, at);
    }
  free(c);
  free(d);
}

/* ---- gather / allgather ------------------------------------------------ */

static int gather_value(int r, long i) { return (int)hash3((unsigned)r, (unsigned)i, 9); }

/* root < 0: MPI_Allgather. */
static void test_gather(MPI_Comm comm, long count, int root, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int receives = root < 0 || rank == root;
  begin_case("%s int count %ld root %d%s (size %d)", root < 0 ? "Allgather" : "Gather", count, root,
             in_place ? " MPI_IN_PLACE" : "", size);
  int *in = xmalloc((size_t)count * sizeof(int));
  int *out = xmalloc((size_t)count * (size_t)size * sizeof(int));
  for (long i = 0; i < count; ++i) in[i] = gather_value(rank, i);
  for (long i = 0; i < count * size; ++i) out[i] = -777;
  if (in_place && receives) memcpy(out + (long)rank * count, in, (size_t)count * sizeof(int));
  const void *send = in_place && receives ? MPI_IN_PLACE : in;
  int rc = root < 0 ? MPI_Allgather(send, (int)count, MPI_INT, out, (int)count, MPI_INT, comm)
                    : MPI_Gather(send, (int)count, MPI_INT, out, (int)count, MPI_INT, root, comm);
  check_rc(rc, root < 0 ? "MPI_Allgather" : "MPI_Gather");
  if (receives)
    for (int r = 0; r < size; ++r)
      for (long i = 0; i < count; ++i)
        if (out[r * count + i] != gather_value(r, i)) mismatch(r * count + i, out[r * count + i], gather_value(r, i));
  free(in);
  free(out);
}

/* ---- derived datatypes -------------------------------------------------- */

/* MPI_Type_vector(3, 2, 3, MPI_INT): ints at 0,1,3,4,6,7 of every 8 (the
 * extent); 2 and 5 are gaps that no collective may write. */
#define VEC_SPAN 8
static int vec_is_data(long pos) {
  long j = pos % VEC_SPAN;
  return j != 2 && j != 5;
}
#define GAP (-31337)

static void test_vector(MPI_Comm comm, long n, int root) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Datatype vec;
  MPI_Type_vector(3, 2, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  const long span = n * VEC_SPAN;

  /* Bcast */
  begin_case("Bcast vector x%ld root %d (size %d)", n, root, size);
  int *buf = xmalloc((size_t)span * sizeof(int));
  for (long i = 0; i < span; ++i) buf[i] = rank == root && vec_is_data(i) ? gather_value(root, i) : GAP;
  check_rc(MPI_Bcast(buf, (int)n, vec, root, comm), "MPI_Bcast");
  for (long i = 0; i < span; ++i) {
    int want = vec_is_data(i) ? gather_value(root, i) : GAP;
    if (buf[i] != want) mismatch(i, buf[i], want);
  }

  /* Reduce and Allreduce (SUM), with and without MPI_IN_PLACE. MPI defines
   * predefined ops on predefined types only, and MPICH and Open MPI refuse
   * derived ones; Sonde applies them to any type built from one basic type. */
  int *in = xmalloc((size_t)span * sizeof(int));
#ifdef SONDE_VERSION_STRING
  const int reduce_variants = 4;
#else
  const int reduce_variants = 0;
#endif
  for (int variant = 0; variant < reduce_variants; ++variant) {
    const int all = variant & 1, in_place = variant >> 1;
    const int receives = all || rank == root;
    begin_case("%s vector x%ld SUM root %d%s (size %d)", all ? "Allreduce" : "Reduce", n, root,
               in_place ? " MPI_IN_PLACE" : "", size);
    for (long i = 0; i < span; ++i) {
      in[i] = vec_is_data(i) ? int_value(SUMK, rank, i, size) : GAP - rank;
      buf[i] = in_place ? in[i] : GAP;
    }
    const void *send = in_place && receives ? MPI_IN_PLACE : in;
    int rc = all ? MPI_Allreduce(send, buf, (int)n, vec, MPI_SUM, comm)
                 : MPI_Reduce(send, buf, (int)n, vec, MPI_SUM, root, comm);
    check_rc(rc, "reduction");
    if (receives)
      for (long i = 0; i < span; ++i) {
        int want = vec_is_data(i) ? int_expected(SUMK, i, size) : (in_place ? GAP - rank : GAP);
        if (buf[i] != want) mismatch(i, buf[i], want);
      }
  }
  free(buf);
  free(in);

  /* Gather and Allgather: contiguous ints sent, vectors received. */
  const long per = n * 6; /* ints of data in n vectors */
  int *send = xmalloc((size_t)per * sizeof(int));
  int *recv = xmalloc((size_t)(span * size) * sizeof(int));
  for (long i = 0; i < per; ++i) send[i] = gather_value(rank, i);
  for (int all = 0; all < 2; ++all) {
    const int receives = all || rank == root;
    begin_case("%s %ld ints into vector x%ld root %d (size %d)", all ? "Allgather" : "Gather", per, n, root, size);
    for (long i = 0; i < span * size; ++i) recv[i] = GAP;
    int rc = all ? MPI_Allgather(send, (int)per, MPI_INT, recv, (int)n, vec, comm)
                 : MPI_Gather(send, (int)per, MPI_INT, recv, (int)n, vec, root, comm);
    check_rc(rc, "gather");
    if (receives)
      for (int r = 0; r < size; ++r) {
        long k = 0;
        for (long i = 0; i < span; ++i) {
          int got = recv[r * span + i];
          int want = vec_is_data(i) ? gather_value(r, k++) : GAP;
          if (got != want) mismatch(r * span + i, got, want);
        }
      }
  }
  free(send);
  free(recv);
  MPI_Type_free(&vec);
}

/* ---- argument errors ---------------------------------------------------- */

/* Only errors every rank detects by itself, so that no rank is left waiting
 * in a collective the others refused. Sonde's error classes are checked
 * exactly; other libraries skip this part (Debian's MPICH, for one, does not
 * check every argument and may crash on a negative count). */
#ifdef SONDE_VERSION_STRING
static void test_errors(MPI_Comm parent) {
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int size;
  MPI_Comm_size(comm, &size);
  int a[4] = {1, 2, 3, 4}, b[4];
  expect_error(MPI_Bcast(a, 1, MPI_INT, size, comm), MPI_ERR_ROOT, "Bcast root == size");
  expect_error(MPI_Bcast(a, 1, MPI_INT, -1, comm), MPI_ERR_ROOT, "Bcast root -1");
  expect_error(MPI_Bcast(a, -1, MPI_INT, 0, comm), MPI_ERR_COUNT, "Bcast count -1");
  expect_error(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, comm), MPI_ERR_TYPE, "Bcast MPI_DATATYPE_NULL");
  expect_error(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size, comm), MPI_ERR_ROOT, "Reduce root == size");
  expect_error(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, comm), MPI_ERR_OP, "Allreduce MPI_OP_NULL");
  expect_error(MPI_Allreduce(a, b, 1, MPI_BYTE, MPI_SUM, comm), MPI_ERR_OP, "Allreduce SUM on MPI_BYTE");
  expect_error(MPI_Allreduce(a, b, 1, MPI_INT, MPI_MAXLOC, comm), MPI_ERR_OP, "Allreduce MAXLOC on MPI_INT");
  expect_error(MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BAND, comm), MPI_ERR_OP, "Allreduce BAND on MPI_DOUBLE");
  expect_error(MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER, "Allreduce sendbuf == recvbuf");
  expect_error(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, comm), MPI_ERR_COUNT, "Allreduce count -2");
  expect_error(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, size, comm), MPI_ERR_ROOT, "Gather root == size");
  expect_error(MPI_Allgather(a, 1, MPI_INT, a, 1, MPI_INT, comm), MPI_ERR_BUFFER, "Allgather sendbuf == recvbuf");
  expect_error(MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, comm), MPI_ERR_COUNT, "Allgather sendcount -1");
  expect_error(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier MPI_COMM_NULL");
  /* The communicator still works after refused calls. */
  begin_case("Allreduce after refused calls");
  check_rc(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  if (b[0] != size) mismatch(0, b[0], size);
  MPI_Comm_free(&comm);
}
#else
static void test_errors(MPI_Comm parent) { (void)parent; }
#endif

/* ---- driver ------------------------------------------------------------- */

static void suite(MPI_Comm comm, long max_count) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long counts[] = {0, 1, 1000, 100000};
  int roots[3] = {0, size - 1, size / 2};
  const int nroots = size > 2 ? 3 : size;

  test_barrier(comm);
  for (int c = 0; c < 4; ++c) {
    const long n = counts[c];
    if (n > max_count) continue;
    for (int ri = 0; ri < nroots; ++ri) test_bcast(comm, n, roots[ri]);
    for (int o = 0; o < NOPS; ++o) {
      for (int dbl = 0; dbl <= kOps[o].on_double; ++dbl) {
        for (int ri = 0; ri < 2 && ri < nroots; ++ri) test_reduce(comm, n, roots[ri], o, dbl, ri != dbl);
        test_reduce(comm, n, -1, o, dbl, 0);
        test_reduce(comm, n, -1, o, dbl, 1);
      }
    }
    for (int maxloc = 0; maxloc < 2; ++maxloc) {
      test_loc(comm, n, size - 1, maxloc);
      test_loc(comm, n, -1, maxloc);
    }
    for (int ri = 0; ri < 2 && ri < nroots; ++ri) {
      test_gather(comm, n, roots[ri], 0);
      test_gather(comm, n, roots[ri], 1);
    }
    test_gather(comm, n, -1, 0);
    test_gather(comm, n, -1, 1);
  }
  const long vec_counts[] = {1, 7, 5000};
  for (int c = 0; c < 3; ++c)
    if (vec_counts[c] * 6 <= max_count || c == 0) test_vector(comm, vec_counts[c], roots[c % nroots]);
  test_errors(comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_prog = "coll_check";
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  /* Mismatches are reported, not fatal: errors return so all are seen. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  init_ops();
  long max_count = argc > 1 ? atol(argv[1]) : 100000;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  suite(MPI_COMM_WORLD, max_count);

  /* Reversed order, and for size > 2 two halves that run concurrently. */
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, size > 2 ? g_world_rank % 2 : 0, -g_world_rank, &split);
  MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
  suite(split, max_count);
  MPI_Comm_free(&split);

  suite(MPI_COMM_SELF, 1000);

  report();
  MPI_Finalize();
  return g_failures != 0;
}
