// Collecting the ranks' snapshots on one host (snapshot.h).
#include "tools/mpiexec/snapshot.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace sonde::mpiexec {
namespace {

bool read_text(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// The number on the text's "seq" line, or 0.
uint64_t seq_of(const std::string& text) {
  size_t at = text.find("\nseq ");
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + 5, nullptr, 10);
}

bool complete(const std::string& text) { return text.size() >= 4 && text.compare(text.size() - 4, 4, "end\n") == 0; }

}  // namespace

int snapshot_signal() {
  const char* s = std::getenv("SONDE_SNAPSHOT_SIGNAL");
  int sig = s ? std::atoi(s) : SIGUSR1;
  return sig > 0 && sig < NSIG ? sig : SIGUSR1;
}

std::string snapshot_dir(const std::string& tmpdir) {
  std::string dir = tmpdir + "/snapshot";
  mkdir(dir.c_str(), 0700);
  return dir;
}

std::vector<SnapshotAnswer> collect_snapshot(const std::string& dir, uint64_t seq,
                                             const std::vector<SnapshotTarget>& targets,
                                             std::chrono::milliseconds bound, int sig) {
  // Each target's answer file, and the request in every directory used.
  std::vector<std::string> files, dirs = {dir};
  for (const auto& t : targets) {
    const std::string& d = t.dir.empty() ? dir : t.dir;
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    files.push_back(d + "/rank-" + std::to_string(t.file_rank >= 0 ? t.file_rank : t.rank));
  }
  for (const auto& d : dirs) {
    const std::string request = d + "/request", tmp = d + "/request.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << seq << "\n";
    }
    std::rename(tmp.c_str(), request.c_str());
  }
  std::vector<SnapshotAnswer> answers;
  for (const auto& t : targets) {
    const std::string& d = t.dir.empty() ? dir : t.dir;
    const int r = t.file_rank >= 0 ? t.file_rank : t.rank;
    const bool ready = t.running && access((d + "/ready-" + std::to_string(r)).c_str(), F_OK) == 0;
    answers.push_back({t.rank, t.running, ready, false, {}, {}, false});
  }
  const auto give_up = std::chrono::steady_clock::now() + bound;
  auto next_signal = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    bool waiting = false;
    const bool resignal = now >= next_signal;
    for (size_t i = 0; i < targets.size(); ++i) {
      SnapshotAnswer& a = answers[i];
      if (!a.ready || a.answered) continue;
      std::string text;
      if (read_text(files[i], &text) && seq_of(text) == seq && complete(text)) {
        a.answered = true;
        a.text = std::move(text);
        continue;
      }
      waiting = true;
      if (resignal && targets[i].pid > 0) kill(targets[i].pid, sig);
    }
    if (resignal) next_signal = now + kResignal;
    if (!waiting || now >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return answers;
}

}  // namespace sonde::mpiexec
