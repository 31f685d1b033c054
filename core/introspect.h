// What tools inside the library (mpit/) read of the engine: settings,
// the transports in use, and communicators' queue levels. mpit reads the
// engine only through this interface, never its fields or its queues' raw
// lists. Callers hold the engine lock where one is on; a communicator is
// named by its handle and must be live (false or -1 otherwise).
#pragma once

#include <cstdint>
#include <string>

#include "core/engine.h"
#include "include/mpi.h"
#include "peruse/dispatch.h"
#include "transports/transport.h"

namespace sonde::engine::introspect {

// The engine's tunables (mpit's control variables read and write them).
Settings& settings();
// Reads the SONDE_* environment into settings() once (Engine::load_settings).
void load_settings();
int thread_level();

// The names of the transports in use, comma-separated ("self,shm,ofi").
std::string transports_in_use();
// The kind of transport that reaches rank `peer` of `comm`.
bool transport_of(MPI_Comm comm, int peer, transport::TransportKind* kind);

// A live communicator's size; -1 if it is not one.
int comm_size(MPI_Comm comm);
// Its PERUSE events (to subscribe to), or null.
peruse::CommEvents* comm_events(MPI_Comm comm);
// Receives in its posted queue, messages in its unexpected queue, and those
// messages' bytes: all counted by the queues, O(1) reads.
bool posted_length(MPI_Comm comm, uint64_t* out);
bool unexpected_length(MPI_Comm comm, uint64_t* out);
bool unexpected_bytes(MPI_Comm comm, uint64_t* out);
// Bytes the engine holds allocated for the payloads of the messages waiting
// in the unexpected queue (eager payloads buffered; a rendezvous message
// holds none until its data is pulled). Walks the queue.
bool unexpected_buffer_bytes(MPI_Comm comm, uint64_t* out);
// Per source rank (out has comm_size entries): posted receives naming it,
// unexpected messages from it (O(1) per rank while the queues are indexed,
// a walk of a few entries while they are short).
bool posted_per_peer(MPI_Comm comm, uint64_t* out);
bool unexpected_per_peer(MPI_Comm comm, uint64_t* out);
// Entries examined by the communicator's searches since it was created:
// arrivals searching the posted queue, receives and probes searching the
// unexpected queue (matching/match_queues.h, "match attempts").
bool posted_match_attempts(MPI_Comm comm, uint64_t* out);
bool unexpected_match_attempts(MPI_Comm comm, uint64_t* out);
// The size in bytes of a live datatype, or -1.
int64_t datatype_size(MPI_Datatype type);

}  // namespace sonde::engine::introspect
