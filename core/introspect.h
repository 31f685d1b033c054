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
// The same summed over every communicator the process has had, freed ones
// included (never decreasing). Walks the context table.
void total_match_attempts(uint64_t* posted, uint64_t* unexpected);
// The size in bytes of a live datatype, or -1.
int64_t datatype_size(MPI_Datatype type);

// One-sided communication: operations this process issued (every Put,
// Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and R
// form), their origin data bytes, and the epochs it closed (fence, complete,
// wait, unlock, unlock_all). rma/ counts; mpit reads. `network`: the
// operations among them that went through the network transport's RMA
// (rma/net.h); `window_visits`: windows the progress hook ran (only those
// with work: a count that many idle windows leave unchanged).
struct RmaCounters {
  uint64_t operations = 0;
  uint64_t bytes = 0;
  uint64_t epochs = 0;
  uint64_t network = 0;
  uint64_t window_visits = 0;
};
RmaCounters& rma_counters();

// ---- Snapshots of the queues (runtime/snapshot.h) ----
// These walk the engine's tables and queues and hand each entry to a
// callback. They allocate nothing and take no lock: the caller has the
// engine to itself (the snapshot signal handler in user code, or a wait
// between progress passes). Pointers in the views live until the engine
// next runs.

// A communicator: its context id (the same on every member), handle,
// name ("" if none), this rank in it, its size, its members' world ranks
// (the remote group's on an intercommunicator) and the collectives started
// on it.
struct CommView {
  uint32_t context = 0;
  int handle = 0;
  const char* name = "";
  int rank = 0;
  int size = 0;
  bool inter = false;
  const int* world = nullptr;
  int world_count = 0;
  uint32_t coll_seq = 0;
  uint64_t coll_since = 0;  // core/stamp.h: when the latest collective started (0: none)
};
void for_each_comm(void (*f)(const CommView&, void*), void* arg);

// An active request that is not complete: a receive (posted, or matched
// and its data still arriving) or a send with its protocol stage.
enum class Stage : uint8_t {
  kPosted,          // receive: in the posted queue
  kArriving,        // receive: matched, data still arriving
  kEagerQueued,     // send: eager, waiting for the transport to take it
  kRendezvousWait,  // send: rendezvous announced, the receiver has not matched
  kTransfer,        // send: the receiver matched, data moving
  kSyncAck,         // send: synchronous, data out, the receiver's match not yet acknowledged
};
struct RequestView {
  const void* id = nullptr;  // stable while the request lives
  bool send = false;
  uint32_t context = 0;
  int peer = 0;  // rank in the communicator, or MPI_ANY_SOURCE
  int tag = 0;
  int64_t count = 0;
  uint64_t bytes = 0;
  const char* type = "";
  bool synchronous = false;  // MPI_Ssend / MPI_Issend
  Stage stage = Stage::kPosted;
  uint64_t since = 0;  // core/stamp.h: when it entered its stage (0: unknown)
};
void for_each_pending(void (*f)(const RequestView&, void*), void* arg);
// Waits that hold no request -- collectives through a shared segment
// (coll/shared.h) -- report each rank they still wait for as a posted
// receive from it (with the collective's tag), through a visitor the
// collectives register once at load; for_each_pending calls it after the
// requests.
using RequestlessWaits = void (*)(void (*f)(const RequestView&, void*), void* arg);
void set_requestless_waits(RequestlessWaits visit);

// A message in a communicator's unexpected queue.
struct MessageView {
  const void* id = nullptr;
  uint32_t context = 0;
  int source = 0;
  int tag = 0;
  uint64_t bytes = 0;
  uint64_t since = 0;  // core/stamp.h: when it arrived
};
void for_each_unexpected(void (*f)(const MessageView&, void*), void* arg);

// A counter that moves with every message arriving at this rank (a job
// whose counters all stand still exchanges nothing).
uint64_t arrivals();

}  // namespace sonde::engine::introspect
