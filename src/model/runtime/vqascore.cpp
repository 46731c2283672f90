// VQAScore's shared pieces: the public face is src/model/runtime/vqascore.hpp (the options
// and the VlModel adapter), the families' internal pieces are vqascore_parts.hpp.
#include "model/runtime/vqascore.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "model/kernels/ops.hpp"
#include "model/runtime/vqascore_parts.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace detail {

json read_json_object(const fs::path& file, bool required) {
  if (!required && !fs::is_regular_file(file)) return json::object();
  try {
    json j = json::parse(read_file(file));
    if (!j.is_object()) throw InputError({file.string(), 0, ""}, "expected a JSON object");
    return j;
  } catch (const json::exception& e) {
    throw InputError({file.string(), 0, ""}, std::string("malformed JSON: ") + e.what());
  }
}

int read_positive_int(const json& j, const char* name, int fallback, const std::string& where,
                      int max_value) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > max_value) {
    throw InputError({where, 0, name}, "expected a positive integer up to " +
                                           std::to_string(max_value) + ", got " + it->dump());
  }
  return it->get<int>();
}

void read_three_floats(const json& j, const char* key, const std::string& where,
                       std::array<float, 3>& dst) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_array() || it->size() != 3) throw InputError({where, 0, key}, "expected 3 numbers");
  for (std::size_t i = 0; i < 3; ++i)
    dst[i] = (*it)[i].get<float>();
}

DecodedImage crop_rgb(const DecodedImage& im, int x0, int y0, int x1, int y1) {
  DecodedImage out;
  out.width = x1 - x0;
  out.height = y1 - y0;
  out.mode = PixelMode::RGB;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  for (int y = y0; y < y1; ++y) {
    std::memcpy(&out.pixels[static_cast<std::size_t>(y - y0) * out.width * 3],
                &im.pixels[(static_cast<std::size_t>(y) * im.width + x0) * 3],
                static_cast<std::size_t>(out.width) * 3);
  }
  return out;
}

void append_normalized(const DecodedImage& tile, const PixelNormalization& p,
                       std::vector<float>& out) {
  const std::size_t n = static_cast<std::size_t>(tile.width) * tile.height;
  const std::size_t base = out.size();
  out.resize(base + 3 * n);
  for (int ch = 0; ch < 3; ++ch) {
    float* dst = &out[base + static_cast<std::size_t>(ch) * n];
    for (std::size_t i = 0; i < n; ++i) {
      // transformers' rescale (float64 product, stored as float32), then normalize in float32.
      float v = static_cast<float>(tile.pixels[i * 3 + static_cast<std::size_t>(ch)]);
      if (p.do_rescale) v = static_cast<float>(static_cast<double>(v) * p.rescale_factor);
      if (p.do_normalize) {
        v = (v - p.mean[static_cast<std::size_t>(ch)]) / p.std[static_cast<std::size_t>(ch)];
      }
      dst[i] = v;
    }
  }
}

std::vector<float> SafeTensorsSource::get(const std::string& name,
                                          const std::vector<std::int64_t>& shape) {
  auto v = st_.to_float(name, shape);
  st_.release(name);
  return v;
}

std::optional<ChatTemplateText> read_chat_template(const fs::path& dir) {
  if (const fs::path jinja = dir / "chat_template.jinja"; fs::is_regular_file(jinja)) {
    return ChatTemplateText{jinja, read_file(jinja)};
  }
  for (const char* name : {"chat_template.json", "tokenizer_config.json"}) {
    const fs::path file = dir / name;
    if (!fs::is_regular_file(file)) continue;
    const json j = read_json_object(file, true);
    auto it = j.find("chat_template");
    if (it == j.end() || !it->is_string()) continue;
    return ChatTemplateText{file, it->get<std::string>()};
  }
  return std::nullopt;
}

void check_added_tokens(const HfTokenizer& tok, const fs::path& dir,
                        const std::vector<std::string>& tokens, int image_token_id,
                        const char* image_field) {
  for (const std::string& t : tokens) {
    if (tok.token_id(t) < 0) {
      throw InputError({(dir / "tokenizer.json").string(), 0, "added_tokens"},
                       "no " + t + " token");
    }
  }
  if (tok.token_id("<image>") != image_token_id) {
    throw InputError({(dir / "config.json").string(), 0, image_field},
                     std::to_string(image_token_id) + " but tokenizer.json's <image> is " +
                         std::to_string(tok.token_id("<image>")));
  }
}

int answer_token(const HfTokenizer& tok, const std::string& answer) {
  const std::vector<int> ids = tok.encode(answer, false);
  if (ids.empty()) throw UsageError("the VQAScore answer is empty");
  return ids[0];
}

