// The point-to-point core: the Engine (handle tables, transports and routes,
// communicators by context id) and its operations; started and stopped by
// the runtime (runtime/lifecycle.h).
//
// The core's files, in reading order: objects.h (communicators, requests,
// messages) -> this file (the Engine) -> engine_internal.h (PERUSE firing and
// the watched/plain dispatch) -> send.cc (protocol choice: eager, synchronous,
// rendezvous) -> receive.cc (posting, matching, arrivals, pulls, probes) ->
// request.cc (completion, wait, p2p.h's calls) -> cancel.cc -> engine.cc
// (start, progress, communicators) -> transports/transport.h (the seam).
// The send path of MPI_Send: binding/c/abi_p2p_send_recv.cc -> send.cc (send_now,
// issue_send) -> transports/transport.h -> transports/shm/shm_transport.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/handles.h"
#include "core/current_call.h"
#include "core/engine_parts.h"
#include "core/objects.h"
#include "core/stamp.h"
#include "include/mpi.h"
#include "transports/transport.h"

namespace sonde::engine {

// Tunables, read from the environment (load_settings) and exposed as MPI_T
// cvars (mpit/cvars.cc says which can change when). Query_environment
// reports the ones that were set.
struct Settings {
  uint64_t eager_limit = 16 * 1024;  // SONDE_EAGER_LIMIT: larger messages use rendezvous
  // SONDE_SPIN: idle polls before sched_yield(). Unless SONDE_SPIN or the
  // cvar chose it (spin_chosen), MPI_Init makes it 1 when the job's ranks on
  // this host outnumber the host's CPUs (oversubscribed): a polling rank
  // then holds a CPU that the peer it waits for needs.
  int spin_before_yield = 2000;
  bool spin_chosen = false;
  // SONDE_IDLE_SLEEP_MS: a wait idle this long (in ms, counted from its
  // first yield) sleeps between polls instead of yielding (Engine::idle),
  // so a rank blocked for long leaves its core to others; 0 (the default):
  // never sleeps.
  int idle_sleep_after_ms = 0;
  bool single_copy = true;  // SONDE_SHM_SINGLE_COPY=0 disables process_vm_readv
  bool fast_boxes = true;   // SONDE_SHM_FAST_BOXES=0: every shm packet through the ring
  // SONDE_COOP_THRESHOLD: rendezvous messages at least this large are copied
  // by both sides at once (sender writes the head, receiver reads the tail);
  // 0 turns it off.
  uint64_t coop_threshold = 256 * 1024;
  // SONDE_COLL_SPLIT_RANKS: communicators of at least this many ranks
  // split large Bcast and Reduce messages (scatter + allgather,
  // reduce-scatter + gather); smaller ones use the binomial tree at every
  // size (docs/collectives.md).
  int coll_split_min_ranks = 8;
  // SONDE_COLL_SHM=0: collectives on communicators whose ranks share a host
  // use point-to-point messages only, never a shared segment
  // (docs/collectives.md). Every member must want the segment for it to be
  // made.
  bool coll_shared = true;
  // SONDE_COLL_SHM_BYTES: the shared segment's slot size, the largest
  // contribution of one rank (a Bcast's message, a reduction's vector, an
  // Allgather's block, all of an Alltoall's blocks together) that goes
  // through it; larger calls use point-to-point. Allgather and Alltoall
  // also stop at 4 KiB, reductions at 256 KiB over all ranks
  // (coll/shared.h). Rank 0's value holds for a communicator.
  uint64_t coll_shared_bytes = 65536;
  size_t ring_bytes = 64 * 1024;    // shm ring per pair of ranks (MPI_T cvar only; one of shm::kRingSizes)
  bool single_copy_at_init = true;  // single_copy when MPI_Init ran (the transport's choice)
  std::vector<std::string> set_from_environment;  // "NAME=value" of each one given
};

class Engine;
extern Engine* const g_engine;
inline Engine& engine() { return *g_engine; }

class Engine final : public transport::Delivery {
 public:
  // The process's place in the job, set by start() (and by the runtime for
  // the thread level and the host name).
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }
  int thread_level() const { return thread_level_; }
  void set_thread_level(int level) { thread_level_ = level; }
  const std::string& processor_name() const { return processor_name_; }
  void set_processor_name(std::string name) { processor_name_ = std::move(name); }

