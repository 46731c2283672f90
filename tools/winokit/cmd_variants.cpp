// winokit variants generate / eval: caption variants and the augmentation-aware score.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/report/variants_report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct GenerateFlags {
  std::string data, substitutions, wordnet = "/usr/share/wordnet";
  ReportFlags output;  // --out
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
  write_file_atomic(f.output.out, variants_jsonl(ds, all));
  std::cerr << "winokit: wrote " << all.size() << " variants to " << f.output.out << "\n";
  return 0;
}

struct EvalFlags {
  std::string data, images;
  std::vector<std::string> variants;
  std::vector<double> lambdas = {0, 0.25, 0.5, 0.75, 1};
  ReportFlags report;
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
  std::unique_ptr<VlModel> model = f.model.open("variants", Ability::PairScores);
  ImageStore store = ImageStore::open(ds.root, ds.images);
  DatasetItems items = dataset_items(ds, store);
  std::vector<std::string> texts = items.captions;
  for (const auto& v : variants)
    texts.push_back(v.text);
  // Each example's four pairs, then each variant with its example's two images (a dual encoder
  // embeds every text and image once; a cross-encoder runs one forward pass per pair).
  std::vector<PairIndex> pairs;
  for (std::size_t e = 0; e < ds.examples.size(); ++e)
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t k = 0; k < 2; ++k)
        pairs.emplace_back(2 * e + c, 2 * e + k);
  for (std::size_t v = 0; v < variants.size(); ++v)
    for (std::size_t k = 0; k < 2; ++k)
      pairs.emplace_back(2 * ds.examples.size() + v, 2 * variants[v].example + k);
  EmbedStats stats;
  const std::vector<double> s = model->score_pairs(items.images, texts, pairs, &stats);
  require_finite(*model, s, [&](std::size_t k) {
    return "caption '" + texts[pairs[k].first] + "' with image " +
           items.images[pairs[k].second].name;
  });
  std::vector<WinogroundScores> original(ds.examples.size());
  std::size_t at = 0;
  for (std::size_t e = 0; e < ds.examples.size(); ++e)
    for (int c = 0; c < 2; ++c)
      for (int k = 0; k < 2; ++k)
        original[e].s[pair_index(c, k)] = s[at++];
  std::vector<std::array<double, 2>> vs(variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v)
    for (std::size_t k = 0; k < 2; ++k)
      vs[v][k] = s[at++];
  VariantsReport report =
      variants_report(ds, original, variants, vs, f.lambdas, !f.exclude_original);
  report.model = model->name();
  nlohmann::json source = model->describe();
  source["embeddings"] = embed_stats_json(stats);
  report.provenance =
      Provenance().dataset(ds).model("model", source).field("variants", f.variants).json();
  const std::string md = variants_markdown(report);
  OutputSet out;
  f.report.add_outputs(out,
                       {{ReportFormat::Json, [&] { return variants_json(report).dump(2) + "\n"; }},
                        {ReportFormat::Markdown, [&] { return md; }},
                        {ReportFormat::Html, [&] { return variants_html(report); }}});
  commit(out);
  f.report.print(md);
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
  g->output.add_to(
      *gen, ReportFlags::Help::only_out("Output JSONL (id, caption, augmentation, text)", true));
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
  e->report.add_to(*ev, {});
  ev->add_flag("--exclude-original", e->exclude_original,
               "Aggregate over the variants only (default: the original caption is the identity "
               "variant in the aggregate, as the paper and the official code)");
  e->model.add_to(*ev, /*required=*/true);
  ev->callback([e, &exit_code] { exit_code = guarded([&] { return run_eval(*e); }); });
}

}  // namespace winokit::cli
