// The multi-host launcher's pure parts: host lists and hostfiles, rank
// placement, the control protocol's framing, the agent's command string.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "tools/mpiexec/control.h"
#include "tools/mpiexec/hosts.h"
#include "tools/mpiexec/hostd.h"
#include "tools/mpiexec/multihost.h"
#include "tools/mpiexec/options.h"

using namespace sonde::mpiexec;

namespace {

std::vector<std::vector<int>> ranks_of(const std::vector<Placement>& p) {
  std::vector<std::vector<int>> out;
  for (const auto& h : p) out.push_back(h.ranks);
  return out;
}

std::vector<std::string> names_of(const std::vector<Placement>& p) {
  std::vector<std::string> out;
  for (const auto& h : p) out.push_back(h.name);
  return out;
}

}  // namespace

TEST_CASE("host options on the command line") {
  Options o = parse_options({"--host", "a:2,b", "-ppn", "3", "--launch-agent", "ssh -x", "p"});
  CHECK(o.host_lists == std::vector<std::string>{"a:2,b"});
  CHECK(o.ppn == 3);
  CHECK(o.launch_agent == "ssh -x");
  CHECK_FALSE(o.ranks_given);
  CHECK(parse_options({"-hostfile", "hf", "-n", "2", "p"}).hostfile == "hf");
  CHECK(parse_options({"-n", "2", "p"}).ranks_given);
  CHECK(parse_options({"-H", "x", "--host=y", "p"}).host_lists == std::vector<std::string>{"x", "y"});
  CHECK_THROWS_AS(parse_options({"--host", "p"}), UsageError);  // no program left
  CHECK_THROWS_AS(parse_options({"-ppn", "0", "p"}), UsageError);
  CHECK_THROWS_AS(parse_options({"--launch-agent", " ", "p"}), UsageError);
}

TEST_CASE("host lists: names with optional slot counts") {
  auto h = parse_host_list("a:2,b,c.example.org:16");
  REQUIRE(h.size() == 3);
  CHECK(h[0].name == "a");
  CHECK(h[0].slots == 2);
  CHECK(h[1].slots == 0);
  CHECK(h[2].name == "c.example.org");
  for (const char* bad : {"", "a,,b", "a:0", "a:x", "a:2:3", "-oProxyCommand=x", "a b"}) {
    CHECK_THROWS_AS(parse_host_list(bad), UsageError);
  }
}

TEST_CASE("hostfiles in Open MPI's and MPICH's forms") {
  auto h = parse_hostfile("# cluster\nn1 slots=4 max_slots=8\n\n  n2:2  # two\nn3\n", "hf");
  REQUIRE(h.size() == 3);
  CHECK(h[0].name == "n1");
  CHECK(h[0].slots == 4);
  CHECK(h[1].name == "n2");
  CHECK(h[1].slots == 2);
  CHECK(h[2].slots == 0);
  CHECK_THROWS_AS(parse_hostfile("# nothing\n", "hf"), UsageError);
  CHECK_THROWS_AS(parse_hostfile("n1 cpus=3\n", "hf"), UsageError);
  CHECK_THROWS_AS(parse_hostfile("n1 slots=\n", "hf"), UsageError);
}

TEST_CASE("ranks fill hosts in order, up to their slots") {
  auto p = place_ranks(parse_host_list("a:2,b:2"), 3, 0);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}, {2}});
  // Without -n: every slot; one slot for a host without a count.
  CHECK(ranks_of(place_ranks(parse_host_list("a:2,b"), 0, 0)) == std::vector<std::vector<int>>{{0, 1}, {2}});
  // -ppn overrides the counts; hosts that get no rank are left out.
  p = place_ranks(parse_host_list("a:5,b,c"), 4, 2);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  // A host named twice is one host with the slots of both.
  p = place_ranks(parse_host_list("a,b,a"), 0, 0);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}, {2}});
  CHECK_THROWS_AS(place_ranks(parse_host_list("a,b"), 3, 0), UsageError);
}

TEST_CASE("--map-by node deals ranks round robin over the hosts") {
  auto p = place_ranks(parse_host_list("a:2,b:2"), 3, 0, MapBy::kNode);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 2}, {1}});
  // A full host is skipped; the others go on taking turns.
  p = place_ranks(parse_host_list("a:1,b:3,c:2"), 0, 0, MapBy::kNode);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0}, {1, 3, 5}, {2, 4}});
  // Fewer ranks than hosts: the last hosts get none and are left out.
  p = place_ranks(parse_host_list("a:4,b:4,c:4"), 2, 0, MapBy::kNode);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK_THROWS_AS(place_ranks(parse_host_list("a,b"), 3, 0, MapBy::kNode), UsageError);
}

