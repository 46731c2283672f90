// Solving WinoGAViL associations with any model, zero-shot: each candidate image (or, text-only,
// each candidate's caption) is scored against a prompt made from the cue, "A <cue>" or
// "An <cue>" by the cue's first letter being a vowel (as the original code does; the template
// is configurable), and the k best are selected, ties broken by candidate order.
//
//   auto images = winokit::resolve_candidate_images(ds, "images/");   // lists every missing one
//   auto solved = winokit::solve_with_images(*model, ds, images, {});   // a VlModel
//   auto r = winokit::evaluate_associations(ds, solved.predictions, {});
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(eval);

namespace winokit {

struct AssociationSolveOptions {
  // {A}: "A" or "An"; {a}: "a" or "an"; {cue}: the cue.
  std::string prompt_template = "{A} {cue}";
};

std::string cue_prompt(const std::string& cue, const std::string& prompt_template);

// Candidate name -> image file (<name>.png/.jpg/.jpeg/.webp in `dir`; names may contain
// spaces). Throws IoError listing every missing name.
std::map<std::string, std::filesystem::path> resolve_candidate_images(
    const AssociationDataset& ds, const std::filesystem::path& dir);

// Candidate name -> caption, from a table with an image/name column and a caption column.
std::map<std::string, std::string> load_candidate_captions(const std::string& file);

struct SolveResult {
  std::vector<std::vector<std::string>> predictions;
  std::vector<std::vector<double>> scores;        // per instance, per candidate (candidate order)
  std::vector<std::vector<float>> prompt_embeds;  // per instance
  std::map<std::string, std::vector<float>> candidate_embeds;  // per candidate name
  EmbedStats stats;
};

// The k highest-scoring candidates, ties broken by candidate order.
std::vector<std::string> select_top_k(const std::vector<std::string>& candidates,
                                      const std::vector<double>& scores, int k);

// Any model: a dual encoder scores the prompt's embedding with each candidate's (and the
// embeddings are kept in the result, for --supervised); a cross-encoder scores the prompt
// jointly with each candidate image.
SolveResult solve_with_images(const VlModel& model, const AssociationDataset& ds,
                              const std::map<std::string, std::filesystem::path>& images,
                              const AssociationSolveOptions& options);
// Text-only candidates: a dual encoder's text embeddings of the candidates' captions.
SolveResult solve_with_captions(const DualEncoder& encoder, const AssociationDataset& ds,
                                const std::map<std::string, std::string>& captions,
                                const AssociationSolveOptions& options);

}  // namespace winokit
