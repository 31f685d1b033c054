#include "tools/mpiexec/control.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cstring>

namespace sonde::mpiexec {

Writer& Writer::u8(uint8_t v) {
  buf_.push_back(static_cast<char>(v));
  return *this;
}

Writer& Writer::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return *this;
}

Writer& Writer::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  buf_.append(s);
  return *this;
}

Writer& Writer::strings(const std::vector<std::string>& v) {
  u32(static_cast<uint32_t>(v.size()));
  for (const auto& s : v) str(s);
  return *this;
}

std::string_view Reader::take(size_t n) {
  if (n > data_.size()) throw ProtocolError("control message ends early");
  std::string_view s = data_.substr(0, n);
  data_.remove_prefix(n);
  return s;
}

uint8_t Reader::u8() { return static_cast<uint8_t>(take(1)[0]); }

uint32_t Reader::u32() {
  std::string_view b = take(4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[i])) << (8 * i);
  return v;
}

std::string Reader::str() {
  uint32_t n = u32();
  return std::string(take(n));
}

std::vector<std::string> Reader::strings() {
  uint32_t n = u32();
  if (n > data_.size() / 4) throw ProtocolError("control message ends early");
  std::vector<std::string> v;
  v.reserve(n);
  for (uint32_t i = 0; i < n; ++i) v.push_back(str());
  return v;
}

Channel::Channel(int fd) : fd_(fd), last_heard_(Clock::now()) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  fcntl(fd_, F_SETFD, FD_CLOEXEC);
  int one = 1;
  // Small control messages (fences) must not wait for Nagle.
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Channel::~Channel() {
  if (fd_ >= 0) close(fd_);
}

void Channel::send(Msg type, const Writer& payload) {
  if (sent_ > 0 && sent_ == out_.size()) {
    out_.clear();
    sent_ = 0;
  }
  Writer head;
  head.u32(static_cast<uint32_t>(payload.bytes().size() + 1));
  head.u8(static_cast<uint8_t>(type));
  out_ += head.bytes();
  out_ += payload.bytes();
  flush();
}

bool Channel::flush() {
  while (sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      return false;
    }
    sent_ += static_cast<size_t>(n);
  }
  out_.clear();
  sent_ = 0;
  return true;
}

