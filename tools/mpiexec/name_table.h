// The name service's table: MPI_Publish_name, MPI_Lookup_name,
// MPI_Unpublish_name and the port names of MPI_Comm_accept/connect, as
// PMIx_Publish, PMIx_Lookup and PMIx_Unpublish reach a launcher.
//
// One table serves a whole launch: mpiexec keeps it, for its own PMIx
// server on one host and for every sonde-hostd of a job on several hosts,
// whose servers pass each request on as a NameRequest (Msg::kNameRequest)
// and answer their client with the NameReply (Msg::kNameReply). So every
// rank of the launch, spawned ones included, on any host, sees the same
// names.
//
// Rules: a key is published once (a second publish of a key that exists
// fails with kDuplicate, and publishes none of the request's keys); only
// its publisher's namespace may unpublish it (an unpublish naming no key
// removes every key of the asking process); a lookup that waits is
// answered once every key it asks for exists, one that does not wait at
// once (kNotFound unless every key was found, with those that were).
// Values are opaque bytes here (the PMIx server packs and unpacks them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/mpiexec/control.h"

namespace sonde::mpiexec {

enum class NameStatus : uint8_t { kOk = 0, kDuplicate, kNotFound, kNoPermission, kBadRequest };

struct NameEntry {
  std::string key;
  std::string nspace;  // the publisher's namespace and rank
  uint32_t rank = 0;
  std::string value;
};

struct NameRequest {
  enum class Op : uint8_t { kPublish = 1, kLookup, kUnpublish };
  uint32_t id = 0;  // the asking daemon's, echoed in the reply
  Op op = Op::kLookup;
  std::string nspace;  // the asking process
  uint32_t rank = 0;
  bool wait = false;                // lookups: until every key exists
  std::vector<std::string> keys;    // unpublish without keys: all of this process's
  std::vector<std::string> values;  // publish: one per key

  Writer encode() const;
  static NameRequest decode(std::string_view payload);  // throws ProtocolError
};

struct NameReply {
  uint32_t id = 0;
  NameStatus status = NameStatus::kOk;
  std::vector<NameEntry> found;  // lookups: the keys found, in the order asked

  Writer encode() const;
  static NameReply decode(std::string_view payload);  // throws ProtocolError
};

class NameTable {
 public:
  using Done = std::function<void(NameReply)>;

  // Carries out `request`; `done` runs exactly once with the reply (its id
  // the request's): before serve returns, or, for a lookup that waits,
  // from the serve() of the publish that completes it. Not thread-safe.
  void serve(const NameRequest& request, Done done);

  size_t size() const { return table_.size(); }
  size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter {
    NameRequest request;
    Done done;
  };
  NameStatus publish(const NameRequest& r);
  NameStatus unpublish(const NameRequest& r);
  NameReply answer(const NameRequest& r) const;
  bool all_present(const std::vector<std::string>& keys) const;

  std::map<std::string, NameEntry> table_;
  std::vector<Waiter> waiters_;
};

}  // namespace sonde::mpiexec
