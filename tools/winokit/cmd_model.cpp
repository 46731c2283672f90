// winokit embed / score / models / bench: a model on its own.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/version.hpp"

namespace winokit::cli {

namespace fs = std::filesystem;

namespace {

// ---- embed ----
struct EmbedFlags {
  ModelFlags model;
  std::string data, captions, out, variants;
  std::vector<std::string> images, texts;
  bool hidden = false;
};

int run_embed(const EmbedFlags& f) {
  if (f.data.empty() && f.images.empty() && f.captions.empty() && f.texts.empty()) {
    throw UsageError("nothing to embed: give --data, --images, --captions or --text");
  }
  std::unique_ptr<VlModel> model = f.hidden ? f.model.open("embed --hidden-states", Ability::States)
                                            : f.model.open("embed", Ability::Embeddings);
  require(*model, Ability::Embeddings, "embed");
  const DualEncoder& enc_model = *model->dual_encoder();
  std::vector<ImageRequest> requests;
  std::vector<std::string> image_ids, captions, text_ids;
  std::unique_ptr<ImageStore> store;
  if (!f.data.empty()) {
    WinogroundDataset ds = load_dataset(f.data);
    store = std::make_unique<ImageStore>(ImageStore::open(ds.root));
    for (const auto& ex : ds.examples) {
      for (int k = 0; k < 2; ++k) {
        const std::string name = ex.images[static_cast<std::size_t>(k)];
        if (std::find(image_ids.begin(), image_ids.end(), name) == image_ids.end()) {
          image_ids.push_back(name);
          requests.push_back({name, [s = store.get(), name] { return s->read(name); },
                              [s = store.get(), name] { return s->file_of(name); }});
        }
        captions.push_back(ex.captions[static_cast<std::size_t>(k)]);
        text_ids.push_back(caption_text_id(ex, static_cast<std::size_t>(k)));
      }
    }
    if (!f.variants.empty()) {
      // Variant rows get their own ids, as `winokit probe --embeddings` reads them.
      const auto variants = load_variants(f.variants, ds);
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const CaptionVariant& cv = variants[v];
        captions.push_back(cv.text);
        text_ids.push_back(variant_text_id(ds, cv, v));
      }
    }
  } else if (!f.variants.empty()) {
    throw UsageError("--variants needs --data");
  }
  for (const auto& path : f.images) {
    image_ids.push_back(path);
    requests.push_back(image_file_request(path));
  }
  if (!f.captions.empty()) {
    std::string text = read_file(f.captions);
    auto lines = split_lines(text);
    for (std::size_t n = 0; n < lines.size(); ++n) {
      if (!is_valid_utf8(lines[n])) throw InputError({f.captions, n + 1, ""}, "invalid UTF-8");
      if (trim(lines[n]).empty()) continue;
      captions.emplace_back(lines[n]);
      text_ids.push_back(f.captions + ":" + std::to_string(n + 1));
    }
  }
  for (const auto& t : f.texts) {
    if (!is_valid_utf8(t)) throw UsageError("--text is not valid UTF-8");
    captions.push_back(t);
    text_ids.push_back("text:" + std::to_string(text_ids.size()));
  }
  EncodeOptions enc;
  enc.hidden_states = f.hidden;
  enc.pooled_states = f.hidden;
  TowerOutput img_full, txt_full;
  EmbedStats stats;
  auto img = enc_model.embed_images(requests, &stats, enc, f.hidden ? &img_full : nullptr);
  auto txt = enc_model.embed_texts(captions, &stats, enc, f.hidden ? &txt_full : nullptr);
  const std::int64_t e = enc_model.embed_dim();
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors;
  if (!requests.empty())
    tensors["image_embeds"] = {{static_cast<std::int64_t>(requests.size()), e}, img};
  if (!captions.empty())
    tensors["text_embeds"] = {{static_cast<std::int64_t>(captions.size()), e}, txt};
  if (f.hidden && !requests.empty()) {
    const std::vector<std::int64_t> shape = {
        img_full.levels, static_cast<std::int64_t>(requests.size()), img_full.width};
    tensors["image_hidden_cls"] = {shape, std::move(img_full.hidden)};
    tensors["image_hidden_mean"] = {shape, std::move(img_full.hidden_mean)};
    tensors["image_hidden_max"] = {shape, std::move(img_full.hidden_max)};
  }
  if (f.hidden && !captions.empty()) {
    const std::vector<std::int64_t> shape = {
        txt_full.levels, static_cast<std::int64_t>(captions.size()), txt_full.width};
    tensors["text_hidden_eot"] = {shape, std::move(txt_full.hidden)};
    tensors["text_hidden_mean"] = {shape, std::move(txt_full.hidden_mean)};
    tensors["text_hidden_max"] = {shape, std::move(txt_full.hidden_max)};
  }
  const nlohmann::json d = model->describe();
  auto field = [&](const char* key) {
    if (!d.contains(key)) return std::string();
    return d[key].is_string() ? d[key].get<std::string>() : d[key].dump();
  };
  std::map<std::string, std::string> meta = {{"image_ids", nlohmann::json(image_ids).dump()},
                                             {"text_ids", nlohmann::json(text_ids).dump()},
                                             {"texts", nlohmann::json(captions).dump()},
                                             {"model", field("model")},
                                             {"family", model->family()},
                                             {"weights_sha256", field("weights_sha256")},
                                             {"preprocess", field("preprocess")},
                                             {"score", field("score")},
                                             {"winokit", kVersion}};
  if (d.contains("logit_scale_exp")) meta["logit_scale_exp"] = field("logit_scale_exp");
  if (shard_active()) return 0;  // the shard's part file holds its slice (finish_shard)
  write_file_atomic(f.out, encode_safetensors_f32(tensors, meta));
  std::cerr << "winokit: wrote " << requests.size() << " image and " << captions.size()
            << " text embeddings to " << f.out << "\n";
  return 0;
}

// ---- score ----
struct ScoreFlags {
  ModelFlags model;
  std::string image;
  std::vector<std::string> captions;
};

int run_score(const ScoreFlags& f) {
  for (const auto& c : f.captions) {
    if (!is_valid_utf8(c)) throw UsageError("caption is not valid UTF-8");
  }
  ModelFlags quiet = f.model;
  quiet.quiet_progress = true;
  std::unique_ptr<VlModel> model = quiet.open("score", Ability::PairScores);
  std::vector<PairIndex> pairs;
  for (std::size_t c = 0; c < f.captions.size(); ++c)
    pairs.emplace_back(c, 0);
  const std::vector<double> s =
      model->score_pairs({image_file_request(f.image)}, f.captions, pairs);
  require_finite(*model, s, [&](std::size_t k) { return "the caption '" + f.captions[k] + "'"; });
  // A dual encoder's scores are logits over the captions given: their softmax is shown too.
  const bool softmax = model->dual_encoder() != nullptr;
  const double mx = *std::max_element(s.begin(), s.end());
  double z = 0;
  for (double v : s)
    z += std::exp(v - mx);
  std::cout << "| Caption | " << model->score_name() << (softmax ? " | Probability |" : " |")
            << "\n|---|---:|" << (softmax ? "---:|" : "") << "\n";
  for (std::size_t i = 0; i < s.size(); ++i) {
    char line[64];
    if (softmax) {
      std::snprintf(line, sizeof line, "%.4f | %.4f", s[i], std::exp(s[i] - mx) / z);
    } else {
      std::snprintf(line, sizeof line, "%.4f", s[i]);
    }
    std::cout << "| " << f.captions[i] << " | " << line << " |\n";
  }
  const nlohmann::json d = model->describe();
  std::cout << "\nScore (" << model->name() << ", " << model->family()
            << (model->head().empty() ? "" : ", " + model->head() + " head")
            << "): " << d.value("score", std::string("the model's pair score"))
            << (softmax ? "; probability: softmax over the captions given." : ".") << "\n";
  if (d.contains("head_choice") && d["head_choice"].is_string()) {
    std::cout << "Head: " << d["head_choice"].get<std::string>() << "\n";
  }
  return 0;
}

// ---- models ----
struct ModelsFlags {
  ModelFlags model;
  bool json = false;
};

int run_models(const ModelsFlags& f) {
  if (!f.model.model.empty()) {
    // One checkpoint: what the registry makes of it.
    ModelFlags quiet = f.model;
    quiet.quiet_progress = true;
    std::unique_ptr<VlModel> m = quiet.open();
    nlohmann::json j = {{"name", m->name()},
                        {"family", m->family()},
                        {"head", m->head()},
                        {"heads", m->heads()},
                        {"score", m->score_name()}};
    for (Ability a : m->abilities())
      j["abilities"].push_back(to_string(a));
    j["describe"] = m->describe();
    if (f.json) {
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << m->name() << ": a " << m->family() << " model";
    if (!m->head().empty()) std::cout << ", head " << m->head();
    std::cout << "\n  can do: ";
    for (std::size_t i = 0; i < m->abilities().size(); ++i)
      std::cout << (i ? "; " : "") << to_string(m->abilities()[i]);
    std::cout << "\n  score: " << m->describe().value("score", m->score_name()) << "\n";
    return 0;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const ModelFamily& fam : model_families()) {
    nlohmann::json j = {
        {"family", fam.name}, {"description", fam.description}, {"heads", fam.heads}};
    j["abilities"] = nlohmann::json::array();
    for (Ability a : fam.abilities)
      j["abilities"].push_back(to_string(a));
    j["options"] = nlohmann::json::object();
    for (const auto& [flag, help] : fam.options)
      j["options"][flag] = help;
    j["reads_own"] = fam.reads_own;
    list.push_back(j);
  }
  if (f.json) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  std::cout << "| Family | Model | Heads (default first) | Can do | Options |\n"
               "|---|---|---|---|---|\n";
  for (const auto& j : list) {
    std::string heads, can, options;
    for (const auto& h : j["heads"])
      heads += (heads.empty() ? "" : ", ") + h.get<std::string>();
    for (const auto& a : j["abilities"])
      can += (can.empty() ? "" : "; ") + a.get<std::string>();
    for (const auto& [flag, help] : j["options"].items())
      options += (options.empty() ? "" : ", ") + flag;
    std::cout << "| " << j["family"].get<std::string>() << " | "
              << j["description"].get<std::string>() << " | " << (heads.empty() ? "-" : heads)
              << " | " << can << " | " << (options.empty() ? "-" : options) << " |\n";
  }
  std::cout << "\nThe family of a --model checkpoint is read from it (config.json model_type, an "
               "OpenCLIP config, a .pt archive); `winokit models --model DIR` shows what one "
               "checkpoint is.\n";
  return 0;
}

// ---- bench ----
struct BenchFlags {
  ModelFlags model;
  int images = 64, runs = 3, captions = 800, examples = 8;
  std::uint64_t seed = 0;
  std::string json;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Winoground-like synthetic examples for the end-to-end timing: two distinct 640x480 PNG images
// (decoded and preprocessed as real ones are) and two captions with the same words in another
// order, scored as eval scores them (4 pairs per example).
struct BenchExamples {
  std::vector<ImageRequest> images;
  std::vector<std::string> captions;
  std::vector<PairIndex> pairs;
};

BenchExamples bench_examples(int examples) {
  constexpr int kWidth = 640, kHeight = 480;
  static const char* const kCaptions[][2] = {
      {"an old person kisses a young person", "a young person kisses an old person"},
      {"the dog chases the cat", "the cat chases the dog"},
      {"a red cup on a blue table", "a blue cup on a red table"},
      {"there is more water than sand", "there is more sand than water"}};
  BenchExamples b;
  Rng rng(7);
  for (int e = 0; e < examples; ++e) {
    for (int k = 0; k < 2; ++k) {
      std::vector<std::uint8_t> rgb(static_cast<std::size_t>(kWidth) * kHeight * 3);
      const int shift = 2 * e + k;
      for (int y = 0; y < kHeight; ++y) {
        for (int x = 0; x < kWidth; ++x) {
          std::uint8_t* px = &rgb[(static_cast<std::size_t>(y) * kWidth + x) * 3];
          px[0] = static_cast<std::uint8_t>((x + 13 * shift) & 255);
          px[1] = static_cast<std::uint8_t>((y * 3 + 29 * shift) & 255);
          px[2] = static_cast<std::uint8_t>(rng.below(256));
        }
      }
      const std::string name = "bench_" + std::to_string(e) + "_" + std::to_string(k);
      auto png = std::make_shared<std::string>(encode_png_rgb8(rgb, kWidth, kHeight));
      b.images.push_back({name,
                          [png, name] {
                            return ImageBytes{name, name + ".png", ImageFormat::Png, *png};
                          },
                          {}});
      b.captions.push_back(kCaptions[e % 4][k]);
    }
    const std::size_t c0 = b.captions.size() - 2, i0 = b.images.size() - 2;
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t i = 0; i < 2; ++i)
        b.pairs.push_back({c0 + c, i0 + i});
  }
  return b;
}

int run_bench(const BenchFlags& f) {
  using clock = std::chrono::steady_clock;
  set_compute_threads(f.model.threads);
  ModelFlags flags = f.model;
  flags.no_cache = true;  // every run computes everything
  flags.quiet_progress = true;
  std::unique_ptr<VlModel> model =
      flags.model.empty() ? random_demo_model(f.seed, flags.options()) : flags.open();
  // End to end, as eval runs a model: decode, preprocess, encode, score.
  const BenchExamples ex = bench_examples(f.examples);
  const BenchExamples warm = bench_examples(1);
  model->score_pairs(warm.images, warm.captions, warm.pairs);
  std::vector<double> seconds;
  for (int r = 0; r < f.runs; ++r) {
    const auto t0 = clock::now();
    const std::vector<double> s = model->score_pairs(ex.images, ex.captions, ex.pairs);
    seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    require_finite(*model, s, [](std::size_t k) { return "bench pair " + std::to_string(k); });
  }
  const double run_s = median(seconds);
  nlohmann::json result = {
      {"bench", "model"},
      {"family", model->family()},
      {"model", model->name()},
      {"head", model->head()},
      {"compute", compute_record()},
      {"threads", compute_threads()},
      {"batch_size", flags.batch_size},
      {"runs", f.runs},
      {"examples", f.examples},
      {"pairs", ex.pairs.size()},
      {"images", ex.images.size()},
      {"seconds_per_run", seconds},
      {"pairs_per_second_median", static_cast<double>(ex.pairs.size()) / run_s},
      {"ms_per_example_median", 1000.0 * run_s / f.examples}};
  // The family's own measurements (CLIP: the towers on raw tensors and the GEMM peak).
  EngineBenchOptions eo;
  eo.images = f.images;
  eo.runs = f.runs;
  eo.captions = f.captions;
  eo.batch_size = flags.batch_size;
  const nlohmann::json engine = model->engine_bench(eo);
  if (engine.is_object()) result.update(engine);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  result["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::cout << result.dump(2) << "\n";
  if (!f.json.empty()) {
    write_file_atomic(f.json, result.dump(2) + "\n");
    wrote(f.json);
  }
  return 0;
}

}  // namespace

void add_model_commands(CLI::App& app, int& exit_code) {
  auto e = std::make_shared<EmbedFlags>();
  CLI::App* embed =
      app.add_subcommand("embed", "Embed images and/or captions to a safetensors file");
  e->model.add_to(*embed, true);
  embed->add_option("--data", e->data,
                    "Embed every image and caption of a Winoground-layout dataset");
  embed->add_option("--images", e->images, "Image files");
  embed->add_option("--captions", e->captions, "Text file, one caption per line");
  embed->add_option("--text", e->texts, "Captions given on the command line");
  embed->add_option("--variants", e->variants,
                    "Caption variants JSONL: also embed each variant (with --data)");
  embed->add_option("--out", e->out, "Output .safetensors file")->required();
  embed->add_flag("--hidden-states", e->hidden,
                  "Also write per-layer states: class-token / end-of-text, and the mean and "
                  "max over tokens (Mean@l / Max@l)");
  embed->callback([e, &exit_code] { exit_code = guarded([&] { return run_embed(*e); }); });

  auto s = std::make_shared<ScoreFlags>();
  CLI::App* score = app.add_subcommand("score", "Score one image against captions");
  s->model.add_to(*score, true);
  score->add_option("image", s->image, "Image file")->required();
  score->add_option("captions", s->captions, "Captions")->required()->expected(1, -1);
  score->callback([s, &exit_code] { exit_code = guarded([&] { return run_score(*s); }); });

  auto ms = std::make_shared<ModelsFlags>();
  CLI::App* models = app.add_subcommand(
      "models", "The registered model families and what each can do (or one checkpoint's)");
  ms->model.add_to(*models, false);
  models->add_flag("--json", ms->json, "Print JSON");
  models->callback([ms, &exit_code] { exit_code = guarded([&] { return run_models(*ms); }); });

  auto b = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Measure a model: pairs/s end to end on synthetic Winoground-like examples, and the "
      "family's engine figures (random ViT-B/32 CLIP weights unless --model is given)");
  b->model.add_to(*bench, false);
  bench
      ->add_option("--examples", b->examples,
                   "Winoground-like examples (2 images, 2 captions, 4 pairs) per end-to-end run")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  bench->add_option("--images", b->images, "Images per timed run of the engine figures")
      ->capture_default_str();
  bench->add_option("--runs", b->runs, "Timed runs (median reported)")->capture_default_str();
  bench->add_option("--captions", b->captions, "Captions for the text tower")
      ->capture_default_str();
  bench->add_option("--json", b->json, "Also write the results to this file");
  bench->callback([b, &exit_code] { exit_code = guarded([&] { return run_bench(*b); }); });
}

}  // namespace winokit::cli
