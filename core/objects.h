// The engine's objects: communicators, requests and arriving messages.
//
// A receive request *is* a posted-queue entry and an arrived message *is* an
// unexpected-queue entry (intrusive hooks), so matching allocates nothing.
// A send request *is* a transport SendItem, so queueing a send allocates
// nothing either.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "datatype/datatype.h"
#include "include/mpi.h"
#include "matching/match_queues.h"
#include "peruse/dispatch.h"
#include "transports/transport.h"

namespace sonde::engine {

struct Request;
struct Message;
struct Topology;

struct Comm {
  int handle = MPI_COMM_NULL;
  uint32_t context = 0;
  int rank = 0;
  int size = 0;
  std::vector<int> world;  // comm rank -> world rank
  matching::MatchQueues queues;
  std::string name;
  int errhandler = MPI_ERRORS_ARE_FATAL;
  bool live = false;
  uint64_t coll_seq = 0;    // collectives started on this communicator
  uint64_t coll_since = 0;  // core/stamp.h: when the latest of them first waited (0: it has not)
  // Nonblocking operations still running on this communicator (collectives
  // count themselves in and out); MPI_Comm_free keeps its context matching
  // while this is not zero.
  uint32_t pending_ops = 0;
  peruse::CommEvents peruse;  // active PERUSE handles, per event

  // ---- groups, intercommunicators, attributes, info (comm/) ----
  // An intercommunicator addresses the remote group: `world` maps remote
  // ranks to world ranks (so sends route unchanged) and `rank`/`size` are
  // those of the local group, whose world ranks are in `local_world`.
  bool inter = false;
  std::vector<int> local_world;
  Comm* local_comm = nullptr;                // inter: hidden intracomm over the local group (context agreement)
  std::vector<std::pair<int, void*>> attrs;  // (keyval, value) in the order set (attributes.h)
  std::vector<std::pair<std::string, std::string>> info;  // hints from Comm_set_info / dup_with_info
  uint32_t idup_seq = 0;  // MPI_Comm_idup calls started on this communicator (their tags)
  // Ranks a send or receive may name: the remote group's on an intercommunicator.
  int peers() const { return inter ? int(world.size()) : size; }
  // World ranks of the local group.
  const std::vector<int>& group_world() const { return inter ? local_world : world; }

  // ---- process topology (comm/topo.h) ----
  // Null when the communicator has none; shared with its duplicates.
  std::shared_ptr<const Topology> topo;

  // ---- collectives through a segment shared by the members (coll/shared.h) ----
  // Whether the communicator has decided on one (the same on every member),
  // and the segment's state when it made one (null: point-to-point only).
  bool coll_shared_decided = false;
  std::shared_ptr<void> coll_shared;
};

// kCollective: a nonblocking collective's user request (coll/coll.h); it
// has no communicator or buffer of its own and completes with its schedule.
// kSendrecv: MPI_Isendrecv(_replace)'s user request; it
// completes when its internal send and receive have (sendrecv.cc) and carries
// the receive's status.
enum class RequestKind : uint8_t { kSend, kRecv, kGeneralized, kCollective, kSendrecv };
enum class SendMode : uint8_t { kStandard, kSync, kReady, kBuffered };
inline constexpr uint8_t kCancelInFlight = 1, kCancelAfterComplete = 2;  // Request::cancel_state

// Where an arriving payload goes, with a way back to its owner.
struct EngineSink : transport::PayloadSink {
  Request* request = nullptr;  // a matched receive
  Message* message = nullptr;  // an unexpected message's own buffer
};

// Payload destination of a receive: the user buffer (through the datatype),
// clipped at the buffer's capacity (the rest is dropped: MPI_ERR_TRUNCATE).
struct RecvSink final : EngineSink {
  void unpack(const uint8_t* bytes, size_t offset, size_t n) override;
  void on_chunk(size_t received) override;  // PERUSE_COMM_REQ_XFER_CONTINUE
};

// A send request as the transport sees it.
struct SendPart final : transport::SendItem {
  Request* request = nullptr;
  void pack(uint8_t* out, size_t offset, size_t n) override;
  void on_first_byte() override;
  void on_progress() override;
  void on_handed() override;
};

// Laid out by where it is used, in 64-byte lines (the struct is aligned to
// one): a posted receive's matching entry and the flags that checking a
// handle reads fill the first line; the arguments and flags that an
// arrival and a wait read the second; what an arrival writes (sink,
// status, peer) the third. A receive matched at depth, and the wait that
// retires it, then touch three lines of it rather than five or six, and
// the indexed search prefetches all three once it knows the request
// (matching::kPostedPrefetchBytes).
struct alignas(64) Request : matching::PostedEntry {
  // ---- line 0: the matching entry (56 bytes), then ----
  // Listed in the MPI_Waitall running now (binding/c/abi_requests.cc): its
  // index in that call's array when the call takes completion notes
  // (Engine::claim_wait_all_notes), kListedInWaitAll when it does not, -1
  // when no Waitall lists it.
  int32_t wait_all_index = -1;
  static constexpr int32_t kListedInWaitAll = -2;
  RequestKind kind = RequestKind::kSend;
  bool persistent = false;
  bool active = false;      // started and not yet completed
  bool user_freed = false;  // MPI_Request_free on an active request
  // ---- line 1 ----
  int handle = MPI_REQUEST_NULL;  // 0 while the request is internal
  SendMode mode = SendMode::kStandard;
  bool complete = false;
  bool cancelled = false;
  bool handed = false;        // send: all data handed to the transport (or pulled)
  bool matched = false;       // send: receiver matched (needed for Ssend / rendezvous)
  bool xfer_started = false;  // PERUSE REQ_XFER_BEGIN fired for this activation
  // Send: a kCancelSend is out and its kCancelAck awaited;
  // kCancelInFlight: the send was not complete, kCancelAfterComplete: it was
  // (eager, handed over) and waits for the answer before completing again.
  uint8_t cancel_state = 0;
  bool peruse_spec_ready = false;  // PERUSE: peruse_spec below is built (reset() clears it)
  // Receive: it asked its sender to stream the data (kCts sent), so kData
  // naming it is expected.
  bool stream_asked = false;
  int error = MPI_SUCCESS;

