// A vector of trivially copyable elements that keeps up to N of them
// inline: the per-rank counts, displacements and pieces of a v-collective
// on a communicator of up to N ranks, and the requests of a small round,
// then cost no allocation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

namespace sonde::engine::coll {

template <class T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>);

 public:
  InlineVector() = default;
  // n copies of v.
  InlineVector(size_t n, const T& v) {
    resize(n);
    std::fill(begin(), end(), v);
  }
  InlineVector(const InlineVector& o) { copy_from(o); }
  InlineVector(InlineVector&& o) noexcept { move_from(o); }
  InlineVector& operator=(const InlineVector& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  InlineVector& operator=(InlineVector&& o) noexcept {
    if (this != &o) move_from(o);
    return *this;
  }
  ~InlineVector() = default;

  // Keeps the first min(n, size()) elements; new ones are value-initialized.
  // Throws std::bad_alloc like std::vector.
  void resize(size_t n) {
    if (n > capacity()) grow(n);
    if (n > n_) std::fill(data() + n_, data() + n, T{});
    n_ = n;
  }
  // n elements whose values the caller writes next (new ones are not
  // cleared); returns data(). Throws std::bad_alloc like resize.
  T* overwrite(size_t n) {
    if (n > capacity()) grow(n);
    n_ = n;
    return data();
  }
  // Appends v; full storage doubles first. Throws std::bad_alloc.
  void push_back(const T& v) {
    if (n_ == capacity()) grow(2 * capacity());
    data()[n_++] = v;
  }
  // No elements; storage taken from the heap stays for the next ones.
  void clear() { n_ = 0; }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + n_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }

 private:
  size_t capacity() const { return heap_ ? capacity_ : N; }
  // Storage for n elements (n > capacity()), the current ones copied over.
  void grow(size_t n) {
    std::unique_ptr<T[]> grown(new T[n]);
    std::memcpy(grown.get(), data(), n_ * sizeof(T));
    heap_ = std::move(grown);
    capacity_ = n;
  }
  void copy_from(const InlineVector& o) {
    n_ = 0;
    resize(o.n_);
    std::memcpy(data(), o.data(), o.n_ * sizeof(T));
  }
  void move_from(InlineVector& o) {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      capacity_ = o.capacity_;
    } else {
      heap_.reset();
      std::memcpy(inline_, o.inline_, o.n_ * sizeof(T));
    }
    n_ = o.n_;
    o.n_ = 0;
  }

  size_t n_ = 0;
  size_t capacity_ = 0;  // of heap_, when set
  std::unique_ptr<T[]> heap_;
  T inline_[N];
};

}  // namespace sonde::engine::coll
