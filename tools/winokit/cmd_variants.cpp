// winokit variants generate / eval: caption variants and the augmentation-aware score.
#include <iostream>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct GenerateFlags {
  std::string data, out, substitutions, wordnet = "/usr/share/wordnet";
  std::vector<std::string> methods = {"wordnet-synonym"};
  VariantOptions options;
};

int run_generate(const GenerateFlags& f) {
  WinogroundDataset ds = load_dataset(f.data);
  std::unique_ptr<WordNet> wn;
  VariantOptions o = f.options;
  std::vector<CaptionVariant> all;
  for (const auto& m : f.methods) {
    VariantMethod method;
    if (m == "wordnet-synonym")
      method = VariantMethod::Synonym;
    else if (m == "wordnet-hypernym")
      method = VariantMethod::Hypernym;
    else if (m == "wordnet-hyponym")
      method = VariantMethod::Hyponym;
    else if (m == "substitution")
      method = VariantMethod::Substitution;
    else
      throw UsageError("unknown method '" + m + "'",
                       "wordnet-synonym, wordnet-hypernym, wordnet-hyponym, substitution");
    if (method == VariantMethod::Substitution) {
      if (f.substitutions.empty())
        throw UsageError("substitution needs --substitutions FILE (word,replacement)");
      o.substitutions = load_substitutions(f.substitutions);
    } else if (!wn) {
      wn = std::make_unique<WordNet>(WordNet::open(f.wordnet));
    }
    auto v = generate_variants(ds, method, wn.get(), o);
    all.insert(all.end(), v.begin(), v.end());
  }
  write_file_atomic(f.out, variants_jsonl(ds, all));
  std::cerr << "winokit: wrote " << all.size() << " variants to " << f.out << "\n";
  return 0;
}

struct EvalFlags {
  std::string data, json, markdown, html, images;
  std::vector<std::string> variants;
  std::vector<double> lambdas = {0, 0.25, 0.5, 0.75, 1};
  bool quiet = false;
  bool exclude_original = false;
  ModelFlags model;
};

int run_eval(const EvalFlags& f) {
  WinogroundDataset ds = load_dataset(f.data);
  ds.images = f.images;
  std::vector<CaptionVariant> variants;
  for (const auto& file : f.variants) {
    auto v = load_variants(file, ds);
    variants.insert(variants.end(), v.begin(), v.end());
  }
  ClipRuntime rt = f.model.load();
  ImageStore store = ImageStore::open(ds.root, ds.images);
  DatasetItems items = dataset_items(ds, store);
  const std::vector<ImageRequest>& requests = items.images;
  std::vector<std::string> texts = items.captions;
  for (const auto& v : variants)
    texts.push_back(v.text);
  const auto t = embed_texts(rt, texts);
  const auto im = embed_images(rt, requests);
  const int dim = rt.model->config().embed_dim;
  const double scale = rt.model->logit_scale_exp();
  std::vector<WinogroundScores> original(ds.examples.size());
  for (std::size_t e = 0; e < ds.examples.size(); ++e) {
    for (int c = 0; c < 2; ++c) {
      for (int k = 0; k < 2; ++k) {
        original[e].s[pair_index(c, k)] =
            clip_score(&t[(2 * e + c) * dim], &im[(2 * e + k) * dim], dim, scale);
      }
    }
  }
  std::vector<std::array<double, 2>> vs(variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const float* tv = &t[(2 * ds.examples.size() + v) * dim];
    for (int k = 0; k < 2; ++k) {
      vs[v][static_cast<std::size_t>(k)] =
          clip_score(tv, &im[(2 * variants[v].example + k) * dim], dim, scale);
    }
  }
  // Groups: each augmentation, each family of the official layout ("family:NAME"), and all.
  std::set<std::string> names, families;
  for (const auto& v : variants) {
    names.insert(v.augmentation);
    if (!v.family.empty()) families.insert(v.family);
  }
  std::vector<std::string> groups(names.begin(), names.end());
  if (families.size() > 1) {
    for (const auto& fam : families)
      groups.push_back("family:" + fam);
  }
  if (names.size() > 1) groups.push_back("all");
  const std::string definition =
      std::string("S_aug(I,T) = (1 - lambda) S(I,T) + lambda * agg S(I,T_i) over ") +
      (f.exclude_original
           ? "the variants T_i of caption T only (--exclude-original)"
           : "the original caption T (the identity variant, as the paper's appendix D and the "
             "official code) and its variants T_i") +
      "; a caption without variants keeps S";
  std::ostringstream md;
  nlohmann::json j = {{"provenance",
                       {{"tool", "winokit"},
                        {"version", kVersion},
                        {"dataset", dataset_json(ds)},
                        {"model", rt.describe()},
                        {"variants", f.variants}}},
                      {"definition", definition},
                      {"include_original", !f.exclude_original},
                      {"augmentations", nlohmann::json::array()}};
  md << "## Caption variants: " << model_name(f.model.model) << " (N = " << ds.examples.size()
     << ", " << variants.size() << " variants)\n\n"
     << definition << ". lambda = 0 is the original.\n";
  for (const auto& g : groups) {
    std::vector<CaptionVariant> sub;
    std::vector<std::array<double, 2>> sub_scores;
    std::size_t covered = 0;
    std::set<std::pair<std::size_t, int>> captions;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const bool in_family = g.rfind("family:", 0) == 0 && variants[v].family == g.substr(7);
      if (g != "all" && variants[v].augmentation != g && !in_family) continue;
      sub.push_back(variants[v]);
      sub_scores.push_back(vs[v]);
      captions.insert({variants[v].example, variants[v].caption});
    }
    covered = captions.size();
    auto settings = augmented_scores(ds, original, sub, sub_scores, f.lambdas, !f.exclude_original);
    const AugmentSetting* best = &settings.front();
    for (const auto& s : settings) {
      if (s.scores[2] > best->scores[2]) best = &s;
    }
    md << "\n### " << g << " (" << sub.size() << " variants of " << covered << " captions)\n\n"
       << "| agg | lambda | Text | Image | Group |\n|---|---:|---:|---:|---:|\n";
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& s : settings) {
      char lam[16];
      std::snprintf(lam, sizeof lam, "%.2f", s.lambda);
      md << "| " << s.agg << " | " << lam << " | " << percent(s.scores[0]) << " | "
         << percent(s.scores[1]) << " | " << percent(s.scores[2]) << " |\n";
      rows.push_back({{"agg", s.agg},
                      {"lambda", s.lambda},
                      {"text_percent", s.scores[0] * 100},
                      {"image_percent", s.scores[1] * 100},
                      {"group_percent", s.scores[2] * 100}});
    }
    const auto& orig = settings.front();  // mean, lambda = first (0 by default)
    char lam[16];
    std::snprintf(lam, sizeof lam, "%.2f", best->lambda);
    md << "\n| | Text | Image | Group |\n|---|---:|---:|---:|\n| Original | "
       << percent(orig.scores[0]) << " | " << percent(orig.scores[1]) << " | "
       << percent(orig.scores[2]) << " |\n| Augmented (best: " << best->agg << ", lambda " << lam
       << ") | " << percent(best->scores[0]) << " | " << percent(best->scores[1]) << " | "
       << percent(best->scores[2]) << " |\n";
    j["augmentations"].push_back({{"name", g},
                                  {"variants", sub.size()},
                                  {"captions", covered},
                                  {"settings", rows},
                                  {"best",
                                   {{"agg", best->agg},
                                    {"lambda", best->lambda},
                                    {"group_percent", best->scores[2] * 100}}}});
  }
  OutputSet out;
  if (!f.json.empty()) out.add(f.json, j.dump(2) + "\n");
  if (!f.markdown.empty()) out.add(f.markdown, md.str());
  if (!f.html.empty())
    out.add(f.html, markdown_html("Caption variants", md.str(), j["provenance"]));
  commit(out);
  if (!f.quiet && f.markdown.empty()) std::cout << md.str();
  return 0;
}

}  // namespace