bool Channel::fill() {
  if (consumed_ > 0 && consumed_ >= in_.size() / 2) {
    in_.erase(0, consumed_);
    consumed_ = 0;
  }
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      last_heard_ = Clock::now();
      if (static_cast<size_t>(n) < sizeof buf) return true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

std::optional<std::pair<Msg, std::string>> decode_frame(std::string_view avail, uint32_t max_frame, size_t* used) {
  if (avail.size() < 4) return std::nullopt;
  uint32_t len = Reader(avail.substr(0, 4)).u32();
  if (len == 0 || len > max_frame) throw ProtocolError("bad control frame length");
  if (avail.size() < 4 + static_cast<size_t>(len)) return std::nullopt;
  auto type = static_cast<Msg>(static_cast<uint8_t>(avail[4]));
  *used = 4 + static_cast<size_t>(len);
  return std::make_pair(type, std::string(avail.substr(5, len - 1)));
}

std::optional<std::pair<Msg, std::string>> Channel::next() {
  std::string_view avail(in_);
  avail.remove_prefix(consumed_);
  size_t used = 0;
  auto m = decode_frame(avail, kMaxFrame, &used);
  consumed_ += used;
  return m;
}

Writer JobMessage::encode() const {
  Writer w;
  w.str(job_id).u32(static_cast<uint32_t>(apps.size()));
  for (const auto& a : apps) w.strings(a.argv).strings(a.env).str(a.wdir).i32(a.first).i32(a.size);
  w.strings(env).str(cwd);
  w.u8(static_cast<uint8_t>(binding.map)).u8(static_cast<uint8_t>(binding.bind));
  w.u8(report_bindings ? 1 : 0).str(launcher);
  w.i32(size);
  w.strings(hostnames);
  w.u32(static_cast<uint32_t>(node_ranks.size()));
  for (const auto& ranks : node_ranks) {
    w.u32(static_cast<uint32_t>(ranks.size()));
    for (int r : ranks) w.i32(r);
  }
  w.u32(static_cast<uint32_t>(daemon_node.size()));
  for (int n : daemon_node) w.i32(n);
  return w;
}

JobMessage JobMessage::decode(std::string_view payload) {
  Reader r(payload);
  JobMessage j;
  j.job_id = r.str();
  uint32_t napps = r.u32();
  if (napps == 0 || napps > payload.size()) throw ProtocolError("inconsistent job description");
  for (uint32_t a = 0; a < napps; ++a) {
    App app;
    app.argv = r.strings();
    app.env = r.strings();
    app.wdir = r.str();
    app.first = r.i32();
    app.size = r.i32();
    // In 64 bits: the sum of two hostile 32-bit fields must not overflow.
    const int64_t expected_first = j.apps.empty() ? 0 : int64_t{j.apps.back().first} + j.apps.back().size;
    if (app.argv.empty() || app.first != expected_first || app.size < 1) {
      throw ProtocolError("inconsistent job description");
    }
    j.apps.push_back(std::move(app));
  }
  j.env = r.strings();
  j.cwd = r.str();
  const uint8_t map = r.u8(), bind = r.u8();
  if (map > kLastUnit || bind > kLastUnit) throw ProtocolError("inconsistent job description");
  j.binding.map = static_cast<Unit>(map);
  j.binding.bind = static_cast<Unit>(bind);
  j.report_bindings = r.u8() != 0;
  j.launcher = r.str();
  j.size = r.i32();
  j.hostnames = r.strings();
  uint32_t nodes = r.u32();
  // Every rank is listed below in 4 bytes: a size the rest of the message
  // cannot hold is refused before anything is sized by it.
  if (nodes != j.hostnames.size() || j.size < 1 || int64_t{j.apps.back().first} + j.apps.back().size != j.size ||
      static_cast<uint64_t>(j.size) > payload.size() / 4) {
    throw ProtocolError("inconsistent job description");
  }
  std::vector<bool> seen(static_cast<size_t>(j.size), false);
  for (uint32_t n = 0; n < nodes; ++n) {
    uint32_t count = r.u32();
    if (count == 0 || count > static_cast<uint32_t>(j.size)) {
      throw ProtocolError("inconsistent job description");
    }
    std::vector<int> ranks;
    for (uint32_t i = 0; i < count; ++i) {
      int rank = r.i32();
      if (rank < 0 || rank >= j.size || seen[static_cast<size_t>(rank)]) {
        throw ProtocolError("inconsistent job description");
      }
      seen[static_cast<size_t>(rank)] = true;
      ranks.push_back(rank);
    }
    j.node_ranks.push_back(std::move(ranks));
  }
  for (bool s : seen) {
    if (!s) throw ProtocolError("inconsistent job description");
  }
  uint32_t daemons = r.u32();
  if (daemons > payload.size()) throw ProtocolError("inconsistent job description");
  for (uint32_t d = 0; d < daemons; ++d) {
    int n = r.i32();
    if (n < -1 || n >= static_cast<int>(nodes)) throw ProtocolError("inconsistent job description");
    j.daemon_node.push_back(n);
  }
  return j;
}

Writer SpawnRequest::encode() const {
  Writer w;
  w.u32(id).u32(static_cast<uint32_t>(apps.size()));
  for (const auto& a : apps)
    w.str(a.cmd).strings(a.argv).strings(a.env).str(a.wdir).str(a.path).str(a.host).i32(a.procs);
  return w;
}

SpawnRequest SpawnRequest::decode(std::string_view payload) {
  Reader r(payload);
  SpawnRequest q;
  q.id = r.u32();
  const uint32_t napps = r.u32();
  // Each app takes at least 28 bytes: a count the message cannot hold is
  // refused before anything is sized by it.
  if (napps == 0 || napps > payload.size() / 28) throw ProtocolError("inconsistent spawn request");
  for (uint32_t a = 0; a < napps; ++a) {
    SpawnApp app;
    app.cmd = r.str();
    app.argv = r.strings();
    app.env = r.strings();
    app.wdir = r.str();
    app.path = r.str();
    app.host = r.str();
    app.procs = r.i32();
    q.apps.push_back(std::move(app));
  }
  return q;
}

Writer SpawnJobMessage::encode() const {
  Writer w;
  w.u32(spawn).str(nspace).i32(first_slot).i32(universe);
  w.u32(static_cast<uint32_t>(node_ids.size()));
  for (uint32_t n : node_ids) w.u32(n);
  w.strings(paths).str(job.encode().bytes());
  return w;
}

SpawnJobMessage SpawnJobMessage::decode(std::string_view payload) {
  Reader r(payload);
  SpawnJobMessage m;
  m.spawn = r.u32();
  m.nspace = r.str();
  m.first_slot = r.i32();
  m.universe = r.i32();
  const uint32_t nodes = r.u32();
  if (m.nspace.empty() || m.nspace.size() > kMaxNspace || m.first_slot < 0 || nodes > payload.size() / 4) {
    throw ProtocolError("inconsistent spawn job");
  }
  for (uint32_t n = 0; n < nodes; ++n) m.node_ids.push_back(r.u32());
  m.paths = r.strings();
  m.job = JobMessage::decode(r.str());
  if (m.node_ids.size() != m.job.hostnames.size() || m.paths.size() != m.job.apps.size() ||
      int64_t{m.first_slot} + m.job.size > INT32_MAX) {
    throw ProtocolError("inconsistent spawn job");
  }
  return m;
}

Writer GroupFence::encode() const {
  Writer w;
  w.u32(id).strings(procs).str(data);
  return w;
}

GroupFence GroupFence::decode(std::string_view payload) {
  Reader r(payload);
  GroupFence f;
  f.id = r.u32();
  f.procs = r.strings();
  f.data = r.str();
  std::string nspace;
  int rank = 0;
  for (const auto& p : f.procs) {
    if (!split(p, &nspace, &rank)) throw ProtocolError("malformed fence participant");
  }
  if (f.procs.empty()) throw ProtocolError("a fence without participants");
  return f;
}

bool GroupFence::split(const std::string& proc, std::string* nspace, int* rank) {
  const size_t space = proc.rfind(' ');
  if (space == std::string::npos || space == 0 || space > kMaxNspace) return false;
  const std::string_view r = std::string_view(proc).substr(space + 1);
  if (r == "*") {
    *rank = -1;
  } else {
    if (r.empty() || r.size() > 9 || r.find_first_not_of("0123456789") != std::string_view::npos) return false;
    *rank = 0;
    for (char c : r) *rank = *rank * 10 + (c - '0');
  }
  *nspace = proc.substr(0, space);
  return true;
}

std::string machine_identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  std::string boot;
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f) != nullptr) boot = buf;
    std::fclose(f);
  }
  while (!boot.empty() && (boot.back() == '\n' || boot.back() == ' ')) boot.pop_back();
  if (boot.empty()) return "";
  struct stat st;
  std::string shm = stat("/dev/shm", &st) == 0 ? std::to_string(st.st_dev) : "none";
  return std::string(host) + " " + boot + " " + shm;
}

