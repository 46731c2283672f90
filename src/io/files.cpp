#include "winokit/io/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

std::string reason(int err) {
  if (err == ENOENT) return "not found";
  if (err == ELOOP) return "too many levels of symbolic links (a symbolic-link loop?)";
  if (err == EISDIR) return "is a directory, not a file";
  return std::strerror(err);
}

std::string mib_text(std::size_t bytes) {
  if (bytes % TextLimits::kMiB == 0) return std::to_string(bytes / TextLimits::kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads the whole file; `limits` null means no caps.
std::string read_whole(const fs::path& path, const TextLimits* limits) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw IoError(path.string() + ": " + reason(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw IoError(path.string() + ": " + reason(errno));
  if (S_ISDIR(st.st_mode)) throw IoError(path.string() + ": " + reason(EISDIR));
  const std::size_t max_file = limits ? limits->max_file_bytes : 0;
  const std::size_t max_line = limits ? limits->max_line_bytes : 0;
  auto too_large = [&] {
    return InputError({path.string(), 0, ""},
                      "file larger than " + mib_text(max_file) + ", the limit for this input",
                      "is this the right file?");
  };
  std::string out;
  constexpr std::size_t kMaxChunk = std::size_t{1} << 20;
  std::size_t chunk_bytes = kMaxChunk;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    if (max_file != 0 && size > max_file) throw too_large();
    out.reserve(size);
    // A small file gets a small buffer: the embedding cache reads thousands of 2 KB entries,
    // and a zero-filled 1 MiB buffer for each cost a second of a fully cached run. One byte
    // more than the size, so that a file that grew is still read to its end.
    chunk_bytes = std::min(kMaxChunk, size + 1);
  }
  std::string chunk(chunk_bytes, '\0');
  std::size_t line = 1;
  std::size_t line_bytes = 0;  // bytes of the current line so far
  while (true) {
    ssize_t n = ::read(fd.get(), chunk.data(), chunk_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      throw IoError(path.string() + ": read error: " + reason(saved));
    }
    if (n == 0) break;
    const auto got = static_cast<std::size_t>(n);
    if (max_file != 0 && out.size() + got > max_file) throw too_large();
    if (max_line != 0) {
      const char* p = chunk.data();
      const char* end = p + got;
      while (p < end) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
        const char* stop = nl ? static_cast<const char*>(nl) : end;
        line_bytes += static_cast<std::size_t>(stop - p);
        if (line_bytes > max_line) {
          throw InputError({path.string(), line, ""},
                           "line longer than " + mib_text(max_line) + ", the limit for a line",
                           "is this the right file?");
        }
        if (!nl) break;
        ++line;
        line_bytes = 0;
        p = stop + 1;
      }
    }
    out.append(chunk.data(), got);
  }
  return out;
}

}  // namespace

std::string read_file(const fs::path& path) {
  return read_whole(path, nullptr);
}

std::string read_text_file(const fs::path& path, const TextLimits& limits) {
  return read_whole(path, &limits);
}

std::string sha256_file(const fs::path& path) {
  return sha256_hex(read_file(path));
}

std::string sha256_of_files(const std::vector<fs::path>& files) {
  std::string manifest, last;
  for (const fs::path& f : files) {
    last = sha256_file(f);
    manifest += f.filename().string() + " " + last + "\n";
  }
  return files.size() == 1 ? last : files.empty() ? "" : sha256_hex(manifest);
}

std::string_view strip_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

