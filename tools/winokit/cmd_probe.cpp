// winokit probe: pair MLP probes, the text-only probe and SVM separability of caption variants
// over a model's per-layer states ("Why is Winoground Hard?", Section 5).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/files.hpp"
#include "winokit/report.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace {

struct ProbeFlags {
  std::string data, embeddings, variants, json, markdown, html, name, images;
  std::string pooling = "cls";
  std::string split = "stratified";
  std::vector<std::string> probes = {"pair-text", "pair-image", "text-only", "svm"};
  std::vector<std::string> layers = {"all"};
  int seeds = 11;
  std::uint64_t first_seed = 0;
  ProbeOptions options;
  bool quiet = false;
  bool probes_given = false;  // --probes on the command line (else: every probe the inputs allow)
  ModelFlags model;
};

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// The table of a model's states for the dataset (and the variants' texts), like `embed` writes.
EmbeddingTable model_table(const ClipRuntime& rt, const WinogroundDataset& ds,
                           const std::vector<CaptionVariant>& variants, ProbePooling pooling) {
  ImageStore store = ImageStore::open(ds.root, ds.images);
  DatasetItems items = dataset_items(ds, store);
  EmbeddingTable t;
  t.source = rt.source;
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
  auto img = embed_images(rt, items.images, nullptr, enc, &img_full);
  auto txt = embed_texts(rt, texts, nullptr, enc, &txt_full);
  const ClipConfig& c = rt.model->config();
  const auto ni = static_cast<std::int64_t>(items.images.size());
  const auto nt = static_cast<std::int64_t>(texts.size());
  t.tensors["image_embeds"] = {{ni, c.embed_dim}, std::move(img)};
  t.tensors["text_embeds"] = {{nt, c.embed_dim}, std::move(txt)};
  t.tensors["image_hidden_cls"] = {{c.vision.layers + 1, ni, c.vision.width},
                                   std::move(img_full.hidden)};
  t.tensors["text_hidden_eot"] = {{c.text.layers + 1, nt, c.text.width},
                                  std::move(txt_full.hidden)};
  if (pooling != ProbePooling::Token) {
    const bool mean = pooling == ProbePooling::Mean;
    auto& pi = mean ? img_full.hidden_mean : img_full.hidden_max;
    auto& pt = mean ? txt_full.hidden_mean : txt_full.hidden_max;
    if (pi.empty() || pt.empty()) {
      throw UsageError(std::string("the CLIP engine returned no ") + to_string(pooling) +
                           "-pooled states (TowerOutput::hidden_" + to_string(pooling) +
                           " is empty): this build cannot pool over tokens",
                       "use --pooling cls, or --embeddings FILE with image_hidden_" +
                           std::string(to_string(pooling)) + " and text_hidden_" +
                           to_string(pooling));
    }
    const auto [image_name, text_name] = pooled_tensor_names(pooling);
    t.tensors[image_name] = {{c.vision.layers + 1, ni, c.vision.width}, std::move(pi)};
    t.tensors[text_name] = {{c.text.layers + 1, nt, c.text.width}, std::move(pt)};
  }
  return t;
}

// One SVG line chart of per-layer values in [0, 1]: x the layers in order, y 0-100%; each series
// a polyline with its label in the legend. Attributes only (the report's CSP forbids inline
// styles).
struct Series {
  std::string label, colour;
  bool dashed = false;
  std::vector<double> values;  // per layer, NaN skipped
};

