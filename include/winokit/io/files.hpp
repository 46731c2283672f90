// File reading and all-or-nothing writing of result files.
//
//   std::string text = winokit::read_file("model/config.json");  // IoError if unreadable
//   std::string rows = winokit::read_text_file("examples.jsonl"); // + size and line caps
//   winokit::OutputSet out;
//   out.add("report.json", json_text);
//   out.add("report.html", html_text);
//   out.commit();   // every target checked, every file written to a temporary, all renamed;
//                   // if one rename fails, the ones before it are rolled back
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(io);

namespace winokit {

// Reads a whole file. IoError (naming the file and the system's reason: not found, a directory,
// permission denied, a symbolic-link loop, ...) when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Caps on a text input that is read whole and then parsed line by line (examples, scores,
// tables). They are checked while the file streams in, so an oversized file or an endless line
// is refused after reading at most the cap, whatever the file's size.
struct TextLimits {
  static constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::size_t max_file_bytes = 512 * kMiB;
  std::size_t max_line_bytes = 1 * kMiB;  // 0: no cap on a line
};

// read_file with caps: InputError naming the file (and the line) beyond them. IoError as
// read_file.
std::string read_text_file(const std::filesystem::path& path, const TextLimits& limits = {});

// SHA-256 (lowercase hex) of a file's bytes; IoError as read_file.
std::string sha256_file(const std::filesystem::path& path);
// The hash of a list of files, each read once: one file's own SHA-256, or the SHA-256 of the
// lines "NAME SHA256\n" (file name, its hash) in the list's order. "" for no file.
std::string sha256_of_files(const std::vector<std::filesystem::path>& files);

// The text without a leading UTF-8 byte order mark.
std::string_view strip_bom(std::string_view text);

// A file name made from data (ids, model names): ASCII letters, digits, '.', '-' and '_' are
// kept, anything else (separators, "..", control bytes, non-ASCII) becomes '_', a leading '.' too
// (no hidden files, never "." or ".."), and the name is cut to 120 bytes. When anything was
// changed, 8 hex digits of the original's hash are appended, so two ids that differ only in
// replaced characters still get two files. Never empty.
std::string safe_file_name(std::string_view raw);

// Missing output folders are created (and removed again when the write fails).
// Writes one file atomically: a temporary file in the same directory, then renamed. `durable`
// also flushes it to disk first (fsync); caches skip that.
void write_file_atomic(const std::filesystem::path& path, const std::string& content,
                       bool durable = true);

// Writes one file of a folder that many processes, on one machine or many, write at once (the
// embedding and pair-score caches on a shared file system, NFS included). No lock is taken (NFS
// breaks them): the content goes to a temporary of its own, `.NAME.part-HOST-PID-RANDOM`
// (created with O_EXCL, so no two writers ever share one, even across machines whose process
// ids collide), which is then renamed over the target. rename() replaces the target atomically
// (on NFS too: it is one server operation), so a reader opens the old file, the new one or none,
// never a part; when several writers race for one target, the last rename wins whole. A writer
// killed mid-write leaves only its hidden temporary, which the next write of the same target on
// the same machine removes (only temporaries of this host whose process is gone). Not flushed to
// disk: a cache entry lost to a power cut is recomputed; readers must still check an entry's
// completeness (the caches carry a checksum). IoError when the folder cannot be written.
void write_file_shared(const std::filesystem::path& path, const std::string& content);

// A set of result files that are written together. commit() first checks every target (its
// folder exists and is writable, the target is not a folder, no target is named twice), then
// writes every temporary file, then renames them one by one, keeping a hard link to each file
// it replaces; if a rename fails, the targets already renamed get their old content back (or
// are removed if they did not exist). On any failure it throws IoError (UsageError for a target
// named twice) and the targets are as they were before.
class OutputSet {
 public:
  void add(std::filesystem::path path, std::string content);
  // A file named from data (an example id, a model name) in `folder`: `name` must be one plain
  // file name (safe_file_name makes one), so the file can only land inside the folder; anything
  // else (a separator, "..", an absolute path) is a UsageError.
  void add_in(const std::filesystem::path& folder, const std::string& name, std::string content);
  bool empty() const { return files_.empty(); }
  // The files added so far, in order.
  std::vector<std::filesystem::path> paths() const {
    std::vector<std::filesystem::path> p;
    for (const auto& f : files_)
      p.push_back(f.first);
    return p;
  }
  void commit();

  // Test hook: called with the index of each target just before it is renamed (to simulate a
  // concurrent change of the file system between the checks and the renames).
  std::function<void(std::size_t)> before_rename_for_testing;

 private:
  std::vector<std::pair<std::filesystem::path, std::string>> files_;
};

}  // namespace winokit
