#include "vilt_cli.hpp"

#include <set>

#include "flava_cli.hpp"
#include "winokit/eval/clip_scorer.hpp"
#include "winokit/model/embedding_runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/clip_model.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/heatmap_report.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit::cli {

bool is_vilt_model(const ModelFlags& flags) {
  return !flags.model.empty() && is_vilt_checkpoint(flags.model);
}

void refuse_vilt(const std::string& dir) {
  throw UsageError(dir +
                   " is a ViLT checkpoint (a single-stream image-text matching model): this "
                   "command needs a dual encoder's separate image and text embeddings, so it is "
                   "not for this architecture. ViLT runs with eval, score, winogavil --images, "
                   "retrieval and heatmap.");
}

ViltRuntime load_vilt(const ModelFlags& flags) {
  if (!flags.preprocess.empty()) {
    throw UsageError("--preprocess is for CLIP; ViLT uses its own image processor");
  }
  if (!flags.tokenizer.empty()) {
    throw UsageError("--tokenizer is for CLIP; ViLT reads vocab.txt from its checkpoint folder");
  }
  set_compute_threads(flags.threads);
  ViltRunOptions o;
  o.batch_size = flags.batch_size;
  if (!flags.quiet_progress) o.on_progress = progress_bar();
  // Start-up (reading and packing the weights, the tokenizer) takes seconds on a real
  // checkpoint: say so, and how long it took, rather than sit silent.
  const bool tell = !flags.quiet_progress;
  if (tell) progress_note("loading the ViLT checkpoint " + flags.model + " ...");
  const auto start = std::chrono::steady_clock::now();
  ViltRuntime rt = ViltRuntime::load(flags.model, std::move(o));
  if (tell) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    progress_note("ViLT loaded in " + std::string(secs) + " s");
  }
  return rt;
}

int run_vilt_score(const ModelFlags& flags, const std::string& image,
                   const std::vector<std::string>& captions) {
  for (const auto& c : captions) {
    if (!is_valid_utf8(c)) throw UsageError("caption is not valid UTF-8");
  }
  ViltRuntime rt = load_vilt(flags);
  rt.options.on_progress = {};
  const ImageRequest req = image_file_request(image);
  const std::vector<std::function<ImageBytes()>> images = {req.read};
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t c = 0; c < captions.size(); ++c)
    pairs.emplace_back(c, 0);
  const std::vector<double> s = vilt_score_pairs(rt, images, captions, pairs);
  const bool itm = rt.model->config().head == ViltHead::Itm;
  std::cout << "| Caption | " << (itm ? "P(match)" : "Score") << " |\n|---|---:|\n";
  for (std::size_t i = 0; i < s.size(); ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "%.4f", s[i]);
    std::cout << "| " << captions[i] << " | " << line << " |\n";
  }
  std::cout << (itm ? "\nScore: the ITM head's softmax probability of \"match\" (ViLT).\n"
                    : "\nScore: ViLT's ranking logit (ViltForImageAndTextRetrieval), one joint "
                      "forward pass per caption.\n");
  return 0;
}

ScoreMatrix vilt_retrieval_matrix(const ModelFlags& flags, const WinogroundDataset& dataset,
                                  nlohmann::json& source) {
  ViltRuntime rt = load_vilt(flags);
  const std::size_t n = 2 * dataset.examples.size();
  const std::size_t total = n * n;
  std::cerr << "winokit: ViLT retrieval scores every caption with every image: " << total
            << " joint forward passes (" << n << " x " << n << ")\n";
  // A one-time estimate after the first batch, then the usual progress bar.
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
  ScoreMatrix m = vilt_score_matrix(rt, dataset);
  source = rt.describe();
  source["retrieval"] = "full scoring: every caption with every image";
  return m;
}

std::vector<std::vector<std::string>> vilt_winogavil(const ModelFlags& flags,
                                                     const AssociationDataset& ds,
                                                     const std::string& images,
                                                     const std::string& captions, bool supervised,
                                                     const std::string& prompt_template,
                                                     nlohmann::json& source) {
  if (!captions.empty()) {
    throw UsageError(
        "--captions (text-only candidates) needs a dual encoder; ViLT scores the "
        "cue with each candidate image: give --images DIR");
  }
  if (supervised) {
    throw UsageError("--supervised trains on dual-encoder embeddings: not for ViLT");
  }
  ViltRuntime rt = load_vilt(flags);
  AssociationSolveOptions so;
  so.prompt_template = prompt_template;
  SolveResult solved = vilt_solve_with_images(rt, ds, resolve_candidate_images(ds, images), so);
  source = rt.describe();
  source["prompt_template"] = prompt_template;
  source["candidates"] = "images (joint forward pass of the prompt with each candidate)";
  source["embeddings"] = {{"images_computed", solved.stats.images_computed},
                          {"images_cached", 0},
                          {"texts_computed", solved.stats.texts_computed},
                          {"texts_cached", 0}};
  return std::move(solved.predictions);
}