std::string layer_chart(const std::string& title, const std::vector<std::string>& layers,
                        const std::vector<Series>& series) {
  constexpr double kW = 520, kH = 220, kLeft = 44, kRight = 150, kTop = 24, kBottom = 30;
  const double plot_w = kW - kLeft - kRight, plot_h = kH - kTop - kBottom;
  auto x_of = [&](std::size_t i) {
    return kLeft + (layers.size() < 2
                        ? plot_w / 2
                        : plot_w * static_cast<double>(i) / static_cast<double>(layers.size() - 1));
  };
  auto y_of = [&](double v) { return kTop + plot_h * (1 - v); };
  std::ostringstream s;
  s << "<svg role=\"img\" width=\"" << kW << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW
    << ' ' << kH << "\"><title>" << html_escape(title) << "</title><text x=\"" << kLeft
    << "\" y=\"14\" font-size=\"12\">" << html_escape(title) << "</text>";
  for (int t = 0; t <= 4; ++t) {
    const double v = t / 4.0, y = y_of(v);
    s << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_w << "\" y1=\"" << y << "\" y2=\""
      << y << "\" stroke=\"#ddd\"/><text x=\"4\" y=\"" << y + 4 << "\" font-size=\"10\">" << t * 25
      << "%</text>";
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    s << "<text x=\"" << x_of(i) - 8 << "\" y=\"" << kH - 10 << "\" font-size=\"10\">"
      << html_escape(layers[i]) << "</text>";
  }
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& se = series[k];
    std::ostringstream pts;
    for (std::size_t i = 0; i < se.values.size() && i < layers.size(); ++i) {
      if (!std::isfinite(se.values[i])) continue;
      pts << x_of(i) << ',' << y_of(se.values[i]) << ' ';
      s << "<circle cx=\"" << x_of(i) << "\" cy=\"" << y_of(se.values[i]) << "\" r=\"2.5\" fill=\""
        << se.colour << "\"><title>" << html_escape(se.label) << " " << html_escape(layers[i])
        << ": " << percent(se.values[i]) << "</title></circle>";
    }
    s << "<polyline fill=\"none\" stroke=\"" << se.colour << "\" stroke-width=\"1.5\""
      << (se.dashed ? " stroke-dasharray=\"4,3\"" : "") << " points=\"" << pts.str() << "\"/>";
    const double ly = kTop + 14.0 * static_cast<double>(k);
    s << "<line x1=\"" << kW - kRight + 10 << "\" x2=\"" << kW - kRight + 30 << "\" y1=\"" << ly
      << "\" y2=\"" << ly << "\" stroke=\"" << se.colour << "\""
      << (se.dashed ? " stroke-dasharray=\"4,3\"" : "") << "/><text x=\"" << kW - kRight + 34
      << "\" y=\"" << ly + 4 << "\" font-size=\"10\">" << html_escape(se.label) << "</text>";
  }
  s << "</svg>";
  return s.str();
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
  bool want_pair_text = false, want_pair_image = false, want_text = false, want_svm = false;
  for (const auto& p : f.probes) {
    if (p == "pair-text")
      want_pair_text = true;
    else if (p == "pair-image")
      want_pair_image = true;
    else if (p == "text-only")
      want_text = true;
    else if (p == "svm")
      want_svm = true;
    else
      throw UsageError("unknown probe '" + p + "' (pair-text, pair-image, text-only, svm)");
  }
  EmbeddingTable table;
  nlohmann::json source;
  std::string name = f.name;
  if (!f.model.model.empty()) {
    ClipRuntime rt = f.model.load();
    table = model_table(rt, ds, variants, pooling);
    source = rt.describe();
    if (name.empty()) name = model_name(f.model.model);
  } else {
    table = load_embedding_table(f.embeddings);
    source = {{"kind", "embeddings"}, {"file", f.embeddings}};
    if (name.empty()) name = std::filesystem::path(f.embeddings).stem().string();
  }
  ProbeEmbeddings emb = probe_embeddings(ds, table, pooling);
  const bool have_variants = !emb.variant_owner.empty();
  if ((want_text || want_svm) && !have_variants) {
    // The defaults ask for every probe; without variants only the pair probes can run.
    if (f.probes_given) {
      throw UsageError(
          "the text-only probe and the SVM need caption variants: give --variants "
          "FILE (or an embeddings file with variant rows)");
    }
    want_text = want_svm = false;
  }
  std::vector<const ProbeLayer*> layers;
  for (const auto& l : f.layers) {
    if (l == "all") {
      for (const auto& layer : emb.layers)
        layers.push_back(&layer);
      continue;
    }
    const ProbeLayer* found = nullptr;
    for (const auto& layer : emb.layers)
      if (layer.name == l) found = &layer;
    if (found == nullptr) {
      std::string names;
      for (const auto& layer : emb.layers)
        names += (names.empty() ? "" : ", ") + layer.name;
      throw UsageError("no layer '" + l + "' in the embeddings (have: " + names + ")");
    }
    layers.push_back(found);
  }
  f.options.seeds.clear();
  for (int s = 0; s < f.seeds; ++s)
    f.options.seeds.push_back(f.first_seed + static_cast<std::uint64_t>(s));

  std::vector<ProbeTask> tasks;
  if (want_pair_text) tasks.push_back(ProbeTask::PairText);
  if (want_pair_image) tasks.push_back(ProbeTask::PairImage);
  if (want_text) tasks.push_back(ProbeTask::TextOnly);
  const std::size_t total_runs = tasks.size() * layers.size() * f.options.seeds.size() * 2;
  auto progress = progress_bar();
  std::size_t done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ProbeResult> results;
  for (ProbeTask task : tasks) {
    for (const ProbeLayer* layer : layers) {
      results.push_back(run_mlp_probe(task, ds, *layer, emb, f.options, [&] {
        ++done;
        if (progress && !f.quiet) progress("probes", done, total_runs);
      }));
    }
  }
  std::vector<SvmLayerResult> svm;
  if (want_svm) {
    for (const ProbeLayer* layer : layers)
      svm.push_back(svm_separability(*layer, emb, f.options));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const MlpProbeOptions& m = f.options.mlp;
  std::ostringstream md;
  md << "## Probes: " << name << "\n\n"
     << "Layer states: "
     << (pooling == ProbePooling::Token
             ? std::string("the class token (vision) and end-of-text token (text) of each layer")
             : std::string(pooling == ProbePooling::Mean ? "Mean@l" : "Max@l") + ", the " +
                   to_string(pooling) +
                   " over tokens of each layer (vision: every token; text: up to end-of-text)")
     << "; \"final\" is the projected embedding.\n\n"
     << "MLP probes: " << m.depth << " Linear layers, hidden " << m.hidden
     << ", ReLU, sigmoid output, Adam lr " << m.learning_rate << ", " << m.epochs
     << " epochs, batch " << m.batch_size << "; " << f.options.seeds.size() << " seeds ("
     << f.options.seeds.front() << ".." << f.options.seeds.back()
     << "); split: " << describe_split(f.options)
     << ". Control: the labels of a random half of the items "
        "flipped. Accuracy in %, min and max over seeds.\n\n";
  auto table_for = [&](ProbeTask task, const std::string& title) {
    bool any = false;
    for (const auto& r : results)
      any = any || r.task == to_string(task);
    if (!any) return;
    md << "### " << title << "\n\n"
       << "| Layer | Train / test instances | Target min | Target max | Control min | Control "
          "max |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& r : results) {
      if (r.task != to_string(task)) continue;
      md << "| " << r.layer << " | " << r.train_rows << " / " << r.test_rows << " | "
         << percent(r.target_min) << " | " << percent(r.target_max) << " | "
         << percent(r.control_min) << " | " << percent(r.control_max) << " |\n";
    }
    md << "\n";
  };
  table_for(ProbeTask::PairText, "Pair probe, text score (one image, which caption matches?)");
  table_for(ProbeTask::PairImage, "Pair probe, image score (one caption, which image matches?)");
  table_for(ProbeTask::TextOnly,
            "Text-only probe (which caption does a held-out variant belong to?)");
  if (!svm.empty()) {
    md << "### Linear separability of caption variants (SVM, C = " << f.options.svm_c
       << ")\n\n| Layer | Items | Target separated % | Control separated % | Target margin | "
          "Control margin |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& s : svm) {
      md << "| " << s.layer << " | " << s.items << " | " << percent(s.target_separated) << " | "
         << percent(s.control_separated) << " | " << fixed(s.target_margin, 4) << " | "
         << fixed(s.control_margin, 4) << " |\n";
    }
    md << "\nPer item: caption 0 and its variants against caption 1 and its variants; margin = "
          "2/||w|| averaged over the separated items. Control: the same points with the two sets' "
          "members "
          "reassigned at random.\n";
  }
  if (!emb.vision_layer_note.empty()) md << "\nLayers: " << emb.vision_layer_note << ".\n";

  nlohmann::json j = {
      {"model", name},
      {"provenance",
       {{"tool", "winokit"},
        {"version", kVersion},
        {"dataset", dataset_json(ds)},
        {"embeddings", source},
        {"variants", f.variants},
        {"variant_rows", emb.variant_owner.size()}}},
      {"options",
       {{"depth", m.depth},
        {"hidden", m.hidden},
        {"learning_rate", m.learning_rate},
        {"epochs", m.epochs},
        {"batch_size", m.batch_size},
        {"seeds", f.options.seeds},
        {"train_share", f.options.train_share},
        {"svm_c", f.options.svm_c},
        {"split", describe_split(f.options)},
        {"split_kind", to_string(f.options.paper_split ? ProbeSplitKind::Paper : f.options.split)},
        {"control", "labels of a random half of the items flipped"}}},
      {"seconds", seconds},
      {"pooling", to_string(pooling)},
      {"mlp_probes", nlohmann::json::array()},
      {"svm", nlohmann::json::array()}};
  for (const auto& r : results) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& run : r.runs) {
      runs.push_back({{"seed", run.seed},
                      {"target_test_percent", run.target_test * 100},
                      {"control_test_percent", run.control_test * 100},
                      {"target_train_percent", run.target_train * 100},
                      {"control_train_percent", run.control_train * 100}});
    }
    j["mlp_probes"].push_back({{"task", r.task},
                               {"layer", r.layer},
                               {"inputs", r.inputs},
                               {"train_items", r.train_items},
                               {"test_items", r.test_items},
                               {"train_instances", r.train_rows},
                               {"test_instances", r.test_rows},
                               {"target_min_percent", r.target_min * 100},
                               {"target_max_percent", r.target_max * 100},
                               {"control_min_percent", r.control_min * 100},
                               {"control_max_percent", r.control_max * 100},
                               {"runs", runs}});
  }
  for (const auto& s : svm) {
    j["svm"].push_back({{"layer", s.layer},
                        {"items", s.items},
                        {"target_separated_percent", s.target_separated * 100},
                        {"control_separated_percent", s.control_separated * 100},
                        {"target_margin", finite_or_null(s.target_margin)},
                        {"control_margin", finite_or_null(s.control_margin)}});
  }
  OutputSet out;
  if (!f.json.empty()) out.add(f.json, j.dump(2) + "\n");
  if (!f.markdown.empty()) out.add(f.markdown, md.str());
  if (!f.html.empty()) {
    // Per-layer accuracy plots (SVG) for each probe and for SVM separability.
    std::ostringstream plots;
    plots << "<h2>Per-layer plots</h2>";
    for (ProbeTask task : {ProbeTask::PairText, ProbeTask::PairImage, ProbeTask::TextOnly}) {
      std::vector<std::string> names;
      Series tmax{"target max", "#4e79a7", false, {}}, tmin{"target min", "#4e79a7", true, {}},
          cmax{"control max", "#e15759", false, {}}, cmin{"control min", "#e15759", true, {}};
      for (const auto& r : results) {
        if (r.task != to_string(task)) continue;
        names.push_back(r.layer);
        tmax.values.push_back(r.target_max);
        tmin.values.push_back(r.target_min);
        cmax.values.push_back(r.control_max);
        cmin.values.push_back(r.control_min);
      }
      if (!names.empty()) {
        plots << layer_chart(std::string(to_string(task)) + " probe: test accuracy by layer", names,
                             {tmax, tmin, cmax, cmin});
      }
    }
    if (!svm.empty()) {
      std::vector<std::string> names;
      Series target{"target separated", "#59a14f", false, {}},
          control{"control separated", "#e15759", true, {}};
      for (const auto& s : svm) {
        names.push_back(s.layer);
        target.values.push_back(s.target_separated);
        control.values.push_back(s.control_separated);
      }
      plots << layer_chart("SVM separability: share of items separated by layer", names,
                           {target, control});
    }
    std::string html = markdown_html("Probes: " + name, md.str(), j["provenance"]);
    const auto body_end = html.rfind("</body>");
    html.insert(body_end == std::string::npos ? html.size() : body_end, plots.str());
    out.add(f.html, html);
  }
  commit(out);
  if (!f.quiet && f.markdown.empty()) std::cout << md.str();
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
  cmd->add_option("--json", f->json, "Write the JSON report (every seed's accuracies)");
  cmd->add_option("--markdown", f->markdown, "Write the markdown tables to a file");
  cmd->add_option("--html", f->html, "Write the HTML report");
  cmd->add_flag("--quiet", f->quiet, "Do not print the tables");
  f->model.add_to(*cmd, /*required=*/false);
  cmd->callback([f, probes, &exit_code] {
    f->probes_given = probes->count() > 0;
    exit_code = guarded([&] { return run(*f); });
  });
}

}  // namespace winokit::cli
