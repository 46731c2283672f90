#include "winokit/data/swow.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

namespace fs = std::filesystem;

bool SwowGraph::associated(const std::string& a, const std::string& b) const {
  auto fa = forward.find(a);
  if (fa != forward.end() && fa->second.count(b)) return true;
  auto fb = forward.find(b);
  return fb != forward.end() && fb->second.count(a);
}

SwowGraph load_swow(const std::string& file) {
  Table t = read_table(read_text_file(file), file);
  auto cue = t.find_column({"cue"});
  if (!cue) throw InputError({file, 1, "cue"}, "column missing from the header");
  auto response = t.find_column({"response"});
  auto strength = t.find_column({"strength", "R123.Strength", "count"});
  std::vector<std::size_t> responses;
  for (const char* r : {"R1", "R2", "R3"}) {
    if (auto c = t.find_column({r})) responses.push_back(*c);
  }
  if (!response && responses.empty()) {
    throw InputError({file, 1, ""}, "expected cue,R1,R2,R3 or cue,response,strength columns");
  }
  SwowGraph g;
  auto word = [](const std::string& s) { return to_lower_ascii(trim(s)); };
  for (const auto& row : t.rows) {
    const std::string c = word(row.cells[*cue]);
    if (c.empty()) continue;
    if (response) {
      const std::string r = word(row.cells[*response]);
      if (r.empty() || r == "na" || r == c) continue;
      double s = 1;
      if (strength) {
        auto v = parse_double(row.cells[*strength]);
        if (!v) throw InputError({file, row.line, t.header[*strength]}, "not a number");
        s = *v;
      }
      g.forward[c][r] += s;
    } else {
      for (std::size_t col : responses) {
        const std::string r = word(row.cells[col]);
        if (r.empty() || r == "na" || r == c) continue;
        g.forward[c][r] += 1;
      }
    }
  }
  return g;
}

std::set<std::string> image_names(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw IoError(dir.string() + ": not a folder");
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = to_lower_ascii(e.path().extension().string());
    if (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".webp") {
      names.insert(e.path().stem().string());
    }
  }
  return names;
}

std::string generate_swow_instances(const SwowGraph& graph, const std::set<std::string>& names,
                                    const SwowOptions& o, std::size_t* generated) {
  if (o.min_associations < 1 || o.max_associations < o.min_associations ||
      o.candidate_counts.empty()) {
    throw UsageError("swow: inconsistent association or candidate counts");
  }
  Rng rng(derive_seed(o.seed, "swow"));
  std::vector<std::string> cues;
  for (const auto& [cue, responses] : graph.forward)
    cues.push_back(cue);
  shuffle(cues, rng);
  std::vector<std::string> pool(names.begin(), names.end());
  std::string out =
      "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
      "solvers_jaccard_mean,solvers_jaccard_std,ID\n";
  std::size_t count = 0;
  for (const auto& cue : cues) {
    if (count >= o.max_instances) break;
    // The cue's associations that have an image, strongest first (ties by name).
    std::vector<std::pair<double, std::string>> assoc;
    for (const auto& [r, s] : graph.forward.at(cue)) {
      if (names.count(r) && r != cue) assoc.emplace_back(-s, r);
    }
    std::sort(assoc.begin(), assoc.end());
    if (static_cast<int>(assoc.size()) < o.min_associations) continue;
    const int most = std::min<int>(o.max_associations, static_cast<int>(assoc.size()));
    const int k =
        o.min_associations +
        static_cast<int>(rng.below(static_cast<std::uint32_t>(most - o.min_associations + 1)));
    const int n =
        o.candidate_counts[rng.below(static_cast<std::uint32_t>(o.candidate_counts.size()))];
    if (n <= k) continue;
    std::vector<std::string> distractors;
    for (const auto& name : pool) {
      if (name != cue && !graph.associated(cue, name)) distractors.push_back(name);
    }
    if (static_cast<int>(distractors.size()) < n - k) continue;
    std::vector<std::string> gold, candidates;
    for (int i = 0; i < k; ++i)
      gold.push_back(assoc[static_cast<std::size_t>(i)].second);
    candidates = gold;
    const auto extra = static_cast<std::size_t>(n - k);
    partial_shuffle(distractors, extra, rng);
    candidates.insert(candidates.end(), distractors.begin(),
                      distractors.begin() + static_cast<std::ptrdiff_t>(extra));
    shuffle(candidates, rng);
    out += csv_escape(nlohmann::json(candidates).dump()) + "," + csv_escape(cue) + "," +
           csv_escape(nlohmann::json(gold).dump()) + ",," + std::to_string(k) + "," +
           std::to_string(n) + ",,," + std::to_string(count) + "\n";
    ++count;
  }
  if (generated != nullptr) *generated = count;
  return out;
}

}  // namespace winokit