  // The named parts (core/engine_parts.h).
  Settings& settings() { return settings_; }
  HandleTables& tables() { return tables_; }
  const Router& router() const { return router_; }
  ContextRegistry& contexts() { return contexts_; }
  BsendArena& bsend() { return bsend_; }
  // Match attempts (matching/match_queues.h) of the communicators whose
  // context has been given back: the process-wide totals add them to the
  // communicators still held, so the totals never go down.
  uint64_t retired_posted_match_attempts() const { return retired_posted_attempts_; }
  uint64_t retired_unexpected_match_attempts() const { return retired_unexpected_attempts_; }

  // Eager/rendezvous switch for a peer on transport `t`: the transport's own
  // (ofi: SONDE_OFI_EAGER_LIMIT, docs/ofi.md), else settings().eager_limit
  // (SONDE_EAGER_LIMIT, MPI_T cvar).
  uint64_t eager_limit_of(const transport::Transport* t) const {
    const uint64_t own = t->capabilities().eager_limit;
    return own != transport::Capabilities::kEngineEagerLimit ? own : settings_.eager_limit;
  }

  // Reads the SONDE_* environment into `settings` once, at MPI_T_init_thread
  // or MPI_Init, whichever comes first: MPI_T cvar writes made before
  // MPI_Init are not overwritten by it.
  void load_settings();

  // Life cycle, driven by the runtime (runtime/lifecycle.h), which wires the
  // job up and builds the transports. start: this process is world rank
  // `rank` of `size`; `transports` reach the ranks as `route` says (one
  // entry per world rank, none null). Sets up the predefined datatypes and
  // error handlers, the context ids (`reserved` are taken besides WORLD's
  // and SELF's) and MPI_COMM_WORLD / MPI_COMM_SELF.
  void start(int rank, int size, std::vector<std::unique_ptr<transport::Transport>> transports,
             std::vector<transport::Transport*> route, const std::vector<uint32_t>& reserved);
  // Processes outside this process's world (MPI_Comm_spawn, accept/connect,
  // join: runtime/dynamic.h) are peers with ids from world_size() on, in the
  // order the runtime adds them; communicators list them like world ranks.
  // add_transport: progressed (and shut down) with the others from now on.
  // add_route: `t` reaches peer `id` (id == peer_count() appends one).
  int peer_count() const { return int(router_.route_.size()); }
  void add_transport(std::unique_ptr<transport::Transport> t);
  void add_route(int id, transport::Transport* t);
  // A number no other process of any job has (the runtime sets it from
  // its PMIx name): the tie-break of MPI_Intercomm_merge across jobs.
  uint64_t process_uid() const { return process_uid_; }
  void set_process_uid(uint64_t uid) { process_uid_ = uid; }
  // Progresses until every transport has pushed out what it was handed (or
  // nothing has moved for two seconds): a network provider may still need
  // this process's progress after its last send.
  void drain();
  // Stops every transport; no traffic after this.
  void shutdown_transports();

  Comm* world() { return &tables_.comms.predefined(1); }
  Comm* self() { return &tables_.comms.predefined(2); }

  // Delivery (transport -> engine).
  transport::PayloadSink* on_header(int peer, const transport::PacketHeader& h) override;
  void on_payload_done(int peer, const transport::PacketHeader& h, transport::PayloadSink* sink) override;
  // A peer's packet names a request of ours that is not a live one of the
  // kind the packet is for, talking to that peer (a forged or stale cookie):
  // `handler` gets a message naming the peer. The runtime aborts the job;
  // without a handler the message goes to stderr and the process exits 1.
  // Nothing is dereferenced before the check.
  void on_protocol_error(std::function<void(const std::string&)> handler) { protocol_error_ = std::move(handler); }

