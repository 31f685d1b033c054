/* Reading the residence profiler's CSV reports back, for the programs of
 * this folder that check them after MPI_Finalize. Header-only C: each program
 * includes it once. The format is in examples/residence/README.md:
 *
 *   rank,comm,name,size,peer,traffic,metric,count,min_ns,mean_ns,p50_ns,p99_ns,max_ns
 *
 * Time rows have all columns; counter rows (high-water marks, dropped
 * records, ...) have peer "*" and only a count. Rows with zero samples are
 * left out, so an absent row counts as 0.
 */
#ifndef SONDE_TESTS_RESIDENCE_REPORT_CSV_H
#define SONDE_TESTS_RESIDENCE_REPORT_CSV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures, checks;

static void check(int ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failures;
    printf("residence-check: rank %d: FAILED: %s\n", rank, what);
  }
}

/* Where the profiler is to write: SONDE_RESIDENCE_OUT if set, else a fresh
 * directory for this job under $TEST_TMPDIR, exported before MPI_Init so the
 * profiler (linked in or preloaded) reads it there. */
static void choose_report_dir(char* dir, size_t size_) {
  const char* set = getenv("SONDE_RESIDENCE_OUT");
  if (set && *set) {
    snprintf(dir, size_, "%s", set);
    return;
  }
  const char* tmp = getenv("TEST_TMPDIR");
  const char* job = getenv("SONDE_JOBID");
  snprintf(dir, size_, "%s/residence-%s", tmp && *tmp ? tmp : "/tmp", job && *job ? job : "nojob");
  setenv("SONDE_RESIDENCE_OUT", dir, 1);
}

/* One line per rank that the test's --expect-output looks for. */
static int verdict(void) {
  if (failures) printf("residence-check: rank %d: %d of %d checks FAILED\n", rank, failures, checks);
  else printf("residence-check: rank %d: all %d checks passed\n", rank, checks);
  fflush(stdout);
  return failures ? 1 : 0;
}

enum { F_RANK, F_COMM, F_NAME, F_SIZE, F_PEER, F_TRAFFIC, F_METRIC, F_COUNT, F_MIN, F_MEAN, F_P50, F_P99, F_MAX, F_N };
struct row {
  char f[F_N][200];
};
static struct row* rows;
static int nrows;

/* Our names and labels have no commas or quotes, so a plain split will do. */
static int load(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[4096];
  int header = 1;
  while (fgets(line, sizeof line, f)) {
    if (header) {
      header = 0;
      check(strcmp(line, "rank,comm,name,size,peer,traffic,metric,count,min_ns,mean_ns,p50_ns,p99_ns,max_ns\n") == 0,
            "CSV header");
      continue;
    }
    line[strcspn(line, "\n")] = 0;
    rows = realloc(rows, sizeof *rows * (size_t)(nrows + 1));
    struct row* r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    char* p = line;
    for (int i = 0; i < F_N; ++i) {
      char* comma = strchr(p, ',');
      size_t n = comma ? (size_t)(comma - p) : strlen(p);
      if (n >= sizeof r->f[i]) n = sizeof r->f[i] - 1;
      memcpy(r->f[i], p, n);
      if (!comma) {
        check(i == F_N - 1, "CSV row has 13 fields");
        break;
      }
      p = comma + 1;
    }
  }
  fclose(f);
  return 1;
}

static const struct row* find(const char* rank_, const char* comm, const char* peer, const char* traffic,
                              const char* metric) {
  for (int i = 0; i < nrows; ++i) {
    const struct row* r = &rows[i];
    if (strcmp(r->f[F_RANK], rank_) == 0 && strcmp(r->f[F_COMM], comm) == 0 && strcmp(r->f[F_PEER], peer) == 0 &&
        strcmp(r->f[F_TRAFFIC], traffic) == 0 && strcmp(r->f[F_METRIC], metric) == 0)
      return r;
  }
  return NULL;
}