namespace {

fs::path sibling(const fs::path& target, const char* kind) {
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  return dir / ("." + target.filename().string() + "." + kind + "-" + std::to_string(::getpid()));
}

fs::path folder_of(const fs::path& target) {
  fs::path dir = target.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

fs::path temporary_for(const fs::path& target) {
  return sibling(target, "tmp");
}

// Temporaries of `target` left by a process that no longer runs (killed during a write:
// `.NAME.tmp-PID`, `.NAME.old-PID`) are removed, so a kill -9 costs no disk space for good. Only
// our own pattern, only for this target, and only when PID is not a live process.
void remove_stale_temporaries(const fs::path& target) {
  const std::string name = target.filename().string();
  if (name.empty()) return;
  std::error_code ec;
  fs::directory_iterator it(folder_of(target), ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it) {
    const std::string file = entry.path().filename().string();
    for (const char* kind : {".tmp-", ".old-"}) {
      const std::string prefix = "." + name + kind;
      if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string digits = file.substr(prefix.size());
      if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
        continue;
      const auto pid = static_cast<pid_t>(std::stol(digits));
      if (pid <= 0 || pid == ::getpid()) continue;
      if (::kill(pid, 0) != 0 && errno == ESRCH) ::unlink(entry.path().c_str());
    }
  }
}

// Checks that `target` can be replaced: its folder exists and is writable, and it is not itself
// a folder.
void check_target(const fs::path& target) {
  if (target.filename().empty() || target.filename() == "." || target.filename() == "..") {
    throw IoError(target.string() + ": cannot write: not a file name");
  }
  const fs::path dir = folder_of(target);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      // Missing output folders are created at commit: the nearest existing one must be a
      // writable folder.
      fs::path up = dir;
      while (!up.empty() && up != up.parent_path() && ::stat(up.c_str(), &st) != 0 &&
             errno == ENOENT) {
        up = up.parent_path();
      }
      if (up.empty()) up = ".";
      if (::stat(up.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw IoError(target.string() + ": cannot write: " + up.string() + " is not a directory");
      }
      if (::access(up.c_str(), W_OK | X_OK) != 0) {
        throw IoError(target.string() + ": cannot write: directory " + up.string() + ": " +
                      reason(errno));
      }
      return;
    }
    throw IoError(target.string() + ": cannot write: directory " + dir.string() + ": " +
                  reason(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw IoError(target.string() + ": cannot write: " + dir.string() + " is not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw IoError(target.string() + ": cannot write: directory " + dir.string() + ": " +
                  reason(errno));
  }
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw IoError(target.string() + ": cannot write: it is a directory",
                  "name a file, not a folder");
  }
}

// Creates the missing folders above `target` (output folders are made when missing) and returns
// the ones it made, outermost first, so a failed write can remove them again.
std::vector<fs::path> make_parent_folders(const fs::path& target) {
  std::vector<fs::path> made;
  for (fs::path dir = target.parent_path(); !dir.empty() && !fs::exists(dir);
       dir = dir.parent_path()) {
    made.insert(made.begin(), dir);
  }
  for (const auto& dir : made) {
    std::error_code ec;
    if (!fs::create_directory(dir, ec) && ec) {
      throw IoError(target.string() + ": cannot create folder " + dir.string() + ": " +
                    ec.message());
    }
  }
  return made;
}

void remove_folders(const std::vector<fs::path>& made) {
  for (auto it = made.rbegin(); it != made.rend(); ++it) {
    std::error_code ec;
    fs::remove(*it, ec);  // only when empty
  }
}

void write_temporary(const fs::path& tmp, const fs::path& target, const std::string& content,
                     bool durable = true) {
  fs::path dir = target.parent_path();
  std::error_code ec;
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    throw IoError(target.string() + ": cannot write: directory " + dir.string() +
                  " does not exist");
  }
  remove_stale_temporaries(target);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(target.string() + ": cannot write: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError(target.string() + ": write failed: " + std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
  }
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw IoError(target.string() + ": write failed: " + std::strerror(errno));
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, const std::string& content, bool durable) {
  const fs::path tmp = temporary_for(path);
  const auto made = make_parent_folders(path);
  try {
    write_temporary(tmp, path, content, durable);
  } catch (...) {
    remove_folders(made);
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw IoError(path.string() + ": rename failed: " + std::strerror(saved));
  }
}

namespace {

// This machine's name as it goes into a file name ("host" when it has none).
const std::string& host_tag() {
  static const std::string tag = [] {
    constexpr std::size_t kMaxHost = 40;
    char buf[256] = {};
    std::string out;
    if (::gethostname(buf, sizeof buf - 1) == 0) {
      for (const char* c = buf; *c && out.size() < kMaxHost; ++c) {
        const bool keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                          (*c >= '0' && *c <= '9') || *c == '.' || *c == '_';
        out += keep ? *c : '_';
      }
    }
    return out.empty() ? std::string("host") : out;
  }();
  return tag;
}

// 64 random bits for a temporary's name (not a result: std::random_device is fine here), mixed
// with a per-process counter so two threads never draw the same name either.
std::string random_tag() {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::random_device device;
  const std::uint64_t r = (static_cast<std::uint64_t>(device()) << 32) ^ device() ^
                          (counter.fetch_add(1) * 0x9E3779B97F4A7C15ULL);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
  return buf;
}

// Temporaries `.NAME.part-HOST-PID-*` of `target` left by a writer of this host that no longer
// runs. Another host's are never touched: its process ids mean nothing here.
void remove_stale_shared_temporaries(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".part-" + host_tag() + "-";
  std::error_code ec;
  fs::directory_iterator it(folder_of(target), ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) continue;
    const std::size_t dash = file.find('-', prefix.size());
    const std::string digits = file.substr(prefix.size(), dash - prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) ::unlink(entry.path().c_str());
  }
}

// Test hook of the cache stress test ($WINOKIT_TEST_STALL_SHARED_WRITE seconds): a shared write
// stops half-way through its temporary, so the test can kill the writer mid-write for sure.
double stall_seconds() {
  static const double seconds = [] {
    const char* env = std::getenv("WINOKIT_TEST_STALL_SHARED_WRITE");
    return env && *env ? std::atof(env) : 0.0;
  }();
  return seconds;
}

}  // namespace

