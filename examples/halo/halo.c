/*
 * halo: a Jacobi solver for Laplace's equation on the unit square, split into
 * a 2-D grid of blocks, one per rank, that trade one-cell halos every sweep.
 * It is the demo Sonde runs (./demo.sh) and a plain MPI program: it builds
 * with any mpicc and runs under any mpiexec.
 *
 *   mpiexec -n 4 halo [-n N] [-t TOL] [-m MAXITER] [-c EVERY] [-s]
 *
 *   -n N        interior points per side of the global grid (default 64)
 *   -t TOL      stop when the 2-norm of one sweep's change is below TOL
 *               (default 1e-7)
 *   -m MAXITER  give up after this many sweeps (default 100000)
 *   -c EVERY    test convergence (one MPI_Allreduce) every EVERY sweeps
 *               (default 50)
 *   -s          exchange halos with MPI_Sendrecv instead of
 *               MPI_Isend/MPI_Irecv/MPI_Waitall
 *
 * The boundary holds u = x^2 - y^2. That function is harmonic, and also
 * discretely harmonic for the 5-point stencil, so the converged grid must
 * equal it up to the stopping tolerance. Two checks of the answer, both printed:
 *   1. rank 0 repeats the same number of sweeps serially on the whole grid;
 *      the distributed result must match it bit for bit (each point's update
 *      reads the same four doubles in the same order, wherever it lives);
 *   2. after convergence, max |u - (x^2 - y^2)| must be below 1e-3.
 * A third check keeps the statistics honest: the messages every rank says it
 * sent (collected with MPI_Gather) must add up to what the process grid
 * implies. Exit status 0 when all hold, 1 otherwise, 2 for bad arguments.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags name the direction the data travels: a rank receiving from its north
 * neighbour waits for data moving south. */
enum { TAG_NORTHWARD = 1, TAG_SOUTHWARD, TAG_WESTWARD, TAG_EASTWARD, TAG_GATHER };

#define EXACT_LIMIT 1e-3

struct options {
  int n;
  double tol;
  long max_iter;
  int check_every;
  int use_sendrecv;
};

/* One rank's block: rows x cols interior points whose first is global point
 * (row0 + 1, col0 + 1); global rows and columns 0 and n + 1 are boundary. */
struct block {
  int rows, cols;
  int row0, col0;
};

/* The process grid: py rows of px ranks, as square as the rank count allows
 * (py is the largest divisor of size not above its square root). */
static void process_grid(int size, int* px, int* py) {
  int best = 1;
  for (int d = 1; (long)d * d <= size; ++d)
    if (size % d == 0) best = d;
  *py = best;
  *px = size / best;
}

/* Splits n points into parts pieces whose sizes differ by at most one. */
static void split_range(int n, int parts, int index, int* count, int* first) {
  int base = n / parts, extra = n % parts;
  *count = base + (index < extra ? 1 : 0);
  *first = index * base + (index < extra ? index : extra);
}

static struct block block_of(int rank, int n, int px, int py) {
  struct block b;
  split_range(n, py, rank / px, &b.rows, &b.row0);
  split_range(n, px, rank % px, &b.cols, &b.col0);
  return b;
}

static double exact(int gi, int gj, int n) {
  double h = 1.0 / (n + 1);
  double x = gj * h, y = gi * h;
  return x * x - y * y;
}

/* A (rows + 2) x (cols + 2) array with the halo ring; index (i, j), i and j
 * from 0 to rows + 1 and cols + 1. */
#define AT(u, b, i, j) ((u)[(size_t)(i) * ((b).cols + 2) + (j)])

/* Zero inside, boundary values on the halo cells that lie on the global
 * boundary (they are never overwritten: receives from MPI_PROC_NULL leave
 * their buffer alone). */
