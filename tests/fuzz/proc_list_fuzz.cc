// Process lists and offers other processes write for the dynamic-process
// connections (pmi/proc_list.h: the name service's values,
// SONDE_SPAWN_PARENTS, MPI_Comm_join's message): parse_procs and
// parse_offer must refuse what format_procs and format_offer would not
// write (what they accept formats back to the same text, names each
// process once, with a rank >= 0), never crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pmi/proc_list.h"

using namespace sonde::dynamic;

namespace {

void check_list(const std::vector<Proc>& procs, std::string_view text) {
  if (procs.empty() || format_procs(procs) != text) std::abort();
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i].rank < 0 || procs[i].nspace.empty() || procs[i].nspace.size() > kMaxNspace) std::abort();
    for (size_t j = 0; j < i; ++j)
      if (procs[i] == procs[j]) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Bounded like the messages that carry them (join reads at most 1 MiB);
  // the quadratic duplicate check above is the harness's, not the parser's.
  if (size > 4096) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Proc> procs;
  if (parse_procs(text, &procs).empty()) {
    check_list(procs, text);
  } else if (!procs.empty()) {
    std::abort();  // refused: nothing half taken
  }
  std::string nonce;
  std::vector<Proc> group;
  if (parse_offer(text, &nonce, &group).empty()) {
    if (format_offer(nonce, group) != text) std::abort();
    check_list(group, text.substr(nonce.size() + 1));
  }
  return 0;
}
