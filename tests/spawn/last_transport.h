/* The transport a connection wired: the MPI_T cvar sonde_transports lists
 * the transports in use in the order they were added, so a connection that
 * wired one has it last. Needs MPI_T_init_thread. "any" checks nothing
 * (a connection whose members wire different transports). */
#pragma once

#include "tests/integration/itest.h"

static inline void check_last_transport(const char* want) {
  if (strcmp(want, "any") == 0) return; /* no expectation */
  int index = -1, count = 0;
  CHECK_OK(MPI_T_cvar_get_index("sonde_transports", &index));
  MPI_T_cvar_handle h;
  CHECK_OK(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
  char list[256] = "";
  CHECK(count > 0 && count <= (int)sizeof list, "transports cvar count %d", count);
  CHECK_OK(MPI_T_cvar_read(h, list));
  MPI_T_cvar_handle_free(&h);
  const char* comma = strrchr(list, ',');
  const char* last = comma ? comma + 1 : list;
  CHECK(strcmp(last, want) == 0, "transports '%s': the connection's is '%s', want '%s'", list, last, want);
}
