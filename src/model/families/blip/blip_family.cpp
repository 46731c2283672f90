// BLIP as a VlModel (the registry's "blip" family): pair scores with the ITM or ITC head, every
// image encoded once, every caption tokenised once, pairs batched, all through the pair cache.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>

#include "model/families/blip/blip_model.hpp"
#include "model/kernels/parallel.hpp"
#include "model/text/wordpiece.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/model/compute.hpp"

namespace winokit {

namespace fs = std::filesystem;

bool is_blip_checkpoint(const fs::path& checkpoint) {
  return checkpoint_model_type(checkpoint) == "blip";
}

namespace {

// At most this many encoded images are held while their pairs wait for a forward: an image's
// cross-attention keys and values are tokens x 2 x text width per text layer (42 MB at
// blip-itm-base's shapes). Which pairs share a forward never changes a score's bits.
constexpr std::size_t kMaxLiveImages = 8;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class BlipVlModel final : public VlModel {
 public:
  BlipVlModel(const fs::path& checkpoint, const ModelOptions& options, BlipHead head)
      : checkpoint_(checkpoint), options_(options), head_(head) {
    model_ = std::make_unique<BlipModel>(BlipModel::load(checkpoint));
    tokenizer_ = std::make_unique<WordPieceTokenizer>(WordPieceTokenizer::load(checkpoint));
    const BlipConfig& c = model_->config();
    if (tokenizer_->vocab_size() > static_cast<std::size_t>(c.vocab_size)) {
      throw InputError({(checkpoint / "vocab.txt").string(), 0, ""},
                       "the vocabulary has " + std::to_string(tokenizer_->vocab_size()) +
                           " tokens but the model's vocab_size is " + std::to_string(c.vocab_size));
    }
    pad_id_ = tokenizer_->id("[PAD]");
    // Weights, kernels, head, shapes and vocabulary: what a cached score depends on (the image
    // processor is part of each pair's key).
    signature_ = "blip\n" + model_->weights_id() + "\n" + kernel_version() +
                 "\nhead=" + to_string(head_) + "\n" + c.to_json().dump() + "\n" +
                 tokenizer_->vocab_sha256();
  }

  std::string family() const override { return "blip"; }
  std::string name() const override {
    return checkpoint_name(checkpoint_) + "-" + to_string(head_);  // blip-itm-base-coco-itm
  }
  std::vector<Ability> abilities() const override { return {Ability::PairScores}; }
  std::vector<std::string> heads() const override { return {"itm", "itc"}; }
  std::string head() const override { return to_string(head_); }
  std::string retrieval_head() const override { return "itc"; }
  std::string score_name() const override { return head_ == BlipHead::Itm ? "P(match)" : "cos"; }

  nlohmann::json describe() const override {
    const BlipConfig& c = model_->config();
    return {{"kind", "blip"},
            {"family", "blip"},
            {"model", checkpoint_.string()},
            {"weights_sha256", model_->weights_id()},
            {"config", c.to_json()},
            {"head", to_string(head_)},
            {"score", head_ == BlipHead::Itm
                          ? "ITM softmax probability of match (itm_head on the text encoder's "
                            "[CLS] state, with cross-attention to the image)"
                          : "ITC cosine of normalize(vision_proj(image [CLS])) and "
                            "normalize(text_proj(text [CLS])), text encoder without the image, "
                            "no logit scale"},
            {"tokenizer",
             {{"kind", "BERT WordPiece"},
              {"vocab_sha256", tokenizer_->vocab_sha256()},
              {"lower_case", tokenizer_->options().lower_case},
              {"special_ids",
               {{"cls", tokenizer_->cls_id()},
                {"sep", tokenizer_->sep_id()},
                {"pad", pad_id_},
                {"unk", tokenizer_->unk_id()}}},
              {"first_token", "[CLS] (Hugging Face BlipProcessor; not LAVIS's [ENC])"},
              {"max_length", c.max_text_len},
              {"truncation", "to max_position_embeddings, [SEP] last"}}},
            {"preprocess", c.preprocess_json()},
            {"precision", "float32"},
            {"compute", compute_record()},
            {"threads", compute_threads()},
            {"batch_size", options_.batch_size}};
  }

  std::vector<double> score_pairs(const std::vector<ImageRequest>& images,
                                  const std::vector<std::string>& captions,
                                  const std::vector<PairIndex>& pairs,
                                  EmbedStats* stats) const override {
    // cached_pair_scores checks the indices and refuses a non-finite score naming its pair.
    return cached_pair_scores(
        images, captions, pairs, options_, signature_, model_->config().preprocess_json().dump(),
        stats, [&](const std::vector<std::size_t>& misses) {
          return head_ == BlipHead::Itm ? itm_scores(images, captions, pairs, misses, stats)
                                        : itc_scores(images, captions, pairs, misses, stats);
        });
  }

  std::unique_ptr<PreparedImages> prepare_images(
      const std::vector<ImageRequest>& images) const override;

  // For PreparedImages: pairs (ids, image) scored with the head, in one batch per batch_size.
  std::vector<double> score_encoded(const std::vector<const std::vector<int>*>& ids,
                                    const std::vector<const BlipImageEmbeds*>& ims) const {
    std::vector<double> out(ids.size());
    const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
    const int D = model_->config().embed_dim;
    for (std::size_t b = 0; b < ids.size(); b += batch) {
      const std::size_t e = std::min(ids.size(), b + batch);
      const std::vector<const std::vector<int>*> bi(ids.begin() + static_cast<std::ptrdiff_t>(b),
                                                    ids.begin() + static_cast<std::ptrdiff_t>(e));
      const std::vector<const BlipImageEmbeds*> bm(ims.begin() + static_cast<std::ptrdiff_t>(b),
                                                   ims.begin() + static_cast<std::ptrdiff_t>(e));
      if (head_ == BlipHead::Itm) {
        const std::vector<float> logits = model_->itm_logits(bi, bm);
        for (std::size_t k = b; k < e; ++k)
          out[k] = blip_itm_probability(&logits[(k - b) * 2]);
      } else {
        const std::vector<float> f = model_->text_features(bi);
        for (std::size_t k = b; k < e; ++k)
          out[k] =
              blip_cosine(bm[k - b]->feature.data(), &f[(k - b) * static_cast<std::size_t>(D)], D);
      }
    }
    return out;
  }
  std::vector<BlipImageEmbeds> encode_requests(const std::vector<ImageRequest>& images) const {
    std::vector<BlipImageEmbeds> out;
    const std::size_t group = image_group();
    for (std::size_t g0 = 0; g0 < images.size(); g0 += group) {
      std::vector<std::size_t> which;
      for (std::size_t j = g0; j < std::min(images.size(), g0 + group); ++j)
        which.push_back(j);
      for (BlipImageEmbeds& e : encode_many(images, which, head_ == BlipHead::Itm))
        out.push_back(std::move(e));
    }
    return out;
  }
  std::vector<int> encode_caption(const std::string& caption) const {
    return tokenizer_->encode(caption, model_->config().max_text_len);
  }

 private:
  // images[which[j]] for each j: read, decoded and preprocessed one per thread, then encoded
  // together (BlipModel::encode_images: whole images per thread). The first failure is thrown.
  std::vector<BlipImageEmbeds> encode_many(const std::vector<ImageRequest>& images,
                                           const std::vector<std::size_t>& which,
                                           bool with_cross) const {
    std::vector<std::vector<float>> px(which.size());
    if (const std::exception_ptr f =
            detail::for_each_item(static_cast<int>(which.size()), true, [&](int j) {
              const std::size_t k = static_cast<std::size_t>(j);
              px[k] = blip_preprocess(decode_image(images[which[k]].read()), model_->config());
            })) {
      std::rethrow_exception(f);
    }
    std::vector<const float*> ptrs;
    for (const auto& p : px)
      ptrs.push_back(p.data());
    return model_->encode_images(ptrs, with_cross);
  }
  // How many images go through encode_many at once: one per compute thread, at most
  // kMaxLiveImages.
  static std::size_t image_group() {
    return std::clamp<std::size_t>(static_cast<std::size_t>(compute_threads()), 1, kMaxLiveImages);
  }

  // The ids of each caption that a miss needs, tokenised once.
  std::map<std::size_t, std::vector<int>> tokenize(const std::vector<std::string>& captions,
                                                   const std::vector<PairIndex>& pairs,
                                                   const std::vector<std::size_t>& misses,
                                                   EmbedStats* stats) const {
    const auto t0 = std::chrono::steady_clock::now();
    std::map<std::size_t, std::vector<int>> ids;
    for (std::size_t k : misses) {
      const std::size_t c = pairs[k].first;
      if (!ids.count(c))
        ids.emplace(c, tokenizer_->encode(captions[c], model_->config().max_text_len));
    }
    if (stats) stats->text_seconds += seconds_since(t0);
    return ids;
  }

  void progress(std::size_t done, std::size_t total) const {
    if (options_.on_progress) options_.on_progress("pairs", done, total);
  }

  std::vector<double> itm_scores(const std::vector<ImageRequest>& images,
                                 const std::vector<std::string>& captions,
                                 const std::vector<PairIndex>& pairs,
                                 const std::vector<std::size_t>& misses, EmbedStats* stats) const {
    const std::map<std::size_t, std::vector<int>> ids = tokenize(captions, pairs, misses, stats);
    if (stats) stats->texts_computed += ids.size();
    // Misses grouped by image: each image is read and encoded once, held until its last pair
    // has been through a forward.
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t k = 0; k < misses.size(); ++k)
      by_image[pairs[misses[k]].second].push_back(k);
    std::vector<double> out(misses.size());
    const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
    std::size_t done = 0;
    std::map<std::size_t, BlipImageEmbeds> live;
    std::vector<std::size_t> queue;  // positions in misses waiting for a forward
    // A forward of the queued pairs; then the live images not in `keep` (those whose pairs are
    // not all queued yet) are dropped.
    auto flush = [&](const std::vector<std::size_t>& keep) {
      if (!queue.empty()) {
        std::vector<const std::vector<int>*> bi;
        std::vector<const BlipImageEmbeds*> bm;
        for (std::size_t k : queue) {
          bi.push_back(&ids.at(pairs[misses[k]].first));
          bm.push_back(&live.at(pairs[misses[k]].second));
        }
        const std::vector<float> logits = model_->itm_logits(bi, bm);
        for (std::size_t q = 0; q < queue.size(); ++q)
          out[queue[q]] = blip_itm_probability(&logits[q * 2]);
        done += queue.size();
        queue.clear();
        progress(done, misses.size());
      }
      for (auto it = live.begin(); it != live.end();) {
        it = std::find(keep.begin(), keep.end(), it->first) != keep.end() ? std::next(it)
                                                                          : live.erase(it);
      }
    };
    const std::vector<std::pair<std::size_t, std::vector<std::size_t>>> order(by_image.begin(),
                                                                              by_image.end());
    const std::size_t group = image_group();
    for (std::size_t g0 = 0; g0 < order.size(); g0 += group) {
      const std::size_t g1 = std::min(order.size(), g0 + group);
      if (live.size() + (g1 - g0) > kMaxLiveImages) flush({});
      std::vector<std::size_t> which;
      for (std::size_t j = g0; j < g1; ++j)
        which.push_back(order[j].first);
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<BlipImageEmbeds> encoded = encode_many(images, which, /*with_cross=*/true);
      if (stats) {
        stats->image_seconds += seconds_since(t0);
        stats->images_computed += which.size();
      }
      for (std::size_t j = 0; j < which.size(); ++j)
        live.emplace(which[j], std::move(encoded[j]));
      for (std::size_t j = g0; j < g1; ++j) {
        for (std::size_t k : order[j].second) {
          queue.push_back(k);
          if (queue.size() >= batch) {
            flush(std::vector<std::size_t>(which.begin() + static_cast<std::ptrdiff_t>(j - g0),
                                           which.end()));
          }
        }
      }
    }
    flush({});
    return out;
  }

