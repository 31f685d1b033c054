// What a snapshot says: each rank's state parsed from its text
// (runtime/snapshot.h), the wait-for graph between ranks, its cycles and
// the ranks everything waits on, in words and as JSON (docs/launch.md,
// "When a job hangs").
//
// Edges (from the waiting rank to the one it waits for; only ranks inside
// an MPI call wait):
// - a receive waits for its source, or for every other rank of its
//   communicator when it names MPI_ANY_SOURCE; so does a probe that finds
//   nothing (a blocking MPI_Probe/MPI_Mprobe, or an Iprobe/Improbe loop,
//   which waits even while the rank is in user code between its calls);
// - a send not yet taken by its receiver (eager still queued, rendezvous
//   announced, transfer under way, synchronous send's acknowledgement)
//   waits for its destination;
// - a rank inside collective #n on a communicator waits for every member
//   that has started fewer than n collectives on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sonde::mpiexec {

struct SnapshotComm {
  uint32_t ctx = 0;
  std::string name;  // "" if unnamed
  int rank = 0, size = 0;
  bool inter = false;
  uint32_t coll = 0;     // collectives started
  double coll_age = -1;  // seconds since the latest started (-1: unknown)
  std::vector<int> world;
};

struct SnapshotEntry {
  std::string id;
  uint32_t ctx = 0;
  int peer = 0;  // source or destination, in the communicator
  int tag = 0;
  int64_t count = 0;
  uint64_t bytes = 0;
  std::string type, stage;
  bool sync = false;
  std::string coll_call;  // a collective's internal traffic: its call ...
  uint32_t coll_seq = 0;  // ... and sequence number; else empty and 0
  // Seconds since it entered its state, as the rank measured it; entries
  // without the rank's age (age_from_rank false) count from the first
  // snapshot that saw them.
  double age = 0;
  bool age_from_rank = false;
  std::string probe_call;  // a probe (stage "probe": blocking, "polling":
                           // an Iprobe/Improbe loop): its call; else empty
};

// kNoMpi: running, but not listening for snapshots (before MPI_Init, or
// its program keeps the signal); kSilent: listening but did not answer;
// kHostSilent: across hosts, its host's daemon did not answer in time.
enum class RankCondition { kInCall, kUserCode, kFinalized, kExited, kNoMpi, kSilent, kHostSilent };

struct RankSnapshot {
  int rank = 0;
  RankCondition condition = RankCondition::kSilent;
  std::string call;  // kInCall: the MPI call
  long pid = 0;
  std::string host;  // where it runs ("" if unknown)
  uint64_t arrivals = 0;
  std::vector<SnapshotComm> comms;
  std::vector<SnapshotEntry> recvs, sends, unexpected;  // recvs: receives and probes
  int omitted = 0;
  // Processes of other jobs its communicators name: engine id -> PMIx
  // namespace and rank (the snapshot's peer records).
  std::map<int, std::pair<std::string, int>> peers;
  const SnapshotComm* comm(uint32_t ctx) const;
};

// Parses one rank's text; a text that is not a snapshot gives kSilent.
RankSnapshot parse_rank_snapshot(int rank, const std::string& text);

// A launcher's slots (its first job's ranks, then every spawned job's
// after them) and their PMIx names, both ways.
struct SlotNames {
  // The namespace and rank of `slot`; false for a slot it does not know.
  std::function<bool(int slot, std::string* nspace, int* rank)> proc_of;
  // The slot of (nspace, rank), or -1.
  std::function<int(const std::string& nspace, int rank)> slot_of;
};

// Rewrites each rank's communicator members (SnapshotComm::world: the ids
// the rank's engine gave them, its own world's ranks first) into slots,
// -1 for a process the launcher does not serve; analyze_hang then reads
// them as slots. A rank whose slot `names` does not know is left as it is.
void world_to_slots(std::vector<RankSnapshot>& ranks, const SlotNames& names);

// The collective a rank is in (the first collective traffic it has
// pending), or null; *seconds: how long it has been in it (-1: unknown).
const SnapshotEntry* current_collective(const RankSnapshot& r, double* seconds);

// First-seen times of entries across successive snapshots (their ages).
class EntryAges {
 public:
  void stamp(std::vector<RankSnapshot>& ranks, double now);
 private:
  std::map<std::string, double> first_seen_;
};

struct WaitEdge {
  int from = 0, to = 0;
  std::string why;  // "recv" (receives and probes), "send" or "collective"
  std::string call;
  uint32_t ctx = 0;
  int tag = 0;       // recv/send
  int peer = 0;      // recv/send: the rank in the communicator named (-2: any source)
  uint32_t seq = 0;  // collective
};

struct Finding {
  std::string kind;  // deadlock, skipped-collective, tag-mismatch, source-mismatch,
                     // user-code, exited, finalized, silent, host-silent
  std::string text;  // in words
  std::string json;  // the finding's fields, a JSON object
};

struct HangAnalysis {
  std::vector<WaitEdge> edges;
  std::vector<std::vector<int>> cycles;  // each a simple cycle of ranks
  std::vector<int> waited_on;            // ranks waited for that wait for nothing
  std::vector<Finding> findings;
};

HangAnalysis analyze_hang(const std::vector<RankSnapshot>& ranks);

// The report: `what` is "snapshot" or "hang"; `stalled` the seconds
// without progress (hang) or 0.
std::string report_words(const std::vector<RankSnapshot>& ranks, const HangAnalysis& a, const std::string& what,
                         double stalled);
std::string report_json(const std::vector<RankSnapshot>& ranks, const HangAnalysis& a, const std::string& what,
                        double stalled);

// The findings of an analysis whose edges, cycles and waited_on are set
// (hang_report_text.cc).
void add_findings(const std::vector<RankSnapshot>& ranks, HangAnalysis& a);

// Helpers shared by the two renderings.
std::string comm_label(const RankSnapshot& r, uint32_t ctx);
std::string rank_list(std::vector<int> ranks);  // "0-2, 5"
std::string json_string(const std::string& s);

}  // namespace sonde::mpiexec
