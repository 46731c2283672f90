// File reading and all-or-nothing writing of result files.
//
//   std::string text = winokit::read_file("examples.jsonl");     // IoError if unreadable
//   winokit::OutputSet out;
//   out.add("report.json", json_text);
//   out.add("report.html", html_text);
//   out.commit();   // every file is written to a temporary first, then all are renamed
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace winokit {

std::string read_file(const std::filesystem::path& path);

// Writes one file atomically: a temporary file in the same directory, then renamed. `durable`
// also flushes it to disk first (fsync); caches skip that.
void write_file_atomic(const std::filesystem::path& path, const std::string& content,
                       bool durable = true);

// A set of result files that are written together: nothing is visible until every temporary
// file has been written successfully; on failure the temporaries are removed and no target is
// touched.
class OutputSet {
 public:
  void add(std::filesystem::path path, std::string content);
  bool empty() const { return files_.empty(); }
  // The files added so far, in order.
  std::vector<std::filesystem::path> paths() const {
    std::vector<std::filesystem::path> p;
    for (const auto& f : files_)
      p.push_back(f.first);
    return p;
  }
  void commit();

 private:
  std::vector<std::pair<std::filesystem::path, std::string>> files_;
};

}  // namespace winokit
