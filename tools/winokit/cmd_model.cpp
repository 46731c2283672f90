// winokit embed / score / bench: the CLIP engine on its own.
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
#include "winokit/io/safetensors.hpp"
#include "winokit/model/clip_family.hpp"
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
    list.push_back(j);
  }
  if (f.json) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  std::cout << "| Family | Model | Heads (default first) | Can do |\n|---|---|---|---|\n";
  for (const auto& j : list) {
    std::string heads, can;
    for (const auto& h : j["heads"])
      heads += (heads.empty() ? "" : ", ") + h.get<std::string>();
    for (const auto& a : j["abilities"])
      can += (can.empty() ? "" : "; ") + a.get<std::string>();
    std::cout << "| " << j["family"].get<std::string>() << " | "
              << j["description"].get<std::string>() << " | " << (heads.empty() ? "-" : heads)
              << " | " << can << " |\n";
  }
  std::cout << "\nThe family of a --model checkpoint is read from it (config.json model_type, an "
               "OpenCLIP config, a .pt archive); `winokit models --model DIR` shows what one "
               "checkpoint is.\n";
  return 0;
}

// ---- bench ----
struct BenchFlags {
  ModelFlags model;
  int images = 64, runs = 3, captions = 800;
  std::uint64_t seed = 0;
  std::string json;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int run_bench(const BenchFlags& f) {
  using clock = std::chrono::steady_clock;
  set_compute_threads(f.model.threads);
  std::unique_ptr<VlModel> model = f.model.model.empty()
                                       ? random_demo_model(f.seed, f.model.options())
                                       : f.model.open("bench", Ability::Embeddings);
  const ClipRuntime* runtime = clip_runtime_of(*model);
  if (!runtime) {
    throw UsageError("winokit bench times CLIP's towers on raw pixel batches; " + model->name() +
                     " is a " + model->family() +
                     " model: time it with `winokit eval` on a dataset (the JSON report "
                     "records the seconds)");
  }
  const ClipRuntime& rt = *runtime;
  const ClipConfig& c = rt.model->config();
  const int batch = f.model.batch_size;
  const std::size_t per_image = 3ull * c.image_size * c.image_size;
  std::vector<float> pixels(per_image * static_cast<std::size_t>(batch));
  Rng rng(1);
  for (auto& p : pixels)
    p = static_cast<float>(rng.uniform() * 2 - 1);
  // Warm-up (creates the GEMM primitives), then timed runs of whole batches.
  rt.model->encode_images(pixels.data(), batch);
  std::vector<double> per_image_ms;
  const int batches = std::max(1, f.images / batch);
  for (int r = 0; r < f.runs; ++r) {
    auto t0 = clock::now();
    for (int b = 0; b < batches; ++b)
      rt.model->encode_images(pixels.data(), batch);
    per_image_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count() /
                           (batches * batch));
  }
  const double img_ms = median(per_image_ms);
  const double gflops = c.vision_gflop() / (img_ms / 1000.0);
  // GEMM peak: the vision MLP's first GEMM at this batch, alone. A ResNet has no such GEMM:
  // its reference is ViT-B/32's ([batch * 50, 768] x [768, 3072]), a fixed machine figure.
  constexpr int kVitB32Tokens = 50, kVitB32Mlp = 3072, kVitB32Width = 768;
  const double peak =
      c.vision_arch == VisionArch::ResNet
          ? gemm_gflops(batch * kVitB32Tokens, kVitB32Mlp, kVitB32Width, std::max(5, f.runs))
          : gemm_gflops(batch * c.vision_tokens(), c.vision.mlp, c.vision.width,
                        std::max(5, f.runs));
  // Text: Winoground-length captions, only up to the longest end-of-text vs all 77 positions.
  // Token counts (with start and end) of Winoground captions under the real CLIP BPE, e.g.
  // "an old person kisses a young person" -> 9, the ponytail caption -> 14; ids drawn at random.
  static constexpr int kLengths[] = {9, 9, 9, 9, 14};
  std::vector<std::vector<int>> ids;
  for (int i = 0; i < f.captions; ++i) {
    std::vector<int> seq(static_cast<std::size_t>(kLengths[i % 5]));
    seq.front() = rt.tokenizer->start_id();
    for (std::size_t k = 1; k + 1 < seq.size(); ++k)
      seq[k] =
          static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, c.vocab_size - 2))));
    seq.back() = rt.tokenizer->end_id();
    ids.push_back(std::move(seq));
  }
  auto time_text = [&](bool full) {
    EncodeOptions o;
    o.full_context = full;
    std::vector<double> t;
    for (int r = 0; r < f.runs; ++r) {
      auto t0 = clock::now();
      for (std::size_t b = 0; b < ids.size(); b += 128) {
        std::vector<std::vector<int>> chunk(
            ids.begin() + static_cast<std::ptrdiff_t>(b),
            ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), b + 128)));
        rt.model->encode_texts(chunk, o);
      }
      t.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    return median(t);
  };
  const double text_ms = time_text(false), text_full_ms = time_text(true);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  nlohmann::json result = {{"bench", "clip-engine"},
                           {"model", rt.source},
                           {"compute", compute_record()},
                           {"threads", compute_threads()},
                           {"batch_size", batch},
                           {"runs", f.runs},
                           {"image_ms_per_image_median", img_ms},
                           {"architecture", c.vision_arch == VisionArch::ResNet ? "resnet" : "vit"},
                           {"image_size", c.image_size},
                           {"image_gflop_per_image", c.vision_gflop()},
                           {"image_gflops", gflops},
                           {"gemm_peak_gflops", peak},
                           {"share_of_gemm_peak", gflops / peak},
                           {"captions", f.captions},
                           {"text_ms_until_longest_eot", text_ms},
                           {"text_ms_all_77_positions", text_full_ms},
                           {"text_speedup", text_full_ms / text_ms},
                           {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0}};
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
      "bench", "Measure the CLIP engine (random ViT-B/32 weights unless --model is given)");
  b->model.add_to(*bench, false);
  bench->add_option("--images", b->images, "Images per timed run")->capture_default_str();
  bench->add_option("--runs", b->runs, "Timed runs (median reported)")->capture_default_str();
  bench->add_option("--captions", b->captions, "Captions for the text tower")
      ->capture_default_str();
  bench->add_option("--json", b->json, "Also write the results to this file");
  bench->callback([b, &exit_code] { exit_code = guarded([&] { return run_bench(*b); }); });
}

}  // namespace winokit::cli
