// What a transport needs from the job's wire-up: publish a few strings, wait
// until every rank has, read the peers' strings.
//
// The engine adapts sonde::Wireup (PMIx) to this; tests use an in-memory
// fake. Keeping it here, not in the runtime, keeps dependencies pointing one way
// (engine -> transports).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sonde::transport {

class Exchange {
 public:
  virtual ~Exchange() = default;
  // Publish `value` under `key` for every rank of the job. Keys are this
  // rank's own namespace: two ranks may publish the same key.
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Make everything put so far visible to the next fence().
  virtual void commit() = 0;
  // Collective over every rank of the job (not only the local ones): returns
  // once all ranks have called it, after which every value committed before
  // it is readable with get(). Throws if the job cannot complete it.
  virtual void fence() = 0;
  // What `rank` committed under `key` before the last fence, or nullopt.
  virtual std::optional<std::string> get(int rank, std::string_view key) = 0;
};

}  // namespace sonde::transport
