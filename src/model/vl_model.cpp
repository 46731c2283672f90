// The parts of the model interface every family shares: the one refusal, checkpoint naming and
// config sniffing, the pair cache of cross-encoders, and pair scores from a dual encoder.
#include "winokit/model/vl_model.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/io/safetensors.hpp"
#include "winokit/model/embedding_cache.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// The SHA-256s of image files are remembered here, inside the cache folder, as CLIP's runtime
// does (the same folder: one digest per file whatever the model).
constexpr const char* kFileHashIndex = "file-hashes";

fs::path cache_root(const ModelOptions& options) {
  return options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
}

std::string image_digest(const ImageRequest& request, const fs::path& index_dir) {
  if (request.file) {
    if (auto file = request.file()) return remembered_sha256_file(*file, index_dir);
  }
  return sha256_hex(request.read().bytes);
}

// A double stored as two floats' worth of bytes (the cache holds float vectors).
std::vector<float> pack_double(double v) {
  std::vector<float> out(2);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}
double unpack_double(const std::vector<float>& v) {
  double out = 0;
  std::memcpy(&out, v.data(), sizeof out);
  return out;
}

}  // namespace

std::string to_string(Ability ability) {
  switch (ability) {
    case Ability::PairScores:
      return "pair scores";
    case Ability::Embeddings:
      return "image and text embeddings (a dual encoder)";
    case Ability::States:
      return "per-layer hidden states";
    case Ability::Alignment:
      return "word-region alignment maps";
  }
  return "?";
}

bool VlModel::can(Ability ability) const {
  for (Ability a : abilities())
    if (a == ability) return true;
  return false;
}

void require(const VlModel& model, Ability ability, const std::string& command) {
  if (model.can(ability)) return;
  std::string offers;
  for (Ability a : model.abilities())
    offers += (offers.empty() ? "" : ", ") + to_string(a);
  throw UsageError("winokit " + command + " needs " + to_string(ability) + "; " + model.name() +
                   " is a " + model.family() + " model, which offers " + offers +
                   " (`winokit models` lists what each family can do)");
}

namespace {

// The default: nothing kept but the requests; every call scores through score_pairs (whose
// caches still spare the work done before).
class RequestsOnly final : public PreparedImages {
 public:
  RequestsOnly(const VlModel& model, std::vector<ImageRequest> images)
      : model_(model), images_(std::move(images)) {}
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return model_.score_pairs(images_, captions, pairs);
  }

 private:
  const VlModel& model_;
  std::vector<ImageRequest> images_;
  mutable std::mutex mutex_;
};

// A pool of images embedded once; each call embeds its captions (through the cache).
class EmbeddedImages final : public PreparedImages {
 public:
  EmbeddedImages(const DualEncoder& encoder, const std::vector<ImageRequest>& images)
      : encoder_(encoder), images_(encoder.embed_images(images)) {}
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::vector<float> text = encoder_.embed_texts(captions);
    const auto dim = static_cast<std::size_t>(encoder_.embed_dim());
    const std::size_t n_images = images_.size() / dim;
    std::vector<double> out;
    out.reserve(pairs.size());
    for (const auto& [c, i] : pairs) {
      if (c >= captions.size() || i >= n_images) throw UsageError("pair index out of range");
      out.push_back(encoder_.score(&text[c * dim], &images_[i * dim]));
    }
    return out;
  }

 private:
  const DualEncoder& encoder_;
  std::vector<float> images_;
  mutable std::mutex mutex_;
};

}  // namespace

std::unique_ptr<PreparedImages> prepare_embedded_images(const DualEncoder& encoder,
                                                        const std::vector<ImageRequest>& images) {
  return std::make_unique<EmbeddedImages>(encoder, images);
}

std::unique_ptr<PreparedImages> VlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<RequestsOnly>(*this, images);
}

nlohmann::json VlModel::engine_bench(const EngineBenchOptions&) const {
  return nullptr;
}

void require_finite(const VlModel& model, const std::vector<double>& scores,
                    const std::function<std::string(std::size_t)>& what) {
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (std::isfinite(scores[k])) continue;
    const nlohmann::json d = model.describe();
    const std::string source = d.contains("model") && d["model"].is_string()
                                   ? d["model"].get<std::string>()
                                   : model.name();
    throw InputError({source, 0, ""}, "non-finite score for " + what(k),
                     "the checkpoint's weights or logit scale are broken");
  }
}

std::string checkpoint_model_type(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  const fs::path config = dir / "config.json";
  std::ifstream in(config);
  if (!in) return {};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return {};  // the family's loader reports a broken config with its line
  }
  if (!j.is_object()) return {};
  if (j.contains("model_type") && j["model_type"].is_string()) {
    return j["model_type"].get<std::string>();
  }
  return {};
}

std::string checkpoint_name(const fs::path& checkpoint) {
  fs::path p = checkpoint;
  while (!p.empty() && p.filename().empty())
    p = p.parent_path();  // "dir/" -> "dir"
  return p.filename().string();
}