namespace {

// Row-wise (by_rows) or column-wise top-k indices of a matrix; ties by index.
std::vector<std::vector<int>> top_k(const ScoreMatrix& m, int k, bool by_rows) {
  const int lines = by_rows ? m.captions : m.images, items = by_rows ? m.images : m.captions;
  std::vector<std::vector<int>> out(static_cast<std::size_t>(lines));
  for (int l = 0; l < lines; ++l) {
    std::vector<int> idx(static_cast<std::size_t>(items));
    for (int i = 0; i < items; ++i)
      idx[static_cast<std::size_t>(i)] = i;
    auto at = [&](int i) { return by_rows ? m.at(l, i) : m.at(i, l); };
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return at(a) > at(b); });
    idx.resize(static_cast<std::size_t>(std::min(k, items)));
    out[static_cast<std::size_t>(l)] = std::move(idx);
  }
  return out;
}

// The re-ranked matrix of one direction: each line's top-k entries get
// (the line's best candidate score + 1 + the dense rank of their ITM score), the others keep
// their candidate score, so every re-scored entry ranks above every other, in ITM order.
ScoreMatrix reranked(const ScoreMatrix& cand, const std::vector<std::vector<int>>& top,
                     const std::map<std::pair<int, int>, double>& itm, bool by_rows) {
  ScoreMatrix out = cand;
  for (std::size_t l = 0; l < top.size(); ++l) {
    const int line = static_cast<int>(l);
    auto cell = [&](int i) -> float& {
      const int c = by_rows ? line : i, im = by_rows ? i : line;
      return out.scores[static_cast<std::size_t>(c) * cand.images + im];
    };
    float best = -INFINITY;
    const int items = by_rows ? cand.images : cand.captions;
    for (int i = 0; i < items; ++i)
      best = std::max(best, by_rows ? cand.at(line, i) : cand.at(i, line));
    std::set<double> values;
    for (int i : top[l])
      values.insert(itm.at(by_rows ? std::make_pair(line, i) : std::make_pair(i, line)));
    const std::vector<double> sorted(values.begin(), values.end());
    for (int i : top[l]) {
      const double v = itm.at(by_rows ? std::make_pair(line, i) : std::make_pair(i, line));
      const auto rank = std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
      cell(i) = best + 1.0f + static_cast<float>(rank);
    }
  }
  return out;
}

}  // namespace

