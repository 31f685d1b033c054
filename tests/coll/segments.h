/* This job's collective segments as a test sees them: coll/shared.cc names
 * them "/sonde-<job>-coll-<pid>-<n>", with the job id the launcher puts in
 * SONDE_JOBID. */
#ifndef SONDE_TESTS_COLL_SEGMENTS_H
#define SONDE_TESTS_COLL_SEGMENTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "/sonde-<job>-coll-", or "-coll-" when the job id is unknown. */
static char g_pattern[96];

static void segments_init(void) {
  const char* job = getenv("SONDE_JOBID");
  if (job) snprintf(g_pattern, sizeof g_pattern, "/sonde-%s-coll-", job);
  else snprintf(g_pattern, sizeof g_pattern, "-coll-");
}

/* Mappings of this job's collective segments in this process, or -1. */
static int mapped_segments(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, g_pattern)) ++n;
  fclose(f);
  return n;
}

#endif
