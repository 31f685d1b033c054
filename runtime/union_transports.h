// The transports of a connection between two groups that may be different
// jobs (runtime/dynamic.h): shm over the union's members on this host, ofi
// over its members on other hosts, both wired through PMIx values under the
// connection's own keys and fences over the whole union, with union indices
// as the transports' ranks (runtime/remapped_transport.h turns them into
// engine peer ids).
#pragma once

#include <string>
#include <vector>

#include "pmi/proc_list.h"

namespace sonde::engine {

// What one member publishes before the wiring and every member reads.
struct UnionMember {
  std::string host;      // host identity (hostname and boot id)
  bool lacking = false;  // it has no route yet to some member of the union
  bool all_ofi = false;  // it runs with SONDE_TRANSPORT=ofi
};
std::string format_member(const UnionMember& m);
// False when `text` is not what format_member writes.
bool parse_member(const std::string& text, UnionMember* m);

// This process's host identity (hostname and boot id).
std::string host_identity();

struct UnionPlan {
  const std::vector<dynamic::Proc>* all = nullptr;  // the union, low side first
  int me = 0;                                       // this process's index in it
  const std::vector<int>* ids = nullptr;            // engine peer id of each index
  const std::vector<UnionMember>* members = nullptr;
  std::string prefix;  // the connection's key prefix
};

// Collective over every member of the union, which all call it with the
// same `members`: wires shm over the members on this host and ofi over the
// members on other hosts (over every other member when one runs with
// SONDE_TRANSPORT=ofi) when some member lacks a route, and routes each
// peer this process had no route to through them. Returns an empty string,
// or why it failed (the same on every member where the cause is in
// `members`: other hosts and SONDE_TRANSPORT=shm).
std::string wire_union(const UnionPlan& plan);

}  // namespace sonde::engine