RerankedRetrieval rerank_retrieval(const ModelFlags& flags, const std::string& head,
                                   const std::string& candidates, int k,
                                   const WinogroundDataset& ds) {
  if (k < 1) throw UsageError("--rerank K: K must be at least 1");
  const bool flava = is_flava_model(flags);
  if (!flava && !is_vilt_model(flags)) {
    throw UsageError("--rerank K is for image-text matching models (ViLT, FLAVA): --model " +
                     flags.model + " is a dual encoder, whose full matrix is cheap");
  }
  if (flava && head == "contrastive") {
    throw UsageError("--rerank re-scores with the ITM head: drop --head contrastive");
  }
  // 1. The candidates' full matrix.
  ScoreMatrix cand;
  nlohmann::json cand_source;
  ModelFlags cf = flags;
  cf.model = candidates;
  if (candidates.empty() && !flava) {
    throw UsageError(
        "--rerank with ViLT needs --rerank-with DIR: a CLIP folder whose top K "
        "ViLT re-scores");
  }
  if (candidates.empty() || is_flava_model(cf)) {
    if (candidates.empty()) cf.model = flags.model;
    cand = flava_retrieval_matrix(cf, "contrastive", ds, cand_source);
  } else {
    if (is_vilt_model(cf)) {
      throw UsageError("--rerank-with " + candidates +
                       " is a ViLT checkpoint: give a dual "
                       "encoder (a CLIP folder, or a FLAVA folder for its contrastive head)");
    }
    ClipRuntime rt = cf.load();
    ImageStore store = ImageStore::open(ds.root, ds.images);
    DatasetItems items = dataset_items(ds, store);
    const auto t = embed_texts(rt, items.captions);
    const auto im = embed_images(rt, items.images);
    const int n = static_cast<int>(items.captions.size());
    cand = matrix_from_embeddings(t, im, n, n, rt.model->config().embed_dim);
    cand_source = rt.describe();
  }
  // 2. The pairs in either direction's top K, scored once each by the ITM model.
  const auto rows = top_k(cand, k, true), cols = top_k(cand, k, false);
  std::set<std::pair<int, int>> wanted;
  for (std::size_t c = 0; c < rows.size(); ++c)
    for (int i : rows[c])
      wanted.emplace(static_cast<int>(c), i);
  for (std::size_t i = 0; i < cols.size(); ++i)
    for (int c : cols[i])
      wanted.emplace(c, static_cast<int>(i));
  ImageStore store = ImageStore::open(ds.root, ds.images);
  std::vector<std::function<ImageBytes()>> images;
  std::vector<std::string> captions;
  for (const auto& ex : ds.examples) {
    for (std::size_t j = 0; j < 2; ++j) {
      const std::string name = ex.images[j];
      images.emplace_back([&store, name] { return store.read(name); });
      captions.push_back(ex.captions[j]);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (const auto& [c, i] : wanted)
    pairs.emplace_back(static_cast<std::size_t>(c), static_cast<std::size_t>(i));
  std::cerr << "winokit: re-ranking the top " << k << " of " << cand.captions << " x "
            << cand.images << " candidates: " << pairs.size() << " ITM forward passes instead of "
            << static_cast<std::size_t>(cand.captions) * cand.images << "\n";
  std::vector<double> s;
  nlohmann::json itm_source;
  if (flava) {
    FlavaRuntime rt = load_flava(flags, "itm");
    s = flava_score_pairs(rt, images, captions, pairs);
    itm_source = rt.describe();
  } else {
    ViltRuntime rt = load_vilt(flags);
    s = vilt_score_pairs(rt, images, captions, pairs);
    itm_source = rt.describe();
  }
  std::map<std::pair<int, int>, double> itm;
  for (std::size_t p = 0; p < pairs.size(); ++p)
    itm[{static_cast<int>(pairs[p].first), static_cast<int>(pairs[p].second)}] = s[p];
  RerankedRetrieval r;
  r.text_to_image = reranked(cand, rows, itm, true);
  r.image_to_text = reranked(cand, cols, itm, false);
  r.source = itm_source;
  r.source["retrieval"] = "re-ranking: the candidates' top " + std::to_string(k) +
                          " per query re-scored by the ITM model, ranked above the rest (which "
                          "keep the candidates' order)";
  r.source["rerank"] = {{"k", k}, {"itm_pairs_scored", pairs.size()}, {"candidates", cand_source}};
  return r;
}

int run_vilt_heatmap(const ModelFlags& flags, const WinogroundDataset& ds,
                     const std::vector<std::size_t>& chosen, const std::string& html_path,
                     const std::string& out_dir) {
  ViltRuntime rt = load_vilt(flags);
  const ViltConfig& c = rt.model->config();
  ImageStore store = ImageStore::open(ds.root, ds.images);
  HeatmapReport report{model_name(flags.model), {}, rt.describe()};
  report.title = "ViLT word-patch alignment";
  report.method =
      "Each map: the optimal-transport plan (IPOT, beta 0.1, 1000 iterations, as ViLT's demo) "
      "between the caption's tokens and the image patches, on cosine distances of the final "
      "states; scaled as the demo does (standardised, clipped to [1, 3], scaled to [0, 1]).";
  report.scale_low = "not aligned";
  report.scale_high = "most aligned";
  OutputSet out;
  std::size_t written = 0;
  for (std::size_t e : chosen) {
    const WinogroundExample& ex = ds.examples[e];
    HeatmapExample& shown = report.examples.emplace_back(HeatmapExample{ex.id, {}});
    for (std::size_t k = 0; k < 2; ++k) {
      const ImageBytes bytes = store.read(ex.images[k]);
      for (std::size_t q = 0; q < 2; ++q) {
        const ViltAlignment a = vilt_word_patch_alignment(rt, bytes, ex.captions[q]);
        HeatmapPanel& panel = shown.panels.emplace_back(
            HeatmapPanel{static_cast<int>(k), static_cast<int>(q), ex.captions[q], {}, {}});
        panel.note = "score " + fixed(a.score, 4);
        for (std::size_t t = 0; t < a.tokens.size(); ++t) {
          std::string png = render_vilt_heatmap_png(a.image, c, vilt_display_map(a.transport[t]),
                                                    a.grid_h, a.grid_w);
          if (!out_dir.empty()) {
            out.add_in(out_dir,
                       heatmap_file_name(safe_file_name(ex.id), static_cast<int>(k),
                                         static_cast<int>(q), t, a.tokens[t]),
                       png);
          }
          if (!html_path.empty()) panel.maps.emplace_back(a.tokens[t], std::move(png));
          ++written;
        }
      }
    }
  }
  if (!html_path.empty()) out.add(html_path, heatmap_html(report));
  out.commit();
  std::cout << "rendered " << written << " word-patch alignment maps for " << chosen.size()
            << " example(s)" << (html_path.empty() ? "" : " into " + html_path) << "\n";
  return 0;
}

}  // namespace winokit::cli
