// The PERUSE bridge: queue and transport statistics for MPI_T pvars, fed by
// the engine's PERUSE instrumentation points.
//
// The bridge follows every communicator (peruse::CommObserver). While at
// least one pvar handle that needs event-fed statistics is running
// (acquire/release count them), it keeps an internal PERUSE subscriber on
// every communicator for the queue, search, arrival and transfer events;
// their watched bits make the engine take its instrumented twins. With no
// such handle, nothing is subscribed: the engine runs its uninstrumented
// path, the bridge costs nothing, and only the always-correct levels (read
// straight from the queues) are available.
//
// Counters are monotone while collected; pvar handles keep their own base
// and accumulator over them, so sessions never disturb each other.
// All functions: caller holds mpit::mutex() (and the engine lock if MPI uses
// it).
#pragma once

#include <cstdint>

#include "include/mpi.h"

namespace sonde::mpit::bridge {

struct Stats {
  uint64_t posted_matches = 0, unexpected_matches = 0;
  uint64_t posted_search_ns = 0, unexpected_search_ns = 0;
  // Posted-queue searches that found no receive (the message went to the
  // unexpected queue).
  uint64_t posted_failed_search_ns = 0;
  uint64_t posted_residence_ns = 0, unexpected_residence_ns = 0;
  // Queue lengths as the events tell them (for watermarks), valid while collecting.
  uint64_t posted_level = 0, unexpected_level = 0;
};

struct TransportStats {
  uint64_t messages_sent = 0, bytes_sent = 0, messages_received = 0, bytes_received = 0;
};

// A high-water mark being tracked (a running HIGHWATERMARK handle).
struct Watermark {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: the process-wide total
  bool posted = true;             // posted queue, else unexpected
  uint64_t value = 0;
};

// Installs the communicator observer (once, at library load).
void install();

void acquire();  // a running handle needs the statistics
void release();
bool collecting();

// Null when the communicator is not live (or MPI is not running).
Stats* comm_stats(MPI_Comm comm);
Stats& total();
TransportStats& transport(int index);

void add_watermark(Watermark* w);
void remove_watermark(Watermark* w);

// Current queue levels, read from the queues themselves (always correct,
// collecting or not). `comm` MPI_COMM_NULL: summed over live communicators.
// False when the communicator is not live.
bool posted_length(MPI_Comm comm, uint64_t* out);
bool unexpected_length(MPI_Comm comm, uint64_t* out);
bool unexpected_bytes(MPI_Comm comm, uint64_t* out);
bool unexpected_buffer_bytes(MPI_Comm comm, uint64_t* out);
// Per rank of the communicator: `out` holds its size.
bool posted_per_peer(MPI_Comm comm, uint64_t* out);
bool unexpected_per_peer(MPI_Comm comm, uint64_t* out);
// Entries examined by the communicator's searches, counted by its queues.
bool posted_match_attempts(MPI_Comm comm, uint64_t* out);
bool unexpected_match_attempts(MPI_Comm comm, uint64_t* out);
// The same over every communicator the process has had (never decreasing):
// the posted side's if `posted`, else the unexpected side's. 0 before
// MPI_Init, the last reading after MPI_Finalize.
bool total_match_attempts(bool posted, uint64_t* out);
// Size of a live communicator, or -1.
int comm_size(MPI_Comm comm);

}  // namespace sonde::mpit::bridge
