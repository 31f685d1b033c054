// The collectives' pool of large scratch blocks (scratch_pool.h).
#include "coll/scratch_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>

namespace sonde::engine::coll::detail {

namespace {

struct Kept {
  uint8_t* block;
  size_t capacity;
};

struct Pool {
  std::mutex mu;
  Kept kept[ScratchPool::kMaxBlocks];
  size_t blocks = 0;
  size_t bytes = 0;
};

Pool& pool() {
  static auto* p = new Pool;  // never destroyed: collectives may run at exit
  return *p;
}

// Whole pages, so a block reused for a slightly larger request still fits.
size_t rounded(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }

}  // namespace

uint8_t* ScratchPool::acquire(size_t bytes, size_t* capacity) {
  if (bytes < kMinBytes) {
    *capacity = bytes;
    return new uint8_t[bytes == 0 ? 1 : bytes];
  }
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    size_t best = p.blocks;
    for (size_t i = 0; i < p.blocks; ++i)
      if (p.kept[i].capacity >= bytes && (best == p.blocks || p.kept[i].capacity < p.kept[best].capacity)) best = i;
    if (best != p.blocks) {
      const Kept k = p.kept[best];
      p.kept[best] = p.kept[--p.blocks];
      p.bytes -= k.capacity;
      *capacity = k.capacity;
      return k.block;
    }
  }
  const size_t cap = rounded(bytes);
  void* block = std::aligned_alloc(64, cap);
  if (!block) throw std::bad_alloc();
  *capacity = cap;
  return static_cast<uint8_t*>(block);
}

void ScratchPool::release(uint8_t* block, size_t capacity) {
  if (!block) return;
  if (capacity < kMinBytes) {
    delete[] block;
    return;
  }
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (capacity <= kMaxBytes) {
      // Full: the smallest kept block makes room for a larger one.
      if (p.blocks == kMaxBlocks) {
        size_t smallest = 0;
        for (size_t i = 1; i < p.blocks; ++i)
          if (p.kept[i].capacity < p.kept[smallest].capacity) smallest = i;
        if (p.kept[smallest].capacity < capacity) {
          std::swap(p.kept[smallest].block, block);
          std::swap(p.kept[smallest].capacity, capacity);
          p.bytes += p.kept[smallest].capacity - capacity;
        }
      } else if (p.bytes + capacity <= kMaxBytes) {
        p.kept[p.blocks++] = Kept{block, capacity};
        p.bytes += capacity;
        block = nullptr;
      }
      // Over kMaxBytes together: evict the largest ones first.
      while (p.bytes > kMaxBytes && p.blocks > 0) {
        size_t largest = 0;
        for (size_t i = 1; i < p.blocks; ++i)
          if (p.kept[i].capacity > p.kept[largest].capacity) largest = i;
        std::free(p.kept[largest].block);
        p.bytes -= p.kept[largest].capacity;
        p.kept[largest] = p.kept[--p.blocks];
      }
    }
  }
  std::free(block);
}

void ScratchPool::drain() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  for (size_t i = 0; i < p.blocks; ++i) std::free(p.kept[i].block);
  p.blocks = 0;
  p.bytes = 0;
}

size_t ScratchPool::kept_blocks() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.blocks;
}

size_t ScratchPool::kept_bytes() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.bytes;
}

void ScratchBytes::reset(size_t bytes) {
  clear();
  data_ = ScratchPool::acquire(bytes, &capacity_);
  size_ = bytes;
}

void ScratchBytes::clear() {
  ScratchPool::release(data_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

}  // namespace sonde::engine::coll::detail
