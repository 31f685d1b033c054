// What comm_build.cc shares with idup.cc: the context-id offers of one
// agreement round (comm_build.h describes the protocol) and the duplicate
// built on agreed ids. Private to comm/.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/context_window.h"
#include "comm/info.h"
#include "core/engine_parts.h"
#include "core/objects.h"

namespace sonde::engine::detail {

Datatype* u64_type();  // MPI_UINT64_T
Datatype* int_type();  // MPI_INT
// 0, 1, ..., n - 1.
std::vector<int> all_ranks(int n);

// The ids of the context space, in 64-id words.
inline constexpr size_t kIdWords = ContextRegistry::kMaxContexts / 64;

// A round's offer (context_window.h): the window of `window` words from the
// lowest free word at or above `from`, its ids taken out of the free set
// (ContextRegistry). `give` false: an empty offer; `keep`: that many of the
// lowest free ids stay behind (all are offered when few are left).
std::vector<uint64_t> make_offer(bool give, size_t from, size_t window, int keep = 0);
// The round is over: the offer goes back to the free set, but `pick`
// (>= 0), which is taken.
void settle_offer(const std::vector<uint64_t>& offer, bool gave, int pick);

// The duplicate of c on agreed ids (`local_context`: its hidden local
// communicator's, intercommunicators only).
int dup_with_contexts(Comm* c, uint32_t context, uint32_t local_context, const InfoPairs* info, Comm** out);

}  // namespace sonde::engine::detail
