#include "transports/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace sonde::transport::shm {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& name, int error) {
  throw std::runtime_error("sonde shm: " + what + " " + name + ": " + std::strerror(error));
}

}  // namespace

uint64_t random_u64() {
  uint64_t value = 0;
  auto* bytes = reinterpret_cast<char*>(&value);
  size_t got = 0;
  while (got < sizeof value) {
    ssize_t n = getrandom(bytes + got, sizeof value - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("getrandom", "of 8 bytes", errno);
    }
    got += static_cast<size_t>(n);
  }
  return value;
}

namespace {

void* map(int fd, size_t bytes, const std::string& name) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) fail("mmap", name, errno);
  return data;
}

}  // namespace

bool valid_job_id(std::string_view job_id) {
  if (job_id.empty() || job_id.size() > 200) return false;  // NAME_MAX is 255
  for (char c : job_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

Segment Segment::create(std::string_view job_id, size_t bytes) {
  if (!valid_job_id(job_id)) {
    throw std::runtime_error("sonde shm: job id '" + std::string(job_id) +
                             "' is not [A-Za-z0-9]+ (at most 200 characters)");
  }
  Segment segment;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random_u64()));
    segment.name_ = "/sonde-" + std::string(job_id) + "-" + suffix;
    fd = shm_open(segment.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && (errno != EEXIST || attempt == 8)) fail("shm_open", segment.name_, errno);
  }
  segment.owns_name_ = true;  // from here on the destructor removes it on failure
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int error = errno;
    close(fd);
    fail("ftruncate", segment.name_, error);
  }
  try {
    segment.data_ = map(fd, bytes, segment.name_);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  segment.size_ = bytes;
  return segment;
}

Segment Segment::open(const std::string& name, size_t bytes) {
  Segment segment;
  segment.name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) fail("shm_open", name, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int error = errno;
    close(fd);
    fail("fstat", name, error);
  }
  if (static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    throw std::runtime_error("sonde shm: " + name + " is " + std::to_string(st.st_size) + " bytes, expected " +
                             std::to_string(bytes) + " (ranks built with different ring sizes?)");
  }
  try {
    segment.data_ = map(fd, bytes, name);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  segment.size_ = bytes;
  return segment;
}

Segment::Segment(Segment&& other) noexcept
    : name_(std::move(other.name_)), data_(other.data_), size_(other.size_), owns_name_(other.owns_name_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.owns_name_ = false;
}

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = other.data_;
    size_ = other.size_;
    owns_name_ = other.owns_name_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.owns_name_ = false;
  }
  return *this;
}

Segment::~Segment() { release(); }

void Segment::unlink() {
  if (!owns_name_) return;
  owns_name_ = false;
  shm_unlink(name_.c_str());  // ENOENT: the launcher already cleaned up; nothing to do
}

void Segment::release() {
  unlink();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace sonde::transport::shm