TEST_CASE("MPMD blocks with hosts of their own share the hosts' slots") {
  auto h = [](const char* list) { return parse_host_list(list); };
  // Block 0 on the job's hosts, block 1 on its own; numbering goes on.
  auto p = place_blocks(h("a:2"), {{}, h("b:2,c")}, {2, 3}, 0, MapBy::kSlot);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b", "c"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4}});
  // Two blocks on one host use up its slots together.
  p = place_blocks(h("a:3,b:3"), {{}, h("a")}, {2, 1}, 0, MapBy::kSlot);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1, 2}});
  CHECK_THROWS_AS(place_blocks(h("a:3,b:3"), {h("a"), h("a")}, {3, 1}, 0, MapBy::kSlot), UsageError);
  // The largest count a list gives a host is its slots; -ppn overrides.
  p = place_blocks(h("a"), {{}, h("a:4")}, {1, 3}, 0, MapBy::kSlot);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1, 2, 3}});
  p = place_blocks(h("a,b"), {{}, h("b,a")}, {2, 2}, 2, MapBy::kSlot);
  CHECK(names_of(p) == std::vector<std::string>{"a", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  // --map-by node within each block's own list.
  p = place_blocks(h("a:2,b:2,c:2"), {{}, h("b:2,c:2")}, {1, 3}, 0, MapBy::kNode);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0}, {1, 3}, {2}});
  // No job hosts: blocks without a list run here, without a limit.
  p = place_blocks({}, {{}, h("b")}, {5, 1}, 0, MapBy::kSlot);
  CHECK(names_of(p) == std::vector<std::string>{"localhost", "b"});
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1, 2, 3, 4}, {5}});
}

TEST_CASE("--map-by spellings") {
  CHECK(parse_options({"--map-by", "node", "p"}).map_by == MapBy::kNode);
  CHECK(parse_options({"--map-by=slot", "p"}).map_by == MapBy::kSlot);
  CHECK(parse_options({"-bynode", "p"}).map_by == MapBy::kNode);
  Options o = parse_options({"--map-by", "ppr:3:node", "p"});
  CHECK(o.ppn == 3);
  CHECK(o.map_by == MapBy::kSlot);
  for (const char* bad : {"cores", "ppr:0:node", "ppr:2:socket", "ppr::node", "Node"}) {
    CHECK_THROWS_AS(parse_options({"--map-by", bad, "p"}), UsageError);
  }
}

TEST_CASE("this host is recognised by name, localhost and loopback") {
  char buf[256] = {};
  REQUIRE(gethostname(buf, sizeof buf - 1) == 0);
  CHECK(is_local_host(buf));
  CHECK(is_local_host("localhost"));
  CHECK(is_local_host("127.0.0.1"));
  CHECK_FALSE(is_local_host(std::string(buf) + "-not-this-host"));
}

TEST_CASE("a machine's identity: host name, boot id, /dev/shm") {
  std::string id = machine_identity();
  REQUIRE_FALSE(id.empty());
  char buf[256] = {};
  REQUIRE(gethostname(buf, sizeof buf - 1) == 0);
  CHECK(id.rfind(std::string(buf) + " ", 0) == 0);
  CHECK(id == machine_identity());  // stable within a process
}

TEST_CASE("the agent's command string survives a remote shell") {
  CHECK(shell_command({"/opt/x y/sonde-hostd", "--token", "a'b"}) == "'/opt/x y/sonde-hostd' '--token' 'a'\\''b'");
}