  // PERUSE unique_ids that are not descriptor addresses: a counter tagged
  // in the low 3 bits (addresses have them clear), so kinds never collide.
  static constexpr unsigned kIdSearch = 1, kIdTransientRequest = 2, kIdTransientMessage = 3;
  uint64_t new_id(unsigned kind) { return (++id_counter_ << 3) | kind; }
  // Ids handed out so far: every arriving message takes one
  // (introspect::arrivals).
  uint64_t ids_issued() const { return id_counter_; }

  int progress();
  // Spin / yield / sleep policy for a waiting loop; call once per idle
  // pass (idle_passes: 0 at the wait's start and after each pass that
  // moved something). Spins for spin_before_yield passes, then yields the
  // CPU at every pass; once idle_sleep_after_ms have passed since the first
  // yield, sleeps per pass a two-hundredth of the time idle so far, within
  // [kIdleSleepMinUs, kIdleSleepMaxUs] (a message arriving then is seen
  // that much later; a wait that short never sleeps).
  void idle(int& idle_passes);
  static constexpr uint64_t kIdleSleepMinUs = 100, kIdleSleepMaxUs = 1000;
  // One pass of a blocking wait: progress, and the spin/yield policy when
  // nothing moved. True once per wait, on the pass where it has been idle
  // for spin_before_yield passes: the caller then asks for the peers it
  // waits on to be watched (waiting_on / watch_peer).
  bool wait_pass(int& idle_passes) {
    if (progress() != 0) {
      idle_passes = 0;
      return false;
    }
    idle(idle_passes);
    return idle_passes == settings_.spin_before_yield;
  }
  // A blocking wait on `r` has been idle for spin_before_yield passes:
  // the transports reaching the peers it waits on are asked to watch their
  // liveness (Transport::watch), so a link that died before the two ever
  // talked ends the wait with an error instead of a hang. A receive or send
  // watches its peer; a receive from MPI_ANY_SOURCE every rank of its
  // communicator (watch_peer). Rare: once per long wait.
  void waiting_on(Request* r);
  // `peer` of `comm` (MPI_ANY_SOURCE: all of them), for waiting_on and
  // for probes, which have no request.
  void watch_peer(Comm* comm, int peer);
  // User loops of MPI_Test*/MPI_Iprobe never go idle inside MPI, so
  // they count here: called with the result of the call's progress(),
  // true on every kFruitlessPolls-th call in a row that moved nothing (any
  // progress starts over), when the caller should watch the peers it
  // polls for. No syscall, one counter: fine on the test path.
  static constexpr uint32_t kFruitlessPolls = 2048;
  bool fruitless(int progressed) {
    if (progressed) {
      fruitless_polls_ = 0;
      return false;
    }
    if ((++fruitless_polls_ & (kFruitlessPolls - 1)) != 0) return false;
    // A snapshot asked for while a Test/Iprobe loop runs (current_call.h):
    // served here, on the same rare pass.
    if (__builtin_expect(g_snapshot_pending != 0, 0)) serve_pending_snapshot();
    return true;
  }

