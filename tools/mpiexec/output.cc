#include "tools/mpiexec/output.h"

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sonde::mpiexec {

std::string LineFramer::feed(std::string_view chunk, Clock::time_point now) {
  std::string out;
  if (chunk.empty()) return out;
  last_data_ = now;
  // Everything up to the chunk's last newline goes out now, each line
  // prefixed; the rest is held.
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
    if (!prefix_.empty()) out += '\n';
    partial_.clear();
  }
  return after_open_line(std::move(out));
}

std::string LineFramer::after_open_line(std::string out) {
  if (open_line_ && *open_line_ && !out.empty()) {
    out.insert(out.begin(), '\n');
    *open_line_ = false;
  }
  return out;
}

std::string LineFramer::finish() {
  if (partial_.empty()) return {};
  std::string out = after_open_line(prefix_ + partial_);
  if (!prefix_.empty()) {
    out += '\n';  // a tagged line always ends
  } else if (open_line_) {
    *open_line_ = true;  // the next stream's bytes begin a new line
  }
  partial_.clear();
  return out;
}

std::optional<LineFramer::Clock::time_point> LineFramer::due() const {
  if (partial_.empty() || !prefix_.empty()) return std::nullopt;
  return last_data_ + kPromptDelay;
}

std::string LineFramer::flush_if_due(Clock::time_point now) {
  auto at = due();
  if (!at || now < *at) return {};
  std::string out;
  out.swap(partial_);
  return after_open_line(std::move(out));
}

WriteOutcome write_output(int fd, std::string_view bytes, int stall_ms) {
  size_t off = 0;
  while (off < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    int ready = poll(&p, 1, stall_ms);
    if (ready < 0 && errno == EINTR) continue;
    // POLLERR on a pipe means its reader is gone; the write below reports
    // that as EPIPE.
    if (ready <= 0) return WriteOutcome::kStalled;
    // At most PIPE_BUF per write: POLLOUT on a pipe promises that much room,
    // so the write cannot block.
    ssize_t w = write(fd, bytes.data() + off, std::min<size_t>(bytes.size() - off, PIPE_BUF));
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return WriteOutcome::kClosed;
    }
    off += static_cast<size_t>(w);
  }
  return WriteOutcome::kWritten;
}

std::string tag_prefix(int rank, bool is_stderr) {
  return "[1," + std::to_string(rank) + "]" + (is_stderr ? "<stderr>: " : "<stdout>: ");
}

}  // namespace sonde::mpiexec
