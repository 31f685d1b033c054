// The control connection between mpiexec and each host's sonde-hostd: one
// TCP connection per host, opened by the daemon, carrying length-prefixed
// messages both ways. Everything about a job's ranks (start, output, exit,
// abort, PMIx fences) crosses it; either side treats its loss, or silence
// longer than the heartbeat limit, as the end of the job.
//
// Frame: u32 length (little-endian) of what follows, u8 type, payload.
// Payload fields are fixed-width little-endian integers and u32-length
// byte strings, read back in the order written.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/mpiexec/apps.h"
#include "tools/mpiexec/placement.h"

namespace sonde::mpiexec {

enum class Msg : uint8_t {
  // daemon -> mpiexec
  kHello = 1,  // token, daemon index, host name, pid, machine identity
  kOutput,     // rank, stream (1 stdout, 2 stderr), bytes; empty bytes: end of stream
  kExited,     // rank, wait status, exec errno, connected, finalized
  kAbort,      // rank, status, message
  kFence,      // sequence number, this host's PMIx fence contribution
  kFailure,    // exit code, message: the daemon cannot go on (it ends its ranks)
  // mpiexec -> daemon
  kJob,        // everything needed to start the host's ranks (JobMessage)
  kFenceDone,  // sequence number, every host's contributions concatenated
  kSignal,     // signal number to forward to the ranks
  kTerminate,  // SIGTERM the ranks, SIGKILL a second later
  kShutdown,   // the job is over (or, before kJob: another daemon serves this
               // machine): clean up and exit
  // both ways
  kHeartbeat,
  // Direct modex (a PMIx_Get of a rank on another host without a collecting
  // fence), relayed through mpiexec: the asking daemon sends kModexRequest
  // (id, rank); mpiexec passes it (with an id of its own) to the rank's
  // daemon, whose kModexReply (id, PMIx status, blob) goes back the same way.
  kModexRequest,
  kModexReply,
  // mpiexec -> the daemon of rank 0, when rank 0 runs on another host:
  // bytes of mpiexec's stdin for rank 0; empty: end of input.
  kStdin,
  // Snapshots (snapshot.h) across hosts: mpiexec asks every daemon
  // (kSnapshotRequest: request number, bound in ms, the snapshot signal);
  // each asks its running ranks and answers within the bound (kSnapshot:
  // request number, count, then per rank of its host: rank, running,
  // ready, answered, text).
  kSnapshotRequest,
  kSnapshot,
  // MPI_Comm_spawn from a rank on some host (multihost_spawn.cc): its
  // daemon sends the client's PMIx_Spawn as kSpawnRequest (SpawnRequest);
  // mpiexec places the children and sends every daemon kSpawnJob
  // (SpawnJobMessage); each registers the new namespace, starts the
  // children placed on its host and answers kSpawnStarted (spawn id, PMIx
  // status, message); once all have, the asking daemon gets kSpawnReply
  // (its request id, PMIx status, namespace or "").
  kSpawnRequest,
  kSpawnJob,
  kSpawnStarted,
  kSpawnReply,
  // A PMIx fence over any other set of processes spanning hosts (the
  // union of parents and children, a spawned job's own): kGroupFence
  // (the daemon's id, the participants as GroupFence::procs, this host's
  // contribution); mpiexec waits for every host with a participant and
  // answers each with kGroupFenceDone (that daemon's id, PMIx status, every
  // such host's contribution concatenated in node order).
  kGroupFence,
  kGroupFenceDone,
  // The name service (name_table.h), kept by mpiexec for every host: a
  // daemon passes its client's publish, lookup or unpublish on as
  // kNameRequest (NameRequest) and gets kNameReply (NameReply, its id
  // echoed); a lookup that waits is answered once its names exist.
  kNameRequest,
  kNameReply,
};

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  Writer& u8(uint8_t v);
  Writer& u32(uint32_t v);
  Writer& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  Writer& str(std::string_view s);
  Writer& strings(const std::vector<std::string>& v);
  const std::string& bytes() const { return buf_; }

 private:
  std::string buf_;
};

// Reads what a Writer wrote; running short throws ProtocolError.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  uint8_t u8();
  uint32_t u32();
  int32_t i32() { return static_cast<int32_t>(u32()); }
  std::string str();
  std::vector<std::string> strings();

 private:
  std::string_view take(size_t n);
  std::string_view data_;
};

// The pure step of Channel::next(): the first whole frame of `avail`, if
// there is one, and in *used its size on the wire. Throws ProtocolError for
// a length of 0 or above `max_frame`.
std::optional<std::pair<Msg, std::string>> decode_frame(std::string_view avail, uint32_t max_frame, size_t* used);

// One framed connection over a non-blocking socket. Not thread-safe.
class Channel {
 public:
  using Clock = std::chrono::steady_clock;
  // Frames larger than this are a protocol error (fence data of thousands
  // of ranks stays far below it).
  static constexpr uint32_t kMaxFrame = 256u << 20;

