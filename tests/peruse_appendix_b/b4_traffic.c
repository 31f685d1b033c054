/* UserMpiProcessing() for 9.1.4 (examples/peruse_appendix_b/b4_counting.c,
 * built with -DAPPB_EXTERNAL_USER_CODE): point-to-point traffic on
 * MPI_COMM_WORLD whose queue behaviour does not depend on timing, so the
 * program's per-peer report is known exactly. Any number of ranks; for every
 * ordered pair sender s -> receiver r (s != r):
 *
 * 1. Unexpected: s sends U(s,r) one-int messages (tag 1), then a zero-byte
 *    marker with MPI_Issend (tag 4). r waits with MPI_Probe until the marker
 *    is there, so all U(s,r) + 1 messages are in its unexpected queue
 *    (they arrive in order) before it receives them. s's MPI_Waitall on the
 *    markers returns only once r has received them, i.e. after r emptied its
 *    unexpected queue of s's messages.
 * 2. Posted: r posts P(s,r) receives (tag 2) for every s, then sends s a
 *    zero-byte "ready" (tag 3); s probes for it (so it is unexpected),
 *    receives it and only then sends its P(s,r) messages, which find their
 *    receives posted.
 * 3. Done: every rank sends every other a zero-byte message (tag 5) and
 *    probes and receives theirs, so no rank leaves while others still send
 *    to it (only Sonde's own MPI_Finalize traffic can still arrive).
 *
 * No MPI_ANY_SOURCE (the program indexes its table by spec->peer) and no
 * collectives (their internal messages would count too). At r, for peer s:
 *   number of unexpected messages = U(s,r) + 3   (data, marker, ready, done)
 *   max unexpected queue length   = U(s,r) + 1
 *   number of posted receives     = P(s,r)
 *   max posted queue length       = P(s,r)
 * check_b4.awk holds the same formulas.
 */
#include <stdlib.h>

#include "mpi.h"

enum { kTagUnexpected = 1, kTagPosted = 2, kTagReady = 3, kTagMarker = 4, kTagDone = 5 };

static int unexpected_count(int s, int r) { return 1 + s + 2 * r; }
static int posted_count(int s, int r) { return 2 + 2 * s + r; }

/* Receives a zero-byte message only once it is there: it is unexpected. */
static void receive_unexpected(int source, int tag) {
  MPI_Probe(source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(NULL, 0, MPI_INT, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void UserMpiProcessing(void) {
  MPI_Comm w = MPI_COMM_WORLD;
  int rank, size, value = 0, n = 0;
  MPI_Comm_rank(w, &rank);
  MPI_Comm_size(w, &size);
  MPI_Request *markers = malloc(sizeof(MPI_Request) * (size_t)size);

  /* 1. unexpected */
  for (int r = 0; r < size; r++) {
    if (r == rank) continue;
    for (int k = 0; k < unexpected_count(rank, r); k++) MPI_Send(&value, 1, MPI_INT, r, kTagUnexpected, w);
    MPI_Issend(NULL, 0, MPI_INT, r, kTagMarker, w, &markers[n++]);
  }
  for (int s = 0; s < size; s++) {
    if (s == rank) continue;
    MPI_Probe(s, kTagMarker, w, MPI_STATUS_IGNORE);
    for (int k = 0; k < unexpected_count(s, rank); k++)
      MPI_Recv(&value, 1, MPI_INT, s, kTagUnexpected, w, MPI_STATUS_IGNORE);
    MPI_Recv(NULL, 0, MPI_INT, s, kTagMarker, w, MPI_STATUS_IGNORE);
  }
  MPI_Waitall(n, markers, MPI_STATUSES_IGNORE);

  /* 2. posted */
  int posted = 0;
  for (int s = 0; s < size; s++)
    if (s != rank) posted += posted_count(s, rank);
  MPI_Request *recvs = malloc(sizeof(MPI_Request) * (size_t)(posted + 1));
  int *data = malloc(sizeof(int) * (size_t)(posted + 1));
  n = 0;
  for (int s = 0; s < size; s++) {
    if (s == rank) continue;
    for (int k = 0; k < posted_count(s, rank); k++, n++)
      MPI_Irecv(&data[n], 1, MPI_INT, s, kTagPosted, w, &recvs[n]);
  }
  for (int s = 0; s < size; s++)
    if (s != rank) MPI_Send(NULL, 0, MPI_INT, s, kTagReady, w);
  for (int r = 0; r < size; r++) {
    if (r == rank) continue;
    receive_unexpected(r, kTagReady);
    for (int k = 0; k < posted_count(rank, r); k++) MPI_Send(&value, 1, MPI_INT, r, kTagPosted, w);
  }
  MPI_Waitall(n, recvs, MPI_STATUSES_IGNORE);

  /* 3. done */
  for (int r = 0; r < size; r++)
    if (r != rank) MPI_Send(NULL, 0, MPI_INT, r, kTagDone, w);
  for (int s = 0; s < size; s++)
    if (s != rank) receive_unexpected(s, kTagDone);
  free(data);
  free(recvs);
  free(markers);
}
