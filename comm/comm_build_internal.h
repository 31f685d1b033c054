// What comm_build.cc shares with idup.cc: the context-id offers of one
// agreement round (comm_build.h describes the protocol) and the duplicate
// built on agreed ids. Private to comm/.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/info.h"
#include "core/objects.h"

namespace sonde::engine::detail {

Datatype* u64_type();  // MPI_UINT64_T
Datatype* int_type();  // MPI_INT
// 0, 1, ..., n - 1.
std::vector<int> all_ranks(int n);

// A round's offer: free ids taken out of the free set (ContextRegistry), plus a last word
// that is 1 when they are all this process has. `give` false: an empty
// offer; `keep`: that many of the lowest free ids stay behind.
std::vector<uint64_t> make_offer(bool give, int keep = 0);
// The round is over: the offer goes back to the free set (ContextRegistry), but `pick`
// (>= 0), which is taken.
void settle_offer(const std::vector<uint64_t>& words, bool gave, int pick);
// The lowest id in an ANDed offer; -1 none (try again), -2 none and every
// member offered all it had (ids used up).
int decide(const std::vector<uint64_t>& words);
// The two lowest, as decide does for one (both -1 or -2 when fewer).
void decide2(const std::vector<uint64_t>& words, int pick[2]);
// acc &= other, word by word.
void and_into(std::vector<uint64_t>& acc, const uint64_t* other);

// The duplicate of c on agreed ids (`local_context`: its hidden local
// communicator's, intercommunicators only).
int dup_with_contexts(Comm* c, uint32_t context, uint32_t local_context, const InfoPairs* info, Comm** out);

}  // namespace sonde::engine::detail
