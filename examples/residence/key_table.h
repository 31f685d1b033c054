// The profiler's fixed hash tables: linear probing keyed by a non-zero
// 64-bit key (0 marks an empty slot), with backward-shift deletion, so a slot
// is reusable the moment its ending event is seen and no tombstones
// accumulate however long the run. Sized once (init); never grows: insert
// answers null when the table is 75 % full, and the caller counts the loss.
//
// Slot is a trivially copyable struct whose first member is `uint64_t key`.
// The profiler's own tables are never destroyed (an event may fire during
// exit): they live in a State that is never deleted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace sonde::residence {

template <typename Slot>
class KeyTable {
 public:
  KeyTable() = default;
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;
  ~KeyTable() { std::free(slots_); }

  // Room for `capacity` slots (rounded up to a power of two, at least 16).
  bool init(size_t capacity) {
    size_t n = 16;
    while (n < capacity) n <<= 1;
    // malloc + memset, not calloc: every page is touched now, so no event
    // ever pays for a first-touch page fault inside its callback.
    slots_ = static_cast<Slot*>(std::malloc(n * sizeof(Slot)));
    if (!slots_) return false;
    std::memset(static_cast<void*>(slots_), 0, n * sizeof(Slot));
    mask_ = n - 1;
    limit_ = n - n / 4;  // keep probes short: at most 75 % full
    return true;
  }
  size_t capacity() const { return mask_ + 1; }
  size_t size() const { return used_; }
  Slot* at(size_t i) { return &slots_[i]; }

  Slot* find(uint64_t key) {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i];
      if (slots_[i].key == 0) return nullptr;
    }
  }
  // The slot for key, *fresh = true if it was not there; null when full.
  Slot* insert(uint64_t key, bool* fresh) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) {
        *fresh = false;
        return &slots_[i];
      }
      if (slots_[i].key == 0) break;
    }
    if (used_ >= limit_) return nullptr;
    ++used_;
    slots_[i] = Slot{};
    slots_[i].key = key;
    *fresh = true;
    return &slots_[i];
  }
  void erase(Slot* s) {
    size_t i = static_cast<size_t>(s - slots_);
    size_t j = i;
    for (;;) {
      j = (j + 1) & mask_;
      if (slots_[j].key == 0) break;
      size_t k = home(slots_[j].key);
      // Leave slot j where it is if its home lies cyclically in (i, j].
      bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].key = 0;
    --used_;
  }

 private:
  size_t home(uint64_t key) const {
    key ^= key >> 33;  // murmur3 finaliser: ids are addresses, so mix them
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & mask_;
  }
  Slot* slots_ = nullptr;
  size_t mask_ = 0, limit_ = 0, used_ = 0;
};

}  // namespace sonde::residence
