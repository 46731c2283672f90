// winokit probe: pair MLP probes, the text-only probe and SVM separability of caption variants
// over a model's per-layer states ("Why is Winoground Hard?", Section 5).
#include <chrono>
#include <cstring>

#include "commands.hpp"
#include "common.hpp"
#include "shard.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"
#include "winokit/report/probe_report.hpp"
#include "winokit/report/provenance.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct ProbeFlags {
  std::string data, embeddings, variants, name, images;
  std::string pooling = "cls";
  std::string split = "stratified";
  std::vector<std::string> probes = {"pair-text", "pair-image", "text-only", "svm"};
  std::vector<std::string> layers = {"all"};
  int seeds = 11;
  std::uint64_t first_seed = 0;
  ProbeOptions options;
  ReportFlags report;
  bool probes_given = false;  // --probes on the command line (else: every probe the inputs allow)
  ModelFlags model;
};

// The table of a model's states for the dataset (and the variants' texts), like `embed` writes.
EmbeddingTable model_table(const VlModel& model, const WinogroundDataset& ds,
                           const std::vector<CaptionVariant>& variants, ProbePooling pooling) {
  ImageStore store = ImageStore::open(ds.root, ds.images);
  DatasetItems items = dataset_items(ds, store);
  EmbeddingTable t;
  const DualEncoder& rt = *model.dual_encoder();
  t.source = model.describe().value("model", model.name());
  for (const auto& ex : ds.examples) {
    for (std::size_t k = 0; k < 2; ++k) {
      t.image_ids.push_back(ex.images[k]);
      t.text_ids.push_back(caption_text_id(ex, k));
    }
  }
  std::vector<std::string> texts = items.captions;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const CaptionVariant& cv = variants[v];
    texts.push_back(cv.text);
    t.text_ids.push_back(variant_text_id(ds, cv, v));
  }
  EncodeOptions enc;
  enc.hidden_states = true;
  enc.pooled_states = pooling != ProbePooling::Token;
  TowerOutput img_full, txt_full;
  auto img = rt.embed_images(items.images, nullptr, enc, &img_full);
  auto txt = rt.embed_texts(texts, nullptr, enc, &txt_full);
  const std::int64_t dim = rt.embed_dim();
  const auto ni = static_cast<std::int64_t>(items.images.size());
  const auto nt = static_cast<std::int64_t>(texts.size());
  t.tensors["image_embeds"] = {{ni, dim}, std::move(img)};
  t.tensors["text_embeds"] = {{nt, dim}, std::move(txt)};
  t.tensors["image_hidden_cls"] = {{img_full.levels, ni, img_full.width},
                                   std::move(img_full.hidden)};
  t.tensors["text_hidden_eot"] = {{txt_full.levels, nt, txt_full.width},
                                  std::move(txt_full.hidden)};
  if (pooling != ProbePooling::Token) {
    const bool mean = pooling == ProbePooling::Mean;
    auto& pi = mean ? img_full.hidden_mean : img_full.hidden_max;
    auto& pt = mean ? txt_full.hidden_mean : txt_full.hidden_max;
    if (pi.empty() || pt.empty()) {
      throw UsageError(std::string("the model returned no ") + to_string(pooling) +
                           "-pooled states (TowerOutput::hidden_" + to_string(pooling) +
                           " is empty): this build cannot pool over tokens",
                       "use --pooling cls, or --embeddings FILE with image_hidden_" +
                           std::string(to_string(pooling)) + " and text_hidden_" +
                           to_string(pooling));
    }
    const auto [image_name, text_name] = pooled_tensor_names(pooling);
    t.tensors[image_name] = {{img_full.levels, ni, img_full.width}, std::move(pi)};
    t.tensors[text_name] = {{txt_full.levels, nt, txt_full.width}, std::move(pt)};
  }
  return t;
}

