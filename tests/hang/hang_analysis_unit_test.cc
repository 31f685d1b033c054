// The launcher's reading of snapshot texts and its wait-for analysis
// (tools/mpiexec/hang_report.h), on texts written as ranks write them.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tools/mpiexec/hang_report.h"

using namespace sonde::mpiexec;

namespace {

const char* kWorld3 = "comm ctx=0 handle=0x10000001 name=MPI_COMM_WORLD rank=R size=3 inter=0 coll=C world=0,1,2\n";

std::string rank_text(int rank, const std::string& call, int coll, const std::string& records) {
  std::string world = kWorld3;
  world.replace(world.find("rank=R"), 6, "rank=" + std::to_string(rank));
  world.replace(world.find("coll=C"), 6, "coll=" + std::to_string(coll));
  return "sonde-snapshot 1\nseq 4\nrank " + std::to_string(rank) + "\npid 100\ncall " + call + "\narrivals 7\n" +
         world + records + "end\n";
}

bool has_edge(const HangAnalysis& a, int from, int to, const std::string& why) {
  for (const auto& e : a.edges)
    if (e.from == from && e.to == to && e.why == why) return true;
  return false;
}

const Finding* finding(const HangAnalysis& a, const std::string& kind) {
  for (const auto& f : a.findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("a snapshot text parses into its records; names are percent-decoded") {
  RankSnapshot r = parse_rank_snapshot(
      1, "sonde-snapshot 1\nseq 2\nrank 1\npid 42\ncall MPI_Recv\narrivals 9\n"
         "comm ctx=3 handle=0x10100003 name=my%20rows rank=1 size=2 inter=0 coll=5 world=4,1\n"
         "recv id=0x10 ctx=3 src=0 tag=9 count=2 type=MPI_INT stage=posted\n"
         "send id=0x20 ctx=3 dest=0 tag=-82 count=1 bytes=4 sync=0 stage=rendezvous-wait coll=MPI_Allreduce#6\n"
         "unexp id=0x30 ctx=3 src=0 tag=8 bytes=4\nend\n");
  CHECK(r.condition == RankCondition::kInCall);
  CHECK(r.call == "MPI_Recv");
  CHECK(r.pid == 42);
  CHECK(r.arrivals == 9);
  REQUIRE(r.comms.size() == 1);
  CHECK(r.comms[0].name == "my rows");
  CHECK(r.comms[0].world == std::vector<int>{4, 1});
  CHECK(r.comms[0].coll == 5);
  REQUIRE(r.recvs.size() == 1);
  CHECK(r.recvs[0].tag == 9);
  CHECK(r.recvs[0].type == "MPI_INT");
  REQUIRE(r.sends.size() == 1);
  CHECK(r.sends[0].coll_call == "MPI_Allreduce");
  CHECK(r.sends[0].coll_seq == 6);
  CHECK(r.sends[0].stage == "rendezvous-wait");
  REQUIRE(r.unexpected.size() == 1);
  CHECK(r.unexpected[0].bytes == 4);
}

TEST_CASE("a cut-off or foreign text is a rank that did not answer") {
  CHECK(parse_rank_snapshot(0, "sonde-snapshot 1\nseq 1\ncall MPI_Recv\n").condition == RankCondition::kSilent);
  CHECK(parse_rank_snapshot(0, "hello\n").condition == RankCondition::kSilent);
  CHECK(parse_rank_snapshot(0, "").condition == RankCondition::kSilent);
  CHECK(parse_rank_snapshot(0, "sonde-snapshot 1\ncall -\nend\n").condition == RankCondition::kUserCode);
}

TEST_CASE("a three-rank ring of synchronous sends is one cycle") {
  std::vector<RankSnapshot> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(parse_rank_snapshot(r, rank_text(r, "MPI_Ssend", 0,
                                                     "send id=0x1 ctx=0 dest=" + std::to_string((r + 1) % 3) +
                                                         " tag=11 count=1 bytes=4 sync=1 stage=sync-ack\n")));
  HangAnalysis a = analyze_hang(ranks);
  REQUIRE(a.cycles.size() == 1);
  CHECK(a.cycles[0] == std::vector<int>{0, 1, 2});
  const Finding* f = finding(a, "deadlock");
  REQUIRE(f);
  CHECK(f->text.find("rank 1 in MPI_Ssend to 2 (tag 11, MPI_COMM_WORLD)") != std::string::npos);
  CHECK(a.waited_on.empty());
}

TEST_CASE("a rank behind on a communicator is what a collective waits for") {
  std::vector<RankSnapshot> ranks;
  const std::string in_coll =
      "recv id=0x1 ctx=0 src=2 tag=-211 count=1 type=MPI_INT stage=posted coll=MPI_Allreduce#3\n";
  ranks.push_back(parse_rank_snapshot(0, rank_text(0, "MPI_Allreduce", 3, in_coll)));
  ranks.push_back(parse_rank_snapshot(1, rank_text(1, "MPI_Allreduce", 3, in_coll)));
  ranks.push_back(parse_rank_snapshot(2, rank_text(2, "-", 2, "")));
  HangAnalysis a = analyze_hang(ranks);
  CHECK(has_edge(a, 0, 2, "collective"));
  CHECK(has_edge(a, 1, 2, "collective"));
  CHECK(a.cycles.empty());
  CHECK(a.waited_on == std::vector<int>{2});
  const Finding* f = finding(a, "skipped-collective");
  REQUIRE(f);
  CHECK(f->json.find("\"missing\":[2]") != std::string::npos);
  CHECK(f->json.find("\"waiting\":[0,1]") != std::string::npos);
  CHECK(f->text.find("never entered MPI_Allreduce #3 on MPI_COMM_WORLD (it is in user code)") != std::string::npos);
  REQUIRE(finding(a, "user-code"));
}

TEST_CASE("ANY_SOURCE waits for every other member; a wrong tag from the source is pointed out") {
  std::vector<RankSnapshot> ranks;
  ranks.push_back(parse_rank_snapshot(0, rank_text(0, "MPI_Recv", 0,
                                                   "recv id=0x1 ctx=0 src=-2 tag=4 count=1 type=MPI_INT stage=posted\n"
                                                   "unexp id=0x2 ctx=0 src=2 tag=5 bytes=4\n")));
  ranks.push_back(parse_rank_snapshot(1, rank_text(1, "-", 0, "")));
  RankSnapshot exited;
  exited.rank = 2;
  exited.condition = RankCondition::kExited;
  ranks.push_back(exited);
  HangAnalysis a = analyze_hang(ranks);
  CHECK(has_edge(a, 0, 1, "recv"));
  CHECK(has_edge(a, 0, 2, "recv"));
  CHECK(a.waited_on == std::vector<int>{1, 2});
  const Finding* f = finding(a, "tag-mismatch");
  REQUIRE(f);
  CHECK(f->json.find("\"sent_by\":2,\"sent_tag\":5") != std::string::npos);
  CHECK(finding(a, "exited"));
}

TEST_CASE("ranks outside MPI wait for nothing, even with requests pending") {
  std::vector<RankSnapshot> ranks;
  ranks.push_back(
      parse_rank_snapshot(0,
                          rank_text(0, "-", 0, "recv id=0x1 ctx=0 src=1 tag=1 count=1 type=MPI_INT stage=posted\n")));
  ranks.push_back(parse_rank_snapshot(1, rank_text(1, "-", 0, "")));
  HangAnalysis a = analyze_hang(ranks);
  CHECK(a.edges.empty());
  CHECK(a.findings.empty());
}

TEST_CASE("the JSON report escapes names and lists every rank") {
  std::vector<RankSnapshot> ranks;
  ranks.push_back(parse_rank_snapshot(0, rank_text(0, "-", 0, "")));
  ranks[0].comms[0].name = "a \"quoted\" name";
  HangAnalysis a = analyze_hang(ranks);
  const std::string json = report_json(ranks, a, "snapshot", 0);
  CHECK(json.find("\"name\":\"a \\\"quoted\\\" name\"") != std::string::npos);
  CHECK(json.find("{\"sonde\":\"snapshot\"") == 0);
  CHECK(rank_list({5, 0, 1, 2, 7, 8}) == "0-2, 5, 7, 8");
}

TEST_CASE("ages measured by the rank are kept; entries without one count from their first snapshot") {
  const std::string text = rank_text(0, "MPI_Allreduce", 4,
                                     "recv id=0x10 ctx=0 src=1 tag=-82 count=1 type=MPI_INT stage=posted "
                                     "coll=MPI_Allreduce#4 age_us=2500000\n"
                                     "unexp id=0x30 ctx=0 src=2 tag=8 bytes=4 age_us=7000000\n"
                                     "send id=0x20 ctx=0 dest=1 tag=3 count=1 bytes=4 sync=1 stage=sync-ack\n");
  std::string with_coll_age = text;
  with_coll_age.replace(with_coll_age.find("world=0,1,2"), 11, "world=0,1,2 coll_age_us=2600000");
  std::vector<RankSnapshot> ranks{parse_rank_snapshot(0, with_coll_age)};
  EntryAges ages;
  ages.stamp(ranks, 10.0);
  CHECK(ranks[0].recvs[0].age == doctest::Approx(2.5));
  CHECK(ranks[0].unexpected[0].age == doctest::Approx(7.0));
  CHECK(ranks[0].sends[0].age == 0);  // first seen now
  std::vector<RankSnapshot> later{parse_rank_snapshot(0, with_coll_age)};
  ages.stamp(later, 13.0);
  CHECK(later[0].recvs[0].age == doctest::Approx(2.5));  // the rank's own, not ours
  CHECK(later[0].sends[0].age == doctest::Approx(3.0));
  double in_for = 0;
  const SnapshotEntry* in = current_collective(later[0], &in_for);
  REQUIRE(in != nullptr);
  CHECK(in->coll_call == "MPI_Allreduce");
  CHECK(in_for == doctest::Approx(2.6));
  // A collective that is not the communicator's latest has no known age.
  std::vector<RankSnapshot> behind{
      parse_rank_snapshot(0, rank_text(0, "MPI_Allreduce", 5,
                                       "recv id=0x10 ctx=0 src=1 tag=-82 count=1 "
                                       "type=MPI_INT stage=posted coll=MPI_Allreduce#4\n"))};
  CHECK(current_collective(behind[0], &in_for) != nullptr);
  CHECK(in_for == -1);
}

TEST_CASE("ranks of a host whose daemon did not answer are named by host") {
  std::vector<RankSnapshot> ranks;
  ranks.push_back(
      parse_rank_snapshot(0, rank_text(0, "MPI_Ssend", 0,
                                       "send id=0x1 ctx=0 dest=1 tag=5 count=1 bytes=4 sync=1 stage=sync-ack\n")));
  ranks[0].host = "h0";
  for (int r : {1, 2}) {
    RankSnapshot s;
    s.rank = r;
    s.condition = RankCondition::kHostSilent;
    s.host = "h1";
    ranks.push_back(s);
  }
  HangAnalysis a = analyze_hang(ranks);
  CHECK(has_edge(a, 0, 1, "send"));
  CHECK(a.cycles.empty());
  const Finding* f = finding(a, "host-silent");
  REQUIRE(f != nullptr);
  CHECK(f->json.find("\"host\":\"h1\"") != std::string::npos);
  CHECK(f->json.find("\"ranks\":[1,2],\"waiting\":[0]") != std::string::npos);
  // Named once, with its host (not again as a rank waited on).
  int named = 0;
  for (const auto& g : a.findings) named += g.kind == "host-silent";
  CHECK(named == 1);
  const std::string json = report_json(ranks, a, "snapshot", 0);
  CHECK(json.find("\"state\":\"host-silent\"") != std::string::npos);
  CHECK(json.find("\"host\":\"h0\"") != std::string::npos);
}
