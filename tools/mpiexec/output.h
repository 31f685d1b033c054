// Framing of one rank's stdout or stderr stream on its way to ours.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sonde::mpiexec {

// Output goes out in whole lines, so lines of different ranks never
// interleave mid-line however the rank's writes (or the pipe) split them.
//
// With a prefix (--tag-output) every line is prefixed; a line longer than
// kMaxLine is cut into prefixed pieces, each ended with a newline, and an
// unterminated last line is ended with one.
//
// Without a prefix no byte is added or changed: an unterminated line is held
// until its newline arrives, but goes out as it is once kMaxLine bytes are
// held, once it has waited kPromptDelay with nothing more from the rank (so a
// prompt without a newline still shows), and at end of stream. In a job of
// several ranks the framers writing to one descriptor share `open_line`: a
// stream that ends inside a line sets it, and the next bytes any framer
// writes there start with a newline, so they begin a line of their own
// (nothing is added when nothing follows).
class LineFramer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxLine = 64 * 1024;
  static constexpr std::chrono::milliseconds kPromptDelay{250};

  explicit LineFramer(std::string prefix = {}, std::shared_ptr<bool> open_line = nullptr)
      : prefix_(std::move(prefix)), open_line_(std::move(open_line)) {}

  // What to write now for `chunk`, which arrived at `now`.
  std::string feed(std::string_view chunk, Clock::time_point now = Clock::now());
  // At end of stream: the unterminated last line (see above).
  std::string finish();
  // When the held unterminated line is due to go out as it is (untagged
  // framers only); nullopt if nothing is held or it waits for its newline.
  std::optional<Clock::time_point> due() const;
  // The held line if it is due at `now`, else nothing.
  std::string flush_if_due(Clock::time_point now);

 private:
  // Starts `out` on a new line if another stream left the descriptor inside one.
  std::string after_open_line(std::string out);

  std::string prefix_;
  std::shared_ptr<bool> open_line_;
  std::string partial_;
  Clock::time_point last_data_{};
};

enum class WriteOutcome { kWritten, kStalled, kClosed };

// Writes all of `bytes` to `fd` (our stdout or stderr), waiting at most
// `stall_ms` at a time for room: kStalled if the reader stopped reading,
// kClosed if it is gone (EPIPE) or the write failed.
WriteOutcome write_output(int fd, std::string_view bytes, int stall_ms);

// "[1,<rank>]<stdout>: " or "[1,<rank>]<stderr>: ", as Open MPI's --tag-output.
std::string tag_prefix(int rank, bool is_stderr);

}  // namespace sonde::mpiexec