// The probes asked for with --probes.
struct ProbeChoice {
  bool pair_text = false, pair_image = false, text_only = false, svm = false;
};

ProbeChoice chosen_probes(const std::vector<std::string>& probes) {
  ProbeChoice want;
  for (const auto& p : probes) {
    if (p == "pair-text")
      want.pair_text = true;
    else if (p == "pair-image")
      want.pair_image = true;
    else if (p == "text-only")
      want.text_only = true;
    else if (p == "svm")
      want.svm = true;
    else
      throw UsageError("unknown probe '" + p + "' (pair-text, pair-image, text-only, svm)");
  }
  return want;
}

// The layers named with --layers ("all", "final", indices), in the order given.
std::vector<const ProbeLayer*> chosen_layers(const ProbeEmbeddings& emb,
                                             const std::vector<std::string>& names) {
  std::vector<const ProbeLayer*> layers;
  for (const auto& l : names) {
    if (l == "all") {
      for (const auto& layer : emb.layers)
        layers.push_back(&layer);
      continue;
    }
    const ProbeLayer* found = nullptr;
    for (const auto& layer : emb.layers)
      if (layer.name == l) found = &layer;
    if (found == nullptr) {
      std::string have;
      for (const auto& layer : emb.layers)
        have += (have.empty() ? "" : ", ") + layer.name;
      throw UsageError("no layer '" + l + "' in the embeddings (have: " + have + ")");
    }
    layers.push_back(found);
  }
  return layers;
}