  std::vector<double> itc_scores(const std::vector<ImageRequest>& images,
                                 const std::vector<std::string>& captions,
                                 const std::vector<PairIndex>& pairs,
                                 const std::vector<std::size_t>& misses, EmbedStats* stats) const {
    const std::map<std::size_t, std::vector<int>> ids = tokenize(captions, pairs, misses, stats);
    const int D = model_->config().embed_dim;
    const std::size_t batch = static_cast<std::size_t>(std::max(1, options_.batch_size));
    // Text features, batch_size captions per forward.
    std::map<std::size_t, std::vector<float>> text;
    {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::size_t> order;
      for (const auto& [c, v] : ids)
        order.push_back(c);
      for (std::size_t b = 0; b < order.size(); b += batch) {
        std::vector<const std::vector<int>*> bi;
        const std::size_t e = std::min(order.size(), b + batch);
        for (std::size_t k = b; k < e; ++k)
          bi.push_back(&ids.at(order[k]));
        const std::vector<float> f = model_->text_features(bi);
        for (std::size_t k = b; k < e; ++k) {
          const float* row = &f[(k - b) * static_cast<std::size_t>(D)];
          text.emplace(order[k], std::vector<float>(row, row + D));
        }
      }
      if (stats) {
        stats->text_seconds += seconds_since(t0);
        stats->texts_computed += order.size();
      }
    }
    std::map<std::size_t, std::vector<std::size_t>> by_image;
    for (std::size_t k = 0; k < misses.size(); ++k)
      by_image[pairs[misses[k]].second].push_back(k);
    std::vector<double> out(misses.size());
    std::size_t done = 0;
    const std::vector<std::pair<std::size_t, std::vector<std::size_t>>> order(by_image.begin(),
                                                                              by_image.end());
    const std::size_t group = image_group();
    for (std::size_t g0 = 0; g0 < order.size(); g0 += group) {
      const std::size_t g1 = std::min(order.size(), g0 + group);
      std::vector<std::size_t> which;
      for (std::size_t j = g0; j < g1; ++j)
        which.push_back(order[j].first);
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<BlipImageEmbeds> encoded = encode_many(images, which, /*with_cross=*/false);
      if (stats) {
        stats->image_seconds += seconds_since(t0);
        stats->images_computed += which.size();
      }
      for (std::size_t j = g0; j < g1; ++j) {
        const BlipImageEmbeds& e = encoded[j - g0];
        for (std::size_t k : order[j].second)
          out[k] = blip_cosine(e.feature.data(), text.at(pairs[misses[k]].first).data(), D);
        done += order[j].second.size();
      }
      progress(done, misses.size());
    }
    return out;
  }