void load_checkpoint_weights(
    const fs::path& dir, const std::string& family, const HfTokenizer& tok, int vocab_size,
    const std::function<void(const SafeTensors&, const std::string&)>& load) {
  fs::path weights = dir / "model.safetensors";
  if (!fs::is_regular_file(weights)) weights = dir / "model.safetensors.index.json";
  if (!fs::is_regular_file(weights)) {
    throw IoError(
        (dir / "model.safetensors").string() + ": not found",
        "a " + family + " folder holds model.safetensors or model.safetensors.index.json");
  }
  const SafeTensors st = SafeTensors::open(weights);
  load(st, st.content_hash());
  if (static_cast<std::size_t>(tok.vocab_size()) > static_cast<std::size_t>(vocab_size)) {
    throw InputError({(dir / "tokenizer.json").string(), 0, ""},
                     "more tokens than the model's vocab_size " + std::to_string(vocab_size));
  }
}

KvCache run_image_prefix(const LlamaModel& lm, const std::vector<int>& ids, int image_token_id,
                         const std::vector<float>& features, const std::string& tokenizer) {
  std::vector<float> x = lm.embed(ids);
  const std::size_t h = static_cast<std::size_t>(lm.config().hidden);
  std::size_t next = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != image_token_id) continue;
    if (next * h >= features.size()) {
      throw InputError({tokenizer, 0, ""},
                       "the prompt holds more image tokens (id " + std::to_string(image_token_id) +
                           ") than the " + std::to_string(features.size() / h) + " image features");
    }
    std::memcpy(&x[i * h], &features[next * h], sizeof(float) * h);
    ++next;
  }
  if (next * h != features.size()) {
    throw InputError({tokenizer, 0, ""}, "the prompt holds " + std::to_string(next) +
                                             " image tokens (id " + std::to_string(image_token_id) +
                                             ") for " + std::to_string(features.size() / h) +
                                             " image features");
  }
  KvCache cache;
  lm.forward({{x.data(), static_cast<int>(ids.size()), nullptr, &cache}}, LogitRows::None);
  return cache;
}

std::vector<float> continuation_logits(const LlamaModel& lm, const KvCache& prefix,
                                       const std::vector<std::vector<int>>& ids) {
  std::vector<std::vector<float>> x;
  for (const auto& i : ids)
    x.push_back(lm.embed(i));
  std::vector<LlamaSequence> seqs;
  for (std::size_t i = 0; i < ids.size(); ++i)
    seqs.push_back({x[i].data(), static_cast<int>(ids[i].size()), &prefix, nullptr});
  return lm.forward(seqs, LogitRows::Last);
}

std::vector<double> continuation_probabilities(const LlamaModel& lm, const KvCache& prefix,
                                               const std::vector<std::vector<int>>& ids,
                                               int answer) {
  const std::vector<float> logits = continuation_logits(lm, prefix, ids);
  const int v = lm.config().vocab_size;
  std::vector<double> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    out[i] = softmax_at(&logits[i * static_cast<std::size_t>(v)], v, answer);
  return out;
}

}  // namespace detail

void read_vqascore_settings(const ModelOptions& options, VqaScoreOptions& vqa) {
  for (const auto& [key, value] : options.settings) {
    if (key == "question") {
      if (value.find("{}") == std::string::npos) {
        throw UsageError("--model-option question=" + value + ": no {} for the caption",
                         "e.g. --model-option 'question=Does this figure show \"{}\"? Please "
                         "answer yes or no.'");
      }
      vqa.question = value;
    } else if (key == "answer") {
      if (value.empty()) throw UsageError("--model-option answer= needs an answer (e.g. Yes)");
      vqa.answer = value;
    }
  }
}

