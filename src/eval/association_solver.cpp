#include "winokit/eval/association_solver.hpp"

#include <algorithm>
#include <numeric>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

namespace fs = std::filesystem;

std::string cue_prompt(const std::string& cue, const std::string& templ) {
  const bool vowel = !cue.empty() && std::string("aeiouAEIOU").find(cue[0]) != std::string::npos;
  std::string out = templ;
  auto replace = [&](const std::string& key, const std::string& value) {
    for (auto pos = out.find(key); pos != std::string::npos;
         pos = out.find(key, pos + value.size())) {
      out.replace(pos, key.size(), value);
    }
  };
  replace("{A}", vowel ? "An" : "A");
  replace("{a}", vowel ? "an" : "a");
  replace("{cue}", cue);
  return out;
}

namespace {

// At most kListedNames names, quoted, then how many more: an error about 1,000 missing files
// stays one readable line.
constexpr std::size_t kListedNames = 10;
std::string name_list(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size() && i < kListedNames; ++i)
    list += (list.empty() ? "" : ", ") + ("'" + names[i] + "'");
  if (names.size() > kListedNames) {
    list += " and " + std::to_string(names.size() - kListedNames) + " more";
  }
  return list;
}

}  // namespace

std::map<std::string, fs::path> resolve_candidate_images(const AssociationDataset& ds,
                                                         const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw IoError(dir.string() + ": not a folder", "pass the images folder with --images");
  std::map<std::string, fs::path> found;
  std::vector<std::string> missing;
  for (const auto& inst : ds.instances) {
    for (const auto& name : inst.candidates) {
      if (found.count(name)) continue;
      if (!normalize_image_name(name)) {
        throw InputError({ds.file, inst.line, "candidates"},
                         "'" + name + "' is not a name inside the image folder");
      }
      bool ok = false;
      for (const char* ext : {".png", ".jpg", ".jpeg", ".webp", ".PNG", ".JPG", ".JPEG"}) {
        fs::path p = dir / (name + ext);
        if (fs::is_regular_file(p)) {
          found[name] = p;
          ok = true;
          break;
        }
      }
      if (!ok && std::find(missing.begin(), missing.end(), name) == missing.end())
        missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    const std::string list = name_list(missing);
    throw IoError(std::to_string(missing.size()) + " candidate image(s) not found in " +
                      dir.string() + ": " + list,
                  "each candidate needs <name>.png/.jpg/.jpeg/.webp");
  }
  return found;
}

std::map<std::string, std::string> load_candidate_captions(const std::string& file) {
  Table t = read_table(read_file(file), file);
  auto name = t.find_column({"image", "name", "image_name", "img_name", "candidate"});
  auto caption = t.find_column({"caption", "text", "description"});
  if (!name || !caption) {
    throw InputError({file, 1, ""}, "expected an image name column and a caption column");
  }
  std::map<std::string, std::string> out;
  for (const auto& row : t.rows) {
    if (!is_valid_utf8(row.cells[*caption]))
      throw InputError({file, row.line, t.header[*caption]}, "invalid UTF-8");
    out[row.cells[*name]] = row.cells[*caption];
  }
  return out;
}

std::vector<std::string> select_top_k(const std::vector<std::string>& candidates,
                                      const std::vector<double>& scores, int k) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<std::string> out;
  for (int i = 0; i < k && i < static_cast<int>(order.size()); ++i) {
    out.push_back(candidates[order[static_cast<std::size_t>(i)]]);
  }
  return out;
}