void write_file_shared(const fs::path& path, const std::string& content) {
  remove_stale_shared_temporaries(path);
  fs::path tmp;
  int fd = -1;
  constexpr int kTries = 8;  // a name already taken (64 random bits) is astronomically rare
  for (int attempt = 0; attempt < kTries && fd < 0; ++attempt) {
    tmp = folder_of(path) / ("." + path.filename().string() + ".part-" + host_tag() + "-" +
                             std::to_string(::getpid()) + "-" + random_tag());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw IoError(path.string() + ": cannot write: " + std::strerror(errno));
  const double stall = stall_seconds();
  std::size_t done = 0;
  while (done < content.size()) {
    std::size_t want = content.size() - done;
    if (stall > 0 && done == 0 && content.size() > 1) want = content.size() / 2;
    const ssize_t n = ::write(fd, content.data() + done, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError(path.string() + ": write failed: " + std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
    if (stall > 0 && done < content.size())
      std::this_thread::sleep_for(std::chrono::duration<double>(stall));
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw IoError(path.string() + ": write failed: " + std::strerror(saved));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw IoError(path.string() + ": rename failed: " + std::strerror(saved));
  }
}

void OutputSet::add(fs::path path, std::string content) {
  files_.emplace_back(std::move(path), std::move(content));
}

void OutputSet::add_in(const fs::path& folder, const std::string& name, std::string content) {
  const fs::path leaf(name);
  if (name.empty() || name == "." || name == ".." || leaf.has_parent_path() || leaf.is_absolute() ||
      name.find('\0') != std::string::npos) {
    throw UsageError("'" + name + "' is not a file name inside " + folder.string(),
                     "names built from data go through safe_file_name");
  }
  const fs::path path = folder / leaf;
  const fs::path inside = path.lexically_normal().parent_path();
  if (inside != (folder / "x").lexically_normal().parent_path())  // belt and braces
    throw UsageError(path.string() + ": not inside " + folder.string());
  add(path, std::move(content));
}

std::string safe_file_name(std::string_view raw) {
  constexpr std::size_t kMaxName = 120;
  std::string out;
  bool changed = false;
  for (const char c : raw) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || (c == '.' && !out.empty());
    out += keep ? c : '_';
    changed |= !keep;
  }
  if (out.size() > kMaxName) {
    out.resize(kMaxName);
    changed = true;
  }
  if (out.empty()) {
    out = "_";
    changed = true;
  }
  if (changed) out += "-" + sha256_hex(std::string(raw)).substr(0, 8);
  return out;
}

void OutputSet::commit() {
  // 1. Every target, before anything is written.
  std::set<fs::path> seen;
  for (const auto& [target, content] : files_) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(fs::absolute(target, ec), ec);
    if (ec) key = fs::absolute(target).lexically_normal();
    if (!seen.insert(key).second) {
      throw UsageError(target.string() + ": named for two outputs",
                       "give every output its own file");
    }
    check_target(target);
  }
  // 2. Every temporary file.
  std::vector<fs::path> temporaries;
  std::vector<fs::path> made;
  try {
    for (const auto& [target, content] : files_) {
      const auto folders = make_parent_folders(target);
      made.insert(made.end(), folders.begin(), folders.end());
      fs::path tmp = temporary_for(target);
      write_temporary(tmp, target, content);
      temporaries.push_back(tmp);
    }
  } catch (...) {
    for (const auto& tmp : temporaries)
      ::unlink(tmp.c_str());
    remove_folders(made);
    throw;
  }
  // 3. The renames, each replaced file kept as a hard link until all have succeeded.
  struct Done {
    fs::path backup;  // empty: the target did not exist
  };
  std::vector<Done> done;
  auto roll_back = [&](std::size_t failed) {
    for (std::size_t j = done.size(); j-- > 0;) {
      const fs::path& target = files_[j].first;
      if (done[j].backup.empty()) {
        ::unlink(target.c_str());
      } else {
        ::rename(done[j].backup.c_str(), target.c_str());
      }
    }
    for (std::size_t j = failed; j < temporaries.size(); ++j)
      ::unlink(temporaries[j].c_str());
  };
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const fs::path& target = files_[i].first;
    if (before_rename_for_testing) before_rename_for_testing(i);
    Done entry;
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        roll_back(i);
        throw IoError(target.string() + ": cannot write: it is a directory",
                      "no output was changed");
      }
      entry.backup = sibling(target, "old");
      ::unlink(entry.backup.c_str());
      if (::link(target.c_str(), entry.backup.c_str()) != 0) {
        // A file system without hard links: keep a copy instead.
        const int saved = errno;
        try {
          if (!S_ISREG(st.st_mode)) throw IoError(std::strerror(saved));
          write_temporary(entry.backup, target, read_file(target), false);
        } catch (const std::exception& e) {
          roll_back(i);
          throw IoError(
              target.string() + ": cannot keep the old file while replacing it: " + e.what(),
              "no output was changed");
        }
      }
    }
    if (::rename(temporaries[i].c_str(), target.c_str()) != 0) {
      const int saved = errno;
      if (!entry.backup.empty()) ::unlink(entry.backup.c_str());
      roll_back(i);
      throw IoError(target.string() + ": cannot write: " +
                        (saved == EISDIR || saved == ENOTEMPTY || saved == EEXIST
                             ? std::string("it is a directory")
                             : std::string(std::strerror(saved))),
                    "no output was changed");
    }
    done.push_back(std::move(entry));
  }
  for (const auto& entry : done) {
    if (!entry.backup.empty()) ::unlink(entry.backup.c_str());
  }
  files_.clear();
}

}  // namespace winokit
