#include "tools/mpiexec/output.h"

namespace sonde::mpiexec {

std::string LineFramer::feed(std::string_view chunk) {
  if (prefix_.empty()) return std::string(chunk);
  std::string out;
  size_t start = 0;
  while (start < chunk.size()) {
    size_t nl = chunk.find('\n', start);
    if (nl == std::string_view::npos) {
      partial_.append(chunk.substr(start));
      break;
    }
    out += prefix_;
    out += partial_;
    out.append(chunk.substr(start, nl + 1 - start));
    partial_.clear();
    start = nl + 1;
  }
  if (partial_.size() >= kMaxLine) {
    out += prefix_;
    out += partial_;
    out += '\n';
    partial_.clear();
  }
  return out;
}

std::string LineFramer::finish() {
  if (partial_.empty()) return {};
  std::string out = prefix_ + partial_;
  if (!prefix_.empty()) out += '\n';
  partial_.clear();
  return out;
}

std::string tag_prefix(int rank, bool is_stderr) {
  return "[1," + std::to_string(rank) + "]" + (is_stderr ? "<stderr>: " : "<stdout>: ");
}

}  // namespace sonde::mpiexec