static double* new_grid(struct block b, int n) {
  double* u = calloc((size_t)(b.rows + 2) * (b.cols + 2), sizeof *u);
  if (u == NULL) {
    fprintf(stderr, "halo: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int i = 0; i <= b.rows + 1; ++i)
    for (int j = 0; j <= b.cols + 1; ++j) {
      int gi = b.row0 + i, gj = b.col0 + j;
      if (gi == 0 || gi == n + 1 || gj == 0 || gj == n + 1) AT(u, b, i, j) = exact(gi, gj, n);
    }
  return u;
}

/* One Jacobi sweep from u into v; returns the sum of squared changes. */
static double sweep(const double* u, double* v, struct block b) {
  double change = 0;
  for (int i = 1; i <= b.rows; ++i)
    for (int j = 1; j <= b.cols; ++j) {
      double x = 0.25 * (AT(u, b, i - 1, j) + AT(u, b, i + 1, j) + AT(u, b, i, j - 1) + AT(u, b, i, j + 1));
      double d = x - AT(u, b, i, j);
      change += d * d;
      AT(v, b, i, j) = x;
    }
  return change;
}

struct neighbours {
  int north, south, west, east; /* MPI_PROC_NULL on the global boundary */
};

/* Fills u's halo ring from the four neighbours. Columns go as one strided
 * message each (the column datatype), rows as contiguous doubles. */
static void exchange(double* u, struct block b, struct neighbours nb, MPI_Datatype column, int use_sendrecv,
                     MPI_Comm comm) {
  double* north_row = &AT(u, b, 1, 1);
  double* south_row = &AT(u, b, b.rows, 1);
  double* west_col = &AT(u, b, 1, 1);
  double* east_col = &AT(u, b, 1, b.cols);
  double* north_halo = &AT(u, b, 0, 1);
  double* south_halo = &AT(u, b, b.rows + 1, 1);
  double* west_halo = &AT(u, b, 1, 0);
  double* east_halo = &AT(u, b, 1, b.cols + 1);
  if (use_sendrecv) {
    MPI_Sendrecv(north_row, b.cols, MPI_DOUBLE, nb.north, TAG_NORTHWARD, south_halo, b.cols, MPI_DOUBLE, nb.south,
                 TAG_NORTHWARD, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(south_row, b.cols, MPI_DOUBLE, nb.south, TAG_SOUTHWARD, north_halo, b.cols, MPI_DOUBLE, nb.north,
                 TAG_SOUTHWARD, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(west_col, 1, column, nb.west, TAG_WESTWARD, east_halo, 1, column, nb.east, TAG_WESTWARD, comm,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(east_col, 1, column, nb.east, TAG_EASTWARD, west_halo, 1, column, nb.west, TAG_EASTWARD, comm,
                 MPI_STATUS_IGNORE);
    return;
  }
  MPI_Request req[8];
  MPI_Irecv(north_halo, b.cols, MPI_DOUBLE, nb.north, TAG_SOUTHWARD, comm, &req[0]);
  MPI_Irecv(south_halo, b.cols, MPI_DOUBLE, nb.south, TAG_NORTHWARD, comm, &req[1]);
  MPI_Irecv(west_halo, 1, column, nb.west, TAG_EASTWARD, comm, &req[2]);
  MPI_Irecv(east_halo, 1, column, nb.east, TAG_WESTWARD, comm, &req[3]);
  MPI_Isend(north_row, b.cols, MPI_DOUBLE, nb.north, TAG_NORTHWARD, comm, &req[4]);
  MPI_Isend(south_row, b.cols, MPI_DOUBLE, nb.south, TAG_SOUTHWARD, comm, &req[5]);
  MPI_Isend(west_col, 1, column, nb.west, TAG_WESTWARD, comm, &req[6]);
  MPI_Isend(east_col, 1, column, nb.east, TAG_EASTWARD, comm, &req[7]);
  MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}

/* Rank 0's reference: the same sweeps on the undivided grid. */
static double* serial_solve(int n, long iterations) {
  struct block whole = {n, n, 0, 0};
  double* u = new_grid(whole, n);
  double* v = new_grid(whole, n);
  for (long it = 0; it < iterations; ++it) {
    sweep(u, v, whole);
    double* t = u;
    u = v;
    v = t;
  }
  free(v);
  return u;
}

/* Returns 0 for arguments it does not understand. */
static int parse_options(int argc, char** argv, struct options* o) {
  o->n = 64;
  o->tol = 1e-7;
  o->max_iter = 100000;
  o->check_every = 50;
  o->use_sendrecv = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "-s") == 0) {
      o->use_sendrecv = 1;
      continue;
    }
    if (i + 1 >= argc || a[0] != '-' || a[1] == 0 || a[2] != 0) return 0;
    const char* v = argv[++i];
    switch (a[1]) {
      case 'n': o->n = atoi(v); break;
      case 't': o->tol = atof(v); break;
      case 'm': o->max_iter = atol(v); break;
      case 'c': o->check_every = atoi(v); break;
      default: return 0;
    }
  }
  return o->n >= 1 && o->tol > 0 && o->max_iter >= 1 && o->check_every >= 1;
}

/* What each rank reports to rank 0 for the table. */
enum { STAT_HALO_SECONDS, STAT_BYTES_SENT, STAT_MESSAGES_SENT, STAT_LOOP_SECONDS, STAT_COUNT };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  /* A private communicator, as a library would use: nothing else's traffic
   * can match ours. */
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  struct options opt;
  if (!parse_options(argc, argv, &opt)) {
    /* Every rank sees the same arguments, so all of them end here. */
    if (rank == 0) fprintf(stderr, "usage: halo [-n N] [-t TOL] [-m MAXITER] [-c EVERY] [-s]\n");
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 2;
  }

  int px, py;
  process_grid(size, &px, &py);
  if (opt.n < px || opt.n < py) {
    if (rank == 0) fprintf(stderr, "halo: -n %d is too small for a %d x %d process grid\n", opt.n, py, px);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 2;
  }
  struct block b = block_of(rank, opt.n, px, py);
  int prow = rank / px, pcol = rank % px;
  struct neighbours nb = {
      prow > 0 ? rank - px : MPI_PROC_NULL,
      prow < py - 1 ? rank + px : MPI_PROC_NULL,
      pcol > 0 ? rank - 1 : MPI_PROC_NULL,
      pcol < px - 1 ? rank + 1 : MPI_PROC_NULL,
  };
  MPI_Datatype column;
  MPI_Type_vector(b.rows, 1, b.cols + 2, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  /* Bytes and messages this rank sends per sweep (it receives as many). */
  long messages_per_sweep = (nb.north != MPI_PROC_NULL) + (nb.south != MPI_PROC_NULL) +
                            (nb.west != MPI_PROC_NULL) + (nb.east != MPI_PROC_NULL);
  long bytes_per_sweep = (long)sizeof(double) * (((nb.north != MPI_PROC_NULL) + (nb.south != MPI_PROC_NULL)) * b.cols +
                                                 ((nb.west != MPI_PROC_NULL) + (nb.east != MPI_PROC_NULL)) * b.rows);

  double* u = new_grid(b, opt.n);
  double* v = new_grid(b, opt.n);
  double halo_seconds = 0, residual = INFINITY;
  long iterations = 0;
  int converged = 0;

  MPI_Barrier(comm);
  double start = MPI_Wtime();
  while (iterations < opt.max_iter) {
    double t0 = MPI_Wtime();
    exchange(u, b, nb, column, opt.use_sendrecv, comm);
    halo_seconds += MPI_Wtime() - t0;
    double change = sweep(u, v, b);
    double* t = u;
    u = v;
    v = t;
    ++iterations;
    if (iterations % opt.check_every == 0 || iterations == opt.max_iter) {
      double total;
      MPI_Allreduce(&change, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
      residual = sqrt(total);
      if (residual < opt.tol) {
        converged = 1;
        break;
      }
    }
  }
  double loop_seconds = MPI_Wtime() - start;

  double stats[STAT_COUNT] = {
      [STAT_HALO_SECONDS] = halo_seconds,
      [STAT_BYTES_SENT] = (double)bytes_per_sweep * iterations,
      [STAT_MESSAGES_SENT] = (double)messages_per_sweep * iterations,
      [STAT_LOOP_SECONDS] = loop_seconds,
  };
  double* all_stats = rank == 0 ? malloc(sizeof stats * size) : NULL;
  MPI_Gather(stats, STAT_COUNT, MPI_DOUBLE, all_stats, STAT_COUNT, MPI_DOUBLE, 0, comm);

  /* Everyone ships its interior, row by row, to rank 0 for the checks. */
  double* interior = malloc(sizeof(double) * (size_t)b.rows * b.cols);
  for (int i = 0; i < b.rows; ++i) memcpy(&interior[(size_t)i * b.cols], &AT(u, b, i + 1, 1), sizeof(double) * b.cols);
  int ok = 1;
  if (rank != 0) {
    MPI_Send(interior, b.rows * b.cols, MPI_DOUBLE, 0, TAG_GATHER, comm);
  } else {
    double* reference = serial_solve(opt.n, iterations);
    struct block whole = {opt.n, opt.n, 0, 0};
    long mismatches = 0;
    double max_error = 0;
    for (int r = 0; r < size; ++r) {
      struct block rb = block_of(r, opt.n, px, py);
      double* part = interior;
      if (r != 0) {
        part = malloc(sizeof(double) * (size_t)rb.rows * rb.cols);
        MPI_Recv(part, rb.rows * rb.cols, MPI_DOUBLE, r, TAG_GATHER, comm, MPI_STATUS_IGNORE);
      }
      for (int i = 0; i < rb.rows; ++i)
        for (int j = 0; j < rb.cols; ++j) {
          int gi = rb.row0 + i + 1, gj = rb.col0 + j + 1;
          double got = part[(size_t)i * rb.cols + j];
          if (got != AT(reference, whole, gi, gj)) ++mismatches;
          double e = fabs(got - exact(gi, gj, opt.n));
          if (!(e <= max_error)) max_error = e; /* NaN propagates */
        }
      if (r != 0) free(part);
    }
    free(reference);

    double halo_max = 0, loop_max = 0;
    for (int r = 0; r < size; ++r) {
      if (all_stats[r * STAT_COUNT + STAT_HALO_SECONDS] > halo_max) halo_max = all_stats[r * STAT_COUNT + STAT_HALO_SECONDS];
      if (all_stats[r * STAT_COUNT + STAT_LOOP_SECONDS] > loop_max) loop_max = all_stats[r * STAT_COUNT + STAT_LOOP_SECONDS];
    }
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    printf("halo: %s\n", library);
    printf("halo: Jacobi on a %d x %d grid, %d ranks as %d x %d blocks, halos by %s\n", opt.n, opt.n, size, py, px,
           opt.use_sendrecv ? "MPI_Sendrecv" : "MPI_Isend/MPI_Irecv/MPI_Waitall");
    if (converged)
      printf("halo: converged after %ld sweeps (residual %.3g < %.3g, tested every %d sweeps by MPI_Allreduce)\n",
             iterations, residual, opt.tol, opt.check_every);
    else
      printf("halo: stopped after %ld sweeps without converging (residual %.3g, tolerance %.3g)\n", iterations,
             residual, opt.tol);
    printf("halo: %.3f s in the loop: %.2f us per sweep, of which halo exchange %.2f us (slowest rank)\n", loop_max,
           1e6 * loop_max / iterations, 1e6 * halo_max / iterations);
    printf("halo:  rank  block       neighbours  halo us/sweep  messages sent  bytes sent\n");
    for (int r = 0; r < size; ++r) {
      struct block rb = block_of(r, opt.n, px, py);
      const double* s = &all_stats[r * STAT_COUNT];
      char shape[32];
      snprintf(shape, sizeof shape, "%dx%d", rb.rows, rb.cols);
      printf("halo: %5d  %-10s  %10.0f  %13.2f  %13.0f  %10.0f\n", r, shape,
             s[STAT_MESSAGES_SENT] / (double)iterations, 1e6 * s[STAT_HALO_SECONDS] / iterations,
             s[STAT_MESSAGES_SENT], s[STAT_BYTES_SENT]);
    }
    printf("halo: check 1: distributed result vs serial run on rank 0: %ld of %d points differ  %s\n", mismatches,
           opt.n * opt.n, mismatches == 0 ? "OK" : "FAILED");
    if (mismatches != 0) ok = 0;
    if (converged) {
      int good = max_error < EXACT_LIMIT;
      printf("halo: check 2: max |u - (x^2 - y^2)| = %.3g (limit %.0e)  %s\n", max_error, EXACT_LIMIT,
             good ? "OK" : "FAILED");
      if (!good) ok = 0;
    } else {
      printf("halo: check 2: skipped, not converged (raise -m or -t)\n");
    }
    /* Every interior edge between two blocks carries one message each way
     * per sweep; the per-rank reports gathered above must add up to that. */
    double reported = 0;
    for (int r = 0; r < size; ++r) reported += all_stats[r * STAT_COUNT + STAT_MESSAGES_SENT];
    double expected = 2.0 * iterations * ((double)py * (px - 1) + (double)px * (py - 1));
    printf("halo: check 3: halo messages reported by all ranks: %.0f, expected %.0f  %s\n", reported, expected,
           reported == expected ? "OK" : "FAILED");
    if (reported != expected) ok = 0;
    free(all_stats);
  }
  /* Before the verdict goes out: a launcher may end the job as soon as one
   * rank exits non-zero, and rank 0's buffered report must survive that. */
  fflush(stdout);
  /* One verdict for the whole job, so every rank exits with the same status. */
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);

  free(interior);
  free(u);
  free(v);
  MPI_Type_free(&column);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return ok ? 0 : 1;
}