/* A row's count; absent rows are zero samples (the profiler omits them). */
static long long count_of(const char* rank_, const char* comm, const char* peer, const char* metric) {
  static const char* const traffic[] = {"user", "internal", "*"};
  for (int t = 0; t < 3; ++t) {
    const struct row* r = find(rank_, comm, peer, traffic[t], metric);
    if (r) return atoll(r->f[F_COUNT]);
  }
  return 0;
}

static void expect_count(const char* rank_, const char* comm, const char* peer, const char* metric, long long want) {
  long long got = count_of(rank_, comm, peer, metric);
  char what[1024];
  snprintf(what, sizeof what, "%s peer %s %s: count %lld, expected %lld", comm, peer, metric, got, want);
  check(got == want, what);
}

static void check_all_rows(void) {
  for (int i = 0; i < nrows; ++i) {
    const struct row* r = &rows[i];
    char what[1024];
    snprintf(what, sizeof what, "row %s/%s/%s/%s has no wildcard peer left", r->f[F_COMM], r->f[F_PEER],
             r->f[F_TRAFFIC], r->f[F_METRIC]);
    check(strcmp(r->f[F_PEER], "ANY") != 0, what);
    if (r->f[F_MIN][0] == 0) continue; /* a counter row */
    snprintf(what, sizeof what, "row %s/%s/%s is user traffic (internal is filtered)", r->f[F_COMM], r->f[F_PEER],
             r->f[F_METRIC]);
    check(strcmp(r->f[F_TRAFFIC], "user") == 0, what);
    long long count = atoll(r->f[F_COUNT]), min = atoll(r->f[F_MIN]), p50 = atoll(r->f[F_P50]),
              p99 = atoll(r->f[F_P99]), max = atoll(r->f[F_MAX]);
    double mean = atof(r->f[F_MEAN]);
    snprintf(what, sizeof what, "row %s/%s/%s: count %lld > 0, min %lld <= p50 %lld <= p99 %lld <= max %lld, mean %.1f",
             r->f[F_COMM], r->f[F_PEER], r->f[F_METRIC], count, min, p50, p99, max, mean);
    check(count > 0 && min <= p50 && p50 <= p99 && p99 <= max && mean >= (double)min - 0.1 && mean <= (double)max + 0.1,
          what);
    if (strcmp(r->f[F_METRIC], "posted_q") == 0 || strcmp(r->f[F_METRIC], "unexpected_q") == 0) {
      snprintf(what, sizeof what, "row %s/%s/%s: queue time positive (min %lld ns)", r->f[F_COMM], r->f[F_PEER],
               r->f[F_METRIC], min);
      check(min > 0, what);
    }
  }
}

/* <dir>/rank<r>.csv, or <dir>/summary.csv when r < 0; replaces what was loaded. */
static int load_report(const char* dir, const char* base, int r) {
  char path[4096 + 64];
  if (r >= 0) snprintf(path, sizeof path, "%s/%s%d.csv", dir, base, r);
  else snprintf(path, sizeof path, "%s/%s.csv", dir, base);
  free(rows);
  rows = NULL;
  nrows = 0;
  if (!load(path)) {
    printf("residence-check: rank %d: FAILED: no report at %s\n", rank, path);
    ++failures;
    return 0;
  }
  return 1;
}

/* Nothing the profiler had to give up on: no unmatched event, no lost
 * sample, no full table, nothing left open at MPI_Finalize. */
static void check_nothing_lost(void) {
  static const char* const zero[] = {"unmatched_events",          "lost_samples",
                                     "dropped_table_full",        "dropped_too_many_comms",
                                     "open_requests_at_finalize", "open_messages_at_finalize"};
  for (int i = 0; i < nrows; ++i)
    for (size_t z = 0; z < sizeof zero / sizeof zero[0]; ++z)
      if (strcmp(rows[i].f[F_METRIC], zero[z]) == 0) {
        char what[1024];
        snprintf(what, sizeof what, "%s %s is 0 (got %s)", rows[i].f[F_COMM], rows[i].f[F_METRIC], rows[i].f[F_COUNT]);
        check(atoll(rows[i].f[F_COUNT]) == 0, what);
      }
}

#endif