int listen_tcp(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

std::vector<std::string> local_addresses() {
  std::vector<std::string> out, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      char text[INET_ADDRSTRLEN] = {};
      auto* sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
      ((ntohl(sin->sin_addr.s_addr) >> 24) == 127 ? loopback : out).emplace_back(text);
    }
    freeifaddrs(list);
  }
  out.insert(out.end(), loopback.begin(), loopback.end());
  if (out.empty()) out.emplace_back("127.0.0.1");
  return out;
}

int connect_first(const std::vector<std::string>& endpoints, int timeout_ms, std::string* error) {
  *error = "no address to connect to";
  for (const auto& ep : endpoints) {
    size_t colon = ep.rfind(':');
    sockaddr_in a{};
    a.sin_family = AF_INET;
    if (colon == std::string::npos || inet_pton(AF_INET, ep.substr(0, colon).c_str(), &a.sin_addr) != 1) {
      *error = "bad address " + ep;
      continue;
    }
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(ep.c_str() + colon + 1)));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *error = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, timeout_ms) == 1 ? 0 : -1;
      if (rc != 0) errno = ETIMEDOUT;
      int so = 0;
      socklen_t len = sizeof so;
      if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) == 0 && so != 0) {
        rc = -1;
        errno = so;
      }
    }
    if (rc == 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      return fd;
    }
    *error = ep + ": " + std::strerror(errno);
    close(fd);
  }
  return -1;
}

double heartbeat_limit_seconds() {
  const char* v = std::getenv("SONDE_HOSTD_TIMEOUT");
  if (v != nullptr) {
    char* end = nullptr;
    double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && std::isfinite(s) && s > 0) return s;
  }
  return 30;
}

}  // namespace sonde::mpiexec
