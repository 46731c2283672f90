// MMVP-VLM's official Questions.csv (data/mmvp.hpp), read as scripts/evaluate_vlm.py reads it.
#include "winokit/data/mmvp.hpp"

#include <cerrno>
#include <cstdlib>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

namespace fs = std::filesystem;

const std::vector<std::string>& mmvp_categories() {
  static const std::vector<std::string> names = {"Orientation and Direction",
                                                 "Presence of Specific Features",
                                                 "State and Condition",
                                                 "Quantity and Count",
                                                 "Positional and Relational Context",
                                                 "Color and Appearance",
                                                 "Structural Characteristics",
                                                 "Texts",
                                                 "Viewpoint and Perspective"};
  return names;
}

namespace {

long long question_id(const TableRow& row, const std::string& file) {
  const std::string& s = row.cells[0];
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) {
    throw InputError({file, row.line, "question id"}, "expected an integer, got '" + s + "'");
  }
  return v;
}

}  // namespace

MmvpDataset load_mmvp_vlm(const fs::path& path, const fs::path& images) {
  MmvpDataset d;
  d.root = path;
  std::error_code ec;
  d.csv = fs::is_directory(path, ec) ? path / "Questions.csv" : path;
  if (!fs::is_regular_file(d.csv, ec)) {
    throw IoError(d.csv.string() + ": not found",
                  "pass the MMVP_VLM folder of huggingface.co/datasets/MMVP/MMVP_VLM (with "
                  "Questions.csv) or the CSV itself");
  }
  const fs::path dir = d.csv.parent_path();
  d.images = images;
  if (d.images.empty()) {
    d.images = dir / "MLLM_VLM Images";
    if (!fs::is_directory(d.images, ec) && fs::is_directory(dir / "MMVP_VLM_Images", ec))
      d.images = dir / "MMVP_VLM_Images";
  }
  const std::string file = d.csv.string();
  const std::string text = read_text_file(d.csv);
  const Table t = read_table(text, file);
  if (t.header.size() != 3) {
    throw InputError({file, 1, ""}, "expected 3 columns (question id, type, statement), got " +
                                        std::to_string(t.header.size()));
  }
  if (t.rows.size() % 2 != 0) {
    throw InputError({file, t.rows.back().line, ""},
                     "an odd number of rows: each pair is two consecutive rows");
  }
  const std::size_t want = mmvp_categories().size() * kMmvpPairsPerCategory;
  if (t.rows.size() / 2 != want) {
    throw InputError({file, 0, ""}, "expected the release's " + std::to_string(want) + " pairs (" +
                                        std::to_string(2 * want) + " rows), got " +
                                        std::to_string(t.rows.size() / 2) +
                                        " (evaluate_vlm.py assigns the 9 patterns by position)");
  }
  for (std::size_t k = 0; k < t.rows.size(); k += 2) {
    const TableRow& a = t.rows[k];
    const TableRow& b = t.rows[k + 1];
    MmvpPair p;
    p.index = k / 2;
    p.qid1 = question_id(a, file);
    p.qid2 = question_id(b, file);
    p.type = a.cells[1];
    p.statement1 = a.cells[2];
    p.statement2 = b.cells[2];
    for (const TableRow* r : {&a, &b}) {
      if (r->cells[1].empty()) throw InputError({file, r->line, "type"}, "expected a type");
      if (r->cells[2].empty())
        throw InputError({file, r->line, "statement"}, "expected a statement");
    }
    p.image1 = d.images / p.type / (std::to_string(p.qid1) + ".jpg");
    p.image2 = d.images / p.type / (std::to_string(p.qid2) + ".jpg");
    p.category = mmvp_categories()[p.index / kMmvpPairsPerCategory];
    p.line1 = a.line;
    p.line2 = b.line;
    d.pairs.push_back(std::move(p));
  }
  d.sha256 = sha256_of_files({d.csv});
  return d;
}

}  // namespace winokit