std::string vqascore_question(const std::string& question, const std::string& caption) {
  std::string q = question;
  const auto at = q.find("{}");
  if (at != std::string::npos) q.replace(at, 2, caption);
  return q;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class VqaScoreVlModel final : public VlModel {
 public:
  VqaScoreVlModel(VqaScoreModelInfo info, std::shared_ptr<const VqaScorer> scorer)
      : info_(std::move(info)), scorer_(std::move(scorer)) {}

  std::string family() const override { return info_.family; }
  std::string name() const override { return checkpoint_name(info_.checkpoint); }
  std::vector<Ability> abilities() const override { return {Ability::PairScores}; }
  std::string score_name() const override { return "P(" + info_.answer + ")"; }

  nlohmann::json describe() const override {
    nlohmann::json d = info_.describe;
    d["compute"] = compute_record();
    d["threads"] = compute_threads();
    d["batch_size"] = info_.options.batch_size;
    return d;
  }

  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    return cached_pair_scores(images, captions, pairs, info_.options, info_.signature,
                              info_.preprocess_json, stats,
                              [&](const std::vector<std::size_t>& misses) {
                                return compute(images, captions, pairs, misses, stats);
                              });
  }

  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

  nlohmann::json engine_bench(const EngineBenchOptions& options) const override {
    return scorer_->engine_bench(options);
  }

  KvCache prefix(const ImageRequest& image) const {
    return scorer_->image_prefix(decode_image(image.read()));
  }

  // The captions' scores against one prefix, batch_size per forward.
  std::vector<double> score_with(const KvCache& prefix,
                                 const std::vector<std::string>& captions) const {
    std::vector<double> out;
    const std::size_t batch = static_cast<std::size_t>(std::max(1, info_.options.batch_size));
    for (std::size_t b = 0; b < captions.size(); b += batch) {
      const std::vector<std::string> part(
          captions.begin() + static_cast<std::ptrdiff_t>(b),
          captions.begin() + static_cast<std::ptrdiff_t>(std::min(captions.size(), b + batch)));
      const std::vector<double> s = scorer_->answer_probabilities(prefix, part);
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

 private:
  std::vector<double> compute(const std::vector<ImageRequest>& images,
                              const std::vector<std::string>& captions,
                              const std::vector<PairIndex>& pairs,
                              const std::vector<std::size_t>& misses, EmbedStats* stats) const {
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t k = 0; k < misses.size(); ++k)
      by_image[pairs[misses[k]].second].push_back(k);
    std::vector<double> out(misses.size());
    std::size_t done = 0;
    for (const auto& [image, list] : by_image) {
      auto t0 = std::chrono::steady_clock::now();
      const KvCache cache = prefix(images[image]);
      if (stats) {
        stats->image_seconds += seconds_since(t0);
        ++stats->images_computed;
      }
      t0 = std::chrono::steady_clock::now();
      std::vector<std::string> texts;
      for (std::size_t k : list)
        texts.push_back(captions[pairs[misses[k]].first]);
      const std::vector<double> s = score_with(cache, texts);
      for (std::size_t i = 0; i < list.size(); ++i)
        out[list[i]] = s[i];
      if (stats) stats->pair_seconds += seconds_since(t0);
      done += list.size();
      if (info_.options.on_progress) info_.options.on_progress("pairs", done, misses.size());
    }
    return out;
  }

  VqaScoreModelInfo info_;
  std::shared_ptr<const VqaScorer> scorer_;
};

// The pool's image prefixes kept in memory as KV caches; each call continues them with its
// captions' questions.
class VqaScorePreparedImages final : public PreparedImages {
 public:
  VqaScorePreparedImages(const VqaScoreVlModel& model, const std::vector<ImageRequest>& images)
      : model_(model) {
    for (const ImageRequest& r : images)
      caches_.push_back(model_.prefix(r));
  }
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      if (pairs[p].first >= captions.size() || pairs[p].second >= caches_.size()) {
        throw UsageError(model_.family() + ": pair index out of range");
      }
      by_image[pairs[p].second].push_back(p);
    }
    std::vector<double> out(pairs.size());
    for (const auto& [image, list] : by_image) {
      std::vector<std::string> texts;
      for (std::size_t p : list)
        texts.push_back(captions[pairs[p].first]);
      const std::vector<double> s = model_.score_with(caches_[image], texts);
      for (std::size_t i = 0; i < list.size(); ++i)
        out[list[i]] = s[i];
    }
    return out;
  }

 private:
  const VqaScoreVlModel& model_;
  std::vector<KvCache> caches_;
  mutable std::mutex mutex_;
};

std::unique_ptr<PreparedImages> VqaScoreVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<VqaScorePreparedImages>(*this, images);
}

}  // namespace

VqaScoreModelInfo vqascore_model_info(const VqaScoreCheckpoint& c) {
  VqaScoreModelInfo info;
  info.family = c.family;
  info.checkpoint = c.checkpoint;
  info.options = c.options;
  info.answer = c.vqa.answer;
  info.signature = c.family + "-vqascore\n" + c.weights_id + "\n" + kernel_version() + "\n" +
                   c.config.dump() + "\n" + c.tokenizer->sha256() + "\n" + c.vqa.question + "\n" +
                   c.vqa.answer;
  info.preprocess_json = c.preprocess.dump();
  info.describe = {
      {"kind", c.family},
      {"family", c.family},
      {"model", c.checkpoint.string()},
      {"weights_sha256", c.weights_id},
      {"config", c.config},
      {"score", "VQAScore: softmax over the whole vocabulary of the next-token logits after " +
                    c.prompt + ", at the answer's first token"},
      {"question_template", c.vqa.question},
      {"answer", c.vqa.answer},
      {"answer_token_id", c.answer_token_id},
      {"tokenizer",
       {{"kind", "tokenizer.json byte-level BPE"},
        {"sha256", c.tokenizer->sha256()},
        {"vocab_size", c.tokenizer->vocab_size()}}},
      {"preprocess", c.preprocess},
      {"precision", "float32 (weights converted on load)"}};
  return info;
}

std::unique_ptr<VlModel> make_vqascore_model(VqaScoreModelInfo info,
                                             std::shared_ptr<const VqaScorer> scorer) {
  return std::make_unique<VqaScoreVlModel>(std::move(info), std::move(scorer));
}

}  // namespace winokit
