#include "winokit/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "winokit/error.hpp"

namespace winokit {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError(path.string() + ": not found");
  if (fs::is_directory(path, ec)) throw IoError(path.string() + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw IoError(path.string() + ": read error");
  return std::move(buffer).str();
}

namespace {

fs::path temporary_for(const fs::path& target) {
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  return dir / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
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
  if (!dir.empty() && !fs::is_directory(dir)) {
    throw IoError(target.string() + ": cannot write: directory " + dir.string() +
                  " does not exist");
  }
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

void OutputSet::add(fs::path path, std::string content) {
  files_.emplace_back(std::move(path), std::move(content));
}

void OutputSet::commit() {
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
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (::rename(temporaries[i].c_str(), files_[i].first.c_str()) != 0) {
      int saved = errno;
      for (std::size_t j = i; j < temporaries.size(); ++j)
        ::unlink(temporaries[j].c_str());
      throw IoError(files_[i].first.string() + ": rename failed: " + std::strerror(saved));
    }
  }
  files_.clear();
}

}  // namespace winokit