std::vector<double> cached_pair_scores(
    const std::vector<ImageRequest>& images, const std::vector<std::string>& captions,
    const std::vector<PairIndex>& pairs, const ModelOptions& options, const std::string& signature,
    const std::string& preprocess_json, EmbedStats* stats,
    const std::function<std::vector<double>(const std::vector<std::size_t>& misses)>& compute) {
  for (const PairIndex& p : pairs) {
    if (p.first >= captions.size() || p.second >= images.size()) {
      throw UsageError("pair (caption " + std::to_string(p.first) + ", image " +
                       std::to_string(p.second) +
                       ") is out of range: " + std::to_string(captions.size()) + " captions, " +
                       std::to_string(images.size()) + " images");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> out(pairs.size());
  std::vector<std::size_t> misses;
  std::vector<std::string> keys;
  EmbeddingCache cache(cache_root(options), "pairs\n" + signature);
  if (options.use_cache) {
    const fs::path index = cache_root(options) / kFileHashIndex;
    std::map<std::size_t, std::string> digests;
    keys.resize(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      auto it = digests.find(pairs[p].second);
      if (it == digests.end()) {
        it = digests.emplace(pairs[p].second, image_digest(images[pairs[p].second], index)).first;
      }
      keys[p] = cache.pair_key(it->second, preprocess_json, captions[pairs[p].first]);
      if (auto v = cache.get(keys[p], 2)) {
        out[p] = unpack_double(*v);
      } else {
        misses.push_back(p);
      }
    }
  } else {
    for (std::size_t p = 0; p < pairs.size(); ++p)
      misses.push_back(p);
  }
  if (!misses.empty()) {
    const std::vector<double> computed = compute(misses);
    if (computed.size() != misses.size()) throw Error("pair scorer returned the wrong count");
    for (std::size_t k = 0; k < misses.size(); ++k) {
      const std::size_t p = misses[k];
      out[p] = computed[k];
      if (options.use_cache && std::isfinite(computed[k])) {
        cache.put(keys[p], pack_double(computed[k]));
      }
    }
  }
  if (stats) {
    stats->pairs_computed += misses.size();
    stats->pairs_cached += pairs.size() - misses.size();
    stats->cache_corrupt += cache.corrupt();
    stats->pair_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!cache.warning().empty()) stats->cache_warning = cache.warning();
  }
  return out;
}

PairSubset pair_subset(const std::vector<ImageRequest>& images,
                       const std::vector<std::string>& captions,
                       const std::vector<PairIndex>& pairs, const std::vector<std::size_t>& misses,
                       EmbedStats* stats) {
  PairSubset out;
  std::map<std::size_t, std::size_t> image_slot, caption_slot;
  for (std::size_t p : misses) {
    const auto [c, i] = pairs[p];
    const auto is = image_slot.emplace(i, out.images.size());
    if (is.second) out.images.push_back(images[i].read);
    const auto cs = caption_slot.emplace(c, out.captions.size());
    if (cs.second) out.captions.push_back(captions[c]);
    out.pairs.emplace_back(cs.first->second, is.first->second);
  }
  if (stats) {
    stats->images_computed += out.images.size();
    stats->texts_computed += out.captions.size();
  }
  return out;
}

std::vector<double> dual_encoder_pair_scores(const DualEncoder& encoder,
                                             const std::vector<ImageRequest>& images,
                                             const std::vector<std::string>& captions,
                                             const std::vector<PairIndex>& pairs,
                                             EmbedStats* stats) {
  for (const PairIndex& p : pairs) {
    if (p.first >= captions.size() || p.second >= images.size()) {
      throw UsageError("pair (caption " + std::to_string(p.first) + ", image " +
                       std::to_string(p.second) + ") is out of range");
    }
  }
  // Only the images and captions some pair uses are embedded.
  std::vector<char> image_used(images.size(), 0), caption_used(captions.size(), 0);
  for (const PairIndex& p : pairs) {
    caption_used[p.first] = 1;
    image_used[p.second] = 1;
  }
  std::vector<ImageRequest> image_list;
  std::vector<std::string> caption_list;
  std::vector<std::size_t> image_row(images.size()), caption_row(captions.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (!image_used[i]) continue;
    image_row[i] = image_list.size();
    image_list.push_back(images[i]);
  }
  for (std::size_t c = 0; c < captions.size(); ++c) {
    if (!caption_used[c]) continue;
    caption_row[c] = caption_list.size();
    caption_list.push_back(captions[c]);
  }
  const std::vector<float> text = encoder.embed_texts(caption_list, stats);
  const std::vector<float> image = encoder.embed_images(image_list, stats);
  const std::size_t dim = static_cast<std::size_t>(encoder.embed_dim());
  std::vector<double> out(pairs.size());
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto [c, i] = pairs[p];
    out[p] = encoder.score(&text[caption_row[c] * dim], &image[image_row[i] * dim]);
  }
  return out;
}

}  // namespace winokit
