// POSIX shared-memory objects of one job: the only place the shm transport
// touches shm_open/mmap, so naming and cleanup rules live in one file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sonde::transport::shm {

// 64 random bits from getrandom(); throws std::runtime_error if it fails.
uint64_t random_u64();

// True for names a job id may use in shm object names: [A-Za-z0-9]+.
bool valid_job_id(std::string_view job_id);

// A shared-memory object mapped read/write into this process.
class Segment {
 public:
  Segment() = default;
  // A new object named "/sonde-<job_id>-<16 hex digits from getrandom>"
  // (O_CREAT|O_EXCL, mode 0600), `bytes` long (zero-filled), mapped. The
  // prefix lets the launcher remove what a crashed job left behind; the
  // random part makes the name unguessable. Throws std::runtime_error.
  static Segment create(std::string_view job_id, size_t bytes);
  // Maps an object another process created; throws std::runtime_error if it
  // is missing or not exactly `bytes` long.
  static Segment open(const std::string& name, size_t bytes);

  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&& other) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  // Unmaps, and removes the name if this process created it and has not
  // unlinked it yet (an exception during wire-up must not leave it behind).
  ~Segment();

  // Removes the name; mappings, ours and the peers', stay valid.
  void unlink();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void release();

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owns_name_ = false;
};

}  // namespace sonde::transport::shm
