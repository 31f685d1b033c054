// Large scratch memory of the collectives and of one-sided operations, kept
// for the next call. A collective on a large vector needs scratch as large
// (reduce's accumulator, allgather's packed blocks), and so does an
// accumulate (the target's old values, the packed origin data); taken fresh from malloc, such
// blocks are mapped and faulted in on every call and handed back to the
// kernel at every free (glibc maps or trims them), which cost reduce of
// 1 MiB on 3 ranks tens of milliseconds per call. The pool keeps a few
// freed blocks (at most kMaxBlocks, kMaxBytes together) and hands the
// smallest that fits to the next request.
//
// Thread-safe (one mutex, taken only for blocks of kMinBytes or more).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace sonde::engine::coll::detail {

class ScratchPool {
 public:
  static constexpr size_t kMinBytes = 64 * 1024;   // smaller requests: plain new[]
  static constexpr size_t kMaxBlocks = 8;          // freed blocks kept
  static constexpr size_t kMaxBytes = 256u << 20;  // bytes kept, all blocks together

  // At least `bytes` bytes (16-byte aligned), and in *capacity how many the
  // block holds: give both back to release(). Throws std::bad_alloc like new.
  static uint8_t* acquire(size_t bytes, size_t* capacity);
  // Takes back a block from acquire(): kept for reuse or freed.
  static void release(uint8_t* block, size_t capacity);
  // Frees every kept block (MPI_Finalize). Blocks in use are unaffected.
  static void drain();
  // Blocks and bytes kept now (tests).
  static size_t kept_blocks();
  static size_t kept_bytes();
};

// A byte buffer of the collectives whose storage comes from ScratchPool.
class ScratchBytes {
 public:
  ScratchBytes() = default;
  explicit ScratchBytes(size_t bytes) { reset(bytes); }
  ~ScratchBytes() { clear(); }
  ScratchBytes(const ScratchBytes&) = delete;
  ScratchBytes& operator=(const ScratchBytes&) = delete;

  // Replaces the contents with `bytes` uninitialised bytes.
  void reset(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void clear();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// A std::allocator replacement whose blocks of kMinBytes or more come from
// ScratchPool (each block's capacity is kept in the 64 bytes before the
// storage), and whose construct() without arguments leaves a byte
// uninitialised: std::vector<uint8_t, ScratchAllocator<uint8_t>>(n) costs
// neither a fill of n bytes nor, once warm, a page fault.
template <typename T>
struct ScratchAllocator {
  using value_type = T;
  static constexpr size_t kHeader = 64;

  ScratchAllocator() = default;
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < ScratchPool::kMinBytes) return static_cast<T*>(::operator new(bytes));
    size_t capacity = 0;
    uint8_t* block = ScratchPool::acquire(bytes + kHeader, &capacity);
    *reinterpret_cast<size_t*>(block) = capacity;
    return reinterpret_cast<T*>(block + kHeader);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < ScratchPool::kMinBytes) {
      ::operator delete(p);
      return;
    }
    uint8_t* block = reinterpret_cast<uint8_t*>(p) - kHeader;
    ScratchPool::release(block, *reinterpret_cast<size_t*>(block));
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const ScratchAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace sonde::engine::coll::detail