  // Requests.
  Request* new_request(RequestKind kind);
  // A fresh, not yet started request carrying the user's arguments; null
  // when the request table is full.
  Request* new_request(RequestKind kind, const void* buf, int64_t count, Datatype* type, int peer, int tag, Comm* comm,
                       SendMode mode = SendMode::kStandard);
  void release(Request* r);
  void complete(Request* r);
  int issue_send(Request* r);
  // Blocking-send fast path: a small contiguous standard send handed to the
  // transport at once, without a request. False: take the general path.
  bool send_now(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm);
  int issue_recv(Request* r);
  // Receive fast path for collectives' internal traffic: when no PERUSE
  // event is active on comm and the message for (source, tag) already waits
  // whole, eager and first in line (MatchQueues::reserved_front), it is
  // copied out without a request; *error gets MPI_SUCCESS or
  // MPI_ERR_TRUNCATE. False: take the general path (start_recv).
  bool recv_now(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, int* error);
  // A blocking receive (MPI_Recv), waited for; returns its error class. When
  // no PERUSE event is active on comm and the matching message already waits
  // whole and eager, it is copied out without a request.
  int recv_blocking(void* buf, int64_t count, Datatype* type, int source, int tag, Comm* comm, MPI_Status* status);
  bool cancel_recv(Request* r);
  // MPI_Cancel of a send whose message already left: asks
  // the receiver to drop it while unmatched; its answer completes r,
  // cancelled or not. False when r cannot be cancelled this way.
  bool ask_cancel_send(Request* r);
  // How long ask_cancel_send waits for a receiver on this node to take the
  // request when it is outside MPI (cancel.cc); once taken, the answer is
  // awaited without a bound.
  static constexpr std::chrono::milliseconds kCancelUntakenWait{100};
  // A user request with nothing left to do (MPI_Ibsend's: the data is
  // already copied out): activated and completed in one go.
  void complete_at_once(Request* r);
  // Fill an MPI_Status from a completed request, or from a receive's
  // envelope and byte count (status may be MPI_STATUS_IGNORE).
  static void fill_status(const Request* r, MPI_Status* status);
  static void fill_recv_status(MPI_Status* status, int source, int tag, uint64_t bytes, bool cancelled);
  // REQ_NOTIFY for r (wait/test/blocking calls): one load and one branch
  // unless something watches it.
  static void notify(Request* r) {
    if (r->comm && __builtin_expect((SONDE_WATCHED_MASK(r->comm->peruse) & (1u << PERUSE_COMM_REQ_NOTIFY)) != 0, 0))
      notify_watched(r);
  }
  [[gnu::noinline]] static void notify_watched(Request* r);

  // Completion notes for one MPI_Waitall at a time (binding/c/abi_requests.cc):
  // while a wait holds them, every request it lists by index
  // (Request::wait_all_index >= 0) is appended to wait_all_notes() as it
  // completes, so the wait retires it while its lines are still in cache
  // instead of walking all of them again. claim: false when another wait
  // (a nested one, another thread's) holds them. The list is reused.
  bool claim_wait_all_notes() { return !std::exchange(wait_all_noting_, true); }
  std::vector<Request*>& wait_all_notes() { return wait_all_done_; }
  void drop_wait_all_notes() {
    wait_all_done_.clear();
    wait_all_noting_ = false;
  }

  // Probe: the first waiting message on comm for (source, tag), or null.
  Message* probe(Comm* comm, int source, int tag);
  void take_message(Comm* comm, Message* m);    // matched probe: out of the queue
  int receive_message(Request* r, Message* m);  // MPI_Mrecv: start r on a probed message

  // Communicators.
  // `duplicate`: the new communicator is a duplicate of parent (MPI_Comm_dup
  // and friends), so parent's propagating PERUSE handles follow it.
  int create_comm(Comm* parent, std::vector<int> world_ranks, int my_rank, uint32_t context, Comm** out,
                  bool duplicate = false);
  // MPI_Comm_free's end: unexpected messages dropped, the handle dead; the
  // slot and context id are reused unless receives are still posted or
  // operations still run on it (Comm::pending_ops).
  void free_comm(Comm* c);

 private:
  // The request `cookie` names (cookie_of, engine_internal.h) if it is live,
  // of `kind` and talks to world rank `peer`; otherwise on_protocol_error's
  // handler runs (and the process exits if it returns).
  Request* named_request(int peer, uint64_t cookie, RequestKind kind, const transport::PacketHeader& h);
  static const char* unexpected_now(const Request& r, const transport::PacketHeader& h);
  void ask_stream(Request* r, int peer, uint64_t send_cookie);
  std::function<void(const std::string&)> protocol_error_;
  Settings settings_;
  bool settings_loaded_ = false;
  int world_rank_ = 0;
  int world_size_ = 1;
  uint64_t process_uid_ = 0;
  int thread_level_ = MPI_THREAD_SINGLE;
  std::string processor_name_;
  HandleTables tables_;
  Router router_;
  ContextRegistry contexts_;
  // Arrivals for a context id no communicator here has taken yet; adopted
  // by create_comm.
  boost::intrusive::list<matching::UnexpectedEntry> early_;
  BsendArena bsend_;
  uint64_t retired_posted_attempts_ = 0;
  uint64_t retired_unexpected_attempts_ = 0;

