// The performance-variable catalog: Sonde's own variables, then the
// compatibility aliases of the queue variables under the names other
// implementations give them (docs/mpit.md, "Names other implementations
// use"). Index order is the ABI of a run: append only.
#include <algorithm>
#include <cstring>

#include "mpit/state.h"
#include "peruse/events.h"

namespace sonde::mpit {

namespace {
constexpr int kUll = MPI_UNSIGNED_LONG_LONG;
}  // namespace

namespace {
// One alias: its name and description, the Sonde variable it `mirrors`
// (same measure, same binding), and the class, datatype and verbosity the
// other implementation gives it. Aliases are read-only and continuous as
// there; continuous counters and timers count from their handle's
// allocation.
struct Alias {
  const char* name;
  const char* desc;
  const char* mirrors;
  int verbosity;
  int var_class;
  MPI_Datatype datatype;
};

constexpr int kDetail = MPI_T_VERBOSITY_USER_DETAIL;
constexpr int kTunerBasic = MPI_T_VERBOSITY_TUNER_BASIC;

// MPICH's ch3 process-wide receive-queue variables and Open MPI ob1's
// per-peer arrays bound to a communicator.
const Alias kAliases[] = {
    {"posted_recvq_length",
     "MPICH's name: length of the posted message receive queue, all communicators of the process "
     "(sonde_total_posted_q_length).",
     "sonde_total_posted_q_length", kDetail, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED},
    {"unexpected_recvq_length",
     "MPICH's name: length of the unexpected message receive queue, all communicators of the process "
     "(sonde_total_unexpected_q_length).",
     "sonde_total_unexpected_q_length", kDetail, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED},
    {"unexpected_recvq_buffer_size",
     "MPICH's name: total buffer size allocated for the messages in the unexpected receive queue, in bytes "
     "(sonde_total_unexpected_q_buffer_bytes).",
     "sonde_total_unexpected_q_buffer_bytes", kDetail, MPI_T_PVAR_CLASS_LEVEL, kUll},
    {"posted_recvq_match_attempts",
     "MPICH's name: posted receives compared with arriving messages, all communicators of the process, "
     "continuous from the handle's allocation (sonde_total_posted_recvq_match_attempts).",
     "sonde_total_posted_recvq_match_attempts", kDetail, MPI_T_PVAR_CLASS_COUNTER, kUll},
    {"unexpected_recvq_match_attempts",
     "MPICH's name: waiting messages compared with receives and probes, all communicators of the process, "
     "continuous from the handle's allocation (sonde_total_unexpected_recvq_match_attempts).",
     "sonde_total_unexpected_recvq_match_attempts", kDetail, MPI_T_PVAR_CLASS_COUNTER, kUll},
    {"time_failed_matching_postedq",
     "MPICH's name: seconds spent on posted-queue searches that found no receive, continuous from the "
     "handle's allocation (sonde_total_posted_q_failed_search_time).",
     "sonde_total_posted_q_failed_search_time", kDetail, MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE},
    {"time_matching_unexpectedq",
     "MPICH's name: seconds spent searching the unexpected queue, continuous from the handle's allocation "
     "(sonde_total_unexpected_q_search_time).",
     "sonde_total_unexpected_q_search_time", kDetail, MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE},
    {"pml_ob1_posted_recvq_length",
     "Open MPI's (ob1) name: number of unmatched receives posted for each peer of the bound communicator "
     "(count = its size; MPI_ANY_SOURCE receives are not per peer) (sonde_posted_q_length_per_peer).",
     "sonde_posted_q_length_per_peer", kTunerBasic, MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED},
    {"pml_ob1_unexpected_msgq_length",
     "Open MPI's (ob1) name: number of unexpected messages received from each peer of the bound communicator "
     "(count = its size) (sonde_unexpected_q_length_per_peer).",
     "sonde_unexpected_q_length_per_peer", kTunerBasic, MPI_T_PVAR_CLASS_SIZE, MPI_UNSIGNED},
};

// Appends the aliases whose Sonde variable is in `v` (the event-fed ones
// exist only with PERUSE compiled in).
void add_compat_aliases(std::vector<PvarDef>& v) {
  for (const Alias& a : kAliases) {
    auto it = std::find_if(v.begin(), v.end(), [&](const PvarDef& d) { return std::strcmp(d.name, a.mirrors) == 0; });
    if (it == v.end()) continue;
    PvarDef d = *it;
    d.name = a.name;
    d.desc = a.desc;
    d.verbosity = a.verbosity;
    d.var_class = a.var_class;
    d.datatype = a.datatype;
    d.readonly = d.continuous = true;
    d.atomic = false;
    d.mirrors = a.mirrors;
    v.push_back(d);
  }
}
}  // namespace

namespace {
// A queue variable: its name and description per communicator and for the
// whole process (null where it has none), its verbosity, class, datatype and
// measure; `needs_bridge`: fed by PERUSE events (absent when PERUSE is
// compiled out).
struct QueueVar {
  const char* comm_name;
  const char* comm_desc;
  const char* total_name;
  const char* total_desc;
  int verbosity;
  int var_class;
  MPI_Datatype datatype;
  Measure measure;
  bool needs_bridge;
};

constexpr int kUserBasic = MPI_T_VERBOSITY_USER_BASIC;
constexpr int kUserDetail = MPI_T_VERBOSITY_USER_DETAIL;
constexpr int kTunerDetail = MPI_T_VERBOSITY_TUNER_DETAIL;
constexpr int kLevel = MPI_T_PVAR_CLASS_LEVEL;
constexpr int kCounter = MPI_T_PVAR_CLASS_COUNTER;
constexpr int kTimer = MPI_T_PVAR_CLASS_TIMER;
constexpr int kHwm = MPI_T_PVAR_CLASS_HIGHWATERMARK;

const QueueVar kQueueVars[] = {
    {"sonde_posted_q_length", "Receives waiting in this communicator's posted-receive queue.",
     "sonde_total_posted_q_length", "Receives waiting in the posted queues of all communicators.", kUserBasic, kLevel,
     kUll, Measure::kPostedLength, false},
    {"sonde_unexpected_q_length", "Messages waiting in this communicator's unexpected-message queue.",
     "sonde_total_unexpected_q_length", "Messages waiting in the unexpected queues of all communicators.", kUserBasic,
     kLevel, kUll, Measure::kUnexpectedLength, false},
    {"sonde_unexpected_q_bytes",
     "Bytes of the messages waiting in this communicator's unexpected-message queue (their full size, "
     "rendezvous messages included).",
     "sonde_total_unexpected_q_bytes", "Bytes of the messages waiting in all unexpected queues.", kUserDetail, kLevel,
     kUll, Measure::kUnexpectedBytes, false},
    {"sonde_unexpected_q_buffer_bytes",
     "Bytes held allocated for the payloads of the messages waiting in this communicator's unexpected queue "
     "(eager payloads; a rendezvous message holds none until its data is pulled). Reading walks the queue.",
     "sonde_total_unexpected_q_buffer_bytes",
     "Bytes held allocated for the payloads of the messages waiting in all unexpected queues.", kUserDetail, kLevel,
     kUll, Measure::kUnexpectedBufferBytes, false},
    {"sonde_posted_q_length_per_peer",
     "Per rank of the communicator (count = its size): receives posted for that source. Receives for "
     "MPI_ANY_SOURCE are in sonde_posted_q_length only.",
     nullptr, nullptr, MPI_T_VERBOSITY_TUNER_BASIC, kLevel, kUll, Measure::kPostedPerPeer, false},
    {"sonde_unexpected_q_length_per_peer",
     "Per rank of the communicator (count = its size): messages from that rank waiting unexpected.", nullptr, nullptr,
     MPI_T_VERBOSITY_TUNER_BASIC, kLevel, kUll, Measure::kUnexpectedPerPeer, false},
    {"sonde_posted_recvq_match_attempts",
     "Posted receives examined by arriving messages searching this communicator's posted-receive queue: "
     "every receive compared while the queue is short, every candidate bucket's oldest receive (at most "
     "four per search) once it is indexed.",
     "sonde_total_posted_recvq_match_attempts",
     "sonde_posted_recvq_match_attempts summed over every communicator the process has had, freed ones "
     "included.",
     kTunerDetail, kCounter, kUll, Measure::kPostedMatchAttempts, false},
    {"sonde_unexpected_recvq_match_attempts",
     "Waiting messages examined by receives and probes searching this communicator's unexpected-message "
     "queue: every message compared while the queue is short, at most one per search once it is indexed.",
     "sonde_total_unexpected_recvq_match_attempts",
     "sonde_unexpected_recvq_match_attempts summed over every communicator the process has had, freed ones "
     "included.",
     kTunerDetail, kCounter, kUll, Measure::kUnexpectedMatchAttempts, false},
    {"sonde_posted_q_hwm", "Longest posted-receive queue of this communicator since the handle was started or reset.",
     "sonde_total_posted_q_hwm", "Most receives waiting in all posted queues at once since start or reset.",
     kUserDetail, kHwm, kUll, Measure::kPostedHwm, true},
    {"sonde_unexpected_q_hwm",
     "Longest unexpected-message queue of this communicator since the handle was started or reset.",
     "sonde_total_unexpected_q_hwm", "Most messages waiting in all unexpected queues at once since start or reset.",
     kUserDetail, kHwm, kUll, Measure::kUnexpectedHwm, true},
    {"sonde_posted_q_matches", "Arriving messages that found their receive in the posted queue.",
     "sonde_total_posted_q_matches", "Arriving messages that found their receive in a posted queue.", kUserDetail,
     kCounter, kUll, Measure::kPostedMatches, true},
    {"sonde_unexpected_q_matches", "Receives that found their message in the unexpected queue.",
     "sonde_total_unexpected_q_matches", "Receives that found their message in an unexpected queue.", kUserDetail,
     kCounter, kUll, Measure::kUnexpectedMatches, true},
    {"sonde_posted_q_search_time", "Seconds spent searching the posted queue for arriving messages.",
     "sonde_total_posted_q_search_time", "Seconds spent searching posted queues.", kTunerDetail, kTimer, MPI_DOUBLE,
     Measure::kPostedSearchTime, true},
    {"sonde_unexpected_q_search_time", "Seconds spent searching the unexpected queue (receives and probes).",
     "sonde_total_unexpected_q_search_time", "Seconds spent searching unexpected queues.", kTunerDetail, kTimer,
     MPI_DOUBLE, Measure::kUnexpectedSearchTime, true},
    {"sonde_posted_q_failed_search_time",
     "Seconds spent on posted-queue searches that found no receive (the message then waited unexpected).",
     "sonde_total_posted_q_failed_search_time", "Seconds spent on posted-queue searches that found no receive.",
     kTunerDetail, kTimer, MPI_DOUBLE, Measure::kPostedFailedSearchTime, true},
    {"sonde_posted_q_residence_time",
     "Seconds receives spent in the posted queue, summed over the receives that left it (insertions made "
     "while no handle was started are not timed).",
     "sonde_total_posted_q_residence_time", "Seconds receives spent in posted queues.", kUserDetail, kTimer, MPI_DOUBLE,
     Measure::kPostedResidence, true},
    {"sonde_unexpected_q_residence_time",
     "Seconds messages spent in the unexpected queue, summed over the messages that left it (insertions "
     "made while no handle was started are not timed).",
     "sonde_total_unexpected_q_residence_time", "Seconds messages spent in unexpected queues.", kUserDetail, kTimer,
     MPI_DOUBLE, Measure::kUnexpectedResidence, true},
};

std::vector<PvarDef> build_pvars() {
  std::vector<PvarDef> v;
  const bool bridge = peruse::supported_count() > 0;  // event-fed variables need PERUSE compiled in
  auto add = [&](const char* name, const char* desc, int verbosity, int cls, MPI_Datatype type, int bind, Measure m,
                 int transport = -1, int enumtype = -1) {
    bool level = cls == MPI_T_PVAR_CLASS_LEVEL || cls == MPI_T_PVAR_CLASS_SIZE || cls == MPI_T_PVAR_CLASS_STATE;
    // Levels, sizes and states are always current: continuous and read-only.
    // Counters, timers and watermarks are per handle: started, stopped,
    // reset, written, and read-and-reset atomically.
    v.push_back({name, desc, verbosity, cls, type, enumtype, bind, level, level, !level, m, transport});
  };
  const int none = MPI_T_BIND_NO_OBJECT;
  // The queue variables: each row once per communicator (first pass), then
  // summed over the process (second pass), where it has a name there.
  for (bool per_comm : {true, false}) {
    for (const QueueVar& q : kQueueVars) {
      const char* name = per_comm ? q.comm_name : q.total_name;
      if (!name || (q.needs_bridge && !bridge)) continue;
      add(name, per_comm ? q.comm_desc : q.total_desc, q.verbosity, q.var_class, q.datatype,
          per_comm ? MPI_T_BIND_MPI_COMM : none, q.measure);
    }
  }
  if (bridge) {
    // Transports: user messages and their payload bytes (control packets of
    // the protocols are not counted), attributed by the route to the peer.
    static const char* const kTransportVarNames[kNumTransports][4] = {
        {"sonde_self_messages_sent", "sonde_self_bytes_sent", "sonde_self_messages_received",
         "sonde_self_bytes_received"},
        {"sonde_shm_messages_sent", "sonde_shm_bytes_sent", "sonde_shm_messages_received", "sonde_shm_bytes_received"}};
    for (int t = 0; t < kNumTransports; ++t) {
      add(kTransportVarNames[t][0], "User messages whose last byte this transport took (sends).",
          MPI_T_VERBOSITY_USER_DETAIL, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kMessagesSent, t);
      add(kTransportVarNames[t][1], "Payload bytes of the user messages sent through this transport.",
          MPI_T_VERBOSITY_USER_DETAIL, MPI_T_PVAR_CLASS_AGGREGATE, kUll, none, Measure::kBytesSent, t);
      add(kTransportVarNames[t][2], "User messages that arrived through this transport.", MPI_T_VERBOSITY_USER_DETAIL,
          MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kMessagesReceived, t);
      add(kTransportVarNames[t][3], "Payload bytes of the user messages that arrived through this transport.",
          MPI_T_VERBOSITY_USER_DETAIL, MPI_T_PVAR_CLASS_AGGREGATE, kUll, none, Measure::kBytesReceived, t);
    }
    add("sonde_mpit_events_dropped",
        "MPI_T event instances dropped because a registration's buffer was full (sonde_mpit_event_buffer).",
        MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kEventsDropped);
  }
  // One-sided communication (rma/, counted without the bridge).
  add("sonde_rma_operations", "One-sided operations this process issued (Put, Get, Accumulate and the rest).",
      MPI_T_VERBOSITY_USER_BASIC, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kRmaOperations);
  add("sonde_rma_bytes", "Data bytes of the one-sided operations this process issued.", MPI_T_VERBOSITY_USER_BASIC,
      MPI_T_PVAR_CLASS_AGGREGATE, kUll, none, Measure::kRmaBytes);
  add("sonde_rma_epochs", "RMA epochs this process closed (fence, complete, wait, unlock, unlock_all).",
      MPI_T_VERBOSITY_USER_BASIC, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kRmaEpochs);
  add("sonde_rma_network_operations",
      "One-sided operations this process issued that went through the network transport's RMA (libfabric "
      "fi_write/fi_read) rather than as active messages.",
      MPI_T_VERBOSITY_USER_DETAIL, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kRmaNetwork);
  add("sonde_rma_window_visits",
      "Windows the progress engine ran for one-sided work (only windows with work are visited).",
      MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_PVAR_CLASS_COUNTER, kUll, none, Measure::kRmaWindowVisits);
  add("sonde_shm_ring_size", "Bytes of each shared-memory ring (fixed at MPI_Init; 0 before it).",
      MPI_T_VERBOSITY_TUNER_ALL, MPI_T_PVAR_CLASS_SIZE, kUll, none, Measure::kRingSize);
  add("sonde_mpi_state", "Where MPI is in its life: before MPI_Init, initialized, finalized.", MPI_T_VERBOSITY_USER_ALL,
      MPI_T_PVAR_CLASS_STATE, MPI_INT, none, Measure::kMpiState, -1, kEnumMpiState);
  add_compat_aliases(v);
  return v;
}
}  // namespace

const std::vector<PvarDef>& pvars() {
  static const std::vector<PvarDef> v = build_pvars();
  return v;
}

}  // namespace sonde::mpit
