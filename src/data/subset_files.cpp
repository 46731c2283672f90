// One annotation file per subset in a release folder (data/subset_files.hpp).
#include "winokit/data/subset_files.hpp"

#include "winokit/core/error.hpp"

namespace winokit {

namespace fs = std::filesystem;

std::vector<SubsetFile> find_subset_files(const fs::path& path, const SubsetLayout& layout) {
  std::vector<SubsetFile> found;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::string missing;
    for (const auto& subset : layout.subsets) {
      bool here = false;
      for (const std::string& name : subset.second) {
        if (fs::is_regular_file(path / name, ec)) {
          found.push_back({subset.first, path / name});
          here = true;
          break;
        }
      }
      if (!here) missing += (missing.empty() ? "" : ", ") + subset.second.front();
    }
    if (found.empty() && !layout.empty_message.empty()) {
      throw UsageError(path.string() + ": " + layout.empty_message, layout.empty_hint);
    }
    if (!missing.empty()) {
      throw UsageError(path.string() + ": " + layout.label + "(s) missing: " + missing,
                       layout.missing_hint);
    }
    return found;
  }
  if (!fs::exists(path, ec)) throw IoError(path.string() + ": not found");
  for (const auto& subset : layout.subsets)
    for (const std::string& name : subset.second)
      if (path.filename() == name) return {{subset.first, path}};
  throw UsageError(path.string() + ": not a " + layout.label, layout.unknown_hint);
}

std::vector<fs::path> files_of(const std::vector<SubsetFile>& found) {
  std::vector<fs::path> files;
  for (const SubsetFile& f : found)
    files.push_back(f.file);
  return files;
}

}  // namespace winokit