void add_variants(CLI::App& app, int& exit_code) {
  CLI::App* cmd =
      app.add_subcommand("variants", "Caption variants: generate them, and score with S_aug");
  cmd->require_subcommand(1);
  auto g = std::make_shared<GenerateFlags>();
  CLI::App* gen = cmd->add_subcommand(
      "generate", "Generate caption variants offline (WordNet, substitution lists)");
  gen->add_option("--data", g->data, "Dataset folder")->required();
  gen->add_option("--method", g->methods,
                  "wordnet-synonym, wordnet-hypernym, wordnet-hyponym, substitution")
      ->capture_default_str()
      ->delimiter(',');
  gen->add_option("--substitutions", g->substitutions,
                  "CSV word,replacement (e.g. slang) for substitution");
  gen->add_option("--wordnet", g->wordnet, "WordNet database folder")->capture_default_str();
  gen->add_option("--per-caption", g->options.per_caption, "Variants per caption and method")
      ->capture_default_str();
  gen->add_option("--seed", g->options.seed, "Seed")->capture_default_str();
  gen->add_option("--out", g->out, "Output JSONL (id, caption, augmentation, text)")->required();
  gen->callback([g, &exit_code] { exit_code = guarded([&] { return run_generate(*g); }); });
  auto e = std::make_shared<EvalFlags>();
  CLI::App* ev =
      cmd->add_subcommand("eval", "Text, image and group scores with the augmentation-aware score");
  ev->add_option("--data", e->data, "Dataset folder")->required();
  ev->add_option("--images", e->images,
                 "Image folder or .zip, when not images/ (or images.zip) beside examples.jsonl");
  ev->add_option("--variants", e->variants,
                 "Variant files: winokit JSONL (id, caption, augmentation, text) or the official "
                 "examples_augmented.jsonl (paraphrases, back-translations made elsewhere)")
      ->required();
  ev->add_option("--lambdas", e->lambdas, "Values of lambda")
      ->capture_default_str()
      ->delimiter(',');
  ev->add_option("--json", e->json, "Write the JSON report");
  ev->add_option("--markdown", e->markdown, "Write the markdown tables to a file");
  ev->add_option("--html", e->html, "Write the HTML report");
  ev->add_flag("--quiet", e->quiet, "Do not print the tables");
  ev->add_flag("--exclude-original", e->exclude_original,
               "Aggregate over the variants only (default: the original caption is the identity "
               "variant in the aggregate, as the paper and the official code)");
  e->model.add_to(*ev, /*required=*/true);
  ev->callback([e, &exit_code] { exit_code = guarded([&] { return run_eval(*e); }); });
}

}  // namespace winokit::cli