  fs::path checkpoint_;
  ModelOptions options_;
  BlipHead head_;
  std::unique_ptr<BlipModel> model_;
  std::unique_ptr<WordPieceTokenizer> tokenizer_;
  int pad_id_ = 0;
  std::string signature_;
};

// The pool's image encodings kept in memory (with their cross-attention keys for ITM); each call
// tokenises its captions and scores with the model's head.
class BlipPreparedImages final : public PreparedImages {
 public:
  BlipPreparedImages(const BlipVlModel& model, const std::vector<ImageRequest>& images)
      : model_(model), images_(model_.encode_requests(images)) {}
  std::vector<double> score(const std::vector<std::string>& captions,
                            const std::vector<PairIndex>& pairs) const override {
    std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
    std::vector<std::vector<int>> ids;
    for (const auto& c : captions)
      ids.push_back(model_.encode_caption(c));
    // Pairs grouped by image (adjacent pairs share the packed cross-attention keys); a score's
    // bits do not depend on the grouping.
    std::vector<std::size_t> order(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      if (pairs[p].first >= captions.size() || pairs[p].second >= images_.size()) {
        throw UsageError("BLIP: pair index out of range");
      }
      order[p] = p;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return pairs[a].second < pairs[b].second;
    });
    std::vector<const std::vector<int>*> bi;
    std::vector<const BlipImageEmbeds*> bm;
    for (std::size_t p : order) {
      bi.push_back(&ids[pairs[p].first]);
      bm.push_back(&images_[pairs[p].second]);
    }
    const std::vector<double> s = model_.score_encoded(bi, bm);
    std::vector<double> out(pairs.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      out[order[k]] = s[k];
    return out;
  }

 private:
  const BlipVlModel& model_;
  std::vector<BlipImageEmbeds> images_;
  mutable std::mutex mutex_;
};

std::unique_ptr<PreparedImages> BlipVlModel::prepare_images(
    const std::vector<ImageRequest>& images) const {
  return std::make_unique<BlipPreparedImages>(*this, images);
}

}  // namespace

std::unique_ptr<VlModel> open_blip(const fs::path& checkpoint, const ModelOptions& options) {
  if (!options.head.empty() && options.head != "itm" && options.head != "itc") {
    throw UsageError("--head: BLIP's heads are itm and itc, not '" + options.head + "'");
  }
  const BlipHead head = options.head.empty() ? BlipHead::Itm : parse_blip_head(options.head);
  return std::make_unique<BlipVlModel>(checkpoint, options, head);
}

}  // namespace winokit