  // Twins of the hot operations: <false> has no PERUSE code and is inlined
  // into its dispatcher; <true> fires events and lives out of line, so the
  // fast path pays one load and one branch (engine_internal.h). Not marked cold:
  // that would compile the watched path for size.
  // kFireComplete false: the caller fired REQ_COMPLETE itself.
  template <bool kWatched, bool kFireComplete = true>
  [[gnu::always_inline]] inline void complete_as(Request* r, uint32_t watched);
  [[gnu::noinline]] void complete_watched(Request* r, uint32_t watched);
  [[gnu::noinline]] void payload_done_watched(Request* r, uint32_t watched);  // on_payload_done's
  template <bool kWatched>
  [[gnu::always_inline]] inline bool send_now_as(const void* buf, int64_t count, Datatype* type, int dest, int tag,
                                                 Comm* comm);
  [[gnu::noinline]] bool send_now_watched(const void* buf, int64_t count, Datatype* type, int dest, int tag,
                                          Comm* comm);
  // A whole eager message taken out of the queue by a request-less receive:
  // copied into (buf, count, type) (truncated to fit), status filled (may be
  // MPI_STATUS_IGNORE), freed. Returns MPI_SUCCESS or MPI_ERR_TRUNCATE.
  int deliver_eager(Message* m, void* buf, int64_t count, Datatype* type, MPI_Status* status);
  template <bool kWatched>
  [[gnu::always_inline]] inline int issue_recv_as(Request* r, uint32_t watched);
  [[gnu::noinline]] int issue_recv_watched(Request* r, uint32_t watched);
  template <bool kWatched>
  [[gnu::always_inline]] inline transport::PayloadSink* on_message_as(int peer, const transport::PacketHeader& h,
                                                                      Comm* comm, uint64_t id, uint32_t watched);
  [[gnu::noinline]] transport::PayloadSink* on_message_watched(int peer, const transport::PacketHeader& h, Comm* comm,
                                                               uint64_t id, uint32_t watched);
  void deliver_control(int peer, const transport::PacketHeader& h);
  void drop_cancelled_message(int peer, const transport::PacketHeader& h);
  void send_cancel_request(Request* r);
  void await_cancel_answer(Request* r);
  void on_cancel_answer(const transport::PacketHeader& h);
  transport::PayloadSink* on_message(int peer, const transport::PacketHeader& h, Comm* comm);
  Message* new_message(int peer, const transport::PacketHeader& h, Comm* comm);
  void free_message(Message* m);
  void match_message(Request* r, Message* m);
  void setup_sink(Request* r, uint64_t payload);
  void pull(Request* r, int peer, const transport::PacketHeader& h);
  void send_control(int peer, transport::PacketType type, uint64_t send_cookie, uint64_t recv_cookie,
                    uint64_t total = 0, uint8_t flags = 0, const uint64_t* word = nullptr);
  void coop_write(Request* r, int peer, uint64_t recv_cookie);
  void coop_part_done(Request* r);
  void run_deferred();

  // Work discovered inside a transport callback, done after progress()
  // returns so a transport is never re-entered from its own callback.
  struct Deferred {
    enum Kind { kPull, kControl, kStreamData, kCoopWrite, kCancelAgain } kind;
    int peer;
    Request* request;
    transport::PacketHeader header;
  };
  std::vector<Deferred> deferred_;
  // Per world rank: has single copy worked (1), failed (-1), not tried (0)?
  std::vector<int8_t> single_copy_state_;
  bool in_progress_ = false;
  // The clock when the current progress pass delivered its first message (0:
  // none yet). Every message a pass delivers was waiting when the pass began
  // looking, so they share one reading of the clock.
  uint64_t pass_stamp_ = 0;
  uint64_t arrival_stamp() {
    if (!in_progress_) return stamp_now();
    if (pass_stamp_ == 0) pass_stamp_ = stamp_now();
    return pass_stamp_;
  }
  std::vector<Request*> wait_all_done_;  // claim_wait_all_notes
  bool wait_all_noting_ = false;
  uint64_t id_counter_ = 0;
  uint32_t fruitless_polls_ = 0;  // fruitless()
};

}  // namespace sonde::engine
