// A benchmark released as one annotation file per subset in one folder (SugarCrepe's data/,
// What'sUp's data/, ARO's folder): which file holds which subset, checked before anything is
// read. A folder is the whole benchmark (every subset's file must be there: a missing one would
// silently shrink N); one file given alone is that subset.
//
//   const winokit::SubsetLayout layout{"SugarCrepe subset file", {{"add_obj", {"add_obj.json",
//       "add_ent.json"}}, ...}, "the release's data/ folder has all 7; ..."};
//   for (const winokit::SubsetFile& f : winokit::find_subset_files(path, layout)) read(f);
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(data);

namespace winokit {

struct SubsetLayout {
  std::string label;  // what one file is, in messages: "What'sUp annotation file"
  // Each subset in the release's order, with the file names it may have (the current one first,
  // then older names).
  std::vector<std::pair<std::string, std::vector<std::string>>> subsets;
  std::string missing_hint;  // the hint of the "missing" error
  std::string unknown_hint;  // the hint when a single file is not one of the release's
  // When set: a folder holding none of the files is this UsageError (PATH: empty_message).
  std::string empty_message, empty_hint;
};

struct SubsetFile {
  std::string subset;
  std::filesystem::path file;
};

// `path` a folder: every subset's file, in the layout's order (UsageError "PATH: LABEL(s)
// missing: a.json, b.json" naming the current names of those absent). `path` a file: that one
// subset (IoError when absent, UsageError "PATH: not a LABEL" when its name is none of the
// layout's).
std::vector<SubsetFile> find_subset_files(const std::filesystem::path& path,
                                          const SubsetLayout& layout);

// The files of `found`, in order (for sha256_of_files).
std::vector<std::filesystem::path> files_of(const std::vector<SubsetFile>& found);

}  // namespace winokit
