// The launch's name service table (tools/mpiexec/name_table.h) and its wire
// form: what MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name and
// accept/connect's port keys get, wherever the asking rank runs.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <optional>

#include "tools/mpiexec/name_table.h"

using namespace sonde::mpiexec;

namespace {

NameRequest req(NameRequest::Op op, const char* nspace, uint32_t rank, std::vector<std::string> keys,
                std::vector<std::string> values = {}, bool wait = false) {
  NameRequest r;
  r.op = op;
  r.nspace = nspace;
  r.rank = rank;
  r.keys = std::move(keys);
  r.values = std::move(values);
  r.wait = wait;
  return r;
}

// Serves `r` and returns the reply if it came before serve returned.
std::optional<NameReply> serve_now(NameTable& t, const NameRequest& r) {
  std::optional<NameReply> got;
  t.serve(r, [&](NameReply a) { got = std::move(a); });
  return got;
}

}  // namespace

TEST_CASE("a published name is found by a lookup from another namespace, with its publisher") {
  NameTable t;
  auto p = serve_now(t, req(NameRequest::Op::kPublish, "job-a", 3, {"svc"}, {"port-bytes"}));
  REQUIRE(p);
  CHECK(p->status == NameStatus::kOk);
  auto l = serve_now(t, req(NameRequest::Op::kLookup, "job-b", 0, {"svc"}));
  REQUIRE(l);
  CHECK(l->status == NameStatus::kOk);
  REQUIRE(l->found.size() == 1);
  CHECK(l->found[0].key == "svc");
  CHECK(l->found[0].nspace == "job-a");
  CHECK(l->found[0].rank == 3);
  CHECK(l->found[0].value == "port-bytes");
}

TEST_CASE("a lookup that does not wait answers not-found at once, with the keys that exist") {
  NameTable t;
  serve_now(t, req(NameRequest::Op::kPublish, "j", 0, {"a"}, {"1"}));
  auto l = serve_now(t, req(NameRequest::Op::kLookup, "j", 1, {"a", "b"}));
  REQUIRE(l);
  CHECK(l->status == NameStatus::kNotFound);
  REQUIRE(l->found.size() == 1);
  CHECK(l->found[0].key == "a");
  CHECK(t.waiting() == 0);
}

TEST_CASE("a waiting lookup is answered by the publish that completes it, with its own id") {
  NameTable t;
  NameRequest look = req(NameRequest::Op::kLookup, "j", 1, {"a", "b"}, {}, true);
  look.id = 77;
  std::optional<NameReply> got;
  t.serve(look, [&](NameReply a) { got = std::move(a); });
  CHECK(!got);
  CHECK(t.waiting() == 1);
  serve_now(t, req(NameRequest::Op::kPublish, "j", 0, {"a"}, {"1"}));
  CHECK(!got);
  auto p = serve_now(t, req(NameRequest::Op::kPublish, "k", 0, {"b"}, {"2"}));
  CHECK(p->status == NameStatus::kOk);
  REQUIRE(got);
  CHECK(got->id == 77);
  CHECK(got->status == NameStatus::kOk);
  REQUIRE(got->found.size() == 2);
  CHECK(got->found[1].nspace == "k");
  CHECK(t.waiting() == 0);
}

TEST_CASE("a key is published once: a second publish fails and publishes none of its keys") {
  NameTable t;
  serve_now(t, req(NameRequest::Op::kPublish, "j", 0, {"a"}, {"1"}));
  auto again = serve_now(t, req(NameRequest::Op::kPublish, "k", 0, {"new", "a"}, {"x", "y"}));
  CHECK(again->status == NameStatus::kDuplicate);
  CHECK(serve_now(t, req(NameRequest::Op::kLookup, "k", 0, {"new"}))->status == NameStatus::kNotFound);
  auto twice = serve_now(t, req(NameRequest::Op::kPublish, "k", 0, {"z", "z"}, {"x", "y"}));
  CHECK(twice->status == NameStatus::kDuplicate);
  CHECK(t.size() == 1);
}

