// Node segments (node_segment.h).
#include "core/node_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace sonde::engine {

uint8_t* create_node_segment(const char* name, size_t len) {
  const int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return nullptr;
  void* p = MAP_FAILED;
  if (ftruncate(fd, off_t(len)) == 0 && posix_fallocate(fd, 0, off_t(len)) == 0)
    p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return nullptr;
  }
  return static_cast<uint8_t*>(p);
}

uint8_t* open_node_segment(const char* name, size_t len) {
  const int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && size_t(st.st_size) == len)
    p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

uint64_t node_segment_nonce() {
  static uint64_t serial = 0;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t(getpid()) << 40) ^ (uint64_t(ts.tv_sec) << 20) ^ uint64_t(ts.tv_nsec) ^ ++serial;
}

}  // namespace sonde::engine