// The fixed-size bytes of one probe's results (a shard's unit: `seeds` runs, then the summary).
constexpr std::size_t kRunBytes = sizeof(std::uint64_t) + 4 * sizeof(double);
constexpr std::size_t kSummaryBytes = 4 * sizeof(double) + 5 * sizeof(std::uint64_t);

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T take(const std::string& in, std::size_t& at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

std::string pack(const ProbeResult& r) {
  std::string out;
  for (const ProbeRun& run : r.runs) {
    put(out, run.seed);
    for (double d : {run.target_test, run.control_test, run.target_train, run.control_train})
      put(out, d);
  }
  for (double d : {r.target_min, r.target_max, r.control_min, r.control_max})
    put(out, d);
  for (std::size_t z : {r.train_items, r.test_items, r.train_rows, r.test_rows, r.inputs})
    put(out, static_cast<std::uint64_t>(z));
  return out;
}

ProbeResult unpack_probe(const std::string& in, std::size_t at, std::size_t seeds) {
  ProbeResult r;
  r.runs.resize(seeds);
  for (ProbeRun& run : r.runs) {
    run.seed = take<std::uint64_t>(in, at);
    for (double* d : {&run.target_test, &run.control_test, &run.target_train, &run.control_train})
      *d = take<double>(in, at);
  }
  for (double* d : {&r.target_min, &r.target_max, &r.control_min, &r.control_max})
    *d = take<double>(in, at);
  for (std::size_t* z : {&r.train_items, &r.test_items, &r.train_rows, &r.test_rows, &r.inputs})
    *z = static_cast<std::size_t>(take<std::uint64_t>(in, at));
  return r;
}

std::string pack(const SvmLayerResult& r) {
  std::string out;
  put(out, static_cast<std::uint64_t>(r.items));
  for (double d : {r.target_separated, r.control_separated, r.target_margin, r.control_margin})
    put(out, d);
  return out;
}

SvmLayerResult unpack_svm(const std::string& in, std::size_t at) {
  SvmLayerResult r;
  r.items = static_cast<std::size_t>(take<std::uint64_t>(in, at));
  for (double* d : {&r.target_separated, &r.control_separated, &r.target_margin, &r.control_margin})
    *d = take<double>(in, at);
  return r;
}

// What the fits read, for a shard's call signature: the options, the layers' states, the split.
std::string fits_signature(const WinogroundDataset& ds, const ProbeEmbeddings& emb,
                           const std::vector<const ProbeLayer*>& layers,
                           const std::vector<ProbeTask>& tasks, const ProbeOptions& o) {
  std::string s = "probe fits\n" + describe_split(o) + "\n";
  for (ProbeTask t : tasks)
    s += std::string(to_string(t)) + ",";
  for (auto v : {o.mlp.depth, o.mlp.hidden, o.mlp.epochs, o.mlp.batch_size})
    s += std::to_string(v) + ",";
  for (double v : {o.mlp.learning_rate, o.train_share, o.svm_c})
    put(s, v);
  for (std::uint64_t seed : o.seeds)
    s += std::to_string(seed) + ",";
  s += std::to_string(o.svm_seed) + "\n";
  for (const auto& ex : ds.examples)
    s += ex.id + '\0';
  auto floats = [](const std::vector<float>& v) {
    return sha256_hex(
        std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  };
  for (const ProbeLayer* l : layers)
    s += l->name + " " + floats(l->image) + floats(l->text) + floats(l->variants) +
         floats(l->pairs) + "\n";
  for (std::size_t owner : emb.variant_owner)
    s += std::to_string(owner) + ",";
  return sha256_hex(s);
}

// Runs the chosen MLP probes (task by task, layer by layer) and the SVM, with a progress bar.
// In a shard (`split`), the units are the probes (one task on one layer: its 2 x seeds fits) and
// then the SVM layers; a shard fits its slice of each, and `merge` puts them together.
ProbeReport run_probes(const WinogroundDataset& ds, const ProbeEmbeddings& emb,
                       const std::vector<const ProbeLayer*>& layers, const ProbeChoice& want,
                       const ProbeOptions& options, bool show_progress, bool split) {
  ProbeReport report;
  report.options = options;
  report.vision_layer_note = emb.vision_layer_note;
  std::vector<ProbeTask> tasks;
  if (want.pair_text) tasks.push_back(ProbeTask::PairText);
  if (want.pair_image) tasks.push_back(ProbeTask::PairImage);
  if (want.text_only) tasks.push_back(ProbeTask::TextOnly);
  std::vector<std::pair<ProbeTask, const ProbeLayer*>> probes;
  for (ProbeTask task : tasks)
    for (const ProbeLayer* layer : layers)
      probes.emplace_back(task, layer);
  const std::size_t seeds = options.seeds.size();
  auto progress = progress_bar();
  const std::string label = shard_label() + "probe fits";
  std::size_t done = 0, total_runs = probes.size() * seeds * 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto fit = [&](std::size_t p) {
    return run_mlp_probe(probes[p].first, ds, *probes[p].second, emb, options, [&] {
      ++done;
      if (show_progress) progress(label, done, total_runs);
    });
  };
  if (!split) {
    if (show_progress && total_runs) progress(label, 0, total_runs);  // the clock starts
    for (std::size_t p = 0; p < probes.size(); ++p)
      report.results.push_back(fit(p));
    if (want.svm) {
      for (const ProbeLayer* layer : layers) {
        report.svm.push_back(svm_separability(*layer, emb, options));
        if (show_progress) progress("svm", report.svm.size(), layers.size());
      }
    }
  } else {
    const std::string signature = fits_signature(ds, emb, layers, tasks, options);
    const std::size_t probe_bytes = seeds * kRunBytes + kSummaryBytes;
    EmbedStats stats;
    const std::string bytes = shard_units("probe fits", signature, probes.size(), probe_bytes,
                                          &stats, [&](std::size_t lo, std::size_t hi, EmbedStats*) {
                                            total_runs = (hi - lo) * seeds * 2;
                                            if (show_progress && total_runs)
                                              progress(label, 0, total_runs);
                                            std::string out;
                                            for (std::size_t p = lo; p < hi; ++p)
                                              out += pack(fit(p));
                                            return out;
                                          });
    for (std::size_t p = 0; p < probes.size(); ++p) {
      ProbeResult r = unpack_probe(bytes, p * probe_bytes, seeds);
      r.task = to_string(probes[p].first);
      r.layer = probes[p].second->name;
      report.results.push_back(std::move(r));
    }
    if (want.svm) {
      const std::size_t svm_bytes = sizeof(std::uint64_t) + 4 * sizeof(double);
      const std::string svm =
          shard_units("svm layers", signature, layers.size(), svm_bytes, &stats,
                      [&](std::size_t lo, std::size_t hi, EmbedStats*) {
                        std::string out;
                        for (std::size_t l = lo; l < hi; ++l) {
                          out += pack(svm_separability(*layers[l], emb, options));
                          if (show_progress) progress(shard_label() + "svm", l + 1 - lo, hi - lo);
                        }
                        return out;
                      });
      for (std::size_t l = 0; l < layers.size(); ++l) {
        SvmLayerResult r = unpack_svm(svm, l * svm_bytes);
        r.layer = layers[l]->name;
        report.svm.push_back(r);
      }
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

int run(ProbeFlags& f) {
  if (f.model.model.empty() == f.embeddings.empty()) {
    throw UsageError("give exactly one of --model DIR or --embeddings FILE|DIR");
  }
  if (f.seeds < 1) throw UsageError("--seeds must be at least 1");
  if (f.options.paper_split && f.split != "stratified" && f.split != "paper") {
    throw UsageError("--paper-split conflicts with --split " + f.split);
  }
  f.options.split = f.split == "paper"       ? ProbeSplitKind::Paper
                    : f.split == "random"    ? ProbeSplitKind::Random
                    : f.split == "collapsed" ? ProbeSplitKind::CollapsedTag
                                             : ProbeSplitKind::Stratified;
  const ProbePooling pooling = f.pooling == "mean"  ? ProbePooling::Mean
                               : f.pooling == "max" ? ProbePooling::Max
                                                    : ProbePooling::Token;
  WinogroundDataset ds = load_dataset(f.data);
  ds.images = f.images;
  std::vector<CaptionVariant> variants;
  if (!f.variants.empty()) variants = load_variants(f.variants, ds);
  ProbeChoice want = chosen_probes(f.probes);
  if (!f.model.shard.shard.empty() && !f.model.model.empty()) {
    throw UsageError(
        "probe --shard splits the fits over states in a file: give --embeddings FILE, not "
        "--model",
        "write the states once with `winokit embed --model DIR --hidden-states -o states."
        "safetensors`, then run `winokit probe --embeddings states.safetensors --shard I/N` "
        "(docs/cluster.md)");
  }
  const bool split = begin_shard(f.model.shard, "probe");
  EmbeddingTable table;
  Provenance provenance;
  provenance.dataset(ds);
  std::string name = f.name;
  if (!f.model.model.empty()) {
    std::unique_ptr<VlModel> model = f.model.open("probe", Ability::States);
    require(*model, Ability::Embeddings, "probe");
    table = model_table(*model, ds, variants, pooling);
    provenance.model("embeddings", model->describe());
    if (name.empty()) name = model->name();
  } else {
    table = load_embedding_table(f.embeddings);
    provenance.source("embeddings", "embeddings", "file", f.embeddings);
    if (name.empty()) name = std::filesystem::path(f.embeddings).stem().string();
  }
  ProbeEmbeddings emb = probe_embeddings(ds, table, pooling);
  const bool have_variants = !emb.variant_owner.empty();
  if ((want.text_only || want.svm) && !have_variants) {
    // The defaults ask for every probe; without variants only the pair probes can run.
    if (f.probes_given) {
      throw UsageError(
          "the text-only probe and the SVM need caption variants: give --variants "
          "FILE (or an embeddings file with variant rows)");
    }
    want.text_only = want.svm = false;
  }
  const std::vector<const ProbeLayer*> layers = chosen_layers(emb, f.layers);
  f.options.seeds.clear();
  for (int s = 0; s < f.seeds; ++s)
    f.options.seeds.push_back(f.first_seed + static_cast<std::uint64_t>(s));

  ProbeReport report = run_probes(ds, emb, layers, want, f.options, !f.report.quiet, split);
  report.model = name;
  report.pooling = pooling;
  report.provenance = provenance.field("variants", f.variants)
                          .field("variant_rows", emb.variant_owner.size())
                          .json();
  const std::string md = probe_markdown(report);
  OutputSet out;
  f.report.add_outputs(out,
                       {{ReportFormat::Json, [&] { return probe_json(report).dump(2) + "\n"; }},
                        {ReportFormat::Markdown, [&] { return md; }},
                        {ReportFormat::Html, [&] { return probe_html(report); }}});
  commit(out);
  f.report.print(md);
  return 0;
}

}  // namespace

void add_probe(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<ProbeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Pair MLP probes, text-only probe and SVM separability over per-layer states");
  cmd->add_option("--data", f->data, "Dataset folder with examples.jsonl")->required();
  cmd->add_option("--pooling", f->pooling,
                  "Layer states: cls (class / end-of-text token), mean or max over tokens (the "
                  "paper's Mean@l / Max@l)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cls", "mean", "max"}));
  cmd->add_option("--images", f->images,
                  "Image folder or .zip, when not images/ (or images.zip) beside examples.jsonl");
  cmd->add_option("--embeddings", f->embeddings,
                  "Embeddings of another model: a safetensors file as `winokit embed` writes, or "
                  "a folder of .npy files with image_ids.txt / text_ids.txt");
  cmd->add_option("--variants", f->variants,
                  "Caption variants JSONL (for the text-only probe and the SVM)");
  CLI::Option* probes =
      cmd->add_option("--probes", f->probes, "Which probes")->delimiter(',')->capture_default_str();
  cmd->add_option("--layers", f->layers, "Layers: all, final, or indices 0..L")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "Number of seeds")->capture_default_str();
  cmd->add_option("--first-seed", f->first_seed, "First seed")->capture_default_str();
  cmd->add_option("--depth", f->options.mlp.depth, "Linear layers of the MLP")
      ->capture_default_str();
  cmd->add_option("--hidden", f->options.mlp.hidden, "Hidden width")->capture_default_str();
  cmd->add_option("--lr", f->options.mlp.learning_rate, "Adam learning rate")
      ->capture_default_str();
  cmd->add_option("--epochs", f->options.mlp.epochs, "Epochs")->capture_default_str();
  cmd->add_option("--probe-batch", f->options.mlp.batch_size, "Minibatch size")
      ->capture_default_str();
  cmd->add_option("--split", f->split,
                  "Train/test split of the items per seed: stratified (by Pragmatics / Symbolic "
                  "/ Morpheme-Level / Both, as the paper), collapsed (by collapsed tag), random, "
                  "or paper (the official fixed 300/100 ids)")
      ->capture_default_str()
      ->check(CLI::IsMember({"stratified", "collapsed", "random", "paper"}));
  cmd->add_flag("--paper-split", f->options.paper_split,
                "Same as --split paper: the paper's fixed 300/100 split of Winoground "
                "(split_train_test.py) for every seed");
  cmd->add_option("--train-share", f->options.train_share, "Share of items in the training split")
      ->capture_default_str();
  cmd->add_option("--svm-c", f->options.svm_c, "SVM C")->capture_default_str();
  cmd->add_option("--name", f->name, "Name in the report");
  f->report.add_to(*cmd, {.json = "Write the JSON report (every seed's accuracies)"});
  f->model.add_to(*cmd, /*required=*/false);
  cmd->callback([f, probes, &exit_code] {
    f->probes_given = probes->count() > 0;
    exit_code = guarded([&] { return run(*f); });
  });
}

}  // namespace winokit::cli
