// Processes named across jobs, as text another process writes: the group
// lists and offers of the dynamic-process connections (runtime/dynamic.cc)
// travel through the PMIx name service, the SONDE_SPAWN_PARENTS variable and
// MPI_Comm_join's socket. format_* write them; parse_* accept exactly what
// format_* write and say what is wrong with anything else (fuzzed:
// tests/fuzz/proc_list_fuzz.cc). Pure: no PMIx calls.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::dynamic {

// A process anywhere: its PMIx namespace and its rank there.
struct Proc {
  std::string nspace;
  int rank = 0;
  bool operator==(const Proc& o) const { return rank == o.rank && nspace == o.nspace; }
};

// The longest namespace PMIx holds (PMIX_MAX_NSLEN; checked in dynamic.cc).
inline constexpr size_t kMaxNspace = 255;

// "<nspace>:<rank> " for each process, in order. Namespaces are 1 to
// kMaxNspace bytes, none a space, a control character or DEL; ranks are
// >= 0.
std::string format_procs(const std::vector<Proc>& procs);
// "" with *out the list, or what is wrong (*out then empty): an empty
// list, a namespace out of the rules above, a rank that is not the
// canonical decimal of 0..INT32_MAX, a process named twice, anything but
// one space after each process.
std::string parse_procs(std::string_view text, std::vector<Proc>* out);

// An acceptor's offer in the name service: "<nonce>|<group>", the nonce
// "<pid>.<counter>" (canonical decimals, pid > 0), the group format_procs's.
std::string format_offer(std::string_view nonce, const std::vector<Proc>& group);
// "" with *nonce and *group filled, or what is wrong.
std::string parse_offer(std::string_view text, std::string* nonce, std::vector<Proc>* group);
// "<pid>.<counter>" for format_offer.
std::string make_nonce(long pid, int counter);

}  // namespace sonde::dynamic
