// Runs a libFuzzer harness's LLVMFuzzerTestOneInput over files, so its seed
// corpus and the inputs of past findings are a regression test in the
// ordinary (gcc) build: `<harness>_regression_test DIR...` feeds every file
// in each DIR (and every FILE given directly). Fails if a directory holds no
// input, so a test that checks nothing cannot pass.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void run_file(const std::string& path, int* count) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ++*count;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      std::fprintf(stderr, "no such input: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      run_file(argv[i], &count);
      continue;
    }
    DIR* d = opendir(argv[i]);
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(d);
    if (names.empty()) {
      std::fprintf(stderr, "no inputs in %s\n", argv[i]);
      return 1;
    }
    for (const auto& n : names) run_file(std::string(argv[i]) + "/" + n, &count);
  }
  std::printf("%d inputs replayed\n", count);
  return count > 0 ? 0 : 1;
}
