// Framing of one rank's stdout or stderr stream on its way to ours.
#pragma once

#include <string>
#include <string_view>

namespace sonde::mpiexec {

// Without a prefix, bytes pass through as they arrive, so prompts without a
// newline still show. With a prefix, output goes out in whole lines, each
// prefixed, so lines of different ranks never interleave mid-line; a line
// longer than kMaxLine is cut into prefixed pieces rather than buffered.
class LineFramer {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;

  explicit LineFramer(std::string prefix = {}) : prefix_(std::move(prefix)) {}

  // What to write now for `chunk`.
  std::string feed(std::string_view chunk);
  // At end of stream: the unterminated last line, prefixed and ended.
  std::string finish();

 private:
  std::string prefix_;
  std::string partial_;
};

enum class WriteOutcome { kWritten, kStalled, kClosed };

// Writes all of `bytes` to `fd` (our stdout or stderr), waiting at most
// `stall_ms` at a time for room: kStalled if the reader stopped reading,
// kClosed if it is gone (EPIPE) or the write failed.
WriteOutcome write_output(int fd, std::string_view bytes, int stall_ms);

// "[1,<rank>]<stdout>: " or "[1,<rank>]<stderr>: ", as Open MPI's --tag-output.
std::string tag_prefix(int rank, bool is_stderr);

}  // namespace sonde::mpiexec
