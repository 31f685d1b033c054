// The reading end of one shm Ring (shm/ring.h), taking bytes in batches.
//
// Every pop from the Boost ring loads the writer's index and stores the
// reader's: while the writer keeps pushing, each of those is a cache line
// moving between the cores. A stream of small packets would pay that two or
// three times per packet. The reader instead pops everything there is (up to
// its stash's size) at once into a private stash and hands packets out of
// it; the shared indices are touched once per batch. Large reads bypass the
// stash and pop straight into their destination, so a big payload is not
// copied twice.
//
// The bytes in the stash are the ring's oldest, in order: to a caller the
// stash and the ring are one FIFO. Bytes reach the stash only through a pop
// (an acquire load of the writer's index), so whatever the writer stored
// before pushing them is visible once they are in the stash, as it would be
// for a read_available() that saw them in the ring.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace sonde::transport::shm {

template <typename Ring, size_t StashBytes = 4096>
class RingReader {
 public:
  RingReader() = default;
  explicit RingReader(Ring* ring) : ring_(ring) {}

  // At least `n` bytes can be taken now. Pops a batch into the stash when it
  // holds fewer; `n` at most StashBytes answers from the stash alone after
  // that, larger `n` also counts what stays in the ring.
  bool has(size_t n) {
    if (stashed() >= n) return true;
    refill();
    if (stashed() >= n) return true;
    return n > StashBytes && stashed() + ring_->read_available() >= n;
  }

  // Moves up to `n` of the oldest bytes into `dst`; returns how many (0:
  // nothing there). What the stash holds comes first; a rest of at least
  // half a stash pops straight from the ring into `dst`.
  size_t take(char* dst, size_t n) {
    size_t got = std::min(n, stashed());
    std::memcpy(dst, stash_ + begin_, got);
    begin_ += got;
    if (got == n) return got;
    if (n - got >= StashBytes / 2) return got + ring_->pop(dst + got, n - got);
    refill();
    const size_t more = std::min(n - got, stashed());
    std::memcpy(dst + got, stash_ + begin_, more);
    begin_ += more;
    return got + more;
  }

  size_t stashed() const { return end_ - begin_; }

 private:
  // Keeps the unread bytes, moved to the front, and pops as many as fit.
  void refill() {
    if (begin_ != 0) {
      std::memmove(stash_, stash_ + begin_, stashed());
      end_ -= begin_;
      begin_ = 0;
    }
    end_ += ring_->pop(stash_ + end_, StashBytes - end_);
  }

  Ring* ring_ = nullptr;
  size_t begin_ = 0, end_ = 0;  // unread bytes: stash_[begin_, end_)
  char stash_[StashBytes];
};

}  // namespace sonde::transport::shm