TEST_CASE("control messages round-trip, split anywhere, over a socket") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Channel a(sv[0]), b(sv[1]);
  JobMessage job;
  job.job_id = "abc";
  job.apps = {App{{"prog", "x y"}, {"V=1"}, "d", 0, 2}, App{{"other"}, {}, "", 2, 1}};
  job.env = {"A=1", "B="};
  job.cwd = "/w";
  job.binding = BindPolicy{Unit::kPackage, Unit::kCore};
  job.report_bindings = true;
  job.launcher = "mpirun";
  job.size = 3;
  job.hostnames = {"h0", "h1"};
  job.node_ranks = {{0, 2}, {1}};
  job.daemon_node = {1, -1, 0};
  a.send(Msg::kJob, job.encode());
  std::string big(300000, 'z');
  Writer w;
  w.i32(-5).str(big);
  a.send(Msg::kOutput, w);
  a.send(Msg::kHeartbeat);
  std::vector<std::pair<Msg, std::string>> got;
  for (int spins = 0; got.size() < 3 && spins < 1000; ++spins) {
    a.flush();
    b.fill();
    while (auto m = b.next()) got.push_back(*m);
  }
  REQUIRE(got.size() == 3);
  CHECK(got[0].first == Msg::kJob);
  JobMessage back = JobMessage::decode(got[0].second);
  REQUIRE(back.apps.size() == 2);
  CHECK(back.apps[0].argv == job.apps[0].argv);
  CHECK(back.apps[0].env == job.apps[0].env);
  CHECK(back.apps[0].wdir == "d");
  CHECK(back.apps[1].argv == job.apps[1].argv);
  CHECK(back.apps[1].first == 2);
  CHECK(back.apps[1].size == 1);
  CHECK(back.env == job.env);
  CHECK(back.binding == job.binding);
  CHECK(back.report_bindings);
  CHECK(back.launcher == "mpirun");
  CHECK(back.node_ranks == job.node_ranks);
  CHECK(back.hostnames == job.hostnames);
  CHECK(back.daemon_node == job.daemon_node);
  Reader r(got[1].second);
  CHECK(r.i32() == -5);
  CHECK(r.str() == big);
  CHECK_THROWS_AS(r.u8(), ProtocolError);
  CHECK(got[2].first == Msg::kHeartbeat);
}

TEST_CASE("inconsistent job descriptions are refused") {
  JobMessage job;
  job.apps = {App{{"p"}, {}, "", 0, 2}};
  job.size = 2;
  job.hostnames = {"h0", "h1"};
  job.node_ranks = {{0}, {0}};  // rank 0 twice, rank 1 nowhere
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  job.node_ranks = {{0}, {2}};
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  CHECK_THROWS_AS(JobMessage::decode("\x01"), ProtocolError);
  // Apps must cover the ranks in order.
  job.node_ranks = {{0}, {1}};
  CHECK_NOTHROW(JobMessage::decode(job.encode().bytes()));
  job.apps = {App{{"p"}, {}, "", 0, 1}};
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  job.apps = {App{{"p"}, {}, "", 0, 1}, App{{"q"}, {}, "", 0, 1}};
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  // A daemon's node must exist.
  job.apps = {App{{"p"}, {}, "", 0, 2}};
  job.daemon_node = {0, 2};
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  // A binding object this daemon would not know.
  job.daemon_node = {0, 1};
  job.binding.bind = static_cast<Unit>(kLastUnit + 1);
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  job.binding = BindPolicy{static_cast<Unit>(200), Unit::kCore};
  CHECK_THROWS_AS(JobMessage::decode(job.encode().bytes()), ProtocolError);
  job.binding = BindPolicy{Unit::kPackage, Unit::kCore};
  CHECK_NOTHROW(JobMessage::decode(job.encode().bytes()));
}

TEST_CASE("the daemon's command line") {
  HostdOptions o =
      parse_hostd_options({"--connect", "10.0.0.1:5,127.0.0.1:5", "--node", "2", "--token", "t", "--stdin"});
  CHECK(o.connect == std::vector<std::string>{"10.0.0.1:5", "127.0.0.1:5"});
  CHECK(o.node == 2);
  CHECK(o.stdin_to_rank0);
  CHECK_FALSE(o.stdin_relay);
  CHECK(parse_hostd_options({"--connect", "x:1", "--node", "0", "--token", "t", "--stdin-relay"}).stdin_relay);
  CHECK_THROWS(parse_hostd_options({"--node", "1"}));
  CHECK_THROWS(parse_hostd_options({"--connect", "x:1", "--node", "0", "--token", "t", "--what"}));
}

TEST_CASE("spawned children take the job's slots as its ranks did, then start over") {
  const std::vector<int> slots = {1, 2, 1};  // hosts 0, 1, 2
  std::vector<int> used(3, 0);
  // By slot: host 0's one slot, host 1's two, host 2's one; then again.
  CHECK(place_children({0, 1, 2}, slots, used, 6, MapBy::kSlot) == std::vector<int>{0, 1, 1, 2, 0, 1});
  // By node: one per host in turn, skipping full ones, counting what the
  // earlier app of the same spawn took.
  used.assign(3, 0);
  CHECK(place_children({0, 1, 2}, slots, used, 2, MapBy::kNode) == std::vector<int>{0, 1});
  CHECK(place_children({0, 1, 2}, slots, used, 3, MapBy::kNode) == std::vector<int>{2, 1, 0});
  // Only the candidates (the "host" info), in their order.
  used.assign(3, 0);
  CHECK(place_children({2, 0}, slots, used, 3, MapBy::kSlot) == std::vector<int>{2, 0, 2});
  CHECK(place_children({}, slots, used, 2, MapBy::kSlot).empty());
}