TEST_CASE("only the publisher's namespace unpublishes a key") {
  NameTable t;
  serve_now(t, req(NameRequest::Op::kPublish, "j", 0, {"a"}, {"1"}));
  CHECK(serve_now(t, req(NameRequest::Op::kUnpublish, "k", 0, {"a"}))->status == NameStatus::kNoPermission);
  CHECK(serve_now(t, req(NameRequest::Op::kUnpublish, "j", 5, {"a"}))->status == NameStatus::kOk);
  CHECK(serve_now(t, req(NameRequest::Op::kUnpublish, "j", 0, {"a"}))->status == NameStatus::kNotFound);
  CHECK(t.size() == 0);
}

TEST_CASE("an unpublish naming no key removes every key of the asking process, no other") {
  NameTable t;
  serve_now(t, req(NameRequest::Op::kPublish, "j", 0, {"a", "b"}, {"1", "2"}));
  serve_now(t, req(NameRequest::Op::kPublish, "j", 1, {"c"}, {"3"}));
  CHECK(serve_now(t, req(NameRequest::Op::kUnpublish, "j", 0, {}))->status == NameStatus::kOk);
  CHECK(t.size() == 1);
  CHECK(serve_now(t, req(NameRequest::Op::kLookup, "x", 0, {"c"}))->status == NameStatus::kOk);
}

TEST_CASE("requests and replies cross the control protocol unchanged") {
  NameRequest r = req(NameRequest::Op::kPublish, "job-a", 9, {"k1", "k2"}, {std::string("\0v", 2), ""}, true);
  r.id = 12;
  NameRequest back = NameRequest::decode(r.encode().bytes());
  CHECK(back.id == 12);
  CHECK(back.op == NameRequest::Op::kPublish);
  CHECK(back.nspace == "job-a");
  CHECK(back.rank == 9);
  CHECK(back.wait);
  CHECK(back.keys == r.keys);
  CHECK(back.values == r.values);

  NameReply a;
  a.id = 4;
  a.status = NameStatus::kNotFound;
  a.found.push_back(NameEntry{"k", "ns", 2, "val"});
  NameReply b = NameReply::decode(a.encode().bytes());
  CHECK(b.id == 4);
  CHECK(b.status == NameStatus::kNotFound);
  REQUIRE(b.found.size() == 1);
  CHECK(b.found[0].nspace == "ns");
  CHECK(b.found[0].rank == 2);
  CHECK(b.found[0].value == "val");
}

TEST_CASE("malformed name requests are protocol errors") {
  auto bytes = [](NameRequest r) { return r.encode().bytes(); };
  // Values that do not pair with the keys.
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kPublish, "j", 0, {"a"}))), ProtocolError);
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kLookup, "j", 0, {"a"}, {"v"}))), ProtocolError);
  // No namespace, no key, an empty or overlong key.
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kLookup, "", 0, {"a"}))), ProtocolError);
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kLookup, "j", 0, {}))), ProtocolError);
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kLookup, "j", 0, {""}))), ProtocolError);
  CHECK_THROWS_AS(NameRequest::decode(bytes(req(NameRequest::Op::kLookup, "j", 0, {std::string(600, 'k')}))),
                  ProtocolError);
  // An unknown operation, a truncated request.
  std::string b = bytes(req(NameRequest::Op::kLookup, "j", 0, {"a"}));
  std::string bad = b;
  bad[4] = 9;
  CHECK_THROWS_AS(NameRequest::decode(bad), ProtocolError);
  CHECK_THROWS_AS(NameRequest::decode(b.substr(0, b.size() - 1)), ProtocolError);
  // A reply claiming more entries than it holds.
  NameReply a;
  std::string r = a.encode().bytes();
  r[5] = 0x7f;
  CHECK_THROWS_AS(NameReply::decode(r), ProtocolError);
}
