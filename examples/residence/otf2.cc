// otf2/traces.otf2: the timeline as an OTF2 archive (Debian's
// libopen-trace-format2), for Vampir, Scalasca's tools or otf2-print. Rank
// 0 writes every rank's location itself (serial collective callbacks).
//
//   definitions  one process (location group) and thread (location) per
//                rank; a region per intercepted blocking call; an MPI
//                communicator per timeline communicator whose members are
//                known; per communicator a metric class of two members,
//                "posted queue depth" and "unexpected queue depth"
//   events       Enter/Leave around the blocking calls, MpiSend at each
//                send and MpiRecv at each match (a message line in Vampir),
//                Metric at every change of a queue's depth
// Times are ns on rank 0's clock, shifted so the earliest is 0.
#include <ftw.h>
#include <otf2/otf2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "residence.h"
#include "trace.h"

namespace sonde::residence {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return std::remove(path) == 0 ? 0 : -1; }

// An archive from an earlier run in the same place (OTF2 refuses to overwrite).
void remove_old(const std::string& dir) {
  std::remove((dir + "/traces.otf2").c_str());
  std::remove((dir + "/traces.def").c_str());
  nftw((dir + "/traces").c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

struct Strings {
  std::map<std::string, OTF2_StringRef> refs;
  OTF2_StringRef operator()(const std::string& s) {
    auto [it, fresh] = refs.emplace(s, static_cast<OTF2_StringRef>(refs.size()));
    return it->second;
  }
};

// One location's records, sorted by time before writing.
struct Rec {
  uint64_t t;
  int order;  // ties: Leave before Enter, metric and messages in between
  int kind;   // 0 enter, 1 leave, 2 send, 3 recv, 4 metric
  int a, b, c;
  int64_t d, e;
};

}  // namespace

std::string write_otf2(const Timeline& tl, const std::string& dir) {
  if (!make_dirs(dir)) return "cannot create " + dir;
  remove_old(dir);
  int64_t first = 0;
  for (const Call& c : tl.calls) first = std::min(first, c.begin);
  for (const SendRec& s : tl.sends) first = std::min(first, s.t);
  for (const MatchRec& m : tl.matches) first = std::min(first, m.t);
  for (const TimelineComm& c : tl.comms)
    for (auto& [r, pts] : c.depth)
      if (!pts.empty()) first = std::min(first, pts.front().t);
  auto ts = [&](int64_t t) { return static_cast<uint64_t>(t - first); };

  // Which communicators can be defined (members known), and their refs.
  std::vector<int> comm_ref(tl.comms.size(), -1);
  int ncomms = 0;
  for (size_t i = 0; i < tl.comms.size(); ++i)
    if (!tl.comms[i].world.empty()) comm_ref[i] = ncomms++;

  size_t nranks = tl.ranks.size();
  std::vector<std::vector<Rec>> recs(nranks);
  auto push = [&](int rank, Rec r) {
    if (rank >= 0 && static_cast<size_t>(rank) < nranks) recs[static_cast<size_t>(rank)].push_back(r);
  };
  for (const Call& c : tl.calls) {
    push(c.rank, {ts(c.begin), 2, 0, c.kind, 0, 0, 0, 0});
    push(c.rank, {ts(c.end), 0, 1, c.kind, 0, 0, 0, 0});
  }
  for (const SendRec& s : tl.sends)
    if (comm_ref[static_cast<size_t>(s.comm)] >= 0)
      push(s.rank, {ts(s.t), 1, 2, s.dest, comm_ref[static_cast<size_t>(s.comm)], s.tag, s.bytes, 0});
  for (const MatchRec& m : tl.matches)
    if (comm_ref[static_cast<size_t>(m.comm)] >= 0 && m.src >= 0)
      push(m.rank, {ts(m.t), 1, 3, m.src, comm_ref[static_cast<size_t>(m.comm)], m.tag,
                    tl.slices[static_cast<size_t>(m.slice)].bytes, 0});
  for (size_t i = 0; i < tl.comms.size(); ++i)
    for (auto& [rank, pts] : tl.comms[i].depth)
      for (const DepthPoint& p : pts) push(rank, {ts(p.t), 1, 4, static_cast<int>(i), 0, 0, p.posted, p.unexpected});
  uint64_t length = 0;
  for (auto& v : recs) {
    std::stable_sort(v.begin(), v.end(),
                     [](const Rec& x, const Rec& y) { return x.t != y.t ? x.t < y.t : x.order < y.order; });
    if (!v.empty()) length = std::max(length, v.back().t);
  }

  OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                            OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) return "OTF2_Archive_Open failed in " + dir;
  OTF2_FlushCallbacks flush = {pre_flush, post_flush};
  OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  OTF2_Archive_OpenEvtFiles(archive);
  std::string error;
  for (size_t r = 0; r < nranks && error.empty(); ++r) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, r);
    if (!w) {
      error = "no OTF2 event writer";
      break;
    }
    for (const Rec& x : recs[r]) {
      OTF2_ErrorCode rc = OTF2_SUCCESS;
      switch (x.kind) {
        case 0: rc = OTF2_EvtWriter_Enter(w, nullptr, x.t, static_cast<OTF2_RegionRef>(x.a)); break;
        case 1: rc = OTF2_EvtWriter_Leave(w, nullptr, x.t, static_cast<OTF2_RegionRef>(x.a)); break;
        case 2:
          rc = OTF2_EvtWriter_MpiSend(w, nullptr, x.t, static_cast<uint32_t>(x.a), static_cast<OTF2_CommRef>(x.b),
                                      static_cast<uint32_t>(x.c), static_cast<uint64_t>(std::max<int64_t>(0, x.d)));
          break;
        case 3:
          rc = OTF2_EvtWriter_MpiRecv(w, nullptr, x.t, static_cast<uint32_t>(x.a), static_cast<OTF2_CommRef>(x.b),
                                      static_cast<uint32_t>(x.c), static_cast<uint64_t>(std::max<int64_t>(0, x.d)));
          break;
        default: {
          OTF2_Type types[2] = {OTF2_TYPE_INT64, OTF2_TYPE_INT64};
          OTF2_MetricValue values[2];
          values[0].signed_int = x.d;
          values[1].signed_int = x.e;
          rc = OTF2_EvtWriter_Metric(w, nullptr, x.t, static_cast<OTF2_MetricRef>(x.a), 2, types, values);
        }
      }
      if (rc != OTF2_SUCCESS) error = std::string("OTF2: ") + OTF2_Error_GetDescription(rc);
    }
    OTF2_Archive_CloseEvtWriter(archive, w);
  }
  OTF2_Archive_CloseEvtFiles(archive);
  OTF2_Archive_OpenDefFiles(archive);
  for (size_t r = 0; r < nranks; ++r)
    if (OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, r)) OTF2_Archive_CloseDefWriter(archive, dw);
  OTF2_Archive_CloseDefFiles(archive);

  OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(archive);
  Strings str;
  std::vector<std::pair<OTF2_StringRef, std::string>> strings;
  auto s = [&](const std::string& text) {
    size_t before = str.refs.size();
    OTF2_StringRef ref = str(text);
    if (str.refs.size() != before) strings.push_back({ref, text});
    return ref;
  };
  // Strings first: collect every name, then write the definitions in order.
  OTF2_StringRef empty = s(""), machine = s("machine"), node = s("node"), mpi = s("MPI"),
                 world_name = s("MPI_COMM_WORLD locations");
  std::vector<OTF2_StringRef> call_names, rank_names, comm_names, member_names[2];
  for (int k = 0; k < kCalls; ++k) call_names.push_back(s(kCallName[k]));
  for (size_t r = 0; r < nranks; ++r) rank_names.push_back(s(format("rank %zu", r)));
  for (const TimelineComm& c : tl.comms) comm_names.push_back(s(c.label));
  for (const TimelineComm& c : tl.comms) {
    member_names[0].push_back(s("posted queue depth " + c.label));
    member_names[1].push_back(s("unexpected queue depth " + c.label));
  }
  OTF2_StringRef unit = s("entries");
  for (auto& [ref, text] : strings) OTF2_GlobalDefWriter_WriteString(gw, ref, text.c_str());
  OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000, 0, length + 1, OTF2_UNDEFINED_TIMESTAMP);
  for (int k = 0; k < kCalls; ++k)
    OTF2_GlobalDefWriter_WriteRegion(gw, static_cast<OTF2_RegionRef>(k), call_names[static_cast<size_t>(k)],
                                     call_names[static_cast<size_t>(k)], empty,
                                     k >= kCallWait ? OTF2_REGION_ROLE_WRAPPER : OTF2_REGION_ROLE_POINT2POINT,
                                     OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, machine, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (size_t r = 0; r < nranks; ++r)
    OTF2_GlobalDefWriter_WriteLocationGroup(gw, static_cast<OTF2_LocationGroupRef>(r), rank_names[r],
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  for (size_t r = 0; r < nranks; ++r)
    OTF2_GlobalDefWriter_WriteLocation(gw, r, rank_names[r], OTF2_LOCATION_TYPE_CPU_THREAD, recs[r].size(),
                                       static_cast<OTF2_LocationGroupRef>(r));
  std::vector<uint64_t> locations(nranks);
  for (size_t r = 0; r < nranks; ++r) locations[r] = r;
  OTF2_GlobalDefWriter_WriteGroup(gw, 0, world_name, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(nranks), locations.data());
  for (size_t i = 0; i < tl.comms.size(); ++i) {
    if (comm_ref[i] < 0) continue;
    std::vector<uint64_t> members(tl.comms[i].world.begin(), tl.comms[i].world.end());
    OTF2_GlobalDefWriter_WriteGroup(gw, static_cast<OTF2_GroupRef>(1 + comm_ref[i]), comm_names[i],
                                    OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    static_cast<uint32_t>(members.size()), members.data());
  }
  for (size_t i = 0; i < tl.comms.size(); ++i)
    if (comm_ref[i] >= 0)
      OTF2_GlobalDefWriter_WriteComm(gw, static_cast<OTF2_CommRef>(comm_ref[i]), comm_names[i],
                                     static_cast<OTF2_GroupRef>(1 + comm_ref[i]), OTF2_UNDEFINED_COMM,
                                     OTF2_COMM_FLAG_NONE);
  for (size_t i = 0; i < tl.comms.size(); ++i) {
    OTF2_MetricMemberRef members[2];
    for (int q = 0; q < 2; ++q) {
      members[q] = static_cast<OTF2_MetricMemberRef>(2 * i + static_cast<size_t>(q));
      OTF2_GlobalDefWriter_WriteMetricMember(gw, members[q], member_names[q][i], member_names[q][i],
                                             OTF2_METRIC_TYPE_USER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64,
                                             OTF2_BASE_DECIMAL, 0, unit);
    }
    OTF2_GlobalDefWriter_WriteMetricClass(gw, static_cast<OTF2_MetricRef>(i), 2, members, OTF2_METRIC_ASYNCHRONOUS,
                                          OTF2_RECORDER_KIND_ABSTRACT);
  }
  (void)mpi;
  OTF2_Archive_CloseGlobalDefWriter(archive, gw);
  if (OTF2_Archive_Close(archive) != OTF2_SUCCESS && error.empty()) error = "OTF2_Archive_Close failed";
  return error;
}

}  // namespace sonde::residence
