// The rank side of snapshots (snapshot.h): the signal handler and the text.
#include "runtime/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "coll/coll.h"
#include "core/current_call.h"
#include "core/introspect.h"
#include "core/process.h"
#include "core/stamp.h"
#include "runtime/dynamic.h"

namespace sonde::engine {
namespace {

constexpr int kMaxRecords = 256;  // per kind (recv, send, unexp)
constexpr size_t kPathMax = 4096;

// Appends text to a fixed buffer; past its end, output is cut.
class Text {
 public:
  void str(const char* s) {
    while (*s) put(*s++);
  }
  void name(const char* s) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    if (!*s) str("-");
    for (; *s; ++s) {
      const unsigned char c = static_cast<unsigned char>(*s);
      if (c <= ' ' || c == '%' || c > '~') {
        put('%');
        put(kHex[c >> 4]);
        put(kHex[c & 15]);
      } else {
        put(static_cast<char>(c));
      }
    }
  }
  void num(int64_t v) {
    if (v < 0) {
      put('-');
      unum(uint64_t(-(v + 1)) + 1);
    } else {
      unum(uint64_t(v));
    }
  }
  void unum(uint64_t v) {
    char d[24];
    int n = 0;
    do d[n++] = char('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0) put(d[--n]);
  }
  void hex(uint64_t v) {
    static constexpr char kHex[] = "0123456789abcdef";
    str("0x");
    char d[20];
    int n = 0;
    do d[n++] = kHex[v & 15];
    while ((v >>= 4) != 0);
    while (n > 0) put(d[--n]);
  }
  void kv(const char* key, int64_t v) {
    put(' ');
    str(key);
    put('=');
    num(v);
  }
  void reset() { len_ = 0; }
  const char* data() const { return buf_; }
  size_t size() const { return len_; }

 private:
  void put(char c) {
    if (len_ < sizeof buf_) buf_[len_++] = c;
  }
  char buf_[1 << 20];
  size_t len_ = 0;
};

struct Config {
  int signal = 0;
  int rank = 0;
  bool has_dir = false;
  char request[kPathMax] = {};  // DIR/request
  char out[kPathMax] = {};      // DIR/rank-R
  char tmp[kPathMax] = {};      // DIR/rank-R.tmp
  uint64_t served = 0;          // the last request number answered
  StampPoint base;              // at install: with the serving time, ticks per ns
  volatile sig_atomic_t stopping = 0;
};

Text g_text;
Config g_config;
StampPoint g_now;  // when the snapshot being written was taken

// " KEY=microseconds since `since`", or nothing for an unstamped entry.
void age(Text& t, const char* key, uint64_t since) {
  const int64_t us = stamp_age_us(since, g_config.base, g_now);
  if (us >= 0) t.kv(key, us);
}

void coll_suffix(Text& t, int tag) {
  int kind = 0;
  uint32_t seq = 0;
  if (!coll::decode_tag(tag, &kind, &seq)) return;
  t.str(" coll=");
  t.str(coll::kind_name(kind));
  t.str("#");
  t.unum(seq);
}

const char* stage_name(introspect::Stage s) {
  switch (s) {
    case introspect::Stage::kPosted: return "posted";
    case introspect::Stage::kArriving: return "arriving";
    case introspect::Stage::kEagerQueued: return "eager-queued";
    case introspect::Stage::kRendezvousWait: return "rendezvous-wait";
    case introspect::Stage::kTransfer: return "transfer";
    case introspect::Stage::kSyncAck: return "sync-ack";
  }
  return "?";
}

// The serving thread's call (current_call.h: per thread under
// MPI_THREAD_MULTIPLE).
const char* current_call() { return process().lock_enabled ? t_current_call : g_current_call; }

void probe_record(Text& t, const ProbeWait& p, bool blocking) {
  if (!p.call) return;
  t.str("probe");
  t.kv("ctx", p.context);
  t.kv("src", p.source);
  t.kv("tag", p.tag);
  t.str(" call=");
  t.name(p.call);
  t.kv("blocking", blocking);
  age(t, "age_us", p.since);
  t.str("\n");
}

struct Counts {
  int recv = 0, send = 0, unexp = 0, omitted = 0;
};

void write_engine_state(Text& t) {
  t.str("arrivals ");
  t.unum(introspect::arrivals());
  t.str("\n");
  introspect::for_each_comm(
      [](const introspect::CommView& c, void* arg) {
        Text& t = *static_cast<Text*>(arg);
        t.str("comm");
        t.kv("ctx", c.context);
        t.str(" handle=");
        t.hex(static_cast<uint32_t>(c.handle));
        t.str(" name=");
        t.name(c.name);
        t.kv("rank", c.rank);
        t.kv("size", c.size);
        t.kv("inter", c.inter);
        t.kv("coll", c.coll_seq);
        t.str(" world=");
        for (int i = 0; i < c.world_count; ++i) {
          if (i) t.str(",");
          t.num(c.world[i]);
        }
        age(t, "coll_age_us", c.coll_since);
        t.str("\n");
      },
      &t);
  // Processes of other jobs the communicators name (world= ids past the
  // world's own ranks).
  const int end = connected_process_end();
  for (int id = 0; id < end; ++id) {
    const char* ns = nullptr;
    int rank = 0;
    if (!connected_process(id, &ns, &rank)) continue;
    t.str("peer");
    t.kv("id", id);
    t.str(" nspace=");
    t.name(ns);
    t.kv("rank", rank);
    t.str("\n");
  }
  struct Ctx {
    Text* t;
    Counts n;
  } ctx{&t, {}};
  introspect::for_each_pending(
      [](const introspect::RequestView& r, void* arg) {
        Ctx& x = *static_cast<Ctx*>(arg);
        int& n = r.send ? x.n.send : x.n.recv;
        if (++n > kMaxRecords) {
          ++x.n.omitted;
          return;
        }
        Text& t = *x.t;
        t.str(r.send ? "send id=" : "recv id=");
        t.hex(reinterpret_cast<uintptr_t>(r.id));
        t.kv("ctx", r.context);
        t.kv(r.send ? "dest" : "src", r.peer);
        t.kv("tag", r.tag);
        t.kv("count", r.count);
        if (r.send) {
          t.kv("bytes", int64_t(r.bytes));
          t.kv("sync", r.synchronous);
        } else {
          t.str(" type=");
          t.name(r.type);
        }
        t.str(" stage=");
        t.str(stage_name(r.stage));
        coll_suffix(t, r.tag);
        age(t, "age_us", r.since);
        t.str("\n");
      },
      &ctx);
  introspect::for_each_unexpected(
      [](const introspect::MessageView& m, void* arg) {
        Ctx& x = *static_cast<Ctx*>(arg);
        if (++x.n.unexp > kMaxRecords) {
          ++x.n.omitted;
          return;
        }
        Text& t = *x.t;
        t.str("unexp id=");
        t.hex(reinterpret_cast<uintptr_t>(m.id));
        t.kv("ctx", m.context);
        t.kv("src", m.source);
        t.kv("tag", m.tag);
        t.kv("bytes", int64_t(m.bytes));
        coll_suffix(t, m.tag);
        age(t, "age_us", m.since);
        t.str("\n");
      },
      &ctx);
  probe_record(t, t_probe_wait, true);
  const char* call = current_call();
  if (!call || std::strcmp(call, "MPI_Iprobe") == 0 || std::strcmp(call, "MPI_Improbe") == 0)
    probe_record(t, t_probe_polling, false);
  if (ctx.n.omitted) {
    t.str("omitted ");
    t.num(ctx.n.omitted);
    t.str("\n");
  }
}

// The request number in DIR/request, or 0.
uint64_t read_request() {
  int fd = open(g_config.request, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  uint64_t v = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + uint64_t(buf[i] - '0');
  return v;
}

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= size_t(w);
  }
}

// Writes the snapshot; the caller has the engine to itself.
void serve() {
  const uint64_t seq = g_config.has_dir ? read_request() : 0;
  const bool to_file = seq > g_config.served;
  // Under a launcher that asks through files, a signal with no new request
  // is a repeat of one already answered: nothing to do.
  if (g_config.has_dir && !to_file) return;
  Text& t = g_text;
  t.reset();
  g_now = StampPoint::now();
  t.str("sonde-snapshot 1\nseq ");
  t.unum(to_file ? seq : 0);
  t.str("\nrank ");
  t.num(g_config.rank);
  t.str("\npid ");
  t.num(getpid());
  t.str("\ncall ");
  const bool up = process().engine_up && !g_config.stopping;
  t.str(!up ? "finalized" : current_call() ? current_call() : "-");
  t.str("\n");
  if (up) write_engine_state(t);
  t.str("end\n");
  if (!to_file) {
    write_all(2, t.data(), t.size());
    return;
  }
  int fd = open(g_config.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  write_all(fd, t.data(), t.size());
  close(fd);
  if (rename(g_config.tmp, g_config.out) == 0) g_config.served = seq;
}

void on_signal(int sig) {
  const int saved = errno;
  const ProcessState& p = process();
  if (!pthread_equal(pthread_self(), p.main_thread)) {
    // The thread that runs MPI answers (its marker says where it is).
    pthread_kill(p.main_thread, sig);
  } else if (g_current_call == nullptr && !p.lock_enabled) {
    serve();
  } else {
    g_snapshot_pending = 1;
  }
  errno = saved;
}

bool build_path(char* out, const char* dir, const char* leaf, int rank, const char* suffix) {
  size_t n = std::strlen(dir);
  if (n + 32 >= kPathMax) return false;
  std::memcpy(out, dir, n);
  out[n++] = '/';
  std::strcpy(out + n, leaf);
  n += std::strlen(leaf);
  if (rank >= 0) {
    char d[16];
    int k = 0;
    unsigned v = unsigned(rank);
    do d[k++] = char('0' + v % 10);
    while ((v /= 10) != 0);
    while (k > 0) out[n++] = d[--k];
  }
  std::strcpy(out + n, suffix);
  return true;
}

}  // namespace

void install_snapshot_handler(int world_rank) {
  int sig = SIGUSR1;
  if (const char* s = std::getenv("SONDE_SNAPSHOT_SIGNAL")) sig = std::atoi(s);
  if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) return;
  g_config.rank = world_rank;
  g_config.stopping = 0;
  g_config.base = StampPoint::now();
  const char* dir = std::getenv("SONDE_SNAPSHOT_DIR");
  g_config.has_dir = dir && *dir && build_path(g_config.request, dir, "request", -1, "") &&
                     build_path(g_config.out, dir, "rank-", world_rank, "") &&
                     build_path(g_config.tmp, dir, "rank-", world_rank, ".tmp");
  g_snapshot_serve = serve;
  struct sigaction old {};
  if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) return;  // the program's own
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, nullptr) != 0) return;
  g_config.signal = sig;
  // Tells the launcher this rank may now be signalled.
  char ready[kPathMax];
  if (g_config.has_dir && dir && build_path(ready, dir, "ready-", world_rank, "")) {
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
  }
}

void snapshot_engine_stopping() { g_config.stopping = 1; }

}  // namespace sonde::engine
