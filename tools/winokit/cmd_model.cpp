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
#include "flava_cli.hpp"
#include "vilt_cli.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/core/text.hpp"
#include "winokit/data/variants.hpp"
#include "winokit/data/winoground.hpp"
#include "winokit/eval/augment.hpp"
#include "winokit/eval/probe.hpp"
#include "winokit/io/files.hpp"
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
  ClipRuntime rt = f.model.load();
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
  auto img = embed_images(rt, requests, &stats, enc, f.hidden ? &img_full : nullptr);
  auto txt = embed_texts(rt, captions, &stats, enc, f.hidden ? &txt_full : nullptr);
  const ClipConfig& c = rt.model->config();
  const std::int64_t e = c.embed_dim;
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors;
  if (!requests.empty())
    tensors["image_embeds"] = {{static_cast<std::int64_t>(requests.size()), e}, img};
  if (!captions.empty())
    tensors["text_embeds"] = {{static_cast<std::int64_t>(captions.size()), e}, txt};
  if (f.hidden && !requests.empty()) {
    const std::vector<std::int64_t> shape = {
        c.vision.layers + 1, static_cast<std::int64_t>(requests.size()), c.vision.width};
    tensors["image_hidden_cls"] = {shape, std::move(img_full.hidden)};
    tensors["image_hidden_mean"] = {shape, std::move(img_full.hidden_mean)};
    tensors["image_hidden_max"] = {shape, std::move(img_full.hidden_max)};
  }
  if (f.hidden && !captions.empty()) {
    const std::vector<std::int64_t> shape = {
        c.text.layers + 1, static_cast<std::int64_t>(captions.size()), c.text.width};
    tensors["text_hidden_eot"] = {shape, std::move(txt_full.hidden)};
    tensors["text_hidden_mean"] = {shape, std::move(txt_full.hidden_mean)};
    tensors["text_hidden_max"] = {shape, std::move(txt_full.hidden_max)};
  }
  std::map<std::string, std::string> meta = {
      {"image_ids", nlohmann::json(image_ids).dump()},
      {"text_ids", nlohmann::json(text_ids).dump()},
      {"texts", nlohmann::json(captions).dump()},
      {"model", rt.source},
      {"weights_sha256", rt.model->weights_id()},
      {"preprocess", rt.preprocess().to_json().dump()},
      {"logit_scale_exp", std::to_string(rt.model->logit_scale_exp())},
      {"winokit", kVersion}};
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
  if (is_vilt_model(f.model)) return run_vilt_score(f.model, f.image, f.captions);
  if (is_flava_model(f.model)) return run_flava_score(f.model, f.image, f.captions);
  ClipRuntime rt = f.model.load();
  for (const auto& c : f.captions) {
    if (!is_valid_utf8(c)) throw UsageError("caption is not valid UTF-8");
  }
  auto img = embed_images(rt, {image_file_request(f.image)});
  auto txt = embed_texts(rt, f.captions);
  const int dim = rt.model->config().embed_dim;
  std::vector<double> s;
  for (std::size_t i = 0; i < f.captions.size(); ++i) {
    s.push_back(clip_score(&txt[i * dim], img.data(), dim, rt.model->logit_scale_exp()));
  }
  const double mx = *std::max_element(s.begin(), s.end());
  double z = 0;
  for (double v : s)
    z += std::exp(v - mx);
  std::cout << "| Caption | Score | Probability |\n|---|---:|---:|\n";
  for (std::size_t i = 0; i < s.size(); ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "%.4f | %.4f", s[i], std::exp(s[i] - mx) / z);
    std::cout << "| " << f.captions[i] << " | " << line << " |\n";
  }
  std::cout << "\nScore: exp(logit_scale) * cosine (CLIP's logits_per_image); probability: softmax "
               "over the captions given.\n";
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
  if (is_vilt_model(f.model)) refuse_vilt(f.model.model);
  if (is_flava_model(f.model)) refuse_flava(f.model.model);
  set_compute_threads(f.model.threads);
  ClipRuntime rt;
  if (f.model.model.empty()) {
    auto tok = std::make_shared<ClipTokenizer>(ClipTokenizer::byte_level());
    rt = ClipRuntime::random(vit_b32_config(), f.seed, tok, f.model.options());
  } else {
    rt = ClipRuntime::load(f.model.model, f.model.options());
  }
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