TEST_CASE("spawn messages round-trip; malformed ones are refused") {
  SpawnRequest q;
  q.id = 9;
  q.apps = {SpawnApp{"/bin/p", {"/bin/p", "a"}, {"X=1"}, "/w", "/usr/bin", "h1,h0", "", 2},
            SpawnApp{"q", {"q"}, {}, "", "", "", "", 1}};
  SpawnRequest q2 = SpawnRequest::decode(q.encode().bytes());
  CHECK(q2.id == 9);
  REQUIRE(q2.apps.size() == 2);
  CHECK(q2.apps[0].cmd == "/bin/p");
  CHECK(q2.apps[0].argv == q.apps[0].argv);
  CHECK(q2.apps[0].env == q.apps[0].env);
  CHECK(q2.apps[0].wdir == "/w");
  CHECK(q2.apps[0].path == "/usr/bin");
  CHECK(q2.apps[0].host == "h1,h0");
  CHECK(q2.apps[0].procs == 2);
  CHECK(q2.apps[1].procs == 1);
  CHECK_THROWS_AS(SpawnRequest::decode(std::string(q.encode().bytes()).substr(0, 30)), ProtocolError);
  q.apps.clear();
  CHECK_THROWS_AS(SpawnRequest::decode(q.encode().bytes()), ProtocolError);

  SpawnJobMessage m;
  m.spawn = 4;
  m.nspace = "sonde-j-spawn1";
  m.first_slot = 3;
  m.universe = 6;
  m.node_ids = {1};
  m.paths = {""};
  m.job.job_id = "j";
  m.job.apps = {App{{"p"}, {}, "", 0, 3}};
  m.job.size = 3;
  m.job.hostnames = {"h1"};
  m.job.node_ranks = {{0, 1, 2}};
  m.job.daemon_node = {-1, 0};
  SpawnJobMessage m2 = SpawnJobMessage::decode(m.encode().bytes());
  CHECK(m2.spawn == 4);
  CHECK(m2.nspace == m.nspace);
  CHECK(m2.first_slot == 3);
  CHECK(m2.universe == 6);
  CHECK(m2.node_ids == m.node_ids);
  CHECK(m2.paths == m.paths);
  CHECK(m2.job.node_ranks == m.job.node_ranks);
  CHECK(m2.job.daemon_node == m.job.daemon_node);
  m.node_ids = {1, 2};  // one node, two ids
  CHECK_THROWS_AS(SpawnJobMessage::decode(m.encode().bytes()), ProtocolError);
  m.node_ids = {1};
  m.paths = {};
  CHECK_THROWS_AS(SpawnJobMessage::decode(m.encode().bytes()), ProtocolError);
  m.paths = {""};
  m.nspace = "";
  CHECK_THROWS_AS(SpawnJobMessage::decode(m.encode().bytes()), ProtocolError);
  m.nspace = "n";
  m.first_slot = INT32_MAX - 1;  // its children's slots would overflow
  CHECK_THROWS_AS(SpawnJobMessage::decode(m.encode().bytes()), ProtocolError);

  GroupFence f;
  f.id = 2;
  f.procs = {"sonde-j 0", "sonde-j-spawn1 *"};
  f.data = std::string("a\0b", 3);
  GroupFence f2 = GroupFence::decode(f.encode().bytes());
  CHECK(f2.id == 2);
  CHECK(f2.procs == f.procs);
  CHECK(f2.data == f.data);
  std::string ns;
  int rank = 0;
  CHECK(GroupFence::split("a b 12", &ns, &rank));
  CHECK(ns == "a b");
  CHECK(rank == 12);
  CHECK(GroupFence::split("x *", &ns, &rank));
  CHECK(rank == -1);
  for (const char* bad : {"x", " 1", "x ", "x -1", "x 1a", "x 1234567890"}) {
    CHECK_FALSE(GroupFence::split(bad, &ns, &rank));
    f.procs = {bad};
    CHECK_THROWS_AS(GroupFence::decode(f.encode().bytes()), ProtocolError);
  }
  f.procs = {};
  CHECK_THROWS_AS(GroupFence::decode(f.encode().bytes()), ProtocolError);
}