  explicit Channel(int fd);  // takes ownership
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int fd() const { return fd_; }
  // Queues a message and writes what the socket takes now.
  void send(Msg type, const Writer& payload = Writer());
  bool wants_write() const { return sent_ < out_.size(); }
  size_t queued() const { return out_.size() - sent_; }
  // Writes queued bytes; false if the peer is gone.
  bool flush();
  // Reads what has arrived; false on end of stream or error.
  bool fill();
  // The next complete message, if one has arrived. Throws ProtocolError.
  std::optional<std::pair<Msg, std::string>> next();
  // When fill() last got bytes (or the channel was made).
  Clock::time_point last_heard() const { return last_heard_; }

 private:
  int fd_;
  std::string in_, out_;
  size_t consumed_ = 0, sent_ = 0;
  Clock::time_point last_heard_;
};

// What mpiexec tells each daemon about the job (Msg::kJob).
struct JobMessage {
  std::string job_id;
  // The applications (one unless MPMD): program and arguments as the user
  // gave them (each host looks the program up), environment additions,
  // directory (relative to cwd, or empty), contiguous rank ranges
  // covering 0..size-1 in order.
  std::vector<App> apps;
  std::vector<std::string> env;  // the ranks' base environment (mpiexec's, filtered)
  std::string cwd;               // the ranks' working directory (mpiexec's)
  // Each daemon places and binds its own ranks from its own topology.
  BindPolicy binding;
  bool report_bindings = false;
  std::string launcher;  // mpiexec's name, for the --report-bindings lines
  int size = 0;
  std::vector<std::string> hostnames;        // by node id, as each daemon reported it
  std::vector<std::vector<int>> node_ranks;  // by node id: its global ranks
  // By daemon index (--node): the node it serves, -1 for a daemon told to
  // go (its machine is another's). Daemons on one machine under several
  // names are one node, so the ranks' layout follows real machines.
  std::vector<int> daemon_node;

  Writer encode() const;
  static JobMessage decode(std::string_view payload);  // throws ProtocolError
};

// PMIx's bound on a namespace's length (PMIX_MAX_NSLEN): longer ones in a
// message are a protocol error.
inline constexpr size_t kMaxNspace = 255;

// The children of all the spawns of a job together, at most.
inline constexpr int kMaxSpawnedSlots = 4096;

// kSpawnRequest: a client's PMIx_Spawn, as its daemon received it.
struct SpawnRequest {
  uint32_t id = 0;  // the daemon's, echoed in kSpawnReply
  std::vector<SpawnApp> apps;

  Writer encode() const;
  static SpawnRequest decode(std::string_view payload);  // throws ProtocolError
};

// kSpawnJob: children to register with every daemon's PMIx server and to
// start on the hosts they were placed on. `job` holds the children's
// applications (rank ranges of the new namespace) and, as for the first
// job, the nodes with children (hostnames, node_ranks) and which of them
// each daemon serves (daemon_node; -1: none of its children there). Its
// env, cwd and binding are unused: children get the first job's base
// environment and directory, unbound.
struct SpawnJobMessage {
  uint32_t spawn = 0;  // mpiexec's id, echoed in kSpawnStarted
  std::string nspace;
  int first_slot = 0;              // child rank r is slot first_slot + r of mpiexec's
  int universe = 0;                // PMIX_UNIV_SIZE of the children
  std::vector<uint32_t> node_ids;  // job node id of each node in job.hostnames
  std::vector<std::string> paths;  // by app: PATH to look its program up in ("": the job's)
  JobMessage job;

  Writer encode() const;
  static SpawnJobMessage decode(std::string_view payload);  // throws ProtocolError
};

// kGroupFence's participants: "NSPACE RANK" or "NSPACE *" (every rank of
// that namespace), sorted, so that every host names one fence alike.
struct GroupFence {
  uint32_t id = 0;
  std::vector<std::string> procs;
  std::string data;

  Writer encode() const;
  static GroupFence decode(std::string_view payload);  // throws ProtocolError
  // Splits one participant; false if it is malformed. *rank is -1 for "*".
  static bool split(const std::string& proc, std::string* nspace, int* rank);
};

// What a daemon reports so that mpiexec can tell two names of one machine
// from two machines: its host name (gethostname, in its UTS namespace), the
// kernel's boot id and the device of /dev/shm. Equal identities can share
// memory; an empty part never matches (machine_identity returns "" if the
// boot id cannot be read, and "" is never merged).
std::string machine_identity();

// A listening TCP socket on every IPv4 address, on a port the kernel picks.
// Returns the socket (non-blocking, close-on-exec); sets *port.
int listen_tcp(uint16_t* port);

// This host's IPv4 addresses, loopback last, as "a.b.c.d".
std::vector<std::string> local_addresses();

// Connects to the first of "a.b.c.d:port" endpoints that answers, each
// given `timeout_ms`. Returns a blocking socket, or -1 with *error set.
int connect_first(const std::vector<std::string>& endpoints, int timeout_ms, std::string* error);

// Seconds of silence after which a control connection counts as lost:
// $SONDE_HOSTD_TIMEOUT if it is a positive number, else 30.
double heartbeat_limit_seconds();

}  // namespace sonde::mpiexec
