// Helpers for the unit tests: temporary folders and small datasets built in memory.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <string>

#include "winokit/core/error.hpp"
#include "winokit/data/winoground.hpp"

namespace winokit::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "winokit-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// Runs fn in a child process whose address space may grow by at most `extra_bytes` beyond what
// it holds now (RLIMIT_AS): the exit code tells what happened, as the CLI would. 0: returned;
// 2: InputError or UsageError; 3: IoError; 4: out of memory (bad_alloc); 1: anything else;
// 128 + N: killed by signal N (a crash). For asserting memory bounds without timing.
inline int exit_code_with_memory_limit(std::size_t extra_bytes, const std::function<void()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::size_t vm_kib = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
    }
    const rlimit limit{vm_kib * 1024 + extra_bytes, vm_kib * 1024 + extra_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
    int code = 0;
    try {
      fn();
    } catch (const InputError&) {
      code = 2;
    } catch (const UsageError&) {
      code = 2;
    } catch (const IoError&) {
      code = 3;
    } catch (const std::bad_alloc&) {
      code = 4;
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// One examples.jsonl line.
inline std::string example_line(int id, const std::string& tag = "Noun",
                                const std::string& secondary = "",
                                const std::string& collapsed = "Object", int preds = 1) {
  return "{\"id\": " + std::to_string(id) +
         ", \"caption_0\": \"a b c\", \"caption_1\": \"c b a\"," + " \"image_0\": \"ex_" +
         std::to_string(id) + "_img_0\", \"image_1\": \"ex_" + std::to_string(id) +
         "_img_1\", \"tag\": \"" + tag + "\", \"secondary_tag\": \"" + secondary +
         "\", \"num_main_preds\": " + std::to_string(preds) + ", \"collapsed_tag\": \"" +
         collapsed + "\"}\n";
}

inline WinogroundDataset dataset_of(int n) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text += example_line(i);
  return parse_examples(text, "examples.jsonl");
}

}  // namespace winokit::test
