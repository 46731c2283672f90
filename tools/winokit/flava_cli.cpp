#include "flava_cli.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/model/clip_model.hpp"
#include "winokit/model/compute.hpp"

namespace winokit::cli {

bool is_flava_model(const ModelFlags& flags) {
  return !flags.model.empty() && is_flava_checkpoint(flags.model);
}

void refuse_flava(const std::string& dir) {
  throw UsageError(dir +
                   " is a FLAVA checkpoint: this command is not for this architecture (it needs "
                   "CLIP's towers, or ViLT's word-patch alignment). FLAVA runs with eval --head "
                   "itm|contrastive, score, winogavil --images, retrieval and serve.");
}

FlavaRuntime load_flava(const ModelFlags& flags, const std::string& head) {
  if (!flags.preprocess.empty()) {
    throw UsageError("--preprocess is for CLIP; FLAVA uses its own image processor");
  }
  if (!flags.tokenizer.empty()) {
    throw UsageError("--tokenizer is for CLIP; FLAVA reads vocab.txt from its checkpoint folder");
  }
  std::optional<FlavaHead> h;
  if (!head.empty()) h = parse_flava_head(head);
  set_compute_threads(flags.threads);
  FlavaRunOptions o;
  o.batch_size = flags.batch_size;
  if (!flags.quiet_progress) o.on_progress = progress_bar();
  // Start-up (reading and packing the weights, the tokenizer) takes seconds on a real
  // checkpoint: say so, and how long it took, rather than sit silent.
  const bool tell = !flags.quiet_progress;
  if (tell) progress_note("loading the FLAVA checkpoint " + flags.model + " ...");
  const auto start = std::chrono::steady_clock::now();
  FlavaRuntime rt = FlavaRuntime::load(flags.model, h, std::move(o));
  if (tell) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    progress_note("FLAVA loaded in " + std::string(secs) + " s");
  }
  return rt;
}

int run_flava_score(const ModelFlags& flags, const std::string& image,
                    const std::vector<std::string>& captions) {
  for (const auto& c : captions) {
    if (!is_valid_utf8(c)) throw UsageError("caption is not valid UTF-8");
  }
  FlavaRuntime rt = load_flava(flags, "contrastive");
  rt.options.on_progress = {};
  const ImageRequest req = image_file_request(image);
  const std::vector<std::function<ImageBytes()>> images = {req.read};
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    pairs.emplace_back(c, 0);
  const std::vector<double> con = flava_score_pairs(rt, images, captions, pairs);
  std::vector<double> itm;
  if (rt.model->has_itm()) {
    rt.head = FlavaHead::Itm;
    itm = flava_score_pairs(rt, images, captions, pairs);
  }
  std::cout << "| Caption | Contrastive |" << (itm.empty() ? "" : " ITM P(match) |")
            << "\n|---|---:|" << (itm.empty() ? "" : "---:|") << "\n";
  for (std::size_t i = 0; i < captions.size(); ++i) {
    char line[96];
    if (itm.empty()) {
      std::snprintf(line, sizeof line, "%.4f", con[i]);
    } else {
      std::snprintf(line, sizeof line, "%.4f | %.4f", con[i], itm[i]);
    }
    std::cout << "| " << captions[i] << " | " << line << " |\n";
  }
  std::cout << "\nContrastive: exp(logit_scale) * cosine of the projected [CLS] embeddings "
               "(FLAVA's contrastive_logits_per_image)."
            << (itm.empty() ? " This checkpoint has no ITM head.\n"
                            : " ITM: the ITM head's softmax probability of \"match\".\n");
  return 0;
}

ScoreMatrix flava_retrieval_matrix(const ModelFlags& flags, const std::string& head,
                                   const WinogroundDataset& dataset, nlohmann::json& source) {
  FlavaRuntime rt = load_flava(flags, head);
  const std::size_t n = 2 * dataset.examples.size();
  if (rt.head == FlavaHead::Itm) {
    std::cerr << "winokit: FLAVA ITM retrieval scores every caption with every image: " << n * n
              << " multimodal forward passes (" << n << " x " << n
              << "; --rerank K scores only a dual encoder's top K)\n";
    auto bar = rt.options.on_progress;
    auto start =
        std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    auto told = std::make_shared<bool>(false);
    rt.options.on_progress = [bar, start, told](const std::string& stage, std::size_t done,
                                                std::size_t all) {
      if (!*told && done > 0 && done < all) {
        *told = true;
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count();
        const double rate = static_cast<double>(done) / std::max(secs, 1e-9);
        std::fprintf(stderr, "winokit: %.1f pairs/s: about %.0f s for the %zu pairs\n", rate,
                     static_cast<double>(all) / rate, all);
      }
      if (bar) bar(stage, done, all);
    };
  }
  ScoreMatrix m = flava_score_matrix(rt, dataset);
  source = rt.describe();
  source["retrieval"] = rt.head == FlavaHead::Itm
                            ? "full scoring: every caption with every image (ITM)"
                            : "contrastive: every caption with every image (dot products)";
  return m;
}

std::vector<std::vector<std::string>> flava_winogavil(const ModelFlags& flags,
                                                      const AssociationDataset& ds,
                                                      const std::string& images,
                                                      const std::string& captions, bool supervised,
                                                      const std::string& prompt_template,
                                                      nlohmann::json& source) {
  if (!captions.empty()) {
    throw UsageError(
        "--captions (text-only candidates) is for CLIP; FLAVA scores the cue with "
        "each candidate image: give --images DIR");
  }
  if (supervised) throw UsageError("--supervised trains on CLIP embeddings: not for FLAVA");
  FlavaRuntime rt = load_flava(flags, "");
  AssociationSolveOptions so;
  so.prompt_template = prompt_template;
  SolveResult solved = flava_solve_with_images(rt, ds, resolve_candidate_images(ds, images), so);
  source = rt.describe();
  source["prompt_template"] = prompt_template;
  source["candidates"] = "images (the prompt scored with each candidate image)";
  source["embeddings"] = {{"images_computed", solved.stats.images_computed},
                          {"images_cached", 0},
                          {"texts_computed", solved.stats.texts_computed},
                          {"texts_cached", 0}};
  return std::move(solved.predictions);
}

}  // namespace winokit::cli