namespace {

// Scores every (prompt, candidate) pair from embeddings and selects the top k.
SolveResult solve(const DualEncoder& enc, const AssociationDataset& ds,
                  const std::map<std::string, std::size_t>& candidate_index,
                  const std::vector<float>& candidate_embeds, const AssociationSolveOptions& o,
                  SolveResult result) {
  std::vector<std::string> prompts;
  std::map<std::string, std::size_t> prompt_index;
  for (const auto& inst : ds.instances) {
    const std::string p = cue_prompt(inst.cue, o.prompt_template);
    if (prompt_index.emplace(p, prompts.size()).second) prompts.push_back(p);
  }
  const auto text = enc.embed_texts(prompts, &result.stats);
  const int dim = enc.embed_dim();
  for (const auto& inst : ds.instances) {
    const float* t = &text[prompt_index.at(cue_prompt(inst.cue, o.prompt_template)) * dim];
    std::vector<double> s;
    for (const auto& c : inst.candidates) {
      s.push_back(enc.score(t, &candidate_embeds[candidate_index.at(c) * dim]));
    }
    result.predictions.push_back(select_top_k(inst.candidates, s, inst.k()));
    result.scores.push_back(std::move(s));
    result.prompt_embeds.emplace_back(t, t + dim);
  }
  for (const auto& [name, i] : candidate_index) {
    result.candidate_embeds[name] =
        std::vector<float>(candidate_embeds.begin() + static_cast<std::ptrdiff_t>(i * dim),
                           candidate_embeds.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
  }
  return result;
}

}  // namespace

SolveResult solve_with_images(const VlModel& model, const AssociationDataset& ds,
                              const std::map<std::string, fs::path>& images,
                              const AssociationSolveOptions& o) {
  std::vector<ImageRequest> requests;
  std::map<std::string, std::size_t> index;
  for (const auto& [name, path] : images) {
    index[name] = requests.size();
    requests.push_back(image_file_request(path.string(), name));
  }
  SolveResult r;
  if (const DualEncoder* enc = model.dual_encoder()) {
    const auto embeds = enc->embed_images(requests, &r.stats);
    return solve(*enc, ds, index, embeds, o, std::move(r));
  }
  // A cross-encoder: the prompt of each instance scored jointly with each candidate image
  // (every image read and encoded once); no embeddings to keep.
  std::vector<std::string> prompts;
  std::map<std::string, std::size_t> prompt_index;
  std::vector<PairIndex> pairs;
  for (const auto& inst : ds.instances) {
    const std::string p = cue_prompt(inst.cue, o.prompt_template);
    auto [it, added] = prompt_index.emplace(p, prompts.size());
    if (added) prompts.push_back(p);
    for (const auto& c : inst.candidates) {
      auto ci = index.find(c);
      if (ci == index.end()) throw UsageError("candidate '" + c + "' has no image");
      pairs.emplace_back(it->second, ci->second);
    }
  }
  const std::vector<double> s = model.score_pairs(requests, prompts, pairs, &r.stats);
  require_finite(model, s, [&](std::size_t k) {
    return "prompt '" + prompts[pairs[k].first] + "' with image " + requests[pairs[k].second].name;
  });
  std::size_t at = 0;
  for (const auto& inst : ds.instances) {
    std::vector<double> scores(
        s.begin() + static_cast<std::ptrdiff_t>(at),
        s.begin() + static_cast<std::ptrdiff_t>(at + inst.candidates.size()));
    at += inst.candidates.size();
    r.predictions.push_back(select_top_k(inst.candidates, scores, inst.k()));
    r.scores.push_back(std::move(scores));
  }
  return r;
}

SolveResult solve_with_captions(const DualEncoder& enc, const AssociationDataset& ds,
                                const std::map<std::string, std::string>& captions,
                                const AssociationSolveOptions& o) {
  std::vector<std::string> texts, missing;
  std::map<std::string, std::size_t> index;
  for (const auto& inst : ds.instances) {
    for (const auto& c : inst.candidates) {
      if (index.count(c)) continue;
      auto it = captions.find(c);
      if (it == captions.end()) {
        if (std::find(missing.begin(), missing.end(), c) == missing.end()) missing.push_back(c);
        continue;
      }
      index[c] = texts.size();
      texts.push_back(it->second);
    }
  }
  if (!missing.empty()) {
    const std::string list = name_list(missing);
    throw UsageError(std::to_string(missing.size()) + " candidate(s) have no caption: " + list);
  }
  SolveResult r;
  const auto embeds = enc.embed_texts(texts, &r.stats);
  return solve(enc, ds, index, embeds, o, std::move(r));
}

}  // namespace winokit
