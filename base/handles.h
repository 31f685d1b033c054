// Index + generation handle tables: how MPI handles (plain ints, see mpi.h)
// map to engine objects, and how stale or forged handles are caught.
//
// A handle is 0 | kind(4) | generation(7) | index(20): never negative, so a
// binding that reads a handle as a signed integer gets the same value back.
// Slot 0 is the null handle; predefined objects occupy the first slots with
// generation 0; objects made at run time get generations 1..127, bumped on every reuse of the slot, so a
// freed handle no longer resolves. Objects live in fixed-size chunks: their
// addresses never move, a lookup is a shift and a mask, and a slot's object
// is reused (not reallocated) after release, so steady-state allocation is
// zero.
//
// Not thread-safe on its own: callers hold the engine lock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace sonde::engine {

inline constexpr uint32_t kIndexBits = 20;
inline constexpr uint32_t kIndexMask = (1u << kIndexBits) - 1;
inline constexpr uint32_t kGenerationMask = 0x7F;
inline constexpr uint32_t kKindShift = 27;

inline int make_handle(uint32_t kind, uint32_t generation, uint32_t index) {
  return static_cast<int>((kind << kKindShift) | ((generation & kGenerationMask) << kIndexBits) | (index & kIndexMask));
}
inline uint32_t handle_kind(int h) { return static_cast<uint32_t>(h) >> kKindShift; }
inline uint32_t handle_index(int h) { return static_cast<uint32_t>(h) & kIndexMask; }
inline uint32_t handle_generation(int h) { return (static_cast<uint32_t>(h) >> kIndexBits) & kGenerationMask; }

template <class T, uint32_t Kind>
class HandleTable {
 public:
  // Reserve slots 1..n for predefined objects (generation 0).
  explicit HandleTable(uint32_t predefined = 0) {
    while (capacity() < predefined + 1) grow();
    slots_.resize(predefined + 1);
    for (uint32_t i = 1; i <= predefined; ++i) slots_[i].live = true;
  }

  // The object behind handle h, or null for null/freed/forged/other-kind handles.
  T* lookup(int h) {
    if (handle_kind(h) != Kind) return nullptr;
    uint32_t i = handle_index(h);
    if (i == 0 || i >= slots_.size()) return nullptr;
    Slot& s = slots_[i];
    if (!s.live || s.generation != handle_generation(h)) return nullptr;
    return &object(i);
  }
  // Predefined object by index (1-based, as in mpi.h).
  T& predefined(uint32_t index) { return object(index); }
  int predefined_handle(uint32_t index) const { return make_handle(Kind, 0, index); }

  // A fresh slot; the caller resets the object's state. Returns the handle, or
  // 0 if the table is full (2^20 - 1 objects).
  int allocate(T** out) {
    uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() > kIndexMask) return 0;
      i = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
      if (i >= capacity()) grow();
    }
    Slot& s = slots_[i];
    s.live = true;
    s.generation = static_cast<uint8_t>(s.generation >= kGenerationMask ? 1 : s.generation + 1);  // 1..127
    *out = &object(i);
    return make_handle(Kind, s.generation, i);
  }

  // Whether allocate() would succeed.
  bool can_allocate() const { return !free_.empty() || slots_.size() <= kIndexMask; }

  // Frees the slot of a handle made by allocate(); later lookups of it fail.
  void release(int h) {
    uint32_t i = handle_index(h);
    slots_[i].live = false;
    free_.push_back(i);
  }

  size_t live_count() const { return slots_.size() - 1 - free_.size(); }

  // Calls f(object, handle) for every live object, in slot order. Allocates
  // nothing (a snapshot signal handler walks the tables with it).
  template <class F>
  void for_each_live(F&& f) {
    for (uint32_t i = 1; i < slots_.size(); ++i)
      if (slots_[i].live) f(object(i), make_handle(Kind, slots_[i].generation, i));
  }

 private:
  static constexpr uint32_t kChunkBits = 8;
  static constexpr uint32_t kChunk = 1u << kChunkBits;

  struct Slot {
    uint8_t generation = 0;
    bool live = false;
  };
  T& object(uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  uint32_t capacity() const { return static_cast<uint32_t>(chunks_.size()) * kChunk; }
  void grow() { chunks_.push_back(std::make_unique<T[]>(kChunk)); }

  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace sonde::engine