  // The user's arguments that an arrival reads (peer, tag and count are
  // further on).
  void* buf = nullptr;
  // Called as the request completes, for the internal requests of layers
  // above the core that keep a list of work to do (rma/: a window whose
  // channel received something); null for most. reset() clears it.
  void (*on_complete)(void* owner) = nullptr;
  Datatype* type = nullptr;
  Comm* comm = nullptr;
  uint8_t* staged = nullptr;  // packed copy of a buffered send's data (MPI_Bsend)
  uint64_t bytes = 0;         // count * type->size

  // ---- line 2 ----
  RecvSink sink;
  // Completion status.
  int status_source = MPI_ANY_SOURCE;
  int status_tag = MPI_ANY_TAG;
  uint64_t status_bytes = 0;
  int world_peer = -1;  // protocol state
  int peer = 0;         // rank in comm (or wildcard)
  // ---- line 3 ----
  int tag = 0;
  int64_t count = 0;

  // ---- the rest: sends, rendezvous, snapshots, PERUSE ----
  // core/stamp.h: when it entered its stage (posted; queued or announced
  // send; synchronous send waiting for its acknowledgement; rendezvous
  // data arriving). Snapshots read it only while the request is pending.
  uint64_t since = 0;
  // Cooperative rendezvous (both sides copy part of a large message):
  // sender: the receiver's buffer; receiver: the sender's buffer.
  uint64_t coop_addr = 0;
  uint64_t coop_split = 0;   // bytes [0, split) are the sender's to write
  uint8_t coop_waiting = 0;  // coop events still owed before completion
  SendPart item;
  void* owner = nullptr;  // on_complete's argument

  // ---- PERUSE ----
  // The spec of this request's events (the user's arguments), built by the
  // first event that fires after new_request and copied for every callback
  // (engine_internal.h, req_spec). Code that changes buf, count, type, peer, tag,
  // comm or kind after an event has fired must clear peruse_spec_ready.
  peruse_comm_spec_t peruse_spec;

  void reset();
};
static_assert(matching::kPostedPrefetchBytes == 3 * 64, "an arrival's lines of a Request: 0, 1 and 2");

// A message that arrived before a receive matched it (or is being probed).
struct Message : matching::UnexpectedEntry {
  int handle = MPI_MESSAGE_NULL;  // set while owned by MPI_Mprobe's caller
  transport::PacketHeader header{};
  int world_peer = -1;
  uint8_t* data = nullptr;  // eager payload (header.payload bytes)
  size_t capacity = 0;
  bool all_arrived = false;
  bool claimed = false;         // taken by MPI_Mprobe/Improbe, awaiting MPI_Mrecv
  Request* receiver = nullptr;  // matched while still arriving
  Comm* comm = nullptr;
  uint64_t uid = 0;    // PERUSE unique_id, fixed at MSG_ARRIVED
  uint64_t since = 0;  // core/stamp.h: when it arrived
  EngineSink sink;     // contiguous into `data`
};

}  // namespace sonde::engine
